package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	asyncapp "github.com/clrprof/clrprof/internal/testapps/async"
)

// TestGotraceAsync traces the async app (internal/testapps/async), built
// classic and runtime async, with synchronous and with deferred Go hooks.
// Both builds: every call is reported once (a call that resumed on
// another thread exits there, and is paired with its entry through the
// state Enter returned), with its whole duration (DelayThenValue at least
// its 20 ms delay, within the app's own measurement around the await) and
// the exception that faulted it; no call is left "not returned at
// shutdown". Classic: Exit runs at the completion of the Task the stub
// returned (a Deferred rule delivers such methods synchronously).
func TestGotraceAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			for _, deferred := range []bool{false, true} {
				name := b.Name + map[bool]string{false: "/sync", true: "/deferred"}[deferred]
				t.Run(name, func(t *testing.T) {
					app := harness.CompileCS(t, []string{"../../internal/testapps/async/async.cs"}, "", b.Options...)
					out := filepath.Join(t.TempDir(), "calls.jsonl")
					env := append(b.Env, "GOTRACE_TARGETS=async!AsyncApp.Ops::*", "GOTRACE_OUTPUT="+out)
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
					_, got, err := asyncapp.ParseCalls(data)
					if err != nil {
						t.Fatal(err)
					}
					for m, want := range asyncapp.Want() {
						a := got["AsyncApp.Ops::"+m]
						if a == nil || a.Calls != want[0] || a.Exceptions != want[1] {
							t.Errorf("%s: %+v, want %d calls, %d exceptions", m, a, want[0], want[1])
						}
					}
					d := got["AsyncApp.Ops::DelayThenValue"]
					appMean, err := asyncapp.DelayMean(res.Stdout)
					if d == nil || err != nil {
						t.Fatalf("no DelayThenValue figures: %+v, %v\n%s", d, err, res.Stdout)
					}
					mean := d.Mean()
					t.Logf("DelayThenValue: app mean %v around the await; gotrace mean %v, min %v", appMean, mean, d.Min)
					if d.Min < 10*time.Millisecond || mean > appMean {
						t.Errorf("DelayThenValue: min %v, mean %v: want each call's whole duration (at least the 20 ms delay, at most the app's mean %v)",
							d.Min, mean, appMean)
					}
				})
			}
		}
	})
}

// TestGotraceFetch is TestAutotraceFetch (sample/autotrace) with Go hooks,
// synchronous and deferred: the FetchAsync calls each last their
// await, the third with its exception, and the cancelled calls end with
// TaskCanceledException (classic) or the runtime-async body's
// OperationCanceledException.
func TestGotraceFetch(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			for _, deferred := range []bool{false, true} {
				name := b.Name + map[bool]string{false: "/sync", true: "/deferred"}[deferred]
				t.Run(name, func(t *testing.T) {
					app := harness.CompileCS(t, []string{"../../internal/testapps/async/fetch.cs"}, "", b.Options...)
					out := filepath.Join(t.TempDir(), "calls.jsonl")
					env := append(b.Env, "GOTRACE_TARGETS=fetch!FetchApp.Api::*", "GOTRACE_OUTPUT="+out)
					if deferred {
						env = append(env, "GOTRACE_DEFERRED=1")
					}
					res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: env})
					res.MustSucceed(t)
					res.MustStdoutContain(t, "CALL FetchAsync 3 ", "done\n")
					res.MustStderrNotContain(t, "could not instrument", "not returned at shutdown", "not all delivered")
					data, err := os.ReadFile(out)
					if err != nil {
						t.Fatal(err)
					}
					calls, _, err := asyncapp.ParseCalls(data)
					if err != nil {
						t.Fatal(err)
					}
					cancel := "System.Threading.Tasks.TaskCanceledException"
					if b.RuntimeAsync {
						cancel = "System.OperationCanceledException"
					}
					seen, err := asyncapp.CheckFetch(res.Stdout, calls, cancel)
					t.Logf("gotrace saw:\n%s", seen)
					if err != nil {
						t.Errorf("%v\n%s", err, res.Describe())
					}
				})
			}
		}
	})
}
