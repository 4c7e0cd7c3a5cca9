package main_test

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{E7A3C5B9-4D21-4F6E-9B8A-1C3D5E7F9A02}"

var cpuRe = regexp.MustCompile(`cpu_ms=(\d+)`)

func cpuMS(t *testing.T, res harness.Result) int {
	t.Helper()
	m := cpuRe.FindStringSubmatch(res.Stdout)
	if m == nil {
		t.Fatalf("no cpu_ms:\n%s", res.Describe())
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// calltrace counts the app's calls to Elt.Known exactly and prints them
// among the top functions; the overhead (process CPU time for the same
// work, hooking every function, against no profiler) is logged.
func TestCallTrace(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/calltrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../profiler/testdata/sampling/eltapp.cs"}, "", harness.For(rt))
		run := func(lib string, n int, env ...string) harness.Result {
			o := harness.RunOptions{Args: []string{"calls", strconv.Itoa(n)}, Env: append(env, "COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0")}
			if lib != "" {
				o.ProfilerPath, o.ProfilerCLSID = lib, clsid
			}
			res := harness.Run(t, rt, app, o)
			res.MustSucceed(t)
			res.MustStdoutContain(t, "regs: ok\n")
			return res
		}
		res := run(lib, 1000, "CALLTRACE_FILTER=Elt.", "CALLTRACE_TOP=12")
		if rt.Major == 2 && rt.Minor == 0 {
			// The runtime never calls the hooks: calltrace says so
			// instead of reporting zero calls.
			res.MustStderrContain(t, "calltrace: unsupported: ", "never calls them")
			t.Skipf("%s: the runtime calls no ELT hook on Linux (calltrace says so)", rt.Name)
		}
		// (Elt.Program.Check may be inlined into its caller, without
		// hooks, at some call sites: the Known methods are NoInlining.)
		res.MustStderrContain(t, " Elt.Program.Calls\n")
		for _, k := range []string{"IntAdd", "Doubles", "AddVec", "MakeBig", "Inst"} {
			if !regexp.MustCompile(`(?m)^calltrace: calls=1000 total=\S+ avg=\S+ Elt\.Known\.` + k + `$`).MatchString(res.Stderr) {
				t.Errorf("no line for Elt.Known.%s with 1000 calls:\n%s", k, res.Stderr)
			}
		}
		res.MustStderrContain(t, " lost=0 refused=0 unmapped=0 ")
		// Overhead, every function hooked, best of 2.
		const n = 20000
		with, without := 1<<30, 1<<30
		for i := 0; i < 2; i++ {
			without = min(without, cpuMS(t, run("", n)))
			with = min(with, cpuMS(t, run(lib, n)))
		}
		t.Logf("%s: overhead (calls %d, every function hooked): %d ms CPU with calltrace, %d without: ratio %.2f", rt.Name, n, with, without, float64(with)/float64(without))
	})
}
