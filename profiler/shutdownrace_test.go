package profiler_test

import (
	"syscall"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestKnownShutdownRaceCrash checks the matcher against the report of a
// real crash (CI, netcore2.1.30) and against near misses.
func TestKnownShutdownRaceCrash(t *testing.T) {
	rt := harness.Runtime{Name: "netcore2.1.30", Major: 2, Minor: 1}
	bt := "=== signal ===\n$1 = {si_signo = 11}\n=== crashing thread ===\n" +
		"#0  0x00007f889b5cc86d in EEToProfInterfaceImpl::ExceptionCatcherEnter(unsigned long, unsigned long) () from /x/libcoreclr.so\n" +
		"#1  0x00007f889b68a1c6 in ExceptionTracker::MakeCallbacksRelatedToHandler(...) () from /x/libcoreclr.so\n"
	crash := harness.Result{Signaled: true, Signal: syscall.SIGSEGV, Stdout: "shutdown: main returns with caught=17395\n", Backtrace: bt}
	if !knownShutdownRaceCrash(rt, crash) {
		t.Errorf("the CI crash is not recognised")
	}
	for name, r := range map[string]harness.Result{
		"abort":        {Signaled: true, Signal: syscall.SIGABRT, Stdout: crash.Stdout, Backtrace: bt},
		"before main":  {Signaled: true, Signal: syscall.SIGSEGV, Backtrace: bt},
		"in the SDK":   {Signaled: true, Signal: syscall.SIGSEGV, Stdout: crash.Stdout, Backtrace: "=== crashing thread ===\n#0  0x1 in clrprof_cb_ExceptionCatcherEnter () from /x/lib.so\n#1  0x2 in EEToProfInterfaceImpl::ExceptionCatcherEnter () from /x/libcoreclr.so\n"},
		"no backtrace": {Signaled: true, Signal: syscall.SIGSEGV, Stdout: crash.Stdout},
	} {
		if knownShutdownRaceCrash(rt, r) {
			t.Errorf("%s: taken for the known runtime race", name)
		}
	}
	if knownShutdownRaceCrash(harness.Runtime{Name: "net8.0.4", Major: 8}, crash) {
		t.Errorf("net8: taken for the known .NET Core 2.x race")
	}
}
