package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/pprofbuild/overhead"
	"github.com/google/pprof/profile"
)

const clsid = "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}"

// appFrame is the innermost frame of the app's own code (class Hot).
func appFrame(s *profile.Sample) string {
	for _, l := range s.Location {
		if n := l.Line[0].Function.Name; strings.HasPrefix(n, "Hot.") {
			return n
		}
	}
	return ""
}

func hasFrame(s *profile.Sample, name string) bool {
	for _, l := range s.Location {
		if l.Line[0].Function.Name == name {
			return true
		}
	}
	return false
}

// byAppFrame sums value i of the samples by their innermost app frame.
func byAppFrame(ps []*profile.Profile, i int) map[string]int64 {
	m := map[string]int64{}
	for _, p := range ps {
		for _, s := range p.Sample {
			m[appFrame(s)] += s.Value[i]
		}
	}
	return m
}

func top(m map[string]int64) (string, int64, int64) {
	var best string
	var bv, total int64
	for k, v := range m {
		total += v
		if k != "" && v > bv {
			best, bv = k, v
		}
	}
	return best, bv, total
}

var periodRe = regexp.MustCompile(`^(\w+)\.(\d+)\.pprof$`)

// load reads every profile of the run, by kind, in period order.
func load(t *testing.T, dir string) map[string][]*profile.Profile {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	type file struct {
		kind string
		n    int
		path string
	}
	var files []file
	for _, e := range ents {
		m := periodRe.FindStringSubmatch(e.Name())
		if m == nil {
			t.Errorf("unexpected file %s", e.Name())
			continue
		}
		n, _ := strconv.Atoi(m[2])
		files = append(files, file{m[1], n, filepath.Join(dir, e.Name())})
	}
	sort.Slice(files, func(i, j int) bool { return files[i].n < files[j].n })
	out := map[string][]*profile.Profile{}
	for _, f := range files {
		r, err := os.Open(f.path)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.Parse(r)
		r.Close()
		if err != nil {
			t.Fatalf("%s: %v", f.path, err)
		}
		out[f.kind] = append(out[f.kind], p)
	}
	return out
}

// hotspots builds contprof.
func hotspots(t *testing.T) (lib string) {
	t.Helper()
	return harness.BuildProfiler(t, "./sample/contprof")
}

// hotspotsApp compiles the app of known hot spots for rt.
func hotspotsApp(t *testing.T, rt harness.Runtime) string {
	t.Helper()
	return harness.CompileCS(t, []string{"testdata/hotspots.cs"}, "", harness.For(rt))
}

// runHotspots runs the hotspots app under contprof with 1 s periods and
// the given extra environment, into a fresh directory, and requires it to
// succeed.
// checkCost checks the cost contprof accounted for on its Shutdown line
// (package pprofbuild/overhead): every field there, the totals their sum,
// the sampler's CPU time while it held the runtime within both the hold
// and the sampler's CPU time, some output, and with snapshots (.NET Core
// 3.0+) some hold and sampler time, callbacks on the app's threads
// (exceptions, GC) everywhere.
func checkCost(t *testing.T, res harness.Result, snapshots bool) {
	t.Helper()
	line := res.LastStderrLine("contprof: Shutdown ")
	r, ok := overhead.ParseReport(line)
	if !ok {
		t.Fatalf("the Shutdown line does not account for the cost: %q", line)
	}
	wall, _ := strconv.ParseInt(regexp.MustCompile(`cost_wall_us=(\d+)`).FindStringSubmatch(line)[1], 10, 64)
	cpu, _ := strconv.ParseInt(regexp.MustCompile(`cost_cpu_us=(\d+)`).FindStringSubmatch(line)[1], 10, 64)
	t.Logf("cost: %s (run %v)", line[strings.Index(line, "cost_wall_us"):], res.Duration)
	// the sums, within the fields' rounding to microseconds
	if d := wall - r.Wall().Microseconds(); d < -6 || d > 6 {
		t.Errorf("cost_wall_us=%d is not the sum of its parts (%v)", wall, r.Wall())
	}
	if d := cpu - r.CPU().Microseconds(); d < -6 || d > 6 {
		t.Errorf("cost_cpu_us=%d is not the sum of its parts (%v)", cpu, r.CPU())
	}
	if r.HeldCPU > r.Held+time.Microsecond || r.HeldCPU > r.Sampler+time.Microsecond {
		t.Errorf("sampler CPU while holding %v: more than the hold %v or the sampler's CPU %v", r.HeldCPU, r.Held, r.Sampler)
	}
	if r.OutputWall <= 0 || r.CallbackCount == 0 || r.Callbacks <= 0 {
		t.Errorf("no output (%v) or no callbacks (%d, %v) accounted for", r.OutputWall, r.CallbackCount, r.Callbacks)
	}
	if snapshots && (r.Snapshots == 0 || r.Held <= 0 || r.Sampler <= 0) {
		t.Errorf("snapshots: %d, held %v, sampler CPU %v", r.Snapshots, r.Held, r.Sampler)
	}
	if time.Duration(wall)*time.Microsecond > res.Duration {
		t.Errorf("cost %v over the whole run of %v", time.Duration(wall)*time.Microsecond, res.Duration)
	}
}

