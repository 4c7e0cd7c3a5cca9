package profiler_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const chaincCLSID = "{8E2B1C3D-4F5A-4B6C-9D7E-0F1A2B3C4D5E}"

// chainc builds testdata/chainc, the native profiler written in C for the
// chaining tests.
func chainc(t *testing.T) string {
	t.Helper()
	return harness.BuildCShared(t, []string{"testdata/chainc/chainc.c"}, "-Wall", "-Werror", "-I../internal/include")
}

var chaincRe = regexp.MustCompile(`(?m)^chainc: Shutdown jits=(\d+) allocs=(\d+) modules=(\d+) inlining=(\d+) failed=(\d+)$`)

type chaincCounts struct{ jits, allocs, modules, inlining, failed int }

func chaincShutdown(t *testing.T, res harness.Result) chaincCounts {
	t.Helper()
	m := chaincRe.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no chainc Shutdown line:\n%s", res.Describe())
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	if strings.Contains(res.Stderr, "chainc: FAIL") {
		t.Errorf("chainc's own asserts failed:\n%s", res.Stderr)
	}
	return chaincCounts{n(1), n(2), n(3), n(4), n(5)}
}

// TestChainNativeProfiler: a Go profiler (countprof) chains a native one
// (chainc) named by CLRPROF_CHAIN_PATH / CLRPROF_CHAIN_CLSID, on every
// runtime. Both see their events: chainc its JIT compilations and object
// allocations (which only it asked for: they go to it straight, by the
// direct slots) and no module loads (which only the Go profiler asked for);
// countprof the same module loads as when it runs alone, although chainc
// set its own mask after countprof's (in Initialize, the chained profiler
// goes first) and again from a callback. chainc's own asserts (the
// ICorProfilerInfo it gets answers QueryInterface, GetEventMask says what
// it asked for and nothing of the Go profiler's, QueryInterface answers
// every ICorProfilerInfoN up to the runtime's with the same object and no
// later one) pass.
func TestChainNativeProfiler(t *testing.T) {
	lib, native := countprof(t), chainc(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		alone := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID})
		checkApp(t, alone)
		modules0, _ := shutdownCounts(t, alone)

		nativeAlone := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: native, ProfilerCLSID: chaincCLSID})
		checkApp(t, nativeAlone)
		c0 := chaincShutdown(t, nativeAlone)

		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID,
			Env: []string{"CLRPROF_CHAIN_PATH=" + native, "CLRPROF_CHAIN_CLSID=" + chaincCLSID, "CLRPROF_LOG_LEVEL=info"}})
		checkApp(t, res)
		res.MustStderrContain(t, "chain: loaded the chained profiler", "chainc: Initialize")
		// ObjectAllocated, which only chainc asks for, goes to it straight
		// (the direct slots); chainc still counts allocations below.
		if !regexp.MustCompile(`chain: [1-9]\d* callbacks go straight to the chained profiler`).MatchString(res.Stderr) {
			t.Errorf("%s: no callback went straight to the chained profiler:\n%s", rt.Name, res.Stderr)
		}
		// The chained profiler's Info answers exactly the runtime's
		// ICorProfilerInfoN, as the Go profiler sees them.
		if m := regexp.MustCompile(`countprof: Initialize info=(\d+)`).FindStringSubmatch(res.Stderr); m == nil {
			t.Errorf("%s: no countprof Initialize line", rt.Name)
		} else {
			res.MustStderrContain(t, "chainc: highest ICorProfilerInfo"+m[1]+"\n")
		}
		modules, jits := shutdownCounts(t, res)
		c := chaincShutdown(t, res)
		t.Logf("%s: countprof alone modules=%d; chained: countprof modules=%d jits=%d, chainc %+v (alone %+v)", rt.Name, modules0, modules, jits, c, c0)
		if modules != modules0 || jits == 0 {
			t.Errorf("%s: chained, countprof saw modules=%d jits=%d; alone modules=%d", rt.Name, modules, jits, modules0)
		}
		if c.jits == 0 || c.allocs == 0 || c.modules != 0 || c.failed != 0 {
			t.Errorf("%s: chainc chained: %+v", rt.Name, c)
		}
		if c0.jits == 0 || c0.allocs == 0 || c0.modules != 0 || c0.failed != 0 {
			t.Errorf("%s: chainc alone: %+v", rt.Name, c0)
		}
	})
}

