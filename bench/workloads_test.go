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
		env      []string
	}{
		{"workloads/empty.cs", "empty: ok\n", nil, nil, nil},
		{"workloads/startup.cs", "startup: n=", []string{"System.Core.dll"}, nil, nil},
		{"workloads/cpu.cs", "cpu: primes=297866 ", nil, []string{"2"}, nil}, // 148,933 primes below 2,000,000, twice
		{"workloads/alloc.cs", "alloc: objects=", nil, []string{"20000", "2"}, nil},
		{"workloads/calls.cs", "calls: fib=", nil, []string{"1", "20"}, nil},
		{"workloads/wrap.cs", "wrap: sum=", nil, []string{"100000"}, nil},
		{"workloads/exceptions.cs", "exceptions: caught=", nil, []string{"200", "2"}, nil},
		// The async workload checks its own Begin/End counts (WRONG and
		// exit 1 otherwise).
		{"workloads/async.cs", "async: sum=1000 shape=sync mode=none begins=0 ends=0 bad=0\n", nil, []string{"1000", "sync"}, nil},
		{"workloads/async.cs", "async: sum=1000 shape=yield mode=await begins=1000 ends=1000 bad=0\n", nil, []string{"1000", "yield"}, []string{"ASYNC_MODE=await"}},
		{"workloads/async.cs", "async: sum=1000 shape=yield mode=cw begins=1000 ends=1000 bad=0\n", nil, []string{"1000", "yield"}, []string{"ASYNC_MODE=cw"}},
		{"workloads/async.cs", "async: sum=1000 shape=sync mode=cw begins=1000 ends=1000 bad=0\n", nil, []string{"1000", "sync"}, []string{"ASYNC_MODE=cw"}},
	} {
		name := strings.TrimSuffix(filepath.Base(w.src), ".cs")
		if len(w.args) > 1 && name == "async" {
			name += "-" + w.args[1] + "-" + strings.TrimPrefix(strings.Join(w.env, ""), "ASYNC_MODE=")
		}
		t.Run(name, func(t *testing.T) {
			harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
				app := workloadApp(t, rt, w.src, w.refs...)
				res := harness.Run(t, rt, app, harness.RunOptions{Args: w.args, Env: w.env})
				res.MustSucceed(t)
				res.MustStdoutContain(t, w.out)
				if strings.Contains(res.Stdout, "WRONG") {
					t.Errorf("%s on %s: %s", w.src, rt.Name, res.Stdout)
				}
			})
		})
	}
}
