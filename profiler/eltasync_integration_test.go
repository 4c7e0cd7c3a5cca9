package profiler_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// asyncApp compiles internal/testapps/async as build b and returns it
// with the environment it needs.
func asyncApp(t *testing.T, b harness.AsyncBuild) (string, []string) {
	t.Helper()
	return harness.CompileCS(t, []string{"../internal/testapps/async/async.cs"}, "", b.Options...), b.Env
}

// runtimeAsyncBuild is rt's runtime-async build of an async app (the test
// is skipped before .NET 10, which has none).
func runtimeAsyncBuild(t *testing.T, rt harness.Runtime) harness.AsyncBuild {
	t.Helper()
	for _, b := range harness.AsyncBuilds(rt) {
		if b.RuntimeAsync {
			return b
		}
	}
	t.Skipf("%s: no runtime async before .NET 10", rt.Name)
	return harness.AsyncBuild{}
}

var asyncAppDone = []string{
	"DelayThenValue calls=51 sum=2550 ",
	"ThrowAfterAwait calls=51 thrown=51\n",
	"CatchAround calls=51 caught=51\n",
	"Stream items=51\n",
	"done\n",
}

// What the fast enter/leave hooks see of runtime async (.NET 10 with
// DOTNET_RuntimeAsync=1 and .NET 11; docs/runtime-async.md), against the
// same source compiled classic: a runtime-async method's Enter runs in its
// prolog, so on its call and again on every resumption; no Leave on a
// suspension, one Leave when it returns, one unwind when an exception
// leaves it. DelayThenValue (one await of Task.Delay, always suspending)
// shows 2 enters and 1 leave per call; ThrowAfterAwait (await Task.Yield,
// then throw; called 51 times directly and 51 times through CatchAround)
// 2 enters and 1 unwind per call; NoAwait (never suspends) 1 and 1. The
// classic build's DelayThenValue is the stub that starts the state
// machine: 1 enter and 1 leave per call.
func TestELTRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/eltprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, b := range harness.AsyncBuilds(rt) {
			ra, build := b.RuntimeAsync, b.Name
			app, env := asyncApp(t, b)
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: eltprofCLSID,
				Env: append(env, "ELTPROF_FILTER=AsyncApp.", "ELTPROF_PRINT=AsyncApp.", "ELTPROF_UNWINDS=1"),
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, asyncAppDone...)
			r := parseELT(t, res)
			want := map[string]eltCounts{
				"AsyncApp.Ops.DelayThenValue":  {51, 51, 0, 0},
				"AsyncApp.Ops.NoAwait":         {51, 51, 0, 0},
				"AsyncApp.Ops.ThrowAfterAwait": {102, 102, 0, 0},
			}
			if ra {
				want = map[string]eltCounts{
					"AsyncApp.Ops.DelayThenValue":  {102, 51, 0, 0},
					"AsyncApp.Ops.NoAwait":         {51, 51, 0, 0},
					"AsyncApp.Ops.ThrowAfterAwait": {204, 0, 0, 102},
					"AsyncApp.Ops.CatchAround":     {102, 51, 0, 0},
				}
			}
			for fn, w := range want {
				if got := r.fns[fn]; got != w {
					t.Errorf("%s %s: %s %+v, want %+v", rt.Name, build, fn, got, w)
				}
			}
			t.Logf("%s %s: events=%d threads=%d order=%d (shadow-stack mismatches: suspended frames get no leave)", rt.Name, build, r.events, r.threads, r.order)
		}
	})
}

// The slow-path hooks (elt.EnableWithInfo, every function hooked, tiered
// compilation on) leave the runtime-async build running to its end: on
// .NET 10 the SDK gives no hooks to what the JIT mis-compiles with them
// (elt/eltasync.go); before, the app died of an access violation.
func TestELTWithInfoRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/eltprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		app, env := asyncApp(t, runtimeAsyncBuild(t, rt))
		for _, filter := range []string{"AsyncApp.", ""} {
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: eltprofCLSID,
				Env: append(env, "ELTPROF_MODE=info", "ELTPROF_FILTER="+filter),
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, asyncAppDone...)
		}
	})
}

