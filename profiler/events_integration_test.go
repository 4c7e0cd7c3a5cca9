package profiler_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/profiler"
)

const eventprofCLSID = "{3B9F6A21-5C4D-4E8F-A1B2-7C6D5E4F3A29}"

// eventsApp compiles testdata/events: the app and the EvLib library it
// loads, in one directory.
func eventsApp(t *testing.T, rt harness.Runtime) string {
	t.Helper()
	dir := t.TempDir()
	lib := harness.CompileCS(t, []string{"testdata/events/lib.cs"}, dir, harness.Library(), harness.OutName("EvLib.dll"), harness.For(rt))
	return harness.CompileCS(t, []string{"testdata/events/events.cs"}, dir, harness.Reference(lib), harness.OutName("EvApp.exe"), harness.For(rt))
}

var eventLineRe = regexp.MustCompile(`(?m)^eventprof: (\w+) (\S+) (\d+)$`)
var totalsRe = regexp.MustCompile(`(?m)^eventprof: totals (.*)$`)

// eventCounts parses eventprof's Shutdown report: "kind name" → count, and
// the totals line.
func eventCounts(t *testing.T, res harness.Result) (map[string]int, string) {
	t.Helper()
	tot := totalsRe.FindStringSubmatch(res.Stderr)
	if tot == nil {
		t.Fatalf("no eventprof totals:\n%s", res.Describe())
	}
	got := map[string]int{}
	for _, m := range eventLineRe.FindAllStringSubmatch(res.Stderr, -1) {
		n, _ := strconv.Atoi(m[3])
		got[m[1]+" "+m[2]] = n
	}
	return got, tot[1]
}

// TestCallbackCounts checks, on every runtime, that module, assembly,
// class-load, JIT and exception callbacks arrive exactly as often as the app
// does the corresponding thing, and that names resolve inside them.
func TestCallbackCounts(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	want := map[string]int{
		"module EvApp": 1, "module EvLib": 1,
		"assembly EvApp": 1, "assembly EvLib": 1,
		"class EvLib.Loaded1": 1, "class EvLib.Loaded2": 1, "class EvLib.Loaded3": 1,
		"class Ev.Marker":         1,
		"throw Ev.Marker":         5,
		"catch Ev.Program.Counts": 5,
	}
	for i := 1; i <= 7; i++ {
		want[fmt.Sprintf("jit Ev.Jitted.M%d", i)] = 1
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: eventprofCLSID, Args: []string{"counts"}})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "counts: sum=")
		res.MustStderrNotContain(t, "eventprof: error", "level=ERROR", "level=WARN")
		got, totals := eventCounts(t, res)
		t.Logf("%s: %s", rt.Name, totals)
		for k, n := range want {
			if got[k] != n {
				t.Errorf("%s: %q seen %d times, want %d", rt.Name, k, got[k], n)
			}
		}
		if t.Failed() {
			t.Logf("all named events: %v", got)
		}
	})
}

// TestExceptionStorm throws and catches NullReferenceException (SIGSEGV)
// and DivideByZeroException (SIGFPE) on 8 threads with allocation and
// GC.Collect pressure, with exception callbacks delivered to Go on every
// throwing thread, and again with exception events off (the throwing
// threads then do not enter Go for them). Every exception must be caught
// and counted.
func TestExceptionStorm(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	const perThread = 2000
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		for _, exc := range []string{"1", "0"} {
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: eventprofCLSID,
				Args: []string{"storm", strconv.Itoa(perThread)},
				Env:  []string{"EVENTPROF_EXCEPTIONS=" + exc, "CLRPROF_LOG_LEVEL=info"},
			})
			res.MustSucceed(t)
			caught := fmt.Sprintf("caught=%d want=%d", 2*8*perThread, 2*8*perThread)
			res.MustStdoutContain(t, caught)
			got, totals := eventCounts(t, res)
			reblocked, lapses := res.GuardCounts(t)
			t.Logf("%s (exception events %s): %s; %s; guard: %d threads' first calls re-blocked, %d lapses", rt.Name, exc, caught, totals, reblocked, lapses)
			// Every thread's first call into Go (the storm threads', the
			// main thread's) had SIGRTMIN blocked again after the Go
			// runtime's needm unblocked it, and no callback ended with it
			// deliverable.
			if lapses != 0 || reblocked == 0 {
				t.Errorf("%s: %d guarded calls into Go ended with SIGRTMIN unblocked, %d first calls re-blocked", rt.Name, lapses, reblocked)
			}
			if exc == "1" {
				nre, dbz := got["throw System.NullReferenceException"], got["throw System.DivideByZeroException"]
				if nre != 8*perThread || dbz != 8*perThread {
					t.Errorf("%s: ExceptionThrown saw %d NullReferenceException and %d DivideByZeroException, want %d each", rt.Name, nre, dbz, 8*perThread)
				}
			}
		}
	})
}

