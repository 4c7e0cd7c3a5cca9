// Package instr instruments .NET methods with managed code: it wraps each
// method a target names so that an integration, C# in a helper assembly,
// runs when the method is entered and when it exits, normally or by an
// exception. It is the auto-instrumentation APM tracers are built on
// (Datadog's CallTarget and its descendants), as a capability of the SDK:
// the profiler author writes the targets and the integration, package
// instr does the IL.
//
// # Targets
//
// Targets are written ASSEMBLY!TYPE::METHOD, TYPE being the reflection
// full name (Shop.Box`1+Inner), with '*' for every type or method and an
// optional parameter list to pick overloads (Shop!Shop.Cache::Get(System.Int32));
// package [github.com/clrprof/clrprof/instr/target] parses, matches and
// converts them (it is pure Go, usable without cgo). A [Rule] applies an
// [Integration] to targets; a method matched by several rules gets the
// first.
//
// # The integration
//
// An Integration names two public static methods of a type in a helper
// assembly:
//
//	public static object Begin(int id, object instance, object[] args)
//	public static void End(int id, object state, object returnValue, object exception)
//
// Begin runs first in the method. id identifies the method
// ([Instrumenter.Method] names it, in target syntax); instance is this (a
// boxed copy for a value type; null for a static method; in a constructor,
// the object before the constructor ran); args holds the arguments, boxed,
// when [Integration].Args asks for them (null otherwise, and for a method
// without parameters), a by-ref argument giving the value it points at on
// entry. What Begin returns is the state End receives.
//
// End runs at every exit: state is what Begin returned (null if Begin
// threw), returnValue the value being returned, boxed (null for void, and
// the type's default when an exception leaves), exception the exception
// leaving the method or null. The exception is seen by an exception filter
// that declines it: it goes on to the method's callers unchanged, with its
// stack trace, as if nothing had looked at it.
//
// Whatever Begin or End throws stops in the wrapped method: the app never
// sees it. [Config].Errors can name a method that receives those
// exceptions, to count or log them. An integration that calls, directly or
// not, a method it instruments recurses into itself: guard with a
// [ThreadStatic] flag (the tests' helper does).
//
// One shape serves every method, which is why it passes objects: the wrap
// needs no generic instantiation of the integration per target (a
// CallTarget-style Begin<TTarget, TArg1...> would need a MethodSpec per
// method and per shared-code context), it works unchanged in shared
// canonical code, and the integration is an ordinary pair of static
// methods. The price is boxing: value-type arguments (with Args), a
// value-type this and value-type return values are boxed at every call.
//
// Values that cannot be boxed reach Begin and End as null: pointers,
// typed references, by-ref returns and byref-like values (Span<T>,
// ReadOnlySpan<T> and the types of the method's module marked
// IsByRefLike; a byref-like type of another assembly that is not one of
// the framework's known ones would be boxed, which the runtime refuses
// when it compiles the method: it then keeps running without the wrap).
//
// The wrapped method, in IL:
//
//	    .try { ldc.i4 id; <this>; <args>; call Begin; stloc state; leave L1 }
//	    filter { pop; ldc.i4.1; endfilter } { pop; leave L1 }     // Begin's exceptions stop here
//	L1: .try {
//	      .try { <the original body; every ret: stloc result; leave EXIT> }
//	      filter { stloc exception; ldc.i4.0; endfilter } { rethrow }   // seen, never caught
//	    } finally {
//	      .try { ldc.i4 id; ldloc state; <result as object>; ldloc exception; call End; leave L3 }
//	      filter { pop; ldc.i4.1; endfilter } { pop; leave L3 } // End's exceptions stop here
//	L3:   endfinally
//	    }
//	EXIT: ldloc result; ret
//
// The method's own exception clauses stay inside; tail. prefixes are
// dropped (a tail call cannot leave a try block: the callee runs inside the
// caller's wrap); short branches pushed out of reach are widened. Begin and
// End are referenced by AssemblyRef, TypeRef and MemberRef from the
// method's module: the runtime must be able to resolve the helper assembly
// by name when it compiles a wrapped method (installed beside the app, or
// loaded by the profiler itself before, see Config.Ready and
// Config.Prepare).
//
// # Using it
//
// Create an [Instrumenter] in Initialize, add [Instrumenter.EventMask] to
// the profiler's event mask, and forward the callbacks the Instrumenter
// has methods for (ModuleLoadFinished, ModuleUnloadStarted,
// JITCompilationStarted, JITInlining, and with ReJIT GetReJITParameters and
// ReJITError); see the example.
//
// # When methods are instrumented
//
//   - At first JIT: when a module loads, the Instrumenter finds the methods
//     its targets name; each is wrapped when the JIT first compiles it.
//     Every instantiation of a generic method or class, shared canonical
//     code included, runs the same wrapped IL.
//   - Inlining: JITInlining refuses to inline a matched method into its
//     callers, so every call runs the wrapped code.
//   - Precompiled code: methods of a ReadyToRun image (the framework:
//     System.Private.CoreLib, System.Linq, ...) run their precompiled code
//     without a JIT compilation. With [Config].ReJIT, the Instrumenter asks
//     for a ReJIT of the matched methods of such a module, and hands the
//     wrapped body in GetReJITParameters; tiered compilation then
//     recompiles the wrapped IL. The request is made when the module
//     loads if the helper can be resolved by then, else as soon as it can
//     (Config.Ready; by default, once the first module that is not
//     precompiled, the app's, has loaded: requests made while the runtime
//     starts crashed .NET Core 2.1). [Instrumenter.WaitReJIT] waits for
//     those requests to be accepted.
//   - Later: [Instrumenter.AddRule] adds targets at run time and
//     [Instrumenter.InstrumentLoaded] scans the modules loaded before an
//     attach; both ReJIT what they match. With a [Delivery] whose helpers
//     are not loaded yet (after an attach nothing may be compiled for the
//     first time to host its loader), they first ReJIT the targets with
//     only the loader's call at their entry; the wrap follows by a second
//     ReJIT once the loader ran (docs/instrumentation.md). Where the runtime has
//     RequestReJITWithInliners (.NET Core 3.0 and later) the callers that
//     inlined a method are recompiled with it (inlining blocked from then
//     on); before, the callers the Instrumenter saw inlining it
//     (JITInlining) are ReJITted too.
//
// # What cannot be instrumented
//
// A matched method that is not instrumented is reported by
// [Instrumenter.Report], by name and with the reason, never skipped
// silently:
//
//   - methods without IL (abstract, extern, P/Invoke, runtime-implemented
//     such as delegates' Invoke): nothing runs there to wrap (counted in
//     Report.WithoutBody when a wildcard matched them);
//   - bodies ending in jmp (a jmp cannot leave a try block), and invalid
//     bodies whose code runs off their end;
//   - methods of the integration's own assembly (the integration would
//     call itself);
//   - without Config.ReJIT: methods compiled before the helper could be
//     resolved (Config.Ready) or before their target was known, and every
//     method of a precompiled module (even one the JIT compiles: a first
//     compilation cannot be told from tiered compilation recompiling
//     precompiled code, and a body set then is not reliably used; on 3.1
//     it was not);
//   - a precompiled method inlined into other precompiled methods on a
//     runtime before .NET 7: there the runtime crashes when asked to
//     recompile the inliners of ReadyToRun code (dotnet/runtime#69634, seen
//     on 3.1), so the Instrumenter uses a plain ReJIT for precompiled
//     modules and those inlined copies keep running unwrapped;
//   - methods already running: a frame keeps the code it started with; a
//     ReJIT takes effect at the next call.
//
// Report also lists the targets that matched nothing so far (their
// assembly may not have loaded yet) and the methods matched but not
// compiled yet (Pending: never called, or waiting for a ReJIT).
//
// # Async methods
//
// What End (or a Go Exit hook) sees of an async method depends on how it
// was compiled:
//
//   - Classic async (Roslyn's or mcs's state machines; everything before
//     .NET 10, and code built for .NET 10 without runtime async): the
//     wrapped method is the stub that creates the state machine, runs it
//     to the first await that does not complete at once, and returns the
//     Task. End runs then, on the calling thread: the duration is that
//     first synchronous part, the return value is the Task (not its
//     result), and an exception thrown after an await never reaches End
//     (it goes into the Task). The state machine's MoveNext is a method of
//     a nested compiler-generated type, matched only by a target naming it.
//   - Runtime async (MethodImplAttributes.Async, "cil managed async": code
//     Roslyn compiles with -features:runtime-async=on, which runs on .NET 11
//     and on .NET 10 with DOTNET_RuntimeAsync=1, and on .NET 11 the
//     framework's own async methods, e.g. StreamReader.ReadToEndAsync's
//     core, even in an app built the classic way): the body's IL returns
//     void for Task and ValueTask and T for Task<T> and ValueTask<T>
//     (ilrw.Method.ILSig; the wrap uses it). The body is one resumable
//     frame: at an await that suspends, the frame is captured and left
//     without running finally blocks, and it resumes, inside the same
//     try, on whichever thread runs the continuation. So End runs once per
//     call, when the body completes or faults: the duration is the whole
//     call, awaits included; returnValue is the unwrapped result (a boxed
//     T, null for Task and ValueTask); exception is the one that faulted
//     the call. But End may run on another thread than Begin: an
//     integration must carry what it needs from Begin to End in Begin's
//     state, not in thread-local storage (sample/autotrace's Hooks.cs
//     does; GoHooks' Return.State likewise).
//
// On .NET 10 and 11 a runtime-async method has two compiled forms with one
// MethodDef token: the Task-returning entry ("thunk"), whose IL the
// runtime generates (it calls the other and wraps the result in a Task),
// and the async variant, which runs the method's IL. JITCompilationStarted
// is raised for each (two FunctionIDs; the thunk first when synchronous
// code calls the method, only the variant when runtime-async callers
// alone await it); GetILFunctionBody returns the token's IL in both, and
// SetILFunctionBody sets it for the token, which only the variant reads.
// The Instrumenter wraps the token once, at whichever compilation comes
// first, so the variant runs the wrapped body and each call runs Begin and
// End exactly once (TestAsyncThunk).
//
// ReJIT of a runtime-async method already compiled (AddRule,
// InstrumentLoaded, precompiled framework code): on .NET 11.0.0 every call
// after the request runs the wrapped body; on .NET 10.0.15 the runtime
// accepts the request but recompiles only the thunk, and the variant keeps
// its old code, so the wrap never runs (dotnet/runtime#128944, fixed for
// .NET 11 by dotnet/runtime#131681). Such a method is instrumented on 10
// only at its first JIT compilation.
//
// Deferred Go hooks pair an exit with its entry in the order of one
// thread's records; a runtime-async call can exit on another thread, so a
// Deferred rule wraps runtime-async methods with the synchronous entries
// (the hooks run in the call, on its thread; with Timestamps, Call.Time
// and Return.Time are read in Go).
//
// # Integrations in Go
//
// A Rule with Go set ([GoHooks]) calls Go functions of the profiler
// library instead of a managed integration, through P/Invoke methods the
// SDK defines in the target's module. Synchronous hooks (the default) run
// inside the call, on its thread, behind the signal guard (about 1 µs per
// call for empty hooks, 24-55x an empty C hook). Deferred hooks
// ([GoHooks].Deferred) only record the call in a per-thread ring, in C
// (per call, empty ones cost about 1.1-1.3x an empty C hook in wall time
// and 1.3-1.5x in CPU time, the drain goroutine's included, in the
// benchmark run of 2026-11-28; 1.4-1.9x in CPU time on a slower day: see
// docs/benchmarks.md and docs/instrumentation.md), and run later
// on a goroutine in each thread's order: they observe and cannot influence
// the call, may be dropped whole under overload (counted by
// [DeferredStats]), and [FlushDeferred] delivers what is queued (call it at
// Shutdown). [GoHooks].Timestamps gives deferred hooks the times of entry
// and exit. [NewCall], [NewReturn] and the Value constructors ([IntValue],
// [StringValue], ...) make what the hooks get, for their unit tests.
//
// # Cost
//
// Per call, a wrapped method makes two calls (Begin, End) and enters three
// protected regions (free on the non-exceptional path in CoreCLR); with
// Args, it allocates the argument array and boxes value-type arguments.
// The JIT compiles each matched method with the wrap added.
package instr
