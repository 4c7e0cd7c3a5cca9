// Package ilrw reads, edits and writes IL method bodies, and installs
// rewritten bodies in a running CoreCLR: at a method's first JIT
// compilation or later through ReJIT.
//
// # Bodies
//
// [Decode] parses a method body as GetILFunctionBody returns it: the tiny
// or fat header, every instruction of ECMA-335 Partition III (the opcode
// table, [Opcode] and its Op* constants, is generated from the runtime's
// opcode.def by cmd/comgen) and the small or fat exception handling
// sections. [Body.Encode] writes it back; a body that was not changed
// encodes to exactly the bytes it was decoded from. A body's instructions
// are allocated together; a loop that decodes, edits and re-encodes one
// body at a time and keeps none can use a [Decoder], which reuses its
// memory from one body to the next, and [Body.AppendEncode], which
// appends to a buffer the caller reuses.
//
// Branch targets ([Instruction].Target, Targets for switch) and exception
// regions ([Clause]) point at instructions, not offsets, so edits keep them
// attached to the code they name: [Body.InsertAt], [Body.InsertBefore],
// [Body.InsertAfter], [Body.Replace] and [Body.Remove] change the
// instruction list, and Encode recomputes every offset, widens short
// branches (br.s → br) whose target moved out of reach, promotes a tiny
// header to a fat one and a small EH section to a fat one when they no
// longer fit. [Body.ComputeMaxStack] recomputes the header's max stack by
// following the control flow; it needs a [Resolver] for the signatures of
// called methods ([Module] is one).
//
// # Rewrites
//
// [Body.InsertAtEntry] adds code that runs first, [Body.WrapExit] wraps the
// body in try/finally so that code runs at every exit with the return value
// at hand (every ret becomes a leave to a single exit), and
// [Body.ReplaceCalls] redirects call sites. [Module.AddLocals] appends
// locals to the body's signature and defines the new signature token;
// [Module.UserString] and [Module.TypeSpec] define other tokens rewrites
// need. [Body.Dump] lists a body with token names resolved through the
// module's metadata.
//
// # Installing
//
// A [Rewriter] runs a [RewriteFunc] over methods and installs the result:
// from the profiler's JITCompilationStarted callback before the first
// compilation (IMethodMalloc + SetILFunctionBody, see
// profiler.Info.SetILFunctionBody), and through ReJIT: RequestReJIT and
// RequestRevert from a goroutine (they run on a dedicated OS thread that
// never runs managed code), with the body supplied in GetReJITParameters.
// A method definition is rewritten once and the result cached by (module,
// MethodDef), so that every instantiation of a generic method receives the
// same IL.
//
// Runtime-async methods (MethodImplAttributes.Async, 0x2000: .NET 11's
// libraries and code compiled with Roslyn's runtime-async feature) declare
// Task, Task<T>, ValueTask or ValueTask<T> but their IL returns void or T:
// [Method.ILSig] (and [Module.ILSig], [ILSig], [AsyncReturn]) gives the
// signature as the body sees it, which [Body.WrapExit] needs;
// [Method.Sig] stays the declared one, which call sites use.
//
// Signatures are package metadata's: [Module.MethodSig] decodes a called
// method's with metadata.ParseMethodSig, [CallSiteOf] tells what a call
// does to the stack, and locals are *metadata.Type trees.
//
// Decoders never panic on malformed input: they return a [*FormatError]
// (bodies) or a *metadata.SigError (signatures) with the byte offset.
package ilrw
