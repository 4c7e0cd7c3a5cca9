package main_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// calltrace on the internal/testapps/async app compiled classic and
// runtime async, tiered compilation on, every function hooked and only
// the app's. On .NET 10 with DOTNET_RuntimeAsync=1 hooking every function
// killed the app on every run (the JIT mis-compiles
// AsyncHelpers.UnsafeAwaitAwaiter at Tier0 with a leave hook: the await of
// the async iterator's ValueTask ran on as if completed and threw
// InvalidOperationException); the SDK no longer hooks that method there
// (elt/eltasync.go). A runtime-async method's Enter runs on every
// resumption too, and it gets no Leave when it suspends; the counts are
// of calls all the same: 51 for DelayThenValue (whose one await always
// suspends), 102 for ThrowAfterAwait (51 direct calls, 51 through
// CatchAround), on both builds (the classic build's are the state
// machines' stubs), and no frame is left open or closed as unwound.
func TestCallTraceRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/calltrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, b := range harness.AsyncBuilds(rt) {
			ra, env := b.RuntimeAsync, b.Env
			app := harness.CompileCS(t, []string{"../../internal/testapps/async/async.cs"}, "", b.Options...)
			for _, filter := range []string{"", "AsyncApp."} {
				out := filepath.Join(t.TempDir(), "calls.txt")
				res := harness.Run(t, rt, app, harness.RunOptions{
					ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: append(env, "CALLTRACE_OUT="+out, "CALLTRACE_FILTER="+filter),
				})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "DelayThenValue calls=51 sum=2550 ", "Stream items=51\n", "done\n")
				res.MustStderrContain(t, " lost=0 refused=0 unmapped=0 ")
				what := fmt.Sprintf("%s runtime-async=%v filter=%q", rt.Name, ra, filter)
				for fn, want := range map[string]int{"DelayThenValue": 51, "ThrowAfterAwait": 102, "CatchAround": 51, "NoAwait": 51} {
					if got := callsOf(t, out, "AsyncApp.Ops."+fn); got != want {
						t.Errorf("%s: %s counted %d calls, want %d", what, fn, got, want)
					}
				}
				sum := res.LastStderrLine("calltrace: summary ")
				t.Logf("%s: %s", what, sum)
				if ra && (!strings.Contains(sum, " unmatched=0 unwound=0 ") || strings.Contains(sum, " resumed=0 ")) {
					t.Errorf("%s: want no unmatched or unwound frame and resumptions seen: %s", what, sum)
				}
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
