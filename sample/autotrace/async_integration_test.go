package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	asyncapp "github.com/clrprof/clrprof/internal/testapps/async"
)

// asyncApp is the async workload shared by the runtime-async tests.
var asyncApp = []string{"../../internal/testapps/async/async.cs"}

// readToEnd is a CoreLib method the async app reaches (built by Roslyn),
// runtime async on .NET 11 (ILDasm: "cil managed async"), a state
// machine's stub before.
const readToEnd = "System.Private.CoreLib!System.IO.StreamReader::ReadToEndAsyncInternal"

// TestAutotraceAsync traces the async app's methods, built classic and
// runtime async. Both: every call is reported once (51 of DelayThenValue,
// wherever its continuation resumed), each lasting the whole call (at
// least the 20 ms delay it awaits, within what the app measured around
// the await), with the exception that faulted it (ThrowAfterAwait's, 102
// calls: 51 direct and 51 under CatchAround, which catches it and ends
// without one). Runtime async: End runs at the body's end; classic: at the
// completion of the Task the state machine's stub returned.
func TestAutotraceAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/autotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			t.Run(b.Name, func(t *testing.T) {
				app := harness.CompileCS(t, asyncApp, "", b.Options...)
				out := filepath.Join(t.TempDir(), "calls.jsonl")
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: append(b.Env, "AUTOTRACE_TARGETS=async!AsyncApp.Ops::*,"+readToEnd, "AUTOTRACE_OUTPUT="+out)})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "done\n", "DelayThenValue calls=51 ", "ThrowAfterAwait calls=51 thrown=51", "FinallyAround calls=51 finallies=51", "CatchAround calls=51 caught=51")
				res.MustStderrNotContain(t, "could not instrument", "not delivered", "integration threw")
				t.Logf("stdout:\n%sstderr:\n%s", res.Stdout, res.Stderr)
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				calls, got, err := asyncapp.ParseCalls(data)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range calls {
					if c.Exception != nil && *c.Exception != "System.InvalidOperationException" {
						t.Errorf("%+v: want InvalidOperationException", c)
					}
					if c.Depth < 1 || c.DurNs < 0 {
						t.Errorf("%+v: depth or duration out of range", c)
					}
				}
				for m, a := range got {
					t.Logf("%s: %d calls on %d threads, %d exceptions, mean %v, min %v", m, a.Calls, len(a.Threads), a.Exceptions, a.Mean(), a.Min)
				}
				for m, want := range asyncapp.Want() {
					a := got["AsyncApp.Ops::"+m]
					if a == nil || a.Calls != want[0] || a.Exceptions != want[1] {
						t.Errorf("%s: %+v, want %d calls, %d exceptions", m, a, want[0], want[1])
					}
				}
				// On .NET 11 the framework's own async methods are runtime
				// async whatever the app's build.
				if rt.Major >= 10 {
					res.MustStdoutContain(t, "ReadToEndAsync calls=51 chars=612")
					if a := got["System.IO.StreamReader::ReadToEndAsyncInternal"]; a == nil || a.Calls != asyncapp.N || a.Exceptions != 0 {
						t.Errorf("StreamReader::ReadToEndAsyncInternal: %+v, want %d calls", a, asyncapp.N)
					}
				}
				d := got["AsyncApp.Ops::DelayThenValue"]
				if d == nil {
					return
				}
				appMean, err := asyncapp.DelayMean(res.Stdout)
				if err != nil {
					t.Fatalf("%v:\n%s", err, res.Stdout)
				}
				mean := d.Mean()
				t.Logf("DelayThenValue: the app measured a mean of %v around each await, autotrace %v inside the calls", appMean, mean)
				// The traced span lies inside the app's (Begin after its
				// Restart, End before the await returns to it), and holds
				// the awaited Task.Delay(20), which cannot end in less than
				// 10 ms.
				if d.Min < 10*time.Millisecond || mean > appMean {
					t.Errorf("DelayThenValue: min %v, mean %v: want each call's whole duration (at least the 20 ms delay, at most the app's mean %v)",
						d.Min, mean, appMean)
				}
			})
		}
	})
}

// TestAutotraceFetch traces the example (internal/testapps/async/
// fetch.cs: FetchAsync awaits Task.Delay(100), and its third call of five
// throws after the await) and a method whose task is cancelled, built
// classic and runtime async: each call lasts its await (within the app's
// own measurement around it), the third FetchAsync call ends with its
// InvalidOperationException, the cancelled ones with TaskCanceledException
// (classic: the task's cancellation) or the OperationCanceledException the
// runtime-async body threw.
func TestAutotraceFetch(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/autotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			t.Run(b.Name, func(t *testing.T) {
				app := harness.CompileCS(t, []string{"../../internal/testapps/async/fetch.cs"}, "", b.Options...)
				out := filepath.Join(t.TempDir(), "calls.jsonl")
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: append(b.Env, "AUTOTRACE_TARGETS=fetch!FetchApp.Api::*", "AUTOTRACE_OUTPUT="+out)})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "CALL FetchAsync 3 ", "done\n")
				res.MustStderrNotContain(t, "could not instrument", "not delivered", "integration threw")
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
				t.Logf("autotrace saw:\n%s", seen)
				if err != nil {
					t.Errorf("%v\n%s", err, res.Describe())
				}
			})
		}
	})
}