// TestTwoGoProfilerLibraries: a second Go profiler library in the process
// declines, saying which library (and which clrprof profiler) holds the
// process and how to compose instead; the first runs on. On every runtime
// with the first library preloaded, and chained by CLRPROF_CHAIN_PATH (not
// loaded at all: the SDK sees Go's build information in the file); on .NET
// 8 also as a notification profiler beside a Go main profiler.
func TestTwoGoProfilerLibraries(t *testing.T) {
	lib, other := countprof(t), harness.BuildProfiler(t, "./profiler/testdata/composeprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, Env: []string{"LD_PRELOAD=" + other}})
		checkApp(t, res)
		res.MustStderrContain(t, "declining to profile this process", "libcomposeprof.so, the clrprof profiler "+composeprofCLSID+" *profiler.Composite",
			"build them into one library with profiler.Compose")
		res.MustStderrNotContain(t, "countprof: Initialize")

		res = harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID,
			Env: []string{"CLRPROF_CHAIN_PATH=" + other, "CLRPROF_CHAIN_CLSID=" + composeprofCLSID}})
		checkApp(t, res)
		res.MustStderrContain(t, "chain: the chained profiler is a Go library", "countprof: Shutdown")
		res.MustStderrNotContain(t, "composeprof:")

		if rt.AtLeast(7, 0) {
			res = harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: other, ProfilerCLSID: composeprofCLSID, Env: []string{
				"CORECLR_ENABLE_NOTIFICATION_PROFILERS=1", "CORECLR_NOTIFICATION_PROFILERS=" + notificationList(lib+"="+countprofCLSID)}})
			checkApp(t, res)
			res.MustStderrContain(t, "declining to profile this process", "libcomposeprof.so, the clrprof profiler "+composeprofCLSID,
				"composeprof: A jits=")
			res.MustStderrNotContain(t, "countprof: Initialize")
		}
	})
}

// TestChainRules: the rules between a Go profiler and a chained native one,
// on every runtime. JITInlining asks both and the native profiler's "no"
// wins (the runtime then compiles callees it would have inlined); the
// enter/leave hooks belong to whoever sets them first (chainc, in its
// Initialize, which runs first): the Go profiler's elt.NewRecorder is refused
// with CORPROF_E_PROFILER_ALREADY_ACTIVE; a failing Initialize of either
// leaves the other running.
func TestChainRules(t *testing.T) {
	lib, native := countprof(t), chainc(t)
	chain := []string{"CLRPROF_CHAIN_PATH=" + native, "CLRPROF_CHAIN_CLSID=" + chaincCLSID, "CLRPROF_LOG_LEVEL=info"}
	run := func(t *testing.T, rt harness.Runtime, env ...string) harness.Result {
		res := harness.Run(t, rt, app(t, rt), harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, DisableReadyToRun: true, Env: append(append([]string{}, chain...), env...)})
		checkApp(t, res)
		return res
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		alone := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: countprofCLSID, DisableReadyToRun: true})
		checkApp(t, alone)
		modules0, _ := shutdownCounts(t, alone)

		// JITInlining: chainc refuses. Without tiered compilation each
		// method is compiled once: with tiers, how many methods reach
		// tier 1 during the run varies by tens on .NET 11 (866 to 920
		// compilations in three runs), more than inlining changes.
		_, jits := shutdownCounts(t, run(t, rt, "DOTNET_TieredCompilation=0"))
		_, jitsNo := shutdownCounts(t, run(t, rt, "CHAINC_NO_INLINE=1", "DOTNET_TieredCompilation=0"))
		t.Logf("%s: JIT compilations with chainc allowing inlining %d, refusing %d", rt.Name, jits, jitsNo)
		if jitsNo <= jits {
			t.Errorf("%s: chainc's JITInlining no did not win: %d compilations, %d when it allows", rt.Name, jitsNo, jits)
		}

		// ELT hooks: first come. (.NET Core 2.0 never calls the hooks:
		// the SDK's elt.NewRecorder refuses it before asking the runtime.)
		res := run(t, rt, "CHAINC_ELT=1", "COUNTPROF_TRY=elt")
		res.MustStderrContain(t, "chainc: SetEnterLeaveFunctionHooks3 0x00000000")
		if rt.AtLeast(2, 1) {
			res.MustStderrContain(t, "(already active: true)",
				"the Go profiler called SetEnterLeaveFunctionHooks3, but the chained profiler owns the enter/leave hooks")
		} else {
			res.MustStderrContain(t, "countprof: try elt.NewRecorder: clrprof: elt.NewRecorder: not available")
		}
		chaincShutdown(t, res)

		// Either Initialize fails: the other runs.
		res = run(t, rt, "COUNTPROF_TRY=failinit")
		res.MustStderrContain(t, "the Go profiler failed Initialize", "runs alone")
		if c := chaincShutdown(t, res); c.jits == 0 || c.allocs == 0 {
			t.Errorf("%s: chainc alone after the Go profiler failed: %+v", rt.Name, c)
		}
		res = run(t, rt, "CHAINC_FAIL_INIT=1")
		res.MustStderrContain(t, "failed Initialize with 0x80004005; the Go profiler runs alone")
		res.MustStderrNotContain(t, "chainc: Shutdown")
		if modules, _ := shutdownCounts(t, res); modules != modules0 {
			t.Errorf("%s: countprof alone after chainc failed: modules=%d, want %d", rt.Name, modules, modules0)
		}
	})
}
