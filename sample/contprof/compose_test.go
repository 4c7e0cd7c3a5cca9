package main_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var jitlogCountRe = regexp.MustCompile(`(?m)^jitlog: (\d+) functions compiled$`)

// TestContprofWithJitlog: contprof and the jitlog sample composed in one
// library (-tags contprof_jitlog, profiler.Compose), on every runtime.
// contprof's profiles are what they are alone (exact exception counts, the
// live heap's top, CPU or wall where the runtime has them), and jitlog
// names every compilation: as many "jit:" lines as it counts, the app's hot
// methods among them. Each has its own event mask: contprof does not ask
// for JIT compilations, jitlog for nothing else.
func TestContprofWithJitlog(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_jitlog"))
	_, app := hotspots(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_HEAP=1", "CONTPROF_HEAP_RATE=65536")
		res.MustStdoutContain(t, "app done")
		res.MustStderrContain(t, "contprof: wrote period ", "jit: Hot.Thrower", "jit: Hot.Retain")
		m := jitlogCountRe.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("%s: no jitlog count:\n%s", rt.Name, res.Describe())
		}
		n, _ := strconv.Atoi(m[1])
		lines := strings.Count(res.Stderr, "\njit: ")
		if n == 0 || lines != n {
			t.Errorf("%s: jitlog counted %d compilations and printed %d", rt.Name, n, lines)
		}
		profs := load(t, dir)
		exc := map[string]int64{}
		for _, p := range profs["exceptions"] {
			for _, s := range p.Sample {
				exc[appFrame(s)+" "+strings.Join(s.Label["exception"], ",")] += s.Value[0]
			}
		}
		if exc["Hot.Thrower System.InvalidOperationException"] != 200 || exc["Hot.RareThrower System.ArgumentException"] != 20 {
			t.Errorf("%s: composed, contprof's exceptions: %v; want Hot.Thrower 200, Hot.RareThrower 20", rt.Name, exc)
		}
		heaps := profs["heap"]
		if len(heaps) == 0 {
			t.Fatalf("%s: no heap profile", rt.Name)
		}
		f, v, total := top(byAppFrame(heaps[len(heaps)-1:], 1))
		if f != "Hot.Retain" || 2*v <= total {
			t.Errorf("%s: composed, final live heap top %s with %d of %d bytes, want Hot.Retain", rt.Name, f, v, total)
		}
		t.Logf("%s: contprof and jitlog composed: %d compilations named; exceptions %v; live heap top %s %d KB of %d KB", rt.Name, n, exc, f, v>>10, total>>10)
	})
}
