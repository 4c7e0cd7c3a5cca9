package capture_test

import (
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

const capprofCLSID = "{6A1D2E3F-4B5C-4D6E-8F70-91A2B3C4D5E6}"

var takeOK = regexp.MustCompile(`capprof: take: ok objects=(\d+) collections=(\d+)`)

// TestTakeDuringStartup: a Take asked for between PrepareAtStartup and
// the restoring of the mask (at the first module load) is refused with
// ErrNotStarted; before, it found the walk still on, left the mask alone,
// and the restore turned the walk off under it, so the collection it
// induced was never walked and it waited for its whole Timeout (seen on
// 3.1.23 under cgocheck2). A Take at Shutdown then works, and one after
// the Capturer's Shutdown is refused with ErrShutdown.
func TestTakeDuringStartup(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./heapsnap/capture/testdata/capprof", harness.BuildTags("capture_testhook"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: capprofCLSID,
			Env: []string{"CAPPROF_MODE=early"}, Timeout: 2 * time.Minute})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "done 1000")
		res.MustStderrContain(t, "capprof: early: heapsnap/capture: the runtime has not finished starting",
			"capprof: after shutdown: heapsnap/capture: the runtime is shutting down")
		m := takeOK.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no snapshot at Shutdown:\n%s", res.Describe())
		}
		if n, _ := strconv.Atoi(m[1]); n < 1000 {
			t.Errorf("snapshot at Shutdown has %d objects, want at least the 1000 strings held", n)
		}
	})
}

// TestTakeNotWalked: when the collections Take induces are never walked
// (here the Capturer never sees one start), Take gives up after three and
// says why, at once after the third, instead of waiting for its Timeout
// (5 minutes) while the runtime's Shutdown waits on it.
func TestTakeNotWalked(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./heapsnap/capture/testdata/capprof", harness.BuildTags("capture_testhook"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: capprofCLSID,
			Env: []string{"CAPPROF_MODE=nowalk"}, Timeout: 2 * time.Minute})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "done 1000")
		res.MustStderrContain(t, "capprof: take: error: heapsnap/capture: 3 induced collections ended without a whole-heap collection walked",
			"MonitorGC on: true")
	})
}

var duringGCOK = regexp.MustCompile(`capprof: duringgc: ok objects=(\d+) collections=(\d+)`)

// TestTakeDuringGC: a Take asked for while a collection of the app's own is
// under way (from a goroutine started in its GarbageCollectionStarted, the
// callback returning once the Take has come to ForceGC) waits for it and
// returns a whole snapshot; the app runs on.
func TestTakeDuringGC(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./heapsnap/capture/testdata/capprof", harness.BuildTags("capture_testhook"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: capprofCLSID,
			Env: []string{"CAPPROF_MODE=duringgc"}, Timeout: 2 * time.Minute})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "done 1000")
		m := duringGCOK.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no snapshot from the Take asked for during the app's collection:\n%s", res.Describe())
		}
		if n, _ := strconv.Atoi(m[1]); n < 1000 {
			t.Errorf("snapshot has %d objects, want at least the 1000 strings held", n)
		}
		t.Logf("%s", m[0])
	})
}