// TestGuardLapsesWithoutBindmHook shows what the guard's repair after a
// thread's first call into Go prevents: with it off (CLRPROF_BINDM_HOOK=0,
// test builds), the Go runtime's needm leaves SIGRTMIN (signal 34, which Go
// never lets a thread block) unblocked for the whole first callback of
// every thread, and the exception storm's callbacks must show it on every
// runtime.
func TestGuardLapsesWithoutBindmHook(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: eventprofCLSID,
			Args: []string{"storm", "200"},
			Env:  []string{"CLRPROF_BINDM_HOOK=0", "CLRPROF_LOG_LEVEL=info"},
		})
		if !res.Succeeded() {
			t.Fatalf("program did not succeed:\n%s", res.Describe())
		}
		// The line that fails any other test's run (Result.MustSucceed).
		if !strings.Contains(res.Stderr, harness.GuardLapseMarker) {
			t.Errorf("%s: no %q line", rt.Name, harness.GuardLapseMarker)
		}
		reblocked, lapses := res.GuardCounts(t)
		t.Logf("%s without the hook: %d guarded calls ended with SIGRTMIN unblocked, %d re-blocked", rt.Name, lapses, reblocked)
		if reblocked != 0 {
			t.Errorf("%s: CLRPROF_BINDM_HOOK=0 but %d first calls were re-blocked", rt.Name, reblocked)
		}
		// At least the 8 storm threads' first ExceptionThrown.
		if lapses < 8 {
			t.Errorf("%s: %d lapses without the hook, want at least 8 (one a storm thread): the check does not see what the hook repairs", rt.Name, lapses)
		}
	})
}

// knownShutdownRaceCrash reports a run that .NET Core 2.x's shutdown race
// ended: SIGSEGV, after main returned, with the crashing thread in one of
// the runtime's exception callback wrappers (which dereference the callback
// pointer the runtime cleared at shutdown), nothing of the SDK's on top.
func knownShutdownRaceCrash(rt harness.Runtime, res harness.Result) bool {
	if rt.Major != 2 || !res.Signaled || res.Signal != syscall.SIGSEGV || !strings.Contains(res.Stdout, "shutdown: main returns") {
		return false
	}
	_, crashing, _ := strings.Cut(res.Backtrace, "=== crashing thread ===")
	first, _, _ := strings.Cut(strings.TrimLeft(crashing, "\n"), "\n")
	return strings.HasPrefix(first, "#0 ") && strings.Contains(first, "EEToProfInterfaceImpl::Exception")
}

// TestStackOverflowUnchanged: a managed stack overflow ends the process the
// same way with and without the profiler.
func TestStackOverflowUnchanged(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		// Expected crashes: no core read with gdb (ExpectCrash).
		plain := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"overflow"}, ExpectCrash: true})
		prof := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: eventprofCLSID, Args: []string{"overflow"}, ExpectCrash: true})
		t.Logf("%s: without profiler: %s; with: %s", rt.Name, plain.Status(), prof.Status())
		if plain.Succeeded() {
			t.Fatalf("the overflow did not end the process:\n%s", plain.Describe())
		}
		if plain.Signaled != prof.Signaled || plain.Signal != prof.Signal || plain.ExitCode != prof.ExitCode {
			t.Errorf("%s: with the profiler the process ended with %s, without it %s\n%s", rt.Name, prof.Status(), plain.Status(), prof.Describe())
		}
		for _, r := range []harness.Result{plain, prof} {
			r.MustStdoutContain(t, "overflow: start")
		}
		if strings.Contains(plain.Stderr, "Stack overflow") != strings.Contains(prof.Stderr, "Stack overflow") {
			t.Errorf("%s: the runtime's stack overflow message differs:\nwithout:\n%s\nwith:\n%s", rt.Name, plain.Stderr, prof.Stderr)
		}
	})
}

