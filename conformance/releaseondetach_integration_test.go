package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "releaseondetach",
		Upstream:      "unittest/releaseondetach.cs, native/releaseondetach",
		UpstreamLines: 196,
		CLSID:         "{E1A4C7B3-8D25-4F6E-A9B0-3C7D5E2F8A10}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 3 {
				return "attaching a profiler to a running process is new in .NET Core 3.0"
			}
			return ""
		},
		Run: runReleaseOnDetach,
	})
}

// runReleaseOnDetach starts the app without a profiler, attaches the
// profiler to it through the diagnostics socket (as upstream's
// AttachProfilerToSelf does), and, once the profiler reported its verdict
// from Released, tells the app to exit.
func runReleaseOnDetach(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
	p := harness.Start(t, rt, app, harness.RunOptions{})
	if err := p.WaitStdout("ready\n", time.Minute); err != nil {
		t.Fatalf("the app did not start: %v\n%s", err, p.Stdout())
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := diag.AttachProfiler(ctx, p.Pid, sc.CLSID, lib, []byte("releaseondetach")); err != nil {
		t.Errorf("AttachProfiler: %v", err)
	}
	if err := p.WaitStdout("PROFILER TEST", time.Minute); err != nil {
		t.Errorf("no verdict from the profiler's Released: %v", err)
	}
	if err := p.WriteLine("done"); err != nil {
		t.Error(err)
	}
	return p.Wait()
}
