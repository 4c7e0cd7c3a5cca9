package ilrw_test

import (
	"fmt"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// listingEmitter stands in for the *ilrw.Module a profiler passes (which
// defines real tokens in the module's metadata): it numbers new locals
// and names and resolves the two calls of the example, so that the rewrite can be
// shown without a runtime.
type listingEmitter struct{ locals int }

func (e *listingEmitter) AddLocals(b *ilrw.Body, types ...*metadata.Type) (int, error) {
	first := e.locals
	e.locals += len(types)
	b.LocalVarSig = 0x11000001 // what Module.AddLocals stores: the new signature's token
	return first, nil
}

func (e *listingEmitter) TokenName(tok metadata.Token) string {
	switch tok {
	case tokGetTimestamp:
		return "int64 [System.Runtime]System.Diagnostics.Stopwatch::GetTimestamp()"
	case tokExitHook:
		return "void [Hooks]Hooks::Exit(int64, int32)"
	}
	return tok.String()
}

func (e *listingEmitter) TypeSpec(t []byte) (metadata.Token, error) { return 0x1B000001, nil }

func (e *listingEmitter) CallSite(tok metadata.Token) (ilrw.CallSite, error) {
	switch tok {
	case tokGetTimestamp: // long Stopwatch.GetTimestamp()
		return ilrw.CallSite{ReturnsValue: true}, nil
	case tokExitHook: // void Hooks.Exit(long start, int result)
		return ilrw.CallSite{Params: 2}, nil
	}
	return ilrw.CallSite{}, fmt.Errorf("unknown call %v", tok)
}

// The MemberRefs a profiler gets from Module.ExternalMethod.
const (
	tokGetTimestamp metadata.Token = 0x0A000001
	tokExitHook     metadata.Token = 0x0A000002
)

// Wrap a method: a timestamp taken at entry into a new local, and a hook
// called at every exit (return or exception) with that timestamp and the
// return value.
//
// The order matters:
//
//  1. AddLocals first, for the locals the entry and exit code share: the
//     exit code must name them.
//  2. WrapExit next: it puts the whole body, as it is now, in a
//     try/finally and the hook's code in the finally.
//  3. InsertAtEntry last: its code goes before the try, so the finally
//     never runs without it (the start local is always set when the exit
//     hook reads it), and an exception in it is not reported as the
//     method's.
//
// In a profiler the tokens come from Module.ExternalMethod (see
// ExampleRewriter), the Emitter and Resolver are the *ilrw.Module, and
// the Rewriter recomputes the max stack and installs the body.
func ExampleBody_WrapExit() {
	// int Inc(int x) { return x + 1; }: ldarg.0; ldc.i4.1; add; ret
	body, err := ilrw.Decode([]byte{4<<2 | 2, 0x02, 0x17, 0x58, 0x2A})
	if err != nil {
		fmt.Println(err)
		return
	}
	sig := &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeI4),
		Params: []*metadata.Type{metadata.Primitive(metadata.ElementTypeI4)}}
	em := &listingEmitter{}

	// 1. A local for the start timestamp.
	start, err := em.AddLocals(body, metadata.Primitive(metadata.ElementTypeI8))
	if err != nil {
		fmt.Println(err)
		return
	}
	// 2. Every exit calls Hooks.Exit(start, result); ex.ReturnLocal holds
	// the result (its default when an exception leaves).
	err = body.WrapExit(em, sig, func(ex ilrw.Exit) ([]*ilrw.Instruction, error) {
		return []*ilrw.Instruction{
			ilrw.LdLoc(start), ilrw.LdLoc(ex.ReturnLocal),
			ilrw.IToken(ilrw.OpCall, tokExitHook),
		}, nil
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// 3. start = Stopwatch.GetTimestamp(), before the try.
	err = body.InsertAtEntry(ilrw.IToken(ilrw.OpCall, tokGetTimestamp), ilrw.StLoc(start))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := body.ComputeMaxStack(em); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(body.Dump(em))
	// Output:
	// // fat header, maxstack 2, 13 instructions, locals 0x11000001, init
	// IL_0000: call int64 [System.Runtime]System.Diagnostics.Stopwatch::GetTimestamp()
	// IL_0005: stloc.0
	// IL_0006: ldarg.0
	// IL_0007: ldc.i4.1
	// IL_0008: add
	// IL_0009: stloc.1
	// IL_000a: leave IL_0017
	// IL_000f: ldloc.0
	// IL_0010: ldloc.1
	// IL_0011: call void [Hooks]Hooks::Exit(int64, int32)
	// IL_0016: endfinally
	// IL_0017: ldloc.1
	// IL_0018: ret
	// .try IL_0006 to IL_000f finally handler IL_000f to IL_0017
}
