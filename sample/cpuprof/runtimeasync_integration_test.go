package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

// Samples taken while a runtime-async method runs after its await
// (SpinAfterAwait burns about a second of CPU, a fixed amount of work, on
// the thread-pool thread that resumed it), by DoStackSnapshot of the suspended runtime
// (CPUPROF_MODE=suspend) and by perf events, on the classic and the
// runtime-async build (docs/runtime-async.md). On the runtime-async build
// the sampled stacks name SpinAfterAwait itself, and under it the
// runtime's continuation dispatcher (AsyncHelpers+...; in perf mode with
// the resumption stub between them as [native code]), not its logical
// caller Program.Run, whose continuation is on the heap (only the part
// before the first await runs under Run); on the classic build they name
// the state machine's MoveNext.
func TestCPUProfileRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/cpuprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, b := range harness.AsyncBuilds(rt) {
			ra, env := b.RuntimeAsync, b.Env
			app := harness.CompileCS(t, []string{"testdata/asyncspin.cs"}, "", b.Options...)
			for _, mode := range []string{"suspend", "perf"} {
				what := rt.Name + " runtime-async=" + map[bool]string{false: "no", true: "yes"}[ra] + " mode=" + mode
				out := filepath.Join(t.TempDir(), "cpu.pprof")
				res := harness.Run(t, rt, app, harness.RunOptions{
					ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: append(env, "CPUPROF_OUT="+out, "CPUPROF_MODE="+mode),
				})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "spun 10 calls\n", "done\n")
				if mode == "perf" && strings.Contains(res.Stderr, "sampling by suspending the runtime instead") {
					t.Logf("%s: perf events refused here; the suspend run covers it", what)
					continue
				}
				f, err := os.Open(out)
				if err != nil {
					t.Fatal(err)
				}
				prof, err := profile.Parse(f)
				f.Close()
				if err != nil {
					t.Fatalf("%s: parse: %v", what, err)
				}
				var total, in, dispatched, logical, machine int64
				var example string
				for _, s := range prof.Sample {
					total += s.Value[1]
					var names []string
					for _, l := range s.Location {
						for _, ln := range l.Line {
							names = append(names, ln.Function.Name)
						}
					}
					at := -1
					for i, n := range names {
						if strings.HasPrefix(n, "AsyncSpin.Ops.SpinAfterAwait") || strings.HasPrefix(n, "AsyncSpin.Ops+<SpinAfterAwait>") {
							at = i
							break
						}
					}
					if at < 0 {
						continue
					}
					in += s.Value[1]
					if strings.HasPrefix(names[at], "AsyncSpin.Ops+<SpinAfterAwait>") {
						machine += s.Value[1]
					}
					if example == "" {
						example = strings.Join(names, " < ")
					}
					// The next managed frame out (perf mode shows the
					// resumption stub between them as [native code]).
					next := at + 1
					for next < len(names) && names[next] == "[native code]" {
						next++
					}
					if next < len(names) && strings.HasPrefix(names[next], "System.Runtime.CompilerServices.AsyncHelpers+") {
						dispatched += s.Value[1]
					}
					for _, n := range names[at+1:] {
						if strings.HasPrefix(n, "AsyncSpin.Program.Run") {
							logical += s.Value[1]
						}
					}
				}
				t.Logf("%s: cpu %dms, %.0f%% in SpinAfterAwait; e.g. %s", what, total/1e6, 100*float64(in)/float64(max(total, 1)), example)
				if in*2 <= total {
					t.Errorf("%s: SpinAfterAwait in %d of %d ns of samples", what, in, total)
					continue
				}
				if !ra {
					// The spin runs in the state machine's MoveNext; the
					// stub's own samples (starting the machine, before the
					// await) are a few.
					if machine*10 < in*9 {
						t.Errorf("%s: classic build: want the state machine's MoveNext in nearly every sample of SpinAfterAwait, got %d of %d ns; e.g. %s", what, machine, in, example)
					}
					continue
				}
				// Before its await SpinAfterAwait runs under Program.Run
				// (the first call's part before the await, a few samples
				// at most); after it, under the dispatcher.
				if !strings.Contains(example, "AsyncSpin.Ops.SpinAfterAwait") || dispatched*10 < in*9 || logical*10 > in {
					t.Errorf("%s: want SpinAfterAwait called by the runtime's dispatcher (%d of %d ns), seldom under Program.Run (%d ns); e.g. %s", what, dispatched, in, logical, example)
				}
			}
		}
	})
}
