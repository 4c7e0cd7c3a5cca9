package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// asyncApp is the async workload shared by the runtime-async tests.
var asyncApp = []string{"../../internal/testapps/async/async.cs"}

// asyncBuild is one way of compiling the async app for a runtime.
type asyncBuild struct {
	name    string
	runtime bool // runtime async (MethodImplAttributes.Async)
	opts    []harness.CSOption
}

// asyncBuilds are the builds of the async app a runtime runs: classic
// everywhere, and runtime async from .NET 10 on (DOTNET_RuntimeAsync=1 on
// 10).
func asyncBuilds(rt harness.Runtime) []asyncBuild {
	b := []asyncBuild{{name: "classic", opts: []harness.CSOption{harness.For(rt)}}}
	if rt.Major >= 10 {
		b = append(b, asyncBuild{name: "runtime-async", runtime: true, opts: []harness.CSOption{harness.For(rt), harness.RuntimeAsync()}})
	}
	return b
}

// readToEnd is a CoreLib method the async app reaches (built by Roslyn),
// runtime async on .NET 11 (ILDasm: "cil managed async"), a state
// machine's stub before.
const readToEnd = "System.Private.CoreLib!System.IO.StreamReader::ReadToEndAsyncInternal"

// appFigure reads "NAME calls=N ... KEY=V" from the app's output.
func appFigure(t *testing.T, out, line, key string) float64 {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(line) + ` .*\b` + regexp.QuoteMeta(key) + `=([-0-9.]+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the app printed no %s %s:\n%s", line, key, out)
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestAutotraceAsync traces the async app's methods, built classic and
// runtime async. Runtime async: every call is reported once (51 of
// DelayThenValue, wherever its continuation resumed), each lasting the
// whole call (at least the 20 ms delay it awaits, within what the app
// measured around the await), with the exception that faulted it
// (ThrowAfterAwait's, 102 calls: 51 direct and 51 under CatchAround, which
// catches it and ends without one). Classic: the wrapped method is the
// stub that starts the state machine and returns the Task at the first
// await, so the same 51 calls last microseconds and no exception leaves
// it (it goes into the Task): that is what End sees there.
func TestAutotraceAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/autotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range asyncBuilds(rt) {
			t.Run(b.name, func(t *testing.T) {
				app := harness.CompileCS(t, asyncApp, "", b.opts...)
				env := harness.RuntimeAsyncEnv(rt)
				if !b.runtime {
					env = nil
				}
				out := filepath.Join(t.TempDir(), "calls.jsonl")
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: append(env, "AUTOTRACE_TARGETS=async!AsyncApp.Ops::*,"+readToEnd, "AUTOTRACE_OUTPUT="+out)})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "done\n", "DelayThenValue calls=51 ", "ThrowAfterAwait calls=51 thrown=51", "FinallyAround calls=51 finallies=51", "CatchAround calls=51 caught=51")
				res.MustStderrNotContain(t, "could not instrument", "not delivered", "integration threw")
				t.Logf("stdout:\n%sstderr:\n%s", res.Stdout, res.Stderr)
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				type agg struct {
					calls, exc int
					total      int64
					min        int64
					threads    map[int]bool
				}
				got := map[string]*agg{}
				for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
					var c callLine
					if err := json.Unmarshal([]byte(l), &c); err != nil {
						t.Fatalf("line %q: %v", l, err)
					}
					a := got[c.Method]
					if a == nil {
						a = &agg{min: c.DurNs, threads: map[int]bool{}}
						got[c.Method] = a
					}
					a.calls++
					a.total += c.DurNs
					a.min = min(a.min, c.DurNs)
					a.threads[c.Thread] = true
					if c.Exception != nil {
						a.exc++
						if *c.Exception != "System.InvalidOperationException" {
							t.Errorf("line %q: want InvalidOperationException", l)
						}
					}
					if c.Depth < 1 || c.DurNs < 0 {
						t.Errorf("line %q: depth or duration out of range", l)
					}
				}
				for m, a := range got {
					t.Logf("%s: %d calls on %d threads, %d exceptions, mean %v, min %v", m, a.calls, len(a.threads), a.exc,
						time.Duration(a.total/int64(a.calls)), time.Duration(a.min))
				}
				const n = 51
				wantExc := 0
				if b.runtime {
					wantExc = 2 * n
				}
				for m, want := range map[string][2]int{"DelayThenValue": {n, 0}, "ThrowAfterAwait": {2 * n, wantExc},
					"CatchAround": {n, 0}, "UsingAround": {n, 0}, "NoAwait": {n, 0}, "FinallyAround": {n, 0}} {
					a := got["AsyncApp.Ops::"+m]
					if a == nil || a.calls != want[0] || a.exc != want[1] {
						t.Errorf("%s: %+v, want %d calls, %d exceptions", m, a, want[0], want[1])
					}
				}
				// On .NET 11 the framework's own async methods are runtime
				// async whatever the app's build.
				if rt.Major >= 10 {
					res.MustStdoutContain(t, "ReadToEndAsync calls=51 chars=612")
					if a := got["System.IO.StreamReader::ReadToEndAsyncInternal"]; a == nil || a.calls != n || a.exc != 0 {
						t.Errorf("StreamReader::ReadToEndAsyncInternal: %+v, want %d calls", a, n)
					}
				}
				d := got["AsyncApp.Ops::DelayThenValue"]
				if d == nil {
					return
				}
				appMean := time.Duration(appFigure(t, res.Stdout, "DelayThenValue", "mean_ms") * float64(time.Millisecond))
				mean := time.Duration(d.total / int64(d.calls))
				t.Logf("DelayThenValue: the app measured a mean of %v around each await, autotrace %v inside the calls", appMean, mean)
				if b.runtime {
					// The traced span lies inside the app's (Begin after its
					// Restart, End before the await returns to it), and
					// holds the awaited Task.Delay(20), which cannot end in
					// less than 10 ms.
					if d.min < int64(10*time.Millisecond) || mean > appMean {
						t.Errorf("DelayThenValue: min %v, mean %v: want each call's whole duration (at least the 20 ms delay, at most the app's mean %v)",
							time.Duration(d.min), mean, appMean)
					}
				} else if mean >= 10*time.Millisecond {
					t.Errorf("classic DelayThenValue: mean %v: the stub returns at the first await, want far less than the 20 ms delay", mean)
				}
			})
		}
	})
}
