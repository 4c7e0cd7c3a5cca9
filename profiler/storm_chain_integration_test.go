package profiler_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestStormsChained runs the storms with a native profiler chained beside
// the Go one (issue 26, risk 14): chainc records every allocation in C while
// stormprof handles allocations and exceptions in Go. The signal storm
// (SIGRTMIN and SIGURG to every thread every ~10 µs, a GC.Collect loop) and
// the allocation storm (8 threads allocating and throwing 20000 times each,
// a GC.Collect loop) must complete with both profilers' counts and chainc's
// own asserts, 0 crashes.
func TestStormsChained(t *testing.T) {
	lib, native := harness.BuildProfiler(t, "./profiler/testdata/stormprof"), chainc(t)
	chain := []string{"CLRPROF_CHAIN_PATH=" + native, "CLRPROF_CHAIN_CLSID=" + chaincCLSID}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		for _, storm := range []string{"signal", "allocation"} {
			var res harness.Result
			if storm == "signal" {
				res = runStorm(t, rt, lib, app, stormTimeout(t, 3*time.Minute), chain...)
				res.MustSucceed(t)
				res.MustStdoutContain(t, "gcstorm: rounds=")
			} else {
				res = harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: stormprofCLSID,
					Args: []string{"storm", "20000"}, Env: append([]string{"CLRPROF_LOG_LEVEL=info"}, chain...), Timeout: 5 * time.Minute})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "storm: caught=320000 want=320000")
			}
			res.MustStderrContain(t, "chain: loaded the chained profiler")
			m := stormRe.FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("%s: %s storm: no stormprof report:\n%s", rt.Name, storm, res.Describe())
			}
			signals, _ := strconv.Atoi(m[1])
			allocs, _ := strconv.Atoi(m[3])
			c := chaincShutdown(t, res)
			t.Logf("%s: %s storm chained: %s; chainc %+v; crashes: 0", rt.Name, storm, strings.TrimSpace(m[0]), c)
			if allocs < 1000 || c.allocs < 1000 || c.failed != 0 {
				t.Errorf("%s: %s storm: stormprof saw %d allocations, chainc %+v", rt.Name, storm, allocs, c)
			}
			if storm == "signal" && signals < 1000 {
				t.Errorf("%s: the signal storm was too weak: %d signals", rt.Name, signals)
			}
		}
	})
}