func runHotspots(t *testing.T, rt harness.Runtime, lib, app string, env ...string) (string, harness.Result) {
	t.Helper()
	dir := t.TempDir()
	res := harness.Run(t, rt, app, harness.RunOptions{
		ProfilerPath: lib, ProfilerCLSID: clsid,
		Env: append([]string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1"}, env...),
	})
	res.MustSucceed(t)
	return dir, res
}

// releasedRe finds the reports of the library's code pages given back
// (CONTPROF_RELEASE_CODE=1, the default): at start-up, and after each
// periodic write; the amount must not be 0.
var releasedRe = regexp.MustCompile(`(?m)^contprof: start-up: released_code_kb=[1-9]\d* kept_kb=\d+ took_us=\d+$`)
var releasedPeriodRe = regexp.MustCompile(`(?m)^contprof: wrote period \d+ .* released_code_kb=[1-9]\d* kept_kb=\d+ took_us=\d+$`)

// returnedRe finds a periodic write's report of the memory it gave back.
var returnedRe = regexp.MustCompile(`(?m)^contprof: wrote period \d+ .* returned_kb=-?\d+( |$)`)

// The app's hot spots are known (testdata/hotspots.cs): Hot.Thrower must
// top the exceptions profile with exactly its 200 throws (and 20 for
// Hot.RareThrower); Hot.HoldLock the contention profile (.NET 5+);
// Hot.Retain must dominate the final live heap, and Hot.Temporary, seen in
// the live heap while its list held it, must be gone from it after the app
// dropped it and collected; Hot.Sleeper appears in wall time and never in
// CPU time, which Hot.Spin tops (.NET Core 3.0+); the GC profile has the
// app's two induced gen 2 collections. The live heap and the allocation
// profile (CONTPROF_HEAP=1: on every runtime) sample the runtime's
// AllocationSampled events on .NET 10+, its allocation ticks on .NET 5 to
// 9, and record allocations before; Hot.Churn tops the allocations
// (TestContprofAllocations checks the estimates against their bound). Every file parses, names the runtime and the
// process, and `go tool pprof -top` prints it.
func TestContprof(t *testing.T) {
	lib := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_HEAP=1", "CONTPROF_HEAP_RATE=65536")
		res.MustStdoutContain(t, "phase: dropped", "app done")
		res.MustStderrContain(t, "contprof: wrote period ", "Go collects its own heap at GOGC=25 (CONTPROF_GOGC)")
		// CONTPROF_RETURN_MEMORY=1 (the default): each periodic write
		// gives the Go heap's free pages back and says how much.
		if !returnedRe.MatchString(res.Stderr) {
			t.Errorf("no periodic write says what it returned (returned_kb=):\n%s", res.Stderr)
		}
		// CONTPROF_RELEASE_CODE=1 (the default): the library's code
		// pages are given back after Initialize and after each periodic
		// write, and the application runs on (the checks above).
		if !releasedRe.MatchString(res.Stderr) || !releasedPeriodRe.MatchString(res.Stderr) {
			t.Errorf("no report of code pages given back at start-up and after a periodic write (released_code_kb= above 0):\n%s", res.Stderr)
		}
		checkCost(t, res, rt.AtLeast(3, 0))
		profs := load(t, dir)
		for kind, ps := range profs {
			c := strings.Join(ps[len(ps)-1].Comments, "\n")
			if !strings.Contains(c, "runtime .NET") || !strings.Contains(c, rt.Version) || !strings.Contains(c, "pid ") {
				t.Errorf("%s: comments do not name the runtime %s and the process:\n%s", kind, rt.Version, c)
			}
		}

		// Exceptions, every runtime: exact counts.
		exc := map[string]int64{}
		for _, p := range profs["exceptions"] {
			for _, s := range p.Sample {
				exc[appFrame(s)+" "+strings.Join(s.Label["exception"], ",")] += s.Value[0]
			}
		}
		if exc["Hot.Thrower System.InvalidOperationException"] != 200 || exc["Hot.RareThrower System.ArgumentException"] != 20 {
			t.Errorf("exceptions by throwing method and type: %v; want Hot.Thrower 200 InvalidOperationException, Hot.RareThrower 20 ArgumentException", exc)
		}

		// Contention: .NET 5+.
		if rt.Major >= 5 {
			m := byAppFrame(profs["contention"], 1)
			f, v, total := top(m)
			t.Logf("%s: contention delay %v ms, top %s %.0f%%", rt.Name, total/1e6, f, 100*float64(v)/float64(max(total, 1)))
			if f != "Hot.HoldLock" || total == 0 {
				t.Errorf("contention: top %s of %v, want Hot.HoldLock", f, m)
			}
		} else {
			res.MustStderrContain(t, "contprof: contention: not available on .NET Core "+rt.Version)
			if len(profs["contention"]) > 0 {
				t.Errorf("a contention profile on %s", rt.Name)
			}
		}

		// Live heap.
		heaps := profs["heap"]
		if len(heaps) < 2 {
			t.Fatalf("%d heap profiles", len(heaps))
		}
		src := "from the runtime's allocation ticks"
		switch {
		case rt.Major >= 10:
			src = "from the runtime's allocation sampling (AllocationSampled"
		case rt.Major < 5:
			src = "allocations sampled every 65536 bytes"
		}
		for _, kind := range []string{"heap", "alloc"} {
			ps := profs[kind]
			if len(ps) == 0 {
				t.Errorf("no %s profile", kind)
				continue
			}
			if c := strings.Join(ps[len(ps)-1].Comments, "\n"); !strings.Contains(c, src) {
				t.Errorf("%s profile comments do not say %q:\n%s", kind, src, c)
			}
		}
		// The allocation profile: Hot.Churn's byte[4000] top it (25,000
		// of them as written, 100 MB; about 40 MB on .NET 8, 10 and 11,
		// both by the ticks and by AllocationSampled, 93 MB on 3.1: the
		// optimized loop allocates fewer, cause not looked into).
		af, av, atotal := top(byAppFrame(profs["alloc"], 1))
		t.Logf("%s: allocations %d MB, top %s %d MB: %v", rt.Name, atotal>>20, af, av>>20, byAppFrame(profs["alloc"], 1))
		if af != "Hot.Churn" || av < 20<<20 || av > 200<<20 {
			t.Errorf("alloc: top %s with %d bytes, want Hot.Churn with 20-200 MB", af, av)
		}
		final := byAppFrame(heaps[len(heaps)-1:], 1)
		f, v, total := top(final)
		t.Logf("%s: final live heap %d KB: %v", rt.Name, total>>10, final)
		if f != "Hot.Retain" || 2*v <= total {
			t.Errorf("final live heap: top %s with %d of %d bytes, want Hot.Retain with most", f, v, total)
		}
		if final["Hot.Temporary"] != 0 || final["Hot.Churn"] != 0 {
			t.Errorf("final live heap still has dropped objects: %v", final)
		}
		// Retained: 4000 byte[4000] (16 MB): the estimate within a factor 2.
		if v < 8<<20 || v > 32<<20 {
			t.Errorf("Hot.Retain live estimate %d bytes, want about 16 MB", v)
		}
		sawTemp := false
		for _, h := range heaps[:len(heaps)-1] {
			if byAppFrame([]*profile.Profile{h}, 1)["Hot.Temporary"] > 0 {
				sawTemp = true
			}
		}
		if !sawTemp {
			t.Errorf("Hot.Temporary never in the live heap while it was held")
		}

		// CPU and wall: .NET Core 3.0+.
		if rt.Major >= 3 {
			var sleepWall, sleepCPU int64
			for _, p := range profs["wall"] {
				for _, s := range p.Sample {
					if hasFrame(s, "Hot.Sleeper") {
						sleepWall += s.Value[1]
					}
				}
			}
			for _, p := range profs["cpu"] {
				for _, s := range p.Sample {
					if hasFrame(s, "Hot.Sleeper") {
						sleepCPU += s.Value[1]
					}
				}
			}
			cf, cv, ctotal := top(byAppFrame(profs["cpu"], 1))
			t.Logf("%s: Hot.Sleeper wall %d ms, cpu %d ns; cpu top %s %.0f%%", rt.Name, sleepWall/1e6, sleepCPU, cf, 100*float64(cv)/float64(max(ctotal, 1)))
			// The sleeper's only CPU time is its start, before it sleeps: a
			// tick that sees it there and the next one can charge it the
			// microseconds in between; never more than a millisecond.
			if sleepWall < 1e9 || sleepCPU > 1e6 {
				t.Errorf("Hot.Sleeper: wall %d ns (want over 1 s), cpu %d ns (want none, at most 1 ms of thread start)", sleepWall, sleepCPU)
			}
			if cf != "Hot.Spin" {
				t.Errorf("cpu: top %s, want Hot.Spin", cf)
			}
		} else {
			res.MustStderrContain(t, "contprof: cpu, wall: not available on .NET Core "+rt.Version)
		}

		// GC: the two induced collections of gen 2, with a pause.
		var gen2, all, pause int64
		for _, p := range profs["gc"] {
			for _, s := range p.Sample {
				if hasFrame(s, "[GC gen 2]") {
					gen2 += s.Value[0]
				}
				all += s.Value[0]
				pause += s.Value[1]
			}
		}
		t.Logf("%s: gen 2 collections %d of %d, pauses %v ms", rt.Name, gen2, all, pause/1e6)
		if gen2 < 2 || pause <= 0 {
			t.Errorf("gc: %d gen 2 collections (want at least 2), pause %d ns", gen2, pause)
		}
		// The Shutdown line's gcs are the GC profiles' collections.
		if m := regexp.MustCompile(`contprof: Shutdown .* gcs=(\d+)`).FindStringSubmatch(res.Stderr); m == nil || int64(atoi(t, m[1])) != all {
			t.Errorf("Shutdown line %q: want gcs=%d, the GC profiles' collections", m, all)
		}

		for _, kind := range []string{"exceptions", "heap", "alloc", "gc"} {
			out, err := exec.Command("go", "tool", "pprof", "-top", filepath.Join(dir, kind+".1.pprof")).CombinedOutput()
			if err != nil {
				t.Errorf("go tool pprof -top %s: %v\n%s", kind, err, out)
			}
		}
	})
}

