package profiler_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var modloadMissingRe = regexp.MustCompile(`(?m)^modloadprof: said=(\d+) withheld=(\d+) bad=(\d+)$`)

var modloadRe = regexp.MustCompile(`(?m)^modloadprof: started=(\d+) incomplete=(\d+) named=(\d+) otherErrors=(\d+) returned=(\d+) finished=(\d+) complete=(\d+)$`)

// TestModuleInfoInModuleLoadStarted asks GetModuleInfo2 for everything
// about each module inside ModuleLoadStarted, where the runtime does not
// know the module's assembly yet and .NET Core 2.1 and 3.1 crash (SIGSEGV
// in ProfToEEInterfaceImpl::GetModuleInfo2) when asked for its base address
// or flags, and returns the error it gets to the runtime (which ignores it:
// returning CORPROF_E_DATAINCOMPLETE from ModuleLoadStarted is harmless).
// On every runtime the app must run to its end, every module's name must
// reach the callback with CORPROF_E_DATAINCOMPLETE, and in
// ModuleLoadFinished every output must be there.
func TestModuleInfoInModuleLoadStarted(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/modloadprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := app(t, rt)
		for _, mode := range []string{"ignore", "error"} {
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: "{3C1B9A57-6D2E-4F80-9A1C-5E7D2B4F8A63}",
				Env: []string{"MODLOADPROF_RETURN=" + mode},
			})
			res.MustSucceed(t)
			m := modloadRe.FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("no modloadprof report:\n%s", res.Describe())
			}
			n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
			started, incomplete, named, other, returned, finished, complete := n(1), n(2), n(3), n(4), n(5), n(6), n(7)
			t.Logf("%s (%s): %s", rt.Name, mode, m[0])
			if started == 0 || named != started || incomplete != started || other != 0 {
				t.Errorf("%s: ModuleLoadStarted: %d modules, %d named, %d CORPROF_E_DATAINCOMPLETE, %d other errors; want every module named with CORPROF_E_DATAINCOMPLETE", rt.Name, started, named, incomplete, other)
			}
			if mode == "error" && returned != incomplete {
				t.Errorf("%s: returned %d errors to the runtime, want %d", rt.Name, returned, incomplete)
			}
			mm := modloadMissingRe.FindStringSubmatch(res.Stderr)
			if mm == nil {
				t.Fatalf("no modloadprof missing-outputs report:\n%s", res.Describe())
			}
			said, _ := strconv.Atoi(mm[1])
			bad, _ := strconv.Atoi(mm[3])
			t.Logf("%s (%s): %s; %s", rt.Name, mode, mm[0], regexp.MustCompile(`(?m)^modloadprof: first incomplete: .*$`).FindString(res.Stderr))
			if bad != 0 || said != incomplete {
				t.Errorf("%s: %d incomplete answers, %d naming what is missing, %d wrong about it; want every one to name the outputs it lacks", rt.Name, incomplete, said, bad)
			}
			if finished != started || complete != finished {
				t.Errorf("%s: ModuleLoadFinished: %d modules, %d with every output; want %d", rt.Name, finished, complete, started)
			}
		}
	})
}
