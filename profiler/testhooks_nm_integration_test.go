package profiler_test

import (
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// testSymRe matches the C test hooks (clrprof_test_*, clrprof_elt_test_*,
// clrprof_ring_test_*, their cgo wrappers) and the Go ones
// (profiler.testXxx).
var testSymRe = regexp.MustCompile(`clrprof_(\w+_)?test_|clrprof/profiler\.test[A-Z]`)

// A sample profiler, built as a user builds it, carries none of the SDK's
// test hooks, in its dynamic symbols or anywhere in its symbol table; a
// test profiler (built with the tag clrprof_testhooks) has them, which
// shows that the check can fail.
func TestNoTestHooksInProductionBuilds(t *testing.T) {
	if _, err := exec.LookPath("nm"); err != nil {
		t.Fatalf("nm: %v (binutils)", err)
	}
	syms := func(lib string, args ...string) []string {
		out, err := exec.Command("nm", append(args, lib)...).Output()
		if err != nil {
			t.Fatalf("nm %v %s: %v", args, lib, err)
		}
		var hits []string
		for _, l := range strings.Split(string(out), "\n") {
			if testSymRe.MatchString(l) {
				hits = append(hits, strings.TrimSpace(l))
			}
		}
		return hits
	}
	sample := harness.BuildProfiler(t, "./sample/jitlog")
	for _, args := range [][]string{{"-D"}, nil} {
		if hits := syms(sample, args...); len(hits) > 0 {
			t.Errorf("sample/jitlog (nm %v) carries %d test symbols, e.g. %q", args, len(hits), hits[:min(len(hits), 5)])
		}
	}
	test := harness.BuildProfiler(t, "./profiler/testdata/sampling/eltprof")
	if hits := syms(test, "-D"); len(hits) < 10 {
		t.Errorf("the test profiler has only %d test symbols in nm -D: the pattern finds nothing", len(hits))
	} else {
		t.Logf("test profiler: %d test symbols (nm -D), e.g. %s; sample: none", len(hits), hits[0])
	}
}
