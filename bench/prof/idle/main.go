// Command idle is the Go profiler of the benchmarks' "idle" and "unimpl"
// rows. It implements Initialize and Shutdown only, so every other callback
// is answered S_OK by the SDK's C shim without entering Go.
//
// BENCH_MODE selects the event mask (the same bits as bench/cref's mode of
// the same name):
//
//	idle    (default) no events at all: the cost of loading a Go profiler;
//	unimpl  module, class, assembly, app domain, JIT, thread, exception,
//	        GC, suspension, cache search and allocation callbacks, none of
//	        them implemented: the cost of callbacks answered in C.
//	snapshot  EnableStackSnapshot alone (asked by every sampling profiler
//	        here), no callback: what the flag changes in how the runtime runs.
//	eventpipe  an in-process EventPipe session of the runtime's provider
//	        with the GC keyword at Informational, as sample/contprof opens
//	        it with its profiles off, events answered in C (the profiler
//	        does not implement EventPipeEventDelivered): the runtime's own
//	        cost of the session.
//
// At Shutdown it prints "goidle: Shutdown mode=M go_mem_kb=K go_heap_kb=H
// go_stacks_kb=S go_runtime_kb=R" on stderr, K the memory the Go runtime
// holds (pprofbuild/overhead.GoMemory) and H, S, R its parts
// (overhead.GoMemoryParts).
package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/pprofbuild/overhead"
	"github.com/clrprof/clrprof/profiler"
)

// unimplMask is bench/cref's UNIMPL_MASK.
const unimplMask = profiler.MonitorFunctionUnloads | profiler.MonitorClassLoads | profiler.MonitorModuleLoads |
	profiler.MonitorAssemblyLoads | profiler.MonitorAppDomainLoads | profiler.MonitorJITCompilation |
	profiler.MonitorExceptions | profiler.MonitorGC | profiler.MonitorObjectAllocated | profiler.MonitorThreads |
	profiler.MonitorSuspends | profiler.MonitorCacheSearches | profiler.EnableObjectAllocated |
	profiler.MonitorCLRExceptions

type idle struct {
	profiler.Base
	mode string
}

func (p *idle) Initialize(info *profiler.Info) error {
	p.mode = os.Getenv("BENCH_MODE")
	if p.mode == "" {
		p.mode = "idle"
	}
	var err error
	switch p.mode {
	case "idle":
	case "unimpl":
		err = info.SetEventMask(unimplMask)
	case "snapshot":
		err = info.SetEventMask(profiler.EnableStackSnapshot)
	case "eventpipe":
		if _, err = info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
			Name:     clrevents.RuntimeProvider,
			Keywords: clrevents.KeywordGC,
			Level:    profiler.EventPipeInformational,
		}}, false); err == nil {
			err = info.SetEventMask2(0, profiler.HighEventPipe)
		}
	default:
		err = fmt.Errorf("goidle: unknown BENCH_MODE %q", p.mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "goidle: %v\n", err)
		return err
	}
	fmt.Fprintf(os.Stderr, "goidle: Initialize mode=%s\n", p.mode)
	return nil
}

func (p *idle) Shutdown() error {
	heap, stacks, rt := overhead.GoMemoryParts()
	fmt.Fprintf(os.Stderr, "goidle: Shutdown mode=%s go_mem_kb=%d go_heap_kb=%d go_stacks_kb=%d go_runtime_kb=%d\n", p.mode, (heap+stacks+rt)>>10, heap>>10, stacks>>10, rt>>10)
	return nil
}

func init() { profiler.Register("{9C4E7A12-3B5D-4F68-8E91-2A7C6B5D4E30}", &idle{}) }

func main() {}
