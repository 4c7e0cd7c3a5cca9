package profiler_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const composeprofCLSID = "{3C9E7A15-2B4D-4F6E-8A1C-5D7B9E0F2A34}"

var composeRe = regexp.MustCompile(`(?m)^composeprof: ([AB]) jits=(\d+) threads=(\d+) modules=(\d+) inlining=(\d+)$`)

type memberCounts struct{ jits, threads, modules, inlining int }

func composeCounts(t *testing.T, res harness.Result) (a, b memberCounts) {
	t.Helper()
	ms := composeRe.FindAllStringSubmatch(res.Stderr, -1)
	if len(ms) != 2 {
		t.Fatalf("want two composeprof lines:\n%s", res.Describe())
	}
	for _, m := range ms {
		n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
		c := memberCounts{n(2), n(3), n(4), n(5)}
		if m[1] == "A" {
			a = c
		} else {
			b = c
		}
	}
	return a, b
}

// TestComposeTwoGoProfilers: two Go profilers composed in one library, on
// every runtime. Each sees exactly the events it asked for (A: JIT and
// threads, not the module loads B asked for although it implements
// ModuleLoadFinished; B: JIT and module loads, as many as countprof sees
// alone, not threads); both get every JIT compilation; JITInlining asks
// both and B's "no" wins (the runtime then compiles callees it would have
// inlined: more JIT compilations than when both say yes); a panic in A
// does not silence B; when both rewrite the same method's IL at
// JITCompilationStarted, the second reads the first one's body (the
// runtime's GetILFunctionBody returns the body SetILFunctionBody set) and
// the app runs with both rewrites.
func TestComposeTwoGoProfilers(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/composeprof")
	count := countprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		alone := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: count, ProfilerCLSID: countprofCLSID, DisableReadyToRun: true})
		checkApp(t, alone)
		modules0, _ := shutdownCounts(t, alone)

		run := func(env ...string) (memberCounts, memberCounts, harness.Result) {
			res := harness.Run(t, rt, a, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: composeprofCLSID, DisableReadyToRun: true, Env: env})
			checkApp(t, res)
			ca, cb := composeCounts(t, res)
			return ca, cb, res
		}
		// Compared without tiered compilation: with tiers, how many
		// methods reach tier 1 in a run varies on .NET 11 by more than
		// refusing inlining changes (TestChainRules says more).
		ca, cb, _ := run("DOTNET_TieredCompilation=0")
		na, nb, _ := run("COMPOSEPROF_NOINLINE=1", "DOTNET_TieredCompilation=0")
		pa, pb, pres := run("COMPOSEPROF_PANIC=1")
		t.Logf("%s: inlining allowed A%+v B%+v; B refuses A%+v B%+v; A panics A%+v B%+v; countprof alone modules=%d", rt.Name, ca, cb, na, nb, pa, pb, modules0)

		for _, c := range []struct {
			name string
			a, b memberCounts
		}{{"allowed", ca, cb}, {"B refuses", na, nb}, {"A panics", pa, pb}} {
			if c.a.jits == 0 || c.a.jits != c.b.jits {
				t.Errorf("%s: %s: JIT compilations A=%d B=%d, want equal and > 0", rt.Name, c.name, c.a.jits, c.b.jits)
			}
			if c.a.threads == 0 || c.b.threads != 0 {
				t.Errorf("%s: %s: threads A=%d B=%d: only A asked for them", rt.Name, c.name, c.a.threads, c.b.threads)
			}
			// Refusing every inlining changes what the app loads (one
			// module fewer on 2.x and 3.1): compare with countprof only
			// where inlining is as usual.
			if c.a.modules != 0 || c.b.modules == 0 || (c.name != "B refuses" && c.b.modules != modules0) {
				t.Errorf("%s: %s: module loads A=%d B=%d (countprof alone %d): only B asked for them", rt.Name, c.name, c.a.modules, c.b.modules, modules0)
			}
			if c.name != "A panics" && c.a.inlining != c.b.inlining {
				t.Errorf("%s: %s: JITInlining A=%d B=%d: both must be asked", rt.Name, c.name, c.a.inlining, c.b.inlining)
			}
		}
		if ca.inlining == 0 {
			t.Errorf("%s: no JITInlining at all", rt.Name)
		}
		if na.jits <= ca.jits {
			t.Errorf("%s: with B refusing every inlining the runtime compiled %d functions, with both allowing %d: B's no did not win", rt.Name, na.jits, ca.jits)
		}
		pres.MustStderrContain(t, "panic in JITCompilationStarted of composed profiler #0")

		// Two members rewrite the same method: B reads the body A set.
		_, _, ires := run("COMPOSEPROF_IL=1")
		ires.MustStderrContain(t, "composeprof: A rewrote App.Work", "composeprof: B sees A's IL: true; B rewrote App.Work")
	})
}

// TestComposeTwoObjects: on .NET 8, the composed library listed twice as a
// notification profiler: the runtime creates two profiler objects, which
// both dispatch to the one registered Composite. The per-member masks
// belong to the first; the second initializes the members again (logged)
// and its callbacks are filtered by the same masks: A never sees a module
// load, B never a thread, from either object.
func TestComposeTwoObjects(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/composeprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		if !rt.AtLeast(7, 0) {
			t.Skipf("%s: notification profilers are tested on .NET 7+", rt.Name)
		}
		entry := lib + "=" + composeprofCLSID
		res := harness.Run(t, rt, a, harness.RunOptions{Env: []string{
			"CORECLR_ENABLE_PROFILING=1", "CORECLR_ENABLE_NOTIFICATION_PROFILERS=1",
			"CORECLR_NOTIFICATION_PROFILERS=" + notificationList(entry, entry), "CLRPROF_LOG_LEVEL=info"}})
		checkApp(t, res)
		res.MustStderrContain(t, "composed profilers initialized again for another profiler object")
		ms := composeRe.FindAllStringSubmatch(res.Stderr, -1)
		if len(ms) != 4 {
			t.Fatalf("%s: want 4 composeprof lines (2 objects x 2 members), got %d:\n%s", rt.Name, len(ms), res.Describe())
		}
		for _, m := range ms {
			if (m[1] == "A" && (m[4] != "0" || m[3] == "0")) || (m[1] == "B" && (m[3] != "0" || m[4] == "0")) {
				t.Errorf("%s: %s: a member saw events it did not ask for, or none of its own", rt.Name, m[0])
			}
		}
		t.Logf("%s: %s", rt.Name, ms[0][0]+"; "+ms[1][0])
	})
}