// A stack walk (DoStackSnapshot of the current thread, from
// ExceptionThrown) inside a runtime-async method after it resumed on a
// thread-pool thread: ThrowAfterAwait's frame is named as the method
// itself (the async variant), and under it come the runtime's
// continuation dispatcher and the thread pool, not its logical callers
// (CatchAround, Program.Run): those are continuations on the heap, with no
// frame on any stack. On the classic build the throwing frame is the state
// machine's MoveNext.
func TestStackWalkRuntimeAsyncResumed(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/stackprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, b := range harness.AsyncBuilds(rt) {
			ra := b.RuntimeAsync
			app, env := asyncApp(t, b)
			from := "AsyncApp.Ops+<ThrowAfterAwait>"
			if ra {
				from = "AsyncApp.Ops.ThrowAfterAwait"
			}
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: "{9D2B4F61-3A7C-4E85-B1D0-5C6E8F2A4B93}",
				Env: append(env, "STACKPROF_FROM="+from),
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, asyncAppDone...)
			walk := res.LastStderrLine("stackprof: walk ")
			if walk == "" {
				t.Fatalf("%s runtime-async=%v: no walk from %s:\n%s", rt.Name, ra, from, res.Describe())
			}
			frames := strings.Split(strings.TrimPrefix(walk, "stackprof: walk "), " > ")
			t.Logf("%s runtime-async=%v: %s", rt.Name, ra, walk)
			if !ra {
				continue
			}
			if len(frames) < 3 || !strings.HasPrefix(frames[0], "AsyncApp.Ops.ThrowAfterAwait(") ||
				!strings.HasPrefix(frames[1], "System.Runtime.CompilerServices.AsyncHelpers+") {
				t.Errorf("%s: want ThrowAfterAwait called by the runtime's continuation dispatcher, got %q", rt.Name, frames)
			}
			for _, f := range frames[1:] {
				if strings.HasPrefix(f, "AsyncApp.") {
					t.Errorf("%s: a logical caller has a frame after the resumption: %q", rt.Name, frames)
				}
			}
		}
	})
}

// The exception callbacks of one pass of the async app (argument 1:
// ThrowAfterAwait awaited by Run in a try/catch, then through
// CatchAround), classic and runtime async, every callback in order (the
// conformance exceptions profiler; the app's exceptions happen one after
// another). On the runtime-async build an exception thrown after a
// resumption is caught by the runtime's continuation dispatcher
// (ThunkTaskCore.MoveNext on .NET 10, DispatchContinuations on 11: its
// search finds the catcher there), and thrown again, a second
// ExceptionThrown, in the awaiting method when it resumes, whose catch
// handles it. docs/runtime-async.md has both builds' sequences.
func TestExceptionCallbacksRuntimeAsync(t *testing.T) {
	lib := harness.BuildProfiler(t, "./conformance/exceptions/profiler")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: no runtime async before .NET 10", rt.Name)
		}
		for _, b := range harness.AsyncBuilds(rt) {
			ra := b.RuntimeAsync
			app, env := asyncApp(t, b)
			res := harness.Run(t, rt, app, harness.RunOptions{
				Args:         []string{"1"},
				ProfilerPath: lib, ProfilerCLSID: "{5E0E5A51-3C1B-4A7E-9D0B-1F6A8C2E4B01}",
				Env: append(env, "EXCEPTIONS_EXPECTED=(logged)"),
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "ThrowAfterAwait calls=1 thrown=1\n", "CatchAround calls=1 caught=1\n", "done\n")
			i := strings.Index(res.Stdout, "got:\n")
			if i < 0 {
				t.Fatalf("no callback sequence:\n%s", res.Describe())
			}
			got := res.Stdout[i+len("got:\n"):]
			if j := strings.Index(got, "\nPROFILER TEST"); j >= 0 {
				got = got[:j]
			}
			t.Logf("%s runtime-async=%v:\n%s", rt.Name, ra, got)
			seq := strings.Split(strings.TrimSpace(got), "\n")
			thrown := 0
			for _, s := range seq {
				if s == "ExceptionThrown" {
					thrown++
				}
			}
			if !ra {
				continue
			}
			dispatcher := "ExceptionSearchCatcherFound: DispatchContinuations"
			if rt.Major == 10 {
				dispatcher = "ExceptionSearchCatcherFound: MoveNext"
			}
			want := []string{
				"ExceptionSearchFunctionEnter: ThrowAfterAwait", dispatcher, "ExceptionCatcherEnter: " + strings.TrimPrefix(dispatcher, "ExceptionSearchCatcherFound: "),
				"ExceptionSearchCatcherFound: Run", "ExceptionCatcherEnter: Run",
				"ExceptionSearchFunctionEnter: ThrowAfterAwait", dispatcher,
				"ExceptionSearchCatcherFound: CatchAround", "ExceptionCatcherEnter: CatchAround",
			}
			k := 0
			for _, s := range seq {
				if k < len(want) && s == want[k] {
					k++
				}
			}
			if thrown != 4 || k != len(want) {
				t.Errorf("%s: want 4 ExceptionThrown (each throw after an await, then its rethrow in the awaiting method) and, in order, %q; got %d and %q", rt.Name, want, thrown, seq)
			}
		}
	})
}
