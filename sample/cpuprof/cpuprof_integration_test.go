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
	"github.com/clrprof/clrprof/pprofbuild/overhead"
	"github.com/google/pprof/profile"
)

const clsid = "{B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58}"

var workRe = regexp.MustCompile(`(?s)spin: rounds=(\d+).*cpu_ms=(\d+)`)

// cpuPerRound is the process's CPU time per round of work, in ms: the
// machine is shared, so throughput in wall time says little; CPU time per
// unit of work includes the profiler's own threads.
func cpuPerRound(t *testing.T, res harness.Result) float64 {
	t.Helper()
	m := workRe.FindStringSubmatch(res.Stdout)
	if m == nil {
		t.Fatalf("no rounds/cpu_ms:\n%s", res.Describe())
	}
	r, _ := strconv.Atoi(m[1])
	c, _ := strconv.Atoi(m[2])
	return float64(c) / float64(r)
}

// The app spends about 98% of its CPU time in Elt.Hot.Spin (2% in
// Elt.Hot.Cold, which calls Spin). The profile must attribute the majority
// of the CPU samples to Spin as the innermost frame, parse with the pprof
// package, and print with `go tool pprof -top`. The overhead is measured
// as the app's throughput (rounds of work in a fixed time) against a run
// without the profiler, interleaved, and logged.
var failuresRe = regexp.MustCompile(`^cpuprof: ticks=(\d+) failures=(\d+)( \(.*\))?$`)

func TestCPUProfile(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/cpuprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "", harness.For(rt))
		out := filepath.Join(t.TempDir(), "cpu.pprof")
		run := func(withProfiler bool) harness.Result {
			// Tiered compilation off: the same code quality in every run.
			o := harness.RunOptions{Args: []string{"spin", "2"}, Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"}}
			if withProfiler {
				o.ProfilerPath, o.ProfilerCLSID = lib, clsid
				// The suspending mode (the fallback where perf events
				// are refused); perf mode, the default, is
				// TestCPUProfileModes'.
				o.Env = append(o.Env, "CPUPROF_OUT="+out, "CPUPROF_MODE=suspend")
			}
			res := harness.Run(t, rt, app, o)
			res.MustSucceed(t)
			return res
		}
		res := run(true)
		if strings.Contains(res.Stderr, "cpuprof: unsupported") {
			if rt.Major >= 3 {
				t.Fatalf("%s has SuspendRuntime but cpuprof said unsupported:\n%s", rt.Name, res.Stderr)
			}
			t.Skipf("%s: no ICorProfilerInfo10 (SuspendRuntime); only current-thread snapshots work (TestStackSnapshots)", rt.Name)
		}
		res.MustStderrContain(t, "cpuprof: wrote "+out)
		// The library's start-up pages are given back (ReleaseCodePages).
		if !regexp.MustCompile(`(?m)^cpuprof: released_code_kb=[1-9]\d* kept_kb=\d+$`).MatchString(res.Stderr) {
			t.Errorf("no report of the code pages given back (released_code_kb= above 0):\n%s", res.Stderr)
		}
		checkCost(t, res)
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		prof, err := profile.Parse(f)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		// The profile says how many ticks took no snapshot, and why, as
		// the stderr report does.
		var comment string
		for _, c := range prof.Comments {
			if strings.HasPrefix(c, "cpuprof: ticks=") {
				comment = c
			}
		}
		m := failuresRe.FindStringSubmatch(comment)
		if m == nil || !strings.Contains(res.Stderr, strings.TrimPrefix(comment, "cpuprof: ")) {
			t.Fatalf("profile comment %q does not report the ticks and failures of the stderr report:\n%s", comment, res.Stderr)
		}
		var total, spin int64
		for _, s := range prof.Sample {
			total += s.Value[1]
			if len(s.Location) > 0 && s.Location[0].Line[0].Function.Name == "Elt.Hot.Spin" {
				spin += s.Value[1]
			}
		}
		t.Logf("%s: %d stacks, cpu %dms, Elt.Hot.Spin innermost %.1f%%; %s", rt.Name, len(prof.Sample), total/1e6, 100*float64(spin)/float64(total),
			strings.TrimSpace(res.StderrLines()[len(res.StderrLines())-1]))
		if total == 0 || spin*2 <= total {
			t.Errorf("Elt.Hot.Spin has %d of %d ns", spin, total)
		}
		top, err := exec.Command("go", "tool", "pprof", "-top", out).CombinedOutput()
		if err != nil || !strings.Contains(string(top), "Elt.Hot.Spin") {
			t.Errorf("go tool pprof -top: %v\n%s", err, top)
		}
		// Overhead: CPU time per round of work against no profiler,
		// interleaved, best of 2 each.
		with, without := cpuPerRound(t, res), cpuPerRound(t, run(false))
		with = min(with, cpuPerRound(t, run(true)))
		without = min(without, cpuPerRound(t, run(false)))
		t.Logf("%s: overhead at %s Hz: %.3f ms CPU per round with the profiler, %.3f without: ratio %.3f", rt.Name, "99", with, without, with/without)
	})
}

