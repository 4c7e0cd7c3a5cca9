package profiler_test

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestSharedGenericNames: the names of Pair<A,B>'s methods as the JIT
// compiles them, for Pair<string,object> and Pair<object,string> (shared
// code: Pair<__Canon,__Canon>), Pair<int,string> and Pair<string,int>
// (partly shared), Pair<int,long> (code of its own), and a generic method
// of a partly shared class. With WithSharedGenericNames and
// MonitorClassLoads the SDK names the canonical instantiation each body is,
// on every runtime. Without either, what the runtime says decides: before
// .NET 10 GetFunctionInfo2 (no frame) reports ClassID 0 for shared code of a
// generic class, so the class shows its formal parameters; from .NET 10 on
// it reports the canonical instantiation itself (dotnet/runtime#107753), so
// the names are the canonical ones there too (what FunctionName documents).
func TestSharedGenericNames(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/genprof")
	const clsid = "{6A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9}"
	withLoads := []string{
		"Pair<System.__Canon,System.__Canon>.Show | Pair<System.__Canon,System.__Canon>.Show()",
		"Pair<int,System.__Canon>.Show | Pair<int,System.__Canon>.Show()",
		"Pair<System.__Canon,int>.Show | Pair<System.__Canon,int>.Show()",
		"Pair<int,long>.Show | Pair<int,long>.Show()",
		"Pair<int,System.__Canon>.Pick<double> | Pair<int,System.__Canon>.Pick<double>(float64)",
		"Pair<int,System.__Canon>.Pick<System.__Canon> | Pair<int,System.__Canon>.Pick<System.__Canon>(System.__Canon)",
	}
	withoutLoads := []string{
		"Pair<A,B>.Show | Pair<A,B>.Show()",
		"Pair<int,long>.Show | Pair<int,long>.Show()",
		"Pair<A,B>.Pick<double> | Pair<A,B>.Pick<double>(float64)",
		"Pair<A,B>.Pick<System.__Canon> | Pair<A,B>.Pick<System.__Canon>(System.__Canon)",
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/generics/app.cs"}, "", harness.OutName("GenApp.exe"), harness.For(rt))
		without, withoutShows := withoutLoads, 2
		if rt.AtLeast(10, 0) {
			// The runtime names the canonical class (dotnet/runtime#107753).
			without, withoutShows = withLoads, 4
		}
		for _, c := range []struct {
			env   string
			want  []string
			shows int // distinct Show lines
		}{{"GENPROF_CLASSLOADS=1", withLoads, 4}, {"GENPROF_CLASSLOADS=0", without, withoutShows}, {"GENPROF_CLASSLOADS=1 GENPROF_SHARED_NAMES=0", without, withoutShows}} {
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: strings.Fields(c.env)})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "(a, b)\n", "(1, e)\n", "(3, 4)\n", "app done\n")
			var got []string
			shows := map[string]bool{}
			for _, l := range res.StderrLines() {
				if s, ok := strings.CutPrefix(l, "genprof: "); ok {
					if !strings.HasPrefix(s, "jit ") {
						t.Errorf("%s: %s", c.env, s)
						continue
					}
					s = strings.TrimPrefix(s, "jit ")
					got = append(got, s)
					if strings.Contains(s, ".Show |") {
						shows[s] = true
					}
				}
			}
			t.Logf("%s %s:\n%s", rt.Name, c.env, strings.Join(got, "\n"))
			all := strings.Join(got, "\n") + "\n"
			for _, w := range c.want {
				if !strings.Contains(all, w+"\n") {
					t.Errorf("%s: missing %q", c.env, w)
				}
			}
			if len(shows) != c.shows {
				t.Errorf("%s: %d distinct names of Show, want %d", c.env, len(shows), c.shows)
			}
			if (c.env == "GENPROF_CLASSLOADS=1" || rt.AtLeast(10, 0)) && strings.Contains(all, "Pair<A,B>") {
				t.Errorf("%s: a formal name where the canonical instantiation is known", c.env)
			}
		}
	})
}

// TestNameCacheSpeed times FunctionName of one function with the names'
// metadata cache (MonitorModuleLoads on) and without it, alternating in
// the same run, on every runtime, and logs the ratio (no timed assertion:
// the names must agree, the figures are for docs/benchmarks.md).
func TestNameCacheSpeed(t *testing.T) {
	lib := harness.BuildProfiler(t, "./profiler/testdata/genprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/generics/app.cs"}, "", harness.OutName("GenApp.exe"), harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: "{6A1B2C3D-4E5F-4071-8293-A4B5C6D7E8F9}",
			Env: []string{"GENPROF_BENCH=1"}})
		res.MustSucceed(t)
		res.MustStderrNotContain(t, "genprof: bench name", "genprof: bench SetEventMask")
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "genprof: bench ") {
				t.Logf("%s: %s", rt.Name, l)
				return
			}
		}
		t.Fatalf("no bench line:\n%s", res.Describe())
	})
}
