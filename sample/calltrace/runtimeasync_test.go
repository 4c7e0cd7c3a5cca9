package main_test

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// calltrace hooking every function, tiered compilation on, on the
// internal/testapps/async app compiled classic and runtime async. On .NET
// 10 with DOTNET_RuntimeAsync=1 this killed the app on every run (the JIT
// mis-compiles AsyncHelpers.UnsafeAwaitAwaiter at Tier0 with a leave
// hook: the await of the async iterator's ValueTask ran on as if
// completed and threw InvalidOperationException); the SDK no longer hooks
// that method there (profiler/eltasync.go). Counts: a runtime-async
// method's Enter runs on every resumption too, so calltrace counts
// DelayThenValue's 51 calls as 102 on the runtime-async build (51 on the
// classic one, whose DelayThenValue is the state machine's stub).
func TestCallTraceRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/calltrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, ra := range []bool{false, true} {
			opts := []harness.CSOption{harness.For(rt)}
			var env []string
			if ra {
				opts = append(opts, harness.RuntimeAsync())
				env = harness.RuntimeAsyncEnv(rt)
			}
			app := harness.CompileCS(t, []string{"../../internal/testapps/async/async.cs"}, "", opts...)
			out := filepath.Join(t.TempDir(), "calls.txt")
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: append(env, "CALLTRACE_OUT="+out),
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "DelayThenValue calls=51 sum=2550 ", "Stream items=51\n", "done\n")
			res.MustStderrContain(t, " lost=0 refused=0 unmapped=0 ")
			calls := callsOf(t, out, "AsyncApp.Ops.DelayThenValue")
			want := 51
			if ra {
				want = 102
			}
			if calls != want {
				t.Errorf("%s runtime-async=%v: DelayThenValue counted %d, want %d", rt.Name, ra, calls, want)
			}
		}
	})
}

// callsOf sums the CALLTRACE_OUT counts of the functions named name.
func callsOf(t *testing.T, path, name string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.SplitN(sc.Text(), " ", 3)
		if len(fs) == 3 && fs[2] == name {
			c, _ := strconv.Atoi(fs[0])
			n += c
		}
	}
	return n
}
