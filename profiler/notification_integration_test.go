package profiler_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestNotificationProfilers: on .NET 7+ (here .NET 8), a Go profiler loads
// as a notification profiler beside a native main profiler, and as the main
// profiler with a native notification profiler beside it. The Go profiler
// does not implement LoadAsNotificationOnly: the SDK answers it from
// CORECLR_NOTIFICATION_PROFILERS. As a notification profiler, what it may
// not do (EnableReJIT in its mask, enter/leave hooks) is refused by the SDK
// with ErrNotificationOnly, and it then runs with an allowed mask.
func TestNotificationProfilers(t *testing.T) {
	lib, native := countprof(t), chainc(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		if !rt.AtLeast(7, 0) {
			t.Skipf("%s has no notification profilers (.NET 7+)", rt.Name)
		}
		alone := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID})
		checkApp(t, alone)
		modules0, _ := shutdownCounts(t, alone)

		// The Go profiler as a notification profiler beside chainc.
		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: native, ProfilerCLSID: chaincCLSID, Env: []string{
			"CORECLR_ENABLE_NOTIFICATION_PROFILERS=1",
			"CORECLR_NOTIFICATION_PROFILERS=" + notificationList(lib+"="+countprofCLSID),
			"COUNTPROF_TRY=rejit", "CLRPROF_LOG_LEVEL=info"}})
		checkApp(t, res)
		res.MustStderrContain(t, "countprof: notificationOnly=true", "CORECLR_NOTIFICATION_PROFILERS names this library")
		for _, op := range []string{"EnableReJIT", "elt.NewRecorder"} {
			re := regexp.MustCompile(`countprof: try ` + op + `: clrprof: .*notification profiler.* \(ErrNotificationOnly: true\)`)
			if m := re.FindString(res.Stderr); m == "" {
				t.Errorf("%s: %s was not refused as a notification profiler's:\n%s", rt.Name, op, res.Stderr)
			} else {
				t.Logf("%s: %s", rt.Name, m)
			}
		}
		modules, jits := shutdownCounts(t, res)
		c := chaincShutdown(t, res)
		t.Logf("%s: Go notification beside chainc: countprof modules=%d jits=%d (alone %d), chainc %+v", rt.Name, modules, jits, modules0, c)
		if modules != modules0 || jits == 0 || c.jits == 0 || c.allocs == 0 || c.modules != 0 {
			t.Errorf("%s: Go notification profiler: countprof modules=%d jits=%d (alone %d); chainc %+v", rt.Name, modules, jits, modules0, c)
		}

		// The Go profiler as the main profiler, chainc as a notification
		// profiler.
		res = harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, Env: []string{
			"CORECLR_ENABLE_NOTIFICATION_PROFILERS=1",
			"CORECLR_NOTIFICATION_PROFILERS=" + notificationList(native+"="+chaincCLSID),
			"CHAINC_NOTIFICATION=1", "COUNTPROF_TRY=rejit", "CLRPROF_LOG_LEVEL=info"}})
		checkApp(t, res)
		res.MustStderrContain(t, "countprof: notificationOnly=false", "countprof: try EnableReJIT: <nil>", "chainc: LoadAsNotificationOnly -> 1")
		modules, jits = shutdownCounts(t, res)
		c = chaincShutdown(t, res)
		t.Logf("%s: Go main, chainc notification: countprof modules=%d jits=%d, chainc %+v", rt.Name, modules, jits, c)
		if modules != modules0 || jits == 0 || c.jits == 0 || c.allocs == 0 || c.modules != 0 {
			t.Errorf("%s: Go main profiler: countprof modules=%d jits=%d (alone %d); chainc %+v", rt.Name, modules, jits, modules0, c)
		}
	})
}

// notificationList joins "path=CLSID" entries for
// CORECLR_NOTIFICATION_PROFILERS, ending the list with ';': .NET 10.0.x
// silently drops an entry not followed by ';' (one entry alone is never
// loaded; dotnet/runtime#130584, fixed in .NET 11). Earlier runtimes and 11
// take the list either way.
func notificationList(entries ...string) string {
	return strings.Join(entries, ";") + ";"
}