// checkCost checks the cost cpuprof accounted for on its last line
// (package pprofbuild/overhead): every field there, the total wall cost
// their sum, snapshots held the runtime and the sampler used CPU time
// (partly while it held the runtime, never more than the hold), the
// output timed; the time held is what the held= figure says.
func checkCost(t *testing.T, res harness.Result) {
	t.Helper()
	line := res.LastStderrLine("cpuprof: wrote ")
	r, ok := overhead.ParseReport(line)
	if !ok {
		t.Fatalf("the last line does not account for the cost: %q", line)
	}
	m := regexp.MustCompile(`held=(\S+) of \S+ \(\S+%\) waited=\S+ cost_wall_us=(\d+)`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no held= and cost_wall_us= in %q", line)
	}
	held, err := time.ParseDuration(m[1])
	wall, _ := strconv.ParseInt(m[2], 10, 64)
	t.Logf("cost: %s (run %v)", line[strings.Index(line, "held="):], res.Duration)
	if err != nil || (held-r.Held).Abs() > time.Microsecond {
		t.Errorf("held=%s against held_us=%d", m[1], r.Held.Microseconds())
	}
	if d := wall - r.Wall().Microseconds(); d < -6 || d > 6 {
		t.Errorf("cost_wall_us=%d is not the sum of its parts (%v)", wall, r.Wall())
	}
	if r.Snapshots == 0 || r.Held <= 0 || r.Sampler <= 0 || r.HeldCPU <= 0 || r.HeldCPU > r.Held+time.Microsecond || r.HeldCPU > r.Sampler+time.Microsecond {
		t.Errorf("snapshots %d, held %v, sampler CPU %v of which %v while holding", r.Snapshots, r.Held, r.Sampler, r.HeldCPU)
	}
	if r.OutputWall <= 0 || r.CallbackCount != 0 {
		t.Errorf("output %v, callbacks %d (cpuprof has none)", r.OutputWall, r.CallbackCount)
	}
}

// innermost sums the CPU time of a profile by innermost function.
func innermost(prof *profile.Profile) (map[string]int64, int64) {
	m := map[string]int64{}
	var total int64
	for _, s := range prof.Sample {
		total += s.Value[1]
		name := "[none]"
		if len(s.Location) > 0 && len(s.Location[0].Line) > 0 {
			name = s.Location[0].Line[0].Function.Name
		}
		m[name] += s.Value[1]
	}
	return m, total
}

// topN is the n functions with the most time, most first.
func topN(m map[string]int64, n int) []string {
	var names []string
	for k := range m {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool {
		return m[names[i]] > m[names[j]] || m[names[i]] == m[names[j]] && names[i] < names[j]
	})
	return names[:min(n, len(names))]
}

