// Command profiler is the reverse_startup scenario's profiler, the
// counterpart of upstream's null profiler: it is named by no environment
// variable but by the StartupProfiler command a diagnostics tool sent
// while the runtime was paused at start-up. It checks that it was loaded
// as a start-up profiler (Initialize, not InitializeForAttach, before any
// managed code ran) and that no CORECLR_ variable named it, and passes at
// Shutdown.
package main

import (
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type nullprofiler struct {
	profiler.Base
	initialized atomic.Bool
}

func (p *nullprofiler) Initialize(info *profiler.Info) error {
	p.initialized.Store(true)
	check.Logf("profiler: Initialize (start-up load)")
	for _, v := range []string{"CORECLR_ENABLE_PROFILING", "CORECLR_PROFILER", "CORECLR_PROFILER_PATH"} {
		if val, ok := os.LookupEnv(v); ok {
			check.Failf("%s=%s is set: the profiler was not loaded by the StartupProfiler command alone", v, val)
		}
	}
	return nil
}

func (p *nullprofiler) InitializeForAttach(*profiler.Info, []byte) error {
	check.Failf("InitializeForAttach: the profiler was attached, not loaded at start-up")
	return profiler.E_FAIL
}

func (p *nullprofiler) Shutdown() error {
	var final string
	if !p.initialized.Load() {
		final = "Shutdown without Initialize"
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{9C1A6E14-2DEC-45CE-9061-F31964D8884D}", &nullprofiler{})
}

func main() {}
