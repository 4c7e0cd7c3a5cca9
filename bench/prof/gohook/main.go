// Command gohook is the benchmark profiler of instr's Go hooks: it hooks
// the methods BENCH_GOHOOK_TARGETS names (default wrap!Program::Add, the hot
// method of bench/workloads/wrap.cs) with empty Go hooks (an Enter that
// returns 0 and an Exit that does nothing, no arguments asked for), and
// prints at Shutdown how many methods it hooked and how often the hooks
// ran. Built with -tags clrprof_testhooks, CLRPROF_GOHOOK_ENTRY=c binds the
// same P/Invokes to empty C functions instead (the C baseline) and
// CLRPROF_GOHOOK_GUARD=0 drops the signal guard (for comparison only).
// BENCH_GOHOOK_DEFERRED=1 makes the hooks deferred (GoHooks.Deferred):
// Shutdown then flushes them and prints how many calls were delivered and
// dropped; BENCH_GOHOOK_RING sets the rings' size in bytes
// (instr.SetDeferredRingSize).
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	in *instr.Instrumenter
}

// calls is written by Exit only when BENCH_GOHOOK_COUNT=1 (a check that
// the hooks ran; the measured rows leave it off so that the hooks are
// empty).
var calls atomic.Int64

func (p *prof) Initialize(info *profiler.Info) error {
	spec := os.Getenv("BENCH_GOHOOK_TARGETS")
	if spec == "" {
		spec = "wrap!Program::Add"
	}
	targets, err := target.ParseList(spec)
	if err != nil {
		return err
	}
	hooks := &instr.GoHooks{Enter: func(*instr.Call) uint64 { return 0 }, Exit: func(*instr.Return) {}}
	hooks.Deferred = os.Getenv("BENCH_GOHOOK_DEFERRED") == "1"
	if v := os.Getenv("BENCH_GOHOOK_RING"); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			err = instr.SetDeferredRingSize(n)
		}
		if err != nil {
			return fmt.Errorf("BENCH_GOHOOK_RING=%q: %v", v, err)
		}
	}
	if os.Getenv("BENCH_GOHOOK_COUNT") == "1" {
		hooks.Exit = func(*instr.Return) { calls.Add(1) }
	}
	if p.in, err = instr.New(info, instr.Config{Rules: []instr.Rule{{Targets: targets, Go: hooks}}}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *prof) Shutdown() error {
	deferred := ""
	if os.Getenv("BENCH_GOHOOK_DEFERRED") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := instr.FlushDeferred(ctx)
		cancel()
		st := instr.DeferredStats()
		deferred = fmt.Sprintf(" delivered=%d dropped=%d", st.Delivered, st.Dropped)
		if err != nil {
			deferred += " flush=" + err.Error()
		}
	}
	r := p.in.Report()
	fmt.Fprintf(os.Stderr, "gohook: Shutdown instrumented=%d failed=%d counted=%d panics=%d%s\n", len(r.Instrumented), len(r.Failed), calls.Load(), len(instr.GoHookPanics()), deferred)
	return nil
}

func init() { profiler.Register("{1C7E3A95-4D2B-4F68-A0E3-9B5D7C2F4A16}", &prof{}) }

func main() {}