var workRe = regexp.MustCompile(`(?s)(spin|alloc): rounds=(\d+).*cpu_ms=(\d+)`)

// The cost of contprof at its default settings in the steady state: the
// process's CPU time per round of work (the SDK's sampling test app,
// profiler/testdata/sampling/eltapp.cs: a CPU-bound loop for 3 s, an
// allocation loop for 3 s, the latter also with the live heap off,
// CONTPROF_HEAP=0, and on, CONTPROF_HEAP=1, which differ from the
// defaults before and after .NET 5) with the profiler and without,
// interleaved, best of 2 each; logged, never asserted (the machine is
// shared). task bench measures the same against whole runs.
func TestContprofOverhead(t *testing.T) {
	if testing.Short() {
		t.Skip("measures")
	}
	lib := harness.BuildProfiler(t, "./sample/contprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "", harness.For(rt))
		for _, c := range []struct{ mode, env string }{{"spin", ""}, {"alloc", ""}, {"alloc", "CONTPROF_HEAP=0"}, {"alloc", "CONTPROF_HEAP=1"}} {
			mode := c.mode
			perRound := func(with bool) float64 {
				o := harness.RunOptions{Args: []string{mode, "3"}, Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"}}
				if with {
					o.ProfilerPath, o.ProfilerCLSID = lib, clsid
					o.Env = append(o.Env, "CONTPROF_DIR="+t.TempDir())
					if c.env != "" {
						o.Env = append(o.Env, c.env)
					}
				}
				res := harness.Run(t, rt, app, o)
				res.MustSucceed(t)
				if with && !strings.Contains(res.Stderr, "contprof: Shutdown") {
					// The runtime runs the app without a profiler whose
					// Initialize failed: that ratio would mean nothing.
					t.Fatalf("contprof (%s) did not profile the run:\n%s", c.env, res.Describe())
				}
				m := workRe.FindStringSubmatch(res.Stdout)
				if m == nil {
					t.Fatalf("no rounds/cpu_ms:\n%s", res.Describe())
				}
				r, _ := strconv.Atoi(m[2])
				cpu, _ := strconv.Atoi(m[3])
				return float64(cpu) / float64(r)
			}
			with, without := perRound(true), perRound(false)
			with, without = min(with, perRound(true)), min(without, perRound(false))
			t.Logf("%s %s %s: %.4f ms CPU per round with contprof, %.4f without: ratio %.3f", rt.Name, mode, c.env, with, without, with/without)
		}
	})
}

