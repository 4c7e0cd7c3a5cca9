package main

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{B5A4F2C1-6D3E-4A8B-9F07-2C1E5D4A3B69}"

// TestCountsMatchTheApp runs ilrw's test app, whose methods count their own
// calls, under ilcount on every runtime, and checks that ilcount's counts
// are the app's.
func TestCountsMatchTheApp(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/ilcount")
	manualRe := regexp.MustCompile(`(?m)^manual (\S+)=(\d+)$`)
	countRe := regexp.MustCompile(`(?m)^ilcount: (\d+) (\S+)$`)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../ilrw/testdata/subjects/app.cs", "../../ilrw/testdata/subjects/workload.cs"}, "",
			harness.Optimize(), harness.Reference("System.Core.dll", "System.Numerics.dll"), harness.For(rt))
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("output changed:\n%s\n--- without the profiler\n%s", res.Stdout, base.Stdout)
		}
		res.MustStderrContain(t, " 0 errors\n")
		counts := map[string]int{}
		for _, m := range countRe.FindAllStringSubmatch(res.Stderr, -1) {
			counts[m[2]], _ = strconv.Atoi(m[1])
		}
		manual := manualRe.FindAllStringSubmatch(res.Stdout, -1)
		if len(manual) < 14 {
			t.Fatalf("only %d methods counted by the app", len(manual))
		}
		for _, m := range manual {
			n, _ := strconv.Atoi(m[2])
			if counts[m[1]] != n {
				t.Errorf("%s: the app counted %d calls, ilcount %d", m[1], n, counts[m[1]])
			}
		}
		// Methods the app does not count itself.
		for name, want := range map[string]int{"Program::Main": 1, "Manual::Report": 1, "Hooks::Report": 1} {
			if counts[name] != want {
				t.Errorf("%s: %d calls, want %d", name, counts[name], want)
			}
		}
		t.Logf("%s: %d methods counted; Manual::Count called %d times", rt.Name, len(counts), counts["Manual::Count"])
	})
}
