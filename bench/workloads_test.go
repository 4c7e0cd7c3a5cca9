package bench_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// workloadApp compiles a workload for rt, as the benchmark runs it:
// optimized, by mcs before .NET 10 and by Roslyn against rt's reference
// assemblies from 10 on (refs name Mono's framework assemblies, which only
// mcs needs).
func workloadApp(tb testing.TB, rt harness.Runtime, src string, refs ...string) string {
	tb.Helper()
	opts := []harness.CSOption{harness.Optimize(), harness.For(rt)}
	if len(refs) > 0 {
		opts = append(opts, harness.Reference(refs...))
	}
	return harness.CompileCS(tb, []string{src}, "", opts...)
}

// TestWorkloadsRun compiles every benchmark workload for every runtime (the
// benchmark itself is `task bench`) and runs it once, with small
// arguments, without a profiler: each must end well and print its result
// line, and none may report a wrong result.
func TestWorkloadsRun(t *testing.T) {
	for _, w := range []struct {
		src, out string
		refs     []string
		args     []string
	}{
		{"workloads/empty.cs", "empty: ok\n", nil, nil},
		{"workloads/startup.cs", "startup: n=", []string{"System.Core.dll"}, nil},
		{"workloads/cpu.cs", "cpu: primes=297866 ", nil, []string{"2"}}, // 148,933 primes below 2,000,000, twice
		{"workloads/alloc.cs", "alloc: objects=", nil, []string{"20000", "2"}},
		{"workloads/calls.cs", "calls: fib=", nil, []string{"1", "20"}},
		{"workloads/wrap.cs", "wrap: sum=", nil, []string{"100000"}},
		{"workloads/exceptions.cs", "exceptions: caught=", nil, []string{"200", "2"}},
	} {
		t.Run(strings.TrimSuffix(filepath.Base(w.src), ".cs"), func(t *testing.T) {
			harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
				app := workloadApp(t, rt, w.src, w.refs...)
				res := harness.Run(t, rt, app, harness.RunOptions{Args: w.args})
				res.MustSucceed(t)
				res.MustStdoutContain(t, w.out)
				if strings.Contains(res.Stdout, "WRONG") {
					t.Errorf("%s on %s: %s", w.src, rt.Name, res.Stdout)
				}
			})
		})
	}
}
