//go:build cgo

package ilrw_test

import (
	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// tracer rewrites every method of namespace Shop to call
// Tracing.Log.Enter(string) first, a method of Tracing.dll, an assembly the
// application does not reference: the rewrite adds the references.
type tracer struct {
	profiler.Base
	rw *ilrw.Rewriter
}

func (p *tracer) Initialize(info *profiler.Info) error {
	p.rw = ilrw.NewRewriter(info, p.rewrite)
	// DisableInlining: a method inlined into its caller is never compiled
	// on its own, so it would escape the rewrite.
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.DisableInlining)
}

func (p *tracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.rw.JITCompilationStarted(f)
}

func (p *tracer) rewrite(m *ilrw.Method) (bool, error) {
	name := m.Name() // "Shop.Cart::Add"
	if len(name) < 5 || name[:5] != "Shop." {
		return false, nil // keep the IL
	}
	// void Enter(string): the AssemblyRef, TypeRef and MemberRef are
	// reused if the module has them, defined otherwise.
	enter, err := m.Module.ExternalMethod(
		metadata.AssemblyName{Name: "Tracing", Version: metadata.Version{Major: 1}},
		"Tracing", "Log", "Enter",
		&metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid),
			Params: []*metadata.Type{metadata.Primitive(metadata.ElementTypeString)}})
	if err != nil {
		return false, err
	}
	str, err := m.Module.UserString(name)
	if err != nil {
		return false, err
	}
	// ldstr "Shop.Cart::Add"; call void [Tracing]Tracing.Log::Enter(string)
	if err := m.Body.InsertAtEntry(ilrw.IToken(ilrw.OpLdstr, str), ilrw.IToken(ilrw.OpCall, enter)); err != nil {
		return false, err
	}
	return true, nil // installed with its max stack recomputed
}

// A Rewriter changes method bodies as the JIT first compiles them; the
// RewriteFunc edits the decoded body in place.
func ExampleRewriter() {
	_ = profiler.Register("{2B7D4E91-6C3A-4F58-8E1D-9A0B5C7F3E26}", &tracer{})
}

// wrapper times every method of namespace Shop: Hooks.Exit(start, name)
// of Hooks.dll runs at each exit with the timestamp taken at entry. The
// wrapped methods are kept from being inlined into their callers by
// refusing those inlinings one by one in JITInlining, instead of turning
// inlining off for the whole process (DisableInlining).
type wrapper struct {
	profiler.Base
	info *profiler.Info
	rw   *ilrw.Rewriter
}

// The interface assertion makes the compiler check every callback's
// signature: a method with a stale signature would otherwise compile and
// never be called (profiler.CheckCallbacks finds those in a test).
var _ profiler.Callback11 = (*wrapper)(nil)

func (p *wrapper) Initialize(info *profiler.Info) error {
	p.info = info
	p.rw = ilrw.NewRewriter(info, p.wrap)
	// MonitorJITCompilation brings JITCompilationStarted and JITInlining.
	return info.SetEventMask(profiler.MonitorJITCompilation)
}

func (p *wrapper) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.rw.JITCompilationStarted(f)
}

// JITInlining refuses to inline a method the rewrite changes: inlined,
// its body would be copied into the caller without the wrapper.
func (p *wrapper) JITInlining(caller, callee profiler.FunctionID) (shouldInline bool, err error) {
	imp, md, err := p.info.FunctionImport(callee)
	if err != nil {
		return true, nil // not ours to judge: let the JIT decide
	}
	defer imp.Release()
	return !inShop(imp, md), nil
}

// inShop reports whether method md is declared by a type of namespace Shop.
func inShop(imp *metadata.Import2, md metadata.Token) bool {
	mi, err := imp.Method(md)
	if err != nil {
		return false
	}
	td, err := imp.TypeDef(mi.Class)
	return err == nil && td.Namespace == "Shop"
}

func (p *wrapper) wrap(m *ilrw.Method) (bool, error) {
	if !inShop(m.Module.Import, m.Token) {
		return false, nil
	}
	sig, err := m.ILSig() // as the body sees it: a runtime-async method returns T, not Task<T>
	if err != nil {
		return false, err
	}
	long := metadata.Primitive(metadata.ElementTypeI8)
	ts, err := m.Module.ExternalMethod(
		metadata.AssemblyName{Name: "System.Runtime", Version: metadata.Version{Major: 4}},
		"System.Diagnostics", "Stopwatch", "GetTimestamp", &metadata.MethodSig{Return: long})
	if err != nil {
		return false, err
	}
	exit, err := m.Module.ExternalMethod(
		metadata.AssemblyName{Name: "Hooks", Version: metadata.Version{Major: 1}},
		"", "Hooks", "Exit", &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid),
			Params: []*metadata.Type{long, metadata.Primitive(metadata.ElementTypeString)}})
	if err != nil {
		return false, err
	}
	name, err := m.Module.UserString(m.Name())
	if err != nil {
		return false, err
	}
	// 1. The local entry and exit share.
	start, err := m.Module.AddLocals(m.Body, long)
	if err != nil {
		return false, err
	}
	// 2. The exit hook in a finally around the whole body...
	err = m.Body.WrapExit(m.Module, sig, func(ilrw.Exit) ([]*ilrw.Instruction, error) {
		return []*ilrw.Instruction{ilrw.LdLoc(start), ilrw.IToken(ilrw.OpLdstr, name), ilrw.IToken(ilrw.OpCall, exit)}, nil
	})
	if err != nil {
		return false, err
	}
	// 3. ...and the entry code before the try, so that the finally never
	// runs without it.
	if err := m.Body.InsertAtEntry(ilrw.IToken(ilrw.OpCall, ts), ilrw.StLoc(start)); err != nil {
		return false, err
	}
	return true, nil // the Rewriter recomputes the max stack and installs it
}

// Wrap methods with entry and exit code (AddLocals, WrapExit, then
// InsertAtEntry, calls into another assembly through ExternalMethod) and
// refuse to inline the wrapped methods (JITInlining).
func ExampleRewriter_wrap() {
	_ = profiler.Register("{5E0C7A12-3B9D-4C6E-8F21-7D4A9B0E6C35}", &wrapper{})
}
