package profiler_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// A profiler loaded at start-up may be released at the end of the process:
// .NET Core 3.1 does it (after Shutdown), 2.x and .NET 8 do not (observed).
// Released must then come after Shutdown, and at most once. The case where
// every runtime releases the profiler, after a detach, is the conformance
// scenario releaseondetach.
func TestReleased(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/relprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/app/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{0B5E7D93-1A2C-4E68-8F47-6D9C3B1A2E11}"})
		res.MustSucceed(t)
		shut := strings.Index(res.Stderr, "relprof: shutdown\n")
		rel := strings.Index(res.Stderr, "relprof: released\n")
		if shut < 0 || (rel >= 0 && rel < shut) || strings.Count(res.Stderr, "relprof: released\n") > 1 {
			t.Errorf("want Shutdown, then Released at most once\n%s", res.Describe())
		}
		t.Logf("%s: released at the end of the process: %v", rt.Name, rel >= 0)
	})
}
