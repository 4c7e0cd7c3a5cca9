package profiler_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const gcheapprofCLSID = "{3C1D8E52-7A94-4F0B-9E6D-21B5C4A8F7E3}"

// gcheapKept is how many HeapCounted objects testdata/gcheap/gcheap.cs
// keeps alive.
const gcheapKept = 1234

func gcheapLine(t *testing.T, res harness.Result, re string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^gcheapprof: ` + re + `$`).FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no line matching %q:\n%s", re, res.Describe())
	}
	return m
}

// TestEnumerateGCHeapObjects runs testdata/gcheapprof in mode "walk" on
// every runtime: from a goroutine of its own (no callback), once the app
// keeps exactly 1234 HeapCounted objects and the others are collected, it
// walks the heap between SuspendRuntime and ResumeRuntime, twice (the second
// time with a callback that stops at the third object), then alone.
//
//   - ICorProfilerInfo15 (.NET 9 and later; here 10.0.15 and 11.0.0): the
//     walk under SuspendRuntime counts exactly 1234 HeapCounted among more
//     objects; the stopped walk visits 3 and returns nil; the walk alone,
//     which should suspend the runtime itself, fails with
//     CORPROF_E_SUSPENSION_IN_PROGRESS on both (dotnet/runtime#132643);
//   - .NET Core 3.0 to .NET 8: SuspendRuntime and ResumeRuntime succeed,
//     every walk returns ErrNotAvailable without calling the runtime;
//   - .NET Core 2.x: SuspendRuntime is not available either.
func TestEnumerateGCHeapObjects(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/gcheapprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := harness.CompileCS(t, []string{"testdata/gcheap/gcheap.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, a, harness.RunOptions{
			Args:          []string{"wait"},
			ProfilerPath:  lib,
			ProfilerCLSID: gcheapprofCLSID,
			Env:           []string{"CLRPROF_GCHEAP_MODE=walk"},
		})
		res.MustSucceed(t)
		for _, l := range regexp.MustCompile(`(?m)^gcheapprof: .*$`).FindAllString(res.Stderr, -1) {
			t.Log(l)
		}
		res.MustStdoutContain(t, "profiler answered")
		res.MustStdoutContain(t, "app done")
		susp := gcheapLine(t, res, `suspended suspend=(.*) walk=(.*) resume=(.*) counted=(\d+) objects=(\d+) notavailable=(\w+)`)
		self := gcheapLine(t, res, `self walk=(.*) counted=(\d+) objects=(\d+) notavailable=(\w+) suspensioninprogress=(\w+)`)
		stop := gcheapLine(t, res, `stopped walk=(.*) visited=(\d+)`)
		kept := strconv.Itoa(gcheapKept)
		switch {
		case rt.Major >= 9:
			if susp[1] != "<nil>" || susp[2] != "<nil>" || susp[3] != "<nil>" || susp[4] != kept || atoi(t, susp[5]) <= gcheapKept {
				t.Errorf("walk under SuspendRuntime: %s (want %s HeapCounted among more objects, no error)", susp[0], kept)
			}
			// The runtime's own suspension fails, every time, from a
			// thread it does not know (dotnet/runtime#132643): a runtime
			// where this passes has the fix, and the docs must say so.
			if self[5] != "true" || self[2] != "0" {
				t.Errorf("walk alone: %s (want CORPROF_E_SUSPENSION_IN_PROGRESS, dotnet/runtime#132643, as on 10.0.15 and 11.0.0)", self[0])
			}
			if stop[1] != "<nil>" || stop[2] != "3" {
				t.Errorf("walk stopped by its callback: %s (want 3 objects, no error)", stop[0])
			}
		default:
			wantSuspend := regexp.MustCompile(`^<nil>$`)
			if rt.Major < 3 {
				wantSuspend = regexp.MustCompile(`^ICorProfilerInfo10::SuspendRuntime: not available on this runtime \(needs ICorProfilerInfo10, runtime has ICorProfilerInfo[89]\)$`)
			}
			if !wantSuspend.MatchString(susp[1]) || susp[3] != "<nil>" || susp[4] != "0" || susp[6] != "true" {
				t.Errorf("before ICorProfilerInfo15: %s (want suspend matching %s, walk ErrNotAvailable)", susp[0], wantSuspend)
			}
			if self[2] != "0" || self[4] != "true" {
				t.Errorf("before ICorProfilerInfo15: %s (want ErrNotAvailable)", self[0])
			}
			if stop[2] != "0" {
				t.Errorf("before ICorProfilerInfo15: %s (want no object visited)", stop[0])
			}
		}
	})
}

// TestSuspendRuntimeInCallback runs testdata/gcheapprof in mode
// "incallback": SuspendRuntime inside the Shutdown callback (a managed
// thread), a heap walk, ResumeRuntime. SuspendRuntime and ResumeRuntime
// succeed there from .NET Core 3.0 on (ICorProfilerInfo10); the walk
// visits objects on ICorProfilerInfo15 and is ErrNotAvailable before.
func TestSuspendRuntimeInCallback(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/gcheapprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := harness.CompileCS(t, []string{"testdata/gcheap/gcheap.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, a, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: gcheapprofCLSID,
			Env:           []string{"CLRPROF_GCHEAP_MODE=incallback"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done")
		m := gcheapLine(t, res, `incallback suspend=(.*) walk=(.*) resume=(.*) objects=(\d+) notavailable=(\w+)`)
		switch {
		case rt.Major >= 9:
			if m[1] != "<nil>" || m[2] != "<nil>" || m[3] != "<nil>" || atoi(t, m[4]) <= gcheapKept {
				t.Errorf("in Shutdown: %s (want no error, the app's objects walked)", m[0])
			}
		case rt.Major >= 3:
			if m[1] != "<nil>" || m[3] != "<nil>" || m[5] != "true" {
				t.Errorf("in Shutdown: %s (want SuspendRuntime and ResumeRuntime to succeed, the walk ErrNotAvailable)", m[0])
			}
		default:
			if !regexp.MustCompile(`not available`).MatchString(m[1]) || m[5] != "true" {
				t.Errorf("in Shutdown: %s (want SuspendRuntime and the walk not available)", m[0])
			}
		}
	})
}

// TestHighGCSkipAllocatedByClassStatistic runs testdata/gcheapprof with
// MonitorGC and without, then with HighGCSkipAllocatedByClassStatistic, on
// every runtime, with an app that collects three times:
//
//   - 11.0.0: SetEventMask2 takes the flag; the GC callbacks come (started
//     and finished at least 3 times each) and ObjectsAllocatedByClass never;
//     without the flag ObjectsAllocatedByClass is called;
//   - every older runtime: SetEventMask2 (and CheckHighEvents) refuse the
//     flag with ErrNotAvailable, naming .NET 11; passed unchecked (a
//     test-build switch), the runtime accepts the bit and ignores it:
//     ObjectsAllocatedByClass comes as often as without it.
func TestHighGCSkipAllocatedByClassStatistic(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/gcheapprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := harness.CompileCS(t, []string{"testdata/gcheap/gcheap.cs"}, "", harness.For(rt))
		run := func(mode string) (mask, gc []string) {
			res := harness.Run(t, rt, a, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: gcheapprofCLSID,
				Env:           []string{"CLRPROF_GCHEAP_MODE=" + mode, "CLRPROF_UNCHECKED_HIGH_FLAGS=" + map[bool]string{true: "1"}[mode == "uncheckedskip"]},
			})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "app done")
			return gcheapLine(t, res, `mask skip=(\w+) err=(.*) notavailable=(\w+) check=(.*)`),
				gcheapLine(t, res, `gc started=(\d+) finished=(\d+) bycls=(\d+)`)
		}
		mask, gc := run("noskip")
		if mask[2] != "<nil>" || atoi(t, gc[1]) < 3 || atoi(t, gc[2]) < 3 {
			t.Errorf("MonitorGC: %s; %s (want no error, at least 3 collections)", mask[0], gc[0])
		}
		noskipBycls := atoi(t, gc[3])
		t.Logf("MonitorGC alone: %s", gc[0])

		mask, gc = run("skip")
		t.Logf("with the flag: %s; %s", mask[0], gc[0])
		if rt.Major >= 11 {
			if mask[2] != "<nil>" || mask[4] != "<nil>" {
				t.Errorf("HighGCSkipAllocatedByClassStatistic refused on %s: %s", rt.Name, mask[0])
			}
			if atoi(t, gc[1]) < 3 || atoi(t, gc[2]) < 3 || gc[3] != "0" {
				t.Errorf("with HighGCSkipAllocatedByClassStatistic: %s (want at least 3 collections, no ObjectsAllocatedByClass)", gc[0])
			}
			if noskipBycls == 0 {
				t.Errorf("without the flag ObjectsAllocatedByClass was not called either: the test shows nothing")
			}
			return
		}
		want := "clrprof: SetEventMask2: HighGCSkipAllocatedByClassStatistic not available on this runtime (needs .NET 11 or later)"
		if mask[2] != want || mask[3] != "true" || mask[4] != want {
			t.Errorf("on %s: %s (want %q, matching ErrNotAvailable, from both SetEventMask2 and CheckHighEvents)", rt.Name, mask[0], want)
		}
		// Why it is refused: passed unchecked (a test-build switch), the
		// runtime takes the bit and goes on calling ObjectsAllocatedByClass
		// wherever it did without it.
		mask, gc = run("uncheckedskip")
		t.Logf("the flag unchecked: %s; %s", mask[0], gc[0])
		if mask[2] != "<nil>" || atoi(t, gc[1]) < 3 || (noskipBycls > 0 && gc[3] == "0") {
			t.Errorf("on %s the runtime honoured or refused bit 0x200: %s; %s", rt.Name, mask[0], gc[0])
		}
	})
}
