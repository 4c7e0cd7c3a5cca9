// Command countprof is the profiler of package profiler's integration
// tests: it asks for module loads and JIT compilations, counts them, and
// prints the counts to stderr at Shutdown.
//
// COUNTPROF_GOENV=follow registers with profiler.WithGoEnvironment. At
// Initialize it prints the Go runtime's GC percent, GOMAXPROCS and memory
// limit.
//
// COUNTPROF_TRY=failinit makes Initialize fail; COUNTPROF_TRY=elt calls
// elt.NewRecorder and prints what it answered.
//
// COUNTPROF_TRY=rejit prints whether the profiler was loaded as a
// notification profiler and what SetEventMask with EnableReJIT (and, as a
// notification profiler, elt.NewRecorder) answer, before it sets its usual mask.
//
// COUNTPROF_MISBEHAVE selects a fault in the first JITCompilationStarted:
// "panic" panics, "nil" dereferences a nil pointer (a SIGSEGV in Go code,
// which Go turns into a panic), "divide" divides by zero (Go checks the
// divisor and panics), "goexit" calls runtime.Goexit.
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync/atomic"

	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

type countprof struct {
	profiler.Base
	modules, jits atomic.Int64
	misbehave     string
}

func (p *countprof) Initialize(info *profiler.Info) error {
	fmt.Fprintf(os.Stderr, "countprof: Initialize info=%d\n", info.Version())
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	fmt.Fprintf(os.Stderr, "countprof: go gcpercent=%d maxprocs=%d memlimit=%d\n", gc, runtime.GOMAXPROCS(0), debug.SetMemoryLimit(-1))
	mask := profiler.MonitorModuleLoads | profiler.MonitorJITCompilation
	switch os.Getenv("COUNTPROF_TRY") {
	case "failinit":
		return errors.New("countprof: Initialize fails (COUNTPROF_TRY=failinit)")
	case "elt":
		_, err := elt.NewRecorder(info, elt.Options{Batch: func(elt.Batch) {}})
		fmt.Fprintf(os.Stderr, "countprof: try elt.NewRecorder: %v (already active: %v)\n", err, errors.Is(err, profiler.CORPROF_E_PROFILER_ALREADY_ACTIVE))
		m, _ := info.GetEventMask()
		return info.SetEventMask(m | mask)
	}
	if os.Getenv("COUNTPROF_TRY") == "rejit" {
		fmt.Fprintf(os.Stderr, "countprof: notificationOnly=%v\n", info.NotificationOnly())
		err := info.SetEventMask(mask | profiler.EnableReJIT)
		fmt.Fprintf(os.Stderr, "countprof: try EnableReJIT: %v (ErrNotificationOnly: %v)\n", err, errors.Is(err, profiler.ErrNotificationOnly))
		if info.NotificationOnly() {
			// (As the main profiler it would get hooks that its mask
			// below no longer allows.)
			_, err = elt.NewRecorder(info, elt.Options{Batch: func(elt.Batch) {}})
			fmt.Fprintf(os.Stderr, "countprof: try elt.NewRecorder: %v (ErrNotificationOnly: %v)\n", err, errors.Is(err, profiler.ErrNotificationOnly))
		}
	}
	return info.SetEventMask(mask)
}

func (p *countprof) ModuleLoadFinished(profiler.ModuleID, profiler.HRESULT) error {
	p.modules.Add(1)
	return nil
}

func (p *countprof) JITCompilationStarted(profiler.FunctionID, bool) error {
	if p.jits.Add(1) == 1 {
		switch p.misbehave {
		case "panic":
			panic("countprof: deliberate panic in JITCompilationStarted")
		case "nil":
			var p *countprof
			_ = p.misbehave
		case "divide":
			zero := len(p.misbehave) - len("divide")
			fmt.Fprintln(os.Stderr, 1/zero)
		case "goexit":
			runtime.Goexit()
		}
	}
	return nil
}

func (p *countprof) Shutdown() error {
	fmt.Fprintf(os.Stderr, "countprof: Shutdown modules=%d jits=%d\n", p.modules.Load(), p.jits.Load())
	return nil
}

func init() {
	var opts []profiler.Option
	if os.Getenv("COUNTPROF_GOENV") == "follow" {
		opts = append(opts, profiler.WithGoEnvironment())
	}
	profiler.Register("{7D3A4B12-9E1F-4C6B-8A2D-3F5E6C7B8A91}", &countprof{misbehave: os.Getenv("COUNTPROF_MISBEHAVE")}, opts...)
}

func main() {}
