package profiler_test

import (
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var goSettingsRe = regexp.MustCompile(`(?m)^countprof: go gcpercent=(-?\d+) maxprocs=(\d+) memlimit=(\d+)$`)

func goSettings(t *testing.T, res harness.Result) (gc, procs int, limit int64) {
	t.Helper()
	m := goSettingsRe.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no Go settings line:\n%s", res.Describe())
	}
	gc, _ = strconv.Atoi(m[1])
	procs, _ = strconv.Atoi(m[2])
	limit, _ = strconv.ParseInt(m[3], 10, 64)
	return gc, procs, limit
}

// TestGoEnvironmentNotFollowed: the application's GOGC, GOMAXPROCS and
// GOMEMLIMIT do not steer the profiler's Go runtime, unless the profiler
// registers with WithGoEnvironment.
func TestGoEnvironmentNotFollowed(t *testing.T) {
	lib := countprof(t)
	goEnv := []string{"GOGC=off", "GOMAXPROCS=1", "GOMEMLIMIT=1048576"}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		run := func(env ...string) harness.Result {
			res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, Env: append(env, "CLRPROF_LOG_LEVEL=info")})
			checkApp(t, res)
			return res
		}
		plainGC, plainProcs, plainLimit := goSettings(t, run())
		res := run(goEnv...)
		gc, procs, limit := goSettings(t, res)
		if gc != plainGC || procs != plainProcs || limit != plainLimit {
			t.Errorf("%s: with %v the profiler's Go runtime has gcpercent=%d maxprocs=%d memlimit=%d, without %d %d %d",
				rt.Name, goEnv, gc, procs, limit, plainGC, plainProcs, plainLimit)
		}
		if plainGC != 100 || plainLimit != math.MaxInt64 {
			t.Errorf("%s: defaults are gcpercent=%d memlimit=%d", rt.Name, plainGC, plainLimit)
		}
		res.MustStderrContain(t, "the profiler uses Go's defaults instead", "GOGC=off")

		gc, procs, limit = goSettings(t, run(append(goEnv, "COUNTPROF_GOENV=follow")...))
		if gc != -1 || procs != 1 || limit != 1048576 {
			t.Errorf("%s: WithGoEnvironment: gcpercent=%d maxprocs=%d memlimit=%d, want -1 1 1048576", rt.Name, gc, procs, limit)
		}
	})
}

// TestDeclinesBesideAnotherGoRuntime: with another Go runtime already in the
// process (a Go shared library preloaded), the profiler declines in
// Initialize and the application runs unprofiled.
func TestDeclinesBesideAnotherGoRuntime(t *testing.T) {
	lib := countprof(t)
	other := harness.BuildProfiler(t, "./profiler/testdata/othergo")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, Env: []string{"LD_PRELOAD=" + other}})
		checkApp(t, res)
		res.MustStderrContain(t, "declining to profile this process", "another Go runtime is already loaded", "libothergo.so")
		res.MustStderrNotContain(t, "countprof: Initialize")
	})
}
