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