// TestShutdownRace: background threads keep throwing and allocating while
// the runtime shuts down; the profiler's Shutdown takes 200 ms, so
// exception callbacks arrive during it, and after it (those the SDK answers
// in C). The process must exit normally and promptly on every runtime.
func TestShutdownRace(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		var waits []time.Duration
		defer func() { checkShutdownWaits(t, rt, waits, true) }()
		for i := 0; i < 3; i++ {
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: eventprofCLSID,
				Args:    []string{"shutdown"},
				Env:     []string{"EVENTPROF_SLOW_SHUTDOWN=200ms", "CLRPROF_LOG_LEVEL=debug"},
				Timeout: time.Minute,
			})
			if w, ok := shutdownWait(t, res); ok {
				waits = append(waits, w)
			}
			if knownShutdownRaceCrash(rt, res) {
				// .NET Core 2.x's own race (docs/reliability.md): the
				// SDK narrows it (events off after Shutdown) but cannot
				// close it. Anything else fails.
				t.Logf("KNOWN .NET Core 2.x SHUTDOWN RACE in run %d: the runtime called an exception callback through the pointer it had cleared at shutdown:\n%s", i+1, res.Backtrace)
				continue
			}
			res.MustSucceed(t)
			res.MustStdoutContain(t, "shutdown: main returns")
			_, totals := eventCounts(t, res)
			t.Logf("%s run %d: exit after %v; %s", rt.Name, i+1, res.Duration.Round(time.Millisecond), totals)
			if res.Duration > 20*time.Second {
				t.Errorf("%s: exit took %v", rt.Name, res.Duration)
			}
		}
	})
}

// TestShutdownWaitQuiet: on .NET Core 2.x the SDK waits after Shutdown
// only while another thread could be between the runtime's mask check and
// its call (TestShutdownRace: busy threads, the whole wait); when the app
// has returned from Main with nothing else running, Shutdown returns at
// once instead of sleeping the 20 ms every time.
func TestShutdownWaitQuiet(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/eventprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := eventsApp(t, rt)
		var waits []time.Duration
		for i := 0; i < 3; i++ {
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: eventprofCLSID,
				Args: []string{"counts"},
				Env:  []string{"CLRPROF_LOG_LEVEL=debug"},
			})
			res.MustSucceed(t)
			if w, ok := shutdownWait(t, res); ok {
				waits = append(waits, w)
			}
		}
		checkShutdownWaits(t, rt, waits, false)
	})
}

// shutdownWait reads how long Shutdown waited for the runtime's threads
// from the SDK's debug log.
func shutdownWait(t *testing.T, res harness.Result) (time.Duration, bool) {
	for _, l := range strings.Split(res.Stderr, "\n") {
		if !strings.Contains(l, "leave its callback window") {
			continue
		}
		_, v, ok := strings.Cut(l, " waited=")
		if !ok {
			t.Errorf("no waited= in %q", l)
			return 0, false
		}
		v, _, _ = strings.Cut(v, " ")
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Errorf("%q: %v", l, err)
			return 0, false
		}
		return d, true
	}
	return 0, false
}

// checkShutdownWaits: only .NET Core 2.x waits; with busy threads at least
// one of the runs waited the whole quiesceDrain, without them at least one
// returned in less than half of it.
func checkShutdownWaits(t *testing.T, rt harness.Runtime, waits []time.Duration, busy bool) {
	t.Logf("%s: Shutdown waited %v", rt.Name, waits)
	if rt.Major >= 3 {
		if len(waits) != 0 {
			t.Errorf("%s: Shutdown waited (%v); only .NET Core 2.x should", rt.Name, waits)
		}
		return
	}
	if len(waits) == 0 {
		t.Errorf("%s: no run logged Shutdown's wait", rt.Name)
		return
	}
	for _, w := range waits {
		if busy && w >= profiler.QuiesceDrain || !busy && w < profiler.QuiesceDrain/2 {
			return
		}
	}
	if busy {
		t.Errorf("%s: with threads throwing at exit no run waited %v (waits %v)", rt.Name, profiler.QuiesceDrain, waits)
	} else {
		t.Errorf("%s: with nothing running at exit every run waited %v or more (waits %v)", rt.Name, profiler.QuiesceDrain/2, waits)
	}
}
