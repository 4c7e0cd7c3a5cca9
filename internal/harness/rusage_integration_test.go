package harness_test

import (
	"runtime"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// Result.MaxRSS and Result.CPU come from the child's rusage, for Run and
// for Start: a .NET hello world has tens of MiB resident and used some CPU,
// at most its wall time on every core.
func TestResultRusage(t *testing.T) {
	rts := harness.NeedsRuntime(t)
	rt := rts[len(rts)-1]
	app := helloApp(t, rt)
	check := func(how string, res harness.Result) {
		t.Helper()
		res.MustSucceed(t)
		t.Logf("%s on %s: wall %v, cpu %v, max RSS %d KiB", how, rt.Name, res.Duration, res.CPU, res.MaxRSS>>10)
		if res.MaxRSS < 10<<20 || res.MaxRSS > 4<<30 {
			t.Errorf("%s: max RSS %d bytes", how, res.MaxRSS)
		}
		if res.CPU <= 0 || res.CPU > res.Duration*time.Duration(runtime.NumCPU())+100*time.Millisecond {
			t.Errorf("%s: cpu %v for %v of wall time", how, res.CPU, res.Duration)
		}
	}
	check("Run", harness.Run(t, rt, app, harness.RunOptions{Args: []string{"one", "two"}}))
	check("Start", harness.Start(t, rt, app, harness.RunOptions{Args: []string{"one", "two"}}).Wait())
}
