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

const clsid = "{C4E8A1B7-2F59-4D3C-8E6A-9B0D1F2C3E84}"

var (
	workRe   = regexp.MustCompile(`(?s)alloc: rounds=(\d+) heavy=(\d+) light=(\d+).*cpu_ms=(\d+)`)
	bigObjRe = regexp.MustCompile(`(?m)^allocprof: class Elt\.BigObj objects=(\d+) bytes=(\d+)$`)
	wroteRe  = regexp.MustCompile(`(?m)^allocprof: wrote \S+ events=(\d+) samples=(\d+) dropped=(\d+)`)
)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// The app allocates for one second in Elt.Alloc.Heavy (a byte[64] and an
// Elt.BigObj per iteration) and a little in Elt.Alloc.Light (int[4]). The
// recorder must count every Elt.BigObj exactly, and the sampled profile
// must attribute the majority of alloc_space to Heavy; the file parses and
// `go tool pprof -top` prints it. Overhead: CPU time per round of work
// against no profiler, logged.
func TestAllocProfile(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/allocprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "", harness.For(rt))
		out := filepath.Join(t.TempDir(), "alloc.pprof")
		run := func(withProfiler bool) (harness.Result, []string) {
			o := harness.RunOptions{Args: []string{"alloc", "1"}, Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"}}
			if withProfiler {
				o.ProfilerPath, o.ProfilerCLSID = lib, clsid
				o.Env = append(o.Env, "ALLOCPROF_OUT="+out)
			}
			res := harness.Run(t, rt, app, o)
			res.MustSucceed(t)
			m := workRe.FindStringSubmatch(res.Stdout)
			if m == nil {
				t.Fatalf("no work line:\n%s", res.Describe())
			}
			return res, m
		}
		res, work := run(true)
		w := wroteRe.FindStringSubmatch(res.Stderr)
		b := bigObjRe.FindStringSubmatch(res.Stderr)
		if w == nil || b == nil {
			t.Fatalf("no allocprof report:\n%s", res.Describe())
		}
		heavy, objects, dropped := atoi(work[2]), atoi(b[1]), atoi(w[3])
		t.Logf("%s: heavy=%d Elt.BigObj objects=%d bytes=%s events=%s samples=%s dropped=%d", rt.Name, heavy, objects, b[2], w[1], w[2], dropped)
		if dropped == 0 && objects != heavy {
			t.Errorf("Elt.BigObj: %d objects recorded, the app made %d", objects, heavy)
		} else if objects > heavy || objects+dropped < heavy {
			t.Errorf("Elt.BigObj: %d recorded + %d dropped, the app made %d", objects, dropped, heavy)
		}
		f, err := os.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		prof, err := profile.Parse(f)
		if err != nil {
			t.Fatalf("parse: %v", err)
		}
		var total, inHeavy int64
		for _, s := range prof.Sample {
			total += s.Value[1]
			for _, l := range s.Location {
				if n := l.Line[0].Function.Name; n != "[native code]" {
					if n == "Elt.Alloc.Heavy" {
						inHeavy += s.Value[1]
					}
					break // the innermost managed frame
				}
			}
		}
		t.Logf("%s: alloc_space %d MB in %d stacks, Elt.Alloc.Heavy %.1f%%", rt.Name, total>>20, len(prof.Sample), 100*float64(inHeavy)/float64(total))
		if total == 0 || inHeavy*2 <= total {
			t.Errorf("Elt.Alloc.Heavy has %d of %d bytes", inHeavy, total)
		}
		top, err := exec.Command("go", "tool", "pprof", "-top", out).CombinedOutput()
		if err != nil || !strings.Contains(string(top), "Elt.Alloc.Heavy") {
			t.Errorf("go tool pprof -top: %v\n%s", err, top)
		}
		perRound := func(m []string) float64 { return float64(atoi(m[4])) / float64(atoi(m[1])) }
		with := perRound(work)
		_, m := run(false)
		without := perRound(m)
		_, m = run(true)
		with = min(with, perRound(m))
		_, m = run(false)
		without = min(without, perRound(m))
		t.Logf("%s: overhead: %.3f ms CPU per round (20k allocations) with the profiler, %.3f without: ratio %.2f", rt.Name, with, without, with/without)
	})
}
