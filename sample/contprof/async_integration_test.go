package main_test

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestContprofAsyncNames runs contprof on the classic build of the async
// test app (internal/testapps/async: Roslyn's state machines on .NET 10+,
// mcs's before) and reads its exceptions profile with `go tool pprof
// -top`, as a user would. ThrowAfterAwait throws from its state machine's
// MoveNext once per call (the app counts them): the frame must be named
// Ops+<ThrowAfterAwait>d__1.MoveNext, angle brackets included (pprof cut
// them out while the profile's functions had a SystemName equal to their
// Name). Every period's comment accounts for every tick and every thread
// that gave no sample, with its cause (sampling: ... failures=M,
// skipped=K (overhead budget), thread_failures=F (cause:n),
// threads_without_frames=E), and the counts add up: no tick is lost
// silently.
func TestContprofAsyncNames(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../internal/testapps/async/async.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1", "CONTPROF_HEAP=0"},
		})
		res.MustSucceed(t)
		// ThrowAfterAwait throws once per call: Run calls it n times
		// directly (thrown) and n times through CatchAround (caught)
		m := regexp.MustCompile(`ThrowAfterAwait calls=\d+ thrown=(\d+)`).FindStringSubmatch(res.Stdout)
		c := regexp.MustCompile(`CatchAround calls=\d+ caught=(\d+)`).FindStringSubmatch(res.Stdout)
		if m == nil || c == nil {
			t.Fatalf("the app did not count its throws:\n%s", res.Stdout)
		}
		thrown := atoi(t, m[1]) + atoi(t, c[1])
		ps := load(t, dir)
		if len(ps["exceptions"]) == 0 {
			t.Fatalf("no exceptions profile:\n%s", res.Describe())
		}
		// the state machine's MoveNext: <ThrowAfterAwait>d__1 (Roslyn),
		// <ThrowAfterAwait>c__async1 (mcs)
		frameRe := regexp.MustCompile(`^AsyncApp\.Ops\+<ThrowAfterAwait>[a-z_]+\d+\.MoveNext$`)
		var frame string
		var fromFrame int64
		for _, p := range ps["exceptions"] {
			for _, s := range p.Sample {
				if n := s.Location[0].Line[0].Function.Name; frameRe.MatchString(n) {
					frame = n
					fromFrame += s.Value[0]
				}
			}
		}
		if fromFrame != int64(thrown) {
			t.Errorf("%d exceptions thrown from the state machine (%q) in the profiles, the app threw %d", fromFrame, frame, thrown)
		}
		if frame == "" {
			t.FailNow()
		}
		files, _ := filepath.Glob(filepath.Join(dir, "exceptions.*.pprof"))
		out, err := exec.Command("go", append([]string{"tool", "pprof", "-top", "-nodecount=1000"}, files...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof: %v\n%s", err, out)
		}
		if !strings.Contains(string(out), " "+frame+"\n") {
			t.Errorf("pprof -top does not show %s:\n%s", frame, out)
		}
		if regexp.MustCompile(`Ops\+[a-z_]+\d+\.MoveNext`).Match(out) {
			t.Errorf("pprof -top shows a name without its angle brackets:\n%s", out)
		}
		// every tick and thread without a sample is said, by cause
		if rt.AtLeast(3, 0) { // snapshots need ICorProfilerInfo10
			form := regexp.MustCompile(`^sampling: ticks=(\d+) failures=\d+( \(.+\))?( skipped=\d+ \(overhead budget\))?( thread_failures=\d+ \(.+\))?( threads_without_frames=\d+)? held=\S+ waited=\S+ longest=\S+ \(suspending \S+\)$`)
			ticks, samples := 0, 0
			for _, p := range ps["wall"] {
				var line string
				for _, c := range p.Comments {
					if i := strings.Index(c, "sampling: "); i >= 0 {
						line = c[i:]
					}
				}
				m := form.FindStringSubmatch(line)
				if m == nil {
					t.Fatalf("wall profile's sampling comment %q: not of the documented form", line)
				}
				t.Logf("%s: %s", rt.Name, line)
				ticks += atoi(t, m[1])
				samples += len(p.Sample)
			}
			if ticks == 0 || samples == 0 {
				t.Errorf("%d ticks, %d wall samples", ticks, samples)
			}
		}
	})
}