// At its defaults contprof writes the live heap where the runtime's
// allocation ticks reach it (.NET 5+) and not before, where the heap would
// need ObjectAllocated (it says so at start, and the GC profile still
// counts the app's induced collections). On .NET 5+, at the default
// CONTPROF_HEAP_RATE (512 KiB), it keeps about one allocation tick in
// five, each standing for the bytes of the ticks it stands in for (on
// .NET 10+ one AllocationSampled event in five, 102400/524288): the
// live heap must still be dominated by Hot.Retain with an estimate near
// its 16 MB, and the comments must say how many ticks were kept.
func TestContprofHeapDefault(t *testing.T) {
	lib := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		dir, res := runHotspots(t, rt, lib, app)
		profs := load(t, dir)
		if rt.Major < 5 {
			res.MustStderrContain(t, "contprof: heap: off by default on .NET Core "+rt.Version+": before .NET 5 the live heap needs ObjectAllocated", "contprof: Shutdown")
			if len(profs["heap"]) != 0 {
				t.Errorf("%d heap profiles on %s at the defaults", len(profs["heap"]), rt.Name)
			}
			var n int64
			for _, p := range profs["gc"] {
				for _, s := range p.Sample {
					n += s.Value[0]
				}
			}
			if n < 2 {
				t.Errorf("gc profile: %d collections, want at least the 2 induced", n)
			}
			return
		}
		heaps := profs["heap"]
		if len(heaps) == 0 {
			t.Fatalf("no heap profile:\n%s", res.Describe())
		}
		last := heaps[len(heaps)-1]
		c := strings.Join(last.Comments, "\n")
		m := regexp.MustCompile(`one kept every 524288 bytes on average: (\d+) of (\d+) kept`).FindStringSubmatch(c)
		if m == nil {
			t.Fatalf("heap comments do not say which ticks were kept:\n%s", c)
		}
		kept, seen := atoi(t, m[1]), atoi(t, m[2])
		t.Logf("%s: %d of %d allocation ticks kept", rt.Name, kept, seen)
		// About one in five (100 KB ticks, 512 KiB mean gap).
		if kept == 0 || kept*2 > seen {
			t.Errorf("%d of %d ticks kept, want about one in five", kept, seen)
		}
		final := byAppFrame([]*profile.Profile{last}, 1)
		f, v, total := top(final)
		t.Logf("%s: final live heap %d KB: %v", rt.Name, total>>10, final)
		if f != "Hot.Retain" || 2*v <= total || v < 8<<20 || v > 32<<20 {
			t.Errorf("final live heap: top %s with %d of %d bytes, want Hot.Retain with most, about 16 MB", f, v, total)
		}
	})
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return n
}

