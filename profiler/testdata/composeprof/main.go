// Command composeprof is the profiler of the composition tests: two Go
// profilers composed in one library (profiler.Compose).
//
// A asks for JIT compilations and threads; B for JIT compilations and
// module loads. Each implements a callback it did not ask for (A
// ModuleLoadFinished, B ThreadCreated), whose count must stay 0 while the
// other member gets those events. Both answer JITInlining: A always yes, B
// no when COMPOSEPROF_NOINLINE=1. COMPOSEPROF_PANIC=1 makes A panic in
// every JITCompilationStarted after counting it. COMPOSEPROF_IL=1 makes
// both rewrite App.Work at its JITCompilationStarted (A first: a nop at
// the entry; then B, which prints whether GetILFunctionBody gave it A's
// body, and adds another nop). At Shutdown each prints
// one line:
//
//	composeprof: A jits=N threads=N modules=N inlining=N
//	composeprof: B jits=N threads=N modules=N inlining=N
package main

import (
	"bytes"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/profiler"
)

var (
	rewriteIL = os.Getenv("COMPOSEPROF_IL") == "1"
	aBody     []byte // what A installed
)

// addNop puts a nop at the entry of the function's body and installs it,
// if the function is App.Work; it returns the body it read and the one it
// installed.
func addNop(info *profiler.Info, f profiler.FunctionID) (before, after []byte, ok bool) {
	if name, err := info.FunctionName(f); err != nil || name != "App.Work" {
		return nil, nil, false
	}
	fi, err := info.GetFunctionInfo(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, "composeprof: GetFunctionInfo:", err)
		return nil, nil, false
	}
	before, err = info.GetILFunctionBody(fi.ModuleID, fi.Token)
	if err != nil {
		fmt.Fprintln(os.Stderr, "composeprof: GetILFunctionBody:", err)
		return nil, nil, false
	}
	b, err := ilrw.Decode(before)
	if err == nil {
		err = b.InsertAt(0, &ilrw.Instruction{Op: ilrw.OpNop})
	}
	if err == nil {
		after, err = b.Encode()
	}
	if err == nil {
		err = info.SetILFunctionBody(fi.ModuleID, fi.Token, after)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "composeprof: rewrite:", err)
		return nil, nil, false
	}
	return before, after, true
}

type counts struct {
	jits, threads, modules, inlining atomic.Int64
}

func (c *counts) print(name string) {
	fmt.Fprintf(os.Stderr, "composeprof: %s jits=%d threads=%d modules=%d inlining=%d\n", name, c.jits.Load(), c.threads.Load(), c.modules.Load(), c.inlining.Load())
}

type a struct {
	profiler.Base
	counts
	panics bool
	info   *profiler.Info
}

func (p *a) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.MonitorThreads)
}
func (p *a) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	p.jits.Add(1)
	if rewriteIL {
		if _, after, ok := addNop(p.info, f); ok {
			aBody = after
			fmt.Fprintf(os.Stderr, "composeprof: A rewrote App.Work (%d bytes)\n", len(after))
		}
	}
	if p.panics {
		panic("composeprof: A panics in JITCompilationStarted")
	}
	return nil
}
func (p *a) ThreadCreated(profiler.ThreadID) error { p.threads.Add(1); return nil }
func (p *a) ModuleLoadFinished(profiler.ModuleID, profiler.HRESULT) error {
	p.modules.Add(1)
	return nil
}
func (p *a) JITInlining(profiler.FunctionID, profiler.FunctionID) (bool, error) {
	p.inlining.Add(1)
	return true, nil
}
func (p *a) Shutdown() error { p.print("A"); return nil }

type b struct {
	profiler.Base
	counts
	noInline bool
	info     *profiler.Info
}

func (p *b) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask(profiler.MonitorJITCompilation | profiler.MonitorModuleLoads); err != nil {
		return err
	}
	// B's view of the mask is its own, not the union.
	m, err := info.GetEventMask()
	if err != nil || m != profiler.MonitorJITCompilation|profiler.MonitorModuleLoads {
		return fmt.Errorf("composeprof: B's GetEventMask = %v, %v", m, err)
	}
	return nil
}
func (p *b) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	p.jits.Add(1)
	if rewriteIL {
		if before, after, ok := addNop(p.info, f); ok {
			fmt.Fprintf(os.Stderr, "composeprof: B sees A's IL: %v; B rewrote App.Work (%d bytes)\n", aBody != nil && bytes.Equal(before, aBody), len(after))
		}
	}
	return nil
}
func (p *b) ThreadCreated(profiler.ThreadID) error { p.threads.Add(1); return nil }
func (p *b) ModuleLoadFinished(profiler.ModuleID, profiler.HRESULT) error {
	p.modules.Add(1)
	return nil
}
func (p *b) JITInlining(profiler.FunctionID, profiler.FunctionID) (bool, error) {
	p.inlining.Add(1)
	return !p.noInline, nil
}
func (p *b) Shutdown() error { p.print("B"); return nil }

func init() {
	c, err := profiler.Compose(&a{panics: os.Getenv("COMPOSEPROF_PANIC") == "1"}, &b{noInline: os.Getenv("COMPOSEPROF_NOINLINE") == "1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "composeprof:", err)
		return
	}
	profiler.Register("{3C9E7A15-2B4D-4F6E-8A1C-5D7B9E0F2A34}", c)
}

func main() {}
