package profiler_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// Current-thread snapshots work on every runtime: from ExceptionThrown, the
// stack of the throwing thread, innermost first, with the per-frame Go
// callback (WalkStack, full names through the frame info) and collected in
// C (StackTrace). Snapshots of other threads under SuspendRuntime are
// exercised by sample/cpuprof on .NET Core 3.0 and later.
func TestStackSnapshots(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/stackprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := samplingApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: "{9D2B4F61-3A7C-4E85-B1D0-5C6E8F2A4B93}",
			Args: []string{"throw", "3"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "throw: caught=3\n")
		// .NET 11 calls Main from managed code: the walk goes one frame
		// further, into System.Environment.CallEntryPoint.
		walkEnd, traceEnd := "", ""
		if rt.Major >= 11 {
			walkEnd = " > System.Environment.CallEntryPoint(native int, string[]*, int32*, bool, System.Exception*)"
			traceEnd = " > System.Environment.CallEntryPoint"
		}
		res.MustStderrContain(t,
			"stackprof: walk Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Deep(int32) > Elt.Thrower.Catch() > Elt.Program.Throws(int32) > Elt.Program.Main(string[])"+walkEnd+"\n",
			"stackprof: trace Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Deep > Elt.Thrower.Catch > Elt.Program.Throws > Elt.Program.Main"+traceEnd+"\n")
	})
}

// Snapshot says where its time went: waiting for another suspension to
// end, suspending, walking with the runtime held. With the app collecting
// its heap one GC after another, snapshots taken every millisecond run
// into the collections' suspensions, retry, and report the wait as Waited;
// the test profiler checks every result's timing against the call's (the
// three parts fit inside it, a wait only with retries, a suspension and a
// hold with every success). SnapshotThreads skips the threads its walk
// function refuses, and returns a panic of that function as an error
// after resuming the runtime. Before .NET Core 3.0 there is no SuspendRuntime: Snapshot is
// unavailable.
func TestSnapshotTiming(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/sampling/snapprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := samplingApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: "{4E8A1C37-92B5-4D60-A7F3-1B6C9D2E5F08}",
			Args: []string{"collect", "1.5"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "collect: collections=some\n")
		if rt.Major < 3 {
			res.MustStderrContain(t, "snapprof: unavailable: ")
			return
		}
		m := regexp.MustCompile(`snapprof: snapshots=(\d+) ok=(\d+) retried=(\d+) waited=(\S+) suspending=(\S+) held=(\S+) bad=(\d+) skipped_all=(\d+) panics=(\d+)\n`).FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no snapprof line; stderr:\n%s", res.Stderr)
		}
		n, _ := strconv.Atoi(m[1])
		ok, _ := strconv.Atoi(m[2])
		retried, _ := strconv.Atoi(m[3])
		var d [3]time.Duration
		for i := range d {
			var err error
			if d[i], err = time.ParseDuration(m[4+i]); err != nil {
				t.Fatalf("duration %q: %v", m[4+i], err)
			}
		}
		waited, suspending, held := d[0], d[1], d[2]
		bad, _ := strconv.Atoi(m[7])
		skippedAll, _ := strconv.Atoi(m[8])
		panics, _ := strconv.Atoi(m[9])
		t.Logf("%s: %d snapshots, %d ok, %d retried, waited %v, suspending %v, held %v; %d with every thread skipped, %d panicking walks", rt.Name, n, ok, retried, waited, suspending, held, skippedAll, panics)
		if bad != 0 {
			t.Errorf("%d snapshots whose timing does not add up; stderr:\n%s", bad, res.Stderr)
		}
		if ok == 0 || held <= 0 || suspending <= 0 {
			t.Errorf("no snapshot suspended and held the runtime (ok=%d suspending=%v held=%v)", ok, suspending, held)
		}
		// SnapshotThreads: a walk refusing every thread, a walk that
		// panics (the runtime resumed: the app finished, later snapshots
		// succeeded).
		if skippedAll == 0 || panics == 0 {
			t.Errorf("SnapshotThreads: %d snapshots with every thread skipped, %d panicking walks returned as errors (want some of each)", skippedAll, panics)
		}
		// Every collection suspends the runtime; a snapshot every
		// millisecond for 1.5 s of collections meets some of them.
		if retried == 0 || waited <= 0 {
			t.Errorf("no snapshot waited for a collection (retried=%d waited=%v): the test did not exercise the wait", retried, waited)
		}
	})
}