// With CONTPROF_HEAP=0 contprof writes no heap profile, and its GC profile
// still counts the app's two induced gen 2 collections: from the
// collections on .NET Core 3.0+, and on 2.x, where collections come only
// with MonitorGC, as suspensions for GC of unknown generation (the
// induced two among them).
func TestContprofHeapOff(t *testing.T) {
	lib := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_HEAP=0")
		res.MustStderrContain(t, "contprof: heap: off (CONTPROF_HEAP=0)", "contprof: Shutdown")
		profs := load(t, dir)
		if len(profs["heap"]) != 0 {
			t.Errorf("%d heap profiles with the heap off", len(profs["heap"]))
		}
		frame := "[GC gen 2]"
		if rt.Major < 3 {
			frame = pprofbuild.UnknownGenerationFrame
			res.MustStderrContain(t, "collections are not reported without MonitorGC")
		}
		var n, pause int64
		for _, p := range profs["gc"] {
			for _, s := range p.Sample {
				if hasFrame(s, frame) {
					n += s.Value[0]
					pause += s.Value[1]
				}
			}
		}
		t.Logf("%s: %d collections under %s, pauses %d µs", rt.Name, n, frame, pause/1000)
		if n < 2 || pause <= 0 {
			t.Errorf("gc profile: %d collections under %s (want at least the 2 induced), pause %d ns", n, frame, pause)
		}
	})
}

