// Command xasmprof is the profiler of ilrw's cross-assembly test: it
// rewrites App::Target to call XLib.Hits::Hit(string), in an assembly the
// app does not reference (new AssemblyRef, TypeRef and MemberRef), and
// System.Console::WriteLine(string) through the references the app has
// (which must be reused, not defined again). It reports on stderr, lines
// starting "xasmprof: ".
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	rw *ilrw.Rewriter
	mu sync.Mutex
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "xasmprof: "+format+"\n", args...)
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.rw = ilrw.NewRewriter(info, p.rewrite)
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.DisableInlining)
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	if err := p.rw.JITCompilationStarted(f); err != nil {
		logf("rewrite error: %v", err)
	}
	return nil
}

// rows counts the module's AssemblyRef, TypeRef and MemberRef rows.
func rows(m *ilrw.Module) (asm, typ, mem int, err error) {
	ai, err := metadata.QueryAssemblyImport(m.Import)
	if err != nil {
		return 0, 0, 0, err
	}
	defer ai.Release()
	a, err := ai.AssemblyRefs()
	if err != nil {
		return 0, 0, 0, err
	}
	t, err := m.Import.TypeRefs()
	if err != nil {
		return 0, 0, 0, err
	}
	mr, err := m.Import.AllMemberRefs()
	if err != nil {
		return 0, 0, 0, err
	}
	return len(a), len(t), len(mr), nil
}

// consoleAssembly returns the name of the assembly the module's TypeRef of
// System.Console is scoped to.
func consoleAssembly(m *ilrw.Module) (metadata.AssemblyName, error) {
	ai, err := metadata.QueryAssemblyImport(m.Import)
	if err != nil {
		return metadata.AssemblyName{}, err
	}
	defer ai.Release()
	trs, err := m.Import.TypeRefs()
	if err != nil {
		return metadata.AssemblyName{}, err
	}
	for _, tr := range trs {
		info, err := m.Import.TypeRef(tr)
		if err != nil {
			return metadata.AssemblyName{}, err
		}
		if info.Namespace != "System" || info.Name != "Console" {
			continue
		}
		ar, err := ai.AssemblyRef(info.Scope)
		if err != nil {
			return metadata.AssemblyName{}, fmt.Errorf("System.Console's scope %v: %v", info.Scope, err)
		}
		return metadata.AssemblyName{Name: ar.Name}, nil
	}
	return metadata.AssemblyName{}, fmt.Errorf("the app has no TypeRef of System.Console")
}

func voidOf(param metadata.ElementType) *metadata.MethodSig {
	return &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid),
		Params: []*metadata.Type{metadata.Primitive(param)}}
}

func (p *prof) rewrite(m *ilrw.Method) (bool, error) {
	if m.Name() != "App::Target" {
		return false, nil
	}
	mod := m.Module
	a0, t0, m0, err := rows(mod)
	if err != nil {
		return false, err
	}
	// The app's own references: the assembly its System.Console TypeRef
	// names (mscorlib when mcs compiled it against Mono's; System.Console
	// when Roslyn compiled it against .NET 10's or 11's reference
	// assemblies), System.Console, Console::WriteLine(string).
	console, err := consoleAssembly(mod)
	if err != nil {
		return false, err
	}
	logf("System.Console is referenced in %s", console.Name)
	writeLine, err := mod.ExternalMethod(console, "System", "Console", "WriteLine", voidOf(metadata.ElementTypeString))
	if err != nil {
		return false, err
	}
	a1, t1, m1, err := rows(mod)
	if err != nil {
		return false, err
	}
	logf("existing refs: WriteLine=%v rows before asm=%d type=%d member=%d after asm=%d type=%d member=%d",
		writeLine, a0, t0, m0, a1, t1, m1)

	xlib := metadata.AssemblyName{Name: "XLib", Version: metadata.Version{Major: 0}}
	hit, err := mod.ExternalMethod(xlib, "XLib", "Hits", "Hit", voidOf(metadata.ElementTypeString))
	if err != nil {
		return false, err
	}
	a2, t2, m2, err := rows(mod)
	if err != nil {
		return false, err
	}
	again, err := mod.ExternalMethod(xlib, "XLib", "Hits", "Hit", voidOf(metadata.ElementTypeString))
	if err != nil {
		return false, err
	}
	a3, t3, m3, err := rows(mod)
	if err != nil {
		return false, err
	}
	logf("new refs: Hit=%v again=%v rows after first asm=%d type=%d member=%d after second asm=%d type=%d member=%d",
		hit, again, a2, t2, m2, a3, t3, m3)

	where, err := mod.UserString("App::Target")
	if err != nil {
		return false, err
	}
	via, err := mod.UserString("Target via the app's Console reference")
	if err != nil {
		return false, err
	}
	err = m.Body.InsertAtEntry(
		ilrw.IToken(ilrw.OpLdstr, where), ilrw.IToken(ilrw.OpCall, hit),
		ilrw.IToken(ilrw.OpLdstr, via), ilrw.IToken(ilrw.OpCall, writeLine))
	if err != nil {
		return false, err
	}
	logf("rewrote %s", m.Name())
	return true, nil
}

func (p *prof) Shutdown() error {
	s := p.rw.Stats()
	logf("stats rewritten=%d errors=%d", s.Rewritten, s.Errors)
	return nil
}

func init() {
	profiler.Register("{5B7A3C1E-2D4F-4A8B-9C6E-0F1A2B3C4D5E}", &prof{})
}

func main() {}
