// Command kestrelprof is the profiler of TestKestrel: it instruments the
// targets of KESTRELPROF_TARGETS (comma-separated; ASP.NET Core's own
// methods, precompiled, so through ReJIT) with synchronous Go hooks that
// print every call on stderr:
//
//	KHOOK enter NAME state=S seq=Q thread=T
//	KHOOK exit NAME state=S seq=Q thread=T ret=KIND:TYPE exc=BOOL:TYPE
//
// NAME is the method in target syntax, S the state the entry returned
// (unique per call), Q a process-wide sequence number of the hooks (their
// order), T the OS thread. For each body it hands the runtime in
// GetReJITParameters it prints what the method's metadata says of it
// ("kestrelprof: rewritten NAME implflags=0x... async=BOOL ilrw=BOOL",
// async being MethodImplAttributes.Async, 0x2000, in the flags, ilrw what
// ilrw's Module.IsRuntimeAsync says: a runtime-async method), and at
// Shutdown what the Instrumenter's report says ("kestrelprof: ...").
package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
	in   *instr.Instrumenter
	seq  atomic.Uint64
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "kestrelprof: "+format+"\n", args...)
}

func (p *prof) name(id int32) string {
	m, _ := p.in.Method(id)
	return m.Name
}

func (p *prof) enter(c *instr.Call) uint64 {
	s := p.seq.Add(1)
	fmt.Fprintf(os.Stderr, "KHOOK enter %s state=%d seq=%d thread=%d\n", p.name(c.Method()), s, s, c.Thread())
	return s
}

func (p *prof) exit(r *instr.Return) {
	q := p.seq.Add(1)
	v := r.Value()
	fmt.Fprintf(os.Stderr, "KHOOK exit %s state=%d seq=%d thread=%d ret=%s:%s exc=%v:%s\n",
		p.name(r.Method()), r.State(), q, r.Thread(), v.Kind, v.Type, r.Exception(), r.ExceptionType())
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	ts, err := target.ParseList(os.Getenv("KESTRELPROF_TARGETS"))
	if err != nil {
		logf("bad targets: %v", err)
		return err
	}
	hooks := &instr.GoHooks{Enter: p.enter, Exit: p.exit}
	if p.in, err = instr.New(info, instr.Config{Rules: []instr.Rule{{Targets: ts, Go: hooks}}, ReJIT: true}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if err := p.in.ModuleLoadFinished(m, hr); err != nil {
		logf("ModuleLoadFinished: %v", err)
	}
	return nil
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	err := p.in.GetReJITParameters(m, tok, fc)
	if im, ok := p.in.Lookup(m, tok); ok {
		flags := "?"
		async, ilrwAsync := false, false
		if imp, ierr := p.info.ModuleImport(m); ierr == nil {
			if mi, merr := imp.Method(tok); merr == nil {
				flags = fmt.Sprintf("%#x", uint32(mi.ImplFlags))
				async = mi.ImplFlags&metadata.MiAsync != 0
			}
			imp.Release()
		}
		if mod, merr := ilrw.OpenModule(p.info, m, false); merr == nil {
			ilrwAsync, _ = mod.IsRuntimeAsync(tok)
			mod.Release()
		}
		logf("rewritten %s implflags=%s async=%v ilrw=%v err=%v", im.Name, flags, async, ilrwAsync, err)
	}
	return err
}

func (p *prof) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, tok, f, hr)
}

func (p *prof) Shutdown() error {
	r := p.in.Report()
	for _, m := range r.Instrumented {
		logf("instrumented %s rejit=%v", m.Name, m.ReJIT)
	}
	for _, m := range r.Pending {
		logf("pending %s", m.Name)
	}
	for _, f := range r.Failed {
		logf("failed %s", f)
	}
	for _, t := range r.Unmatched {
		logf("unmatched %s", t)
	}
	for _, hp := range instr.GoHookPanics() {
		logf("panics %s %d %q", hp.Method, hp.Count, hp.First)
	}
	logf("summary instrumented=%d pending=%d failed=%d", len(r.Instrumented), len(r.Pending), len(r.Failed))
	return nil
}

func init() {
	profiler.Register("{3E6A1F20-9B4C-4D7E-8A15-6C2F0D9B7E41}", &prof{})
}

func main() {}
