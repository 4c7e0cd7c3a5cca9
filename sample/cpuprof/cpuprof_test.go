package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
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
	app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		out := filepath.Join(t.TempDir(), "cpu.pprof")
		run := func(withProfiler bool) harness.Result {
			// Tiered compilation off: the same code quality in every run.
			o := harness.RunOptions{Args: []string{"spin", "2"}, Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"}}
			if withProfiler {
				o.ProfilerPath, o.ProfilerCLSID = lib, clsid
				o.Env = append(o.Env, "CPUPROF_OUT="+out)
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