var perfReportRe = regexp.MustCompile(`^cpuprof: mode=perf threads=(\d+) failed=(\d+) lost=(\d+) nomanaged=(\d+)`)

// The old and the new CPU sampling on the same workload: suspending the
// runtime and walking every thread (CPUPROF_MODE=suspend, the fallback;
// .NET Core 3.0+), and perf mode, the default (run without CPUPROF_MODE:
// the kernel samples each managed thread, no suspension, no signal, the
// stacks unwound from copies; every runtime). Both profiles must put
// Elt.Hot.Spin on top as the innermost frame with most of the CPU time, and
// agree on it; the perf profile says in its comments what it could not
// sample (no thread failed, nothing lost here) and has Elt.Hot.Spin's
// callers (Elt.Hot.Cold or Main) below it in nine of ten of Spin's samples.
func TestCPUProfileModes(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/cpuprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "", harness.For(rt))
		tops := map[string][]string{}
		for _, mode := range []string{"suspend", "perf"} {
			if mode == "suspend" && !rt.AtLeast(3, 0) {
				continue
			}
			out := filepath.Join(t.TempDir(), "cpu.pprof")
			opts := harness.RunOptions{Args: []string{"spin", "2"}, ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0", "CPUPROF_OUT=" + out}}
			if mode == "suspend" {
				opts.Env = append(opts.Env, "CPUPROF_MODE=suspend")
			}
			res := harness.Run(t, rt, app, opts)
			res.MustSucceed(t)
			res.MustStderrContain(t, "cpuprof: wrote "+out)
			f, err := os.Open(out)
			if err != nil {
				t.Fatal(err)
			}
			prof, err := profile.Parse(f)
			f.Close()
			if err != nil {
				t.Fatalf("%s: parse: %v", mode, err)
			}
			m, total := innermost(prof)
			tops[mode] = topN(m, 3)
			t.Logf("%s %s: cpu %d ms, top innermost %v (%.1f%% Elt.Hot.Spin)", rt.Name, mode, total/1e6, tops[mode], 100*float64(m["Elt.Hot.Spin"])/float64(max(total, 1)))
			if total == 0 || m["Elt.Hot.Spin"]*2 <= total {
				t.Errorf("%s: Elt.Hot.Spin innermost has %d of %d ns", mode, m["Elt.Hot.Spin"], total)
			}
			if mode != "perf" {
				continue
			}
			t.Logf("%s perf comments: %q", rt.Name, prof.Comments)
			var c []string
			for _, s := range prof.Comments {
				if c = perfReportRe.FindStringSubmatch(s); c != nil {
					break
				}
			}
			if c == nil {
				t.Fatalf("perf profile without its report comment: %q", prof.Comments)
			}
			if c[1] == "0" || c[2] != "0" || c[3] != "0" || !strings.Contains(strings.Join(prof.Comments, "\n"), "not sampled:") {
				t.Errorf("perf report %q: want threads sampled, none failed, nothing lost, and what was not sampled", c[0])
			}
			var spin, withCaller int64
			for _, s := range prof.Sample {
				if len(s.Location) < 2 || s.Location[0].Line[0].Function.Name != "Elt.Hot.Spin" {
					continue
				}
				spin += s.Value[0]
				for _, l := range s.Location[1:] {
					if n := l.Line[0].Function.Name; n == "Elt.Hot.Cold" || strings.HasSuffix(n, ".Main") {
						withCaller += s.Value[0]
						break
					}
				}
			}
			t.Logf("%s perf: %d of %d Elt.Hot.Spin samples with a caller (Cold or Main) below", rt.Name, withCaller, spin)
			if withCaller*10 < spin*9 {
				t.Errorf("perf: only %d of %d Elt.Hot.Spin samples have its caller below it", withCaller, spin)
			}
		}
		if s, p := tops["suspend"], tops["perf"]; len(s) > 0 && len(p) > 0 && s[0] != p[0] {
			t.Errorf("the two modes disagree on the top method: suspend %v, perf %v", s, p)
		}
	})
}