// With a suspension budget so small that every snapshot exceeds it,
// contprof skips ticks after each one (the comments count them) and the
// next sample stands for the skipped ticks: Hot.Sleeper, asleep for the
// whole run of several seconds, still gets seconds of wall time.
func TestContprofSuspendBudget(t *testing.T) {
	lib := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		if !rt.AtLeast(3, 0) {
			t.Skipf("CPU and wall snapshots need SuspendRuntime (.NET Core 3.0+)")
		}
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_SUSPEND_BUDGET=0.0001")
		profs := load(t, dir)
		var sleepWall, samples int64
		skipped := 0
		skipRe := regexp.MustCompile(`skipped=(\d+) \(overhead budget\)`)
		// what the budget was charged: the time suspended and held
		heldRe := regexp.MustCompile(`sampling: ticks=\d+ .*held=(\S+) waited=(\S+)`)
		var held time.Duration
		for _, p := range profs["wall"] {
			c := strings.Join(p.Comments, "\n")
			if m := skipRe.FindStringSubmatch(c); m != nil {
				skipped += atoi(t, m[1])
			}
			m := heldRe.FindStringSubmatch(c)
			if m == nil {
				t.Fatalf("the wall profile does not say how long its snapshots held the runtime:\n%s", c)
			}
			h, err1 := time.ParseDuration(m[1])
			_, err2 := time.ParseDuration(m[2])
			if err1 != nil || err2 != nil {
				t.Fatalf("held=%s waited=%s: %v %v", m[1], m[2], err1, err2)
			}
			held += h
			for _, s := range p.Sample {
				if hasFrame(s, "Hot.Sleeper") {
					sleepWall += s.Value[1]
					samples++
				}
			}
		}
		t.Logf("%s: %d ticks skipped, runtime held %v; Hot.Sleeper: %d samples, wall %d ms; run %v", rt.Name, skipped, held, samples, sleepWall/1e6, res.Duration)
		if held <= 0 {
			t.Errorf("snapshots held the runtime for %v", held)
		}
		if skipped == 0 {
			t.Errorf("no tick skipped with a budget of 0.0001%%")
		}
		if sleepWall < 2e9 || sleepWall > int64(res.Duration)*2 {
			t.Errorf("Hot.Sleeper wall %d ns: want most of the %v run", sleepWall, res.Duration)
		}
	})
}

