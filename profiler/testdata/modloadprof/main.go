// Command modloadprof is the profiler of TestModuleLoadStartedError: in
// ModuleLoadStarted it asks GetModuleInfo2 about the module (the runtime
// answers CORPROF_E_DATAINCOMPLETE there on some runtimes) and, when
// MODLOADPROF_RETURN=error, returns that error to the runtime. At Shutdown
// it prints what it saw:
//
//	modloadprof: started=N incomplete=I otherErrors=E returned=R
package main

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/profiler"
)

type modloadprof struct {
	profiler.Base
	info                                 *profiler.Info
	started, incomplete, other, returned atomic.Int64
	returnErrors                         bool
}

func (p *modloadprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.returnErrors = os.Getenv("MODLOADPROF_RETURN") == "error"
	return info.SetEventMask(profiler.MonitorModuleLoads)
}

func (p *modloadprof) ModuleLoadStarted(m profiler.ModuleID) error {
	p.started.Add(1)
	_, err := p.info.GetModuleInfo2(m, nil)
	switch {
	case err == nil:
	case errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE):
		p.incomplete.Add(1)
	default:
		p.other.Add(1)
	}
	if err != nil && p.returnErrors {
		p.returned.Add(1)
		return err
	}
	return nil
}

func (p *modloadprof) Shutdown() error {
	fmt.Fprintf(os.Stderr, "modloadprof: started=%d incomplete=%d otherErrors=%d returned=%d\n",
		p.started.Load(), p.incomplete.Load(), p.other.Load(), p.returned.Load())
	return nil
}

func init() {
	profiler.Register("{3C1B9A57-6D2E-4F80-9A1C-5E7D2B4F8A63}", &modloadprof{})
}

func main() {}
