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

// TestGotraceAsync traces the async app (internal/testapps/async), built
// classic and runtime async, with synchronous and with deferred Go hooks.
// Runtime async: every call is reported once (a call that resumed on
// another thread exits there, and is paired with its entry through the
// state Enter returned), with its whole duration (DelayThenValue at least
// its 20 ms delay, within the app's own measurement around the await) and
// the exception that faulted it; no call is left "not returned at
// shutdown". Classic: the wrapped stub returns at the first await (short
// calls, no exception: it goes into the Task).
func TestGotraceAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		type build struct {
			name    string
			runtime bool
			opts    []harness.CSOption
		}
		builds := []build{{"classic", false, []harness.CSOption{harness.For(rt)}}}
		if rt.Major >= 10 {
			builds = append(builds, build{"runtime-async", true, []harness.CSOption{harness.For(rt), harness.RuntimeAsync()}})
		}
		for _, b := range builds {
			for _, deferred := range []bool{false, true} {
				name := b.name + map[bool]string{false: "/sync", true: "/deferred"}[deferred]
				t.Run(name, func(t *testing.T) {
					app := harness.CompileCS(t, []string{"../../internal/testapps/async/async.cs"}, "", b.opts...)
					var env []string
					if b.runtime {
						env = harness.RuntimeAsyncEnv(rt)
					}
					out := filepath.Join(t.TempDir(), "calls.jsonl")
					env = append(env, "GOTRACE_TARGETS=async!AsyncApp.Ops::*", "GOTRACE_OUTPUT="+out)
					if deferred {
						env = append(env, "GOTRACE_DEFERRED=1")
					}
					res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: env})
					res.MustSucceed(t)
					res.MustStdoutContain(t, "done\n", "DelayThenValue calls=51 ", "ThrowAfterAwait calls=51 thrown=51", "FinallyAround calls=51 finallies=51")
					res.MustStderrNotContain(t, "could not instrument", "not returned at shutdown", "not all delivered")
					if deferred && !strings.Contains(res.Stderr, " calls delivered, 0 dropped") {
						t.Errorf("deferred: calls dropped, or no count:\n%s", res.Stderr)
					}
					t.Logf("stderr:\n%s", res.Stderr)
					data, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					type agg struct {
						calls, exc int
						total, min int64
					}
					got := map[string]*agg{}
					for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
						var c callLine
						if err := json.Unmarshal([]byte(l), &c); err != nil {
							t.Fatalf("line %q: %v", l, err)
						}
						a := got[c.Method]
						if a == nil {
							a = &agg{min: c.DurNs}
							got[c.Method] = a
						}
						a.calls++
						a.total += c.DurNs
						a.min = min(a.min, c.DurNs)
						if c.Exception != nil {
							a.exc++
						}
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
					d := got["AsyncApp.Ops::DelayThenValue"]
					mm := regexp.MustCompile(`DelayThenValue calls=51 .*mean_ms=([0-9.]+)`).FindStringSubmatch(res.Stdout)
					if d == nil || mm == nil {
						t.Fatalf("no DelayThenValue figures: %+v\n%s", d, res.Stdout)
					}
					ms, _ := strconv.ParseFloat(mm[1], 64)
					appMean := time.Duration(ms * float64(time.Millisecond))
					mean := time.Duration(d.total / int64(d.calls))
					t.Logf("DelayThenValue: app mean %v around the await; gotrace mean %v, min %v", appMean, mean, time.Duration(d.min))
					if b.runtime {
						if d.min < int64(10*time.Millisecond) || mean > appMean {
							t.Errorf("DelayThenValue: min %v, mean %v: want each call's whole duration (at least the 20 ms delay, at most the app's mean %v)",
								time.Duration(d.min), mean, appMean)
						}
					} else if mean >= 10*time.Millisecond {
						t.Errorf("classic DelayThenValue: mean %v: the stub returns at the first await", mean)
					}
				})
			}
		}
	})
}