// Each part turns off on its own (CONTPROF_CPU, CONTPROF_WALL,
// CONTPROF_EXCEPTIONS, CONTPROF_CONTENTION = 0): its profile is no longer
// written and stderr says so, while the others still are: with CPU off the
// wall profile still shows Hot.Sleeper; with everything but the heap and GC
// off no snapshot is taken (no cpu or wall file) and the GC profile still
// counts the induced collections.
func TestContprofPartsOff(t *testing.T) {
	lib := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		if !rt.AtLeast(5, 0) {
			t.Skipf("the contention profile needs .NET 5+; the switches are the same code everywhere")
		}
		// CONTPROF_GOGC sets Go's collector; the application's GOGC
		// does not (the SDK puts it back to Go's default first).
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_CPU=0", "CONTPROF_EXCEPTIONS=0", "CONTPROF_GOGC=150", "GOGC=400", "CONTPROF_RETURN_MEMORY=0", "CONTPROF_RELEASE_CODE=0")
		res.MustStderrContain(t, "contprof: cpu: off (CONTPROF_CPU=0)", "contprof: exceptions: off (CONTPROF_EXCEPTIONS=0)", "contprof: Shutdown periods=",
			"Go collects its own heap at GOGC=150 (CONTPROF_GOGC)", "contprof: wrote period 2 ")
		if strings.Contains(res.Stderr, "returned_kb=") {
			t.Errorf("CONTPROF_RETURN_MEMORY=0, yet a write returned memory:\n%s", res.Stderr)
		}
		if strings.Contains(res.Stderr, "released_code_kb=") {
			t.Errorf("CONTPROF_RELEASE_CODE=0, yet code pages were given back:\n%s", res.Stderr)
		}
		profs := load(t, dir)
		if len(profs["cpu"]) != 0 || len(profs["exceptions"]) != 0 {
			t.Errorf("%d cpu and %d exceptions profiles with both off", len(profs["cpu"]), len(profs["exceptions"]))
		}
		var sleep int64
		for _, p := range profs["wall"] {
			for _, s := range p.Sample {
				if hasFrame(s, "Hot.Sleeper") {
					sleep += s.Value[1]
				}
			}
		}
		if sleep <= 0 || len(profs["contention"]) == 0 || len(profs["heap"]) == 0 {
			t.Errorf("with CPU and exceptions off: Hot.Sleeper wall %d ns, %d contention and %d heap profiles; want all three", sleep, len(profs["contention"]), len(profs["heap"]))
		}

		dir, res = runHotspots(t, rt, lib, app, "CONTPROF_CPU=0", "CONTPROF_WALL=0", "CONTPROF_CONTENTION=0")
		res.MustStderrContain(t, "contprof: wall: off (CONTPROF_WALL=0)", "contprof: contention: off (CONTPROF_CONTENTION=0)")
		profs = load(t, dir)
		for _, k := range []string{"cpu", "wall", "contention"} {
			if len(profs[k]) != 0 {
				t.Errorf("%d %s profiles with it off", len(profs[k]), k)
			}
		}
		var gen2 int64
		for _, p := range profs["gc"] {
			for _, s := range p.Sample {
				if hasFrame(s, "[GC gen 2]") {
					gen2 += s.Value[0]
				}
			}
		}
		if len(profs["exceptions"]) == 0 || len(profs["heap"]) == 0 || gen2 < 2 {
			t.Errorf("with CPU, wall and contention off: %d exceptions and %d heap profiles, %d gen 2 collections; want both profiles and the 2 induced collections", len(profs["exceptions"]), len(profs["heap"]), gen2)
		}
	})
}
