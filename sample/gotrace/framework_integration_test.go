package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestGotraceFramework traces a method of the framework's precompiled
// (ReadyToRun) core library, which instr instruments through ReJIT, with
// Go hooks: String.Concat(string, string), which the test app calls twice
// ("caught " + e.Message; the framework may call it too), on every runtime.
// The summary must count at least those calls and the app must print what
// it prints without the profiler.
func TestGotraceFramework(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/traced.cs"}, "", harness.For(rt))
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		out := filepath.Join(t.TempDir(), "sum.jsonl")
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"GOTRACE_TARGETS=System.Private.CoreLib!System.String::Concat(System.String,System.String)",
				"GOTRACE_SUMMARY=1", "GOTRACE_OUTPUT=" + out}})
		res.MustSucceed(t)
		t.Logf("stderr:\n%s", res.Stderr)
		if res.Stdout != base.Stdout {
			t.Errorf("output changed:\n%s\n--- without the profiler:\n%s", res.Stdout, base.Stdout)
		}
		res.MustStderrNotContain(t, "could not instrument", "panicked")
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		var calls int64
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var s struct {
				Method string `json:"method"`
				Calls  int64  `json:"calls"`
			}
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			if s.Method == "System.String::Concat" {
				calls += s.Calls
			}
		}
		t.Logf("%s: String.Concat(string, string) traced %d times", rt.Name, calls)
		if calls < 2 {
			t.Errorf("String.Concat(string, string) was never traced:\n%s", data)
		}
	})
}

// TestGotraceBadTarget: a malformed target is reported with its position
// and the application runs as without the tracer (newest runtime).
func TestGotraceBadTarget(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	rts, err := harness.Runtimes()
	if err != nil || len(rts) == 0 {
		t.Fatalf("runtimes: %v", err)
	}
	rt := rts[len(rts)-1]
	app := harness.CompileCS(t, []string{"testdata/traced.cs"}, "", harness.For(rt))
	base := harness.Run(t, rt, app, harness.RunOptions{})
	base.MustSucceed(t)
	res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
		Env: []string{"GOTRACE_TARGETS=traced!Traced.Orders:Total"}})
	res.MustSucceed(t)
	if res.Stdout != base.Stdout {
		t.Errorf("output changed:\n%s\n--- without the profiler:\n%s", res.Stdout, base.Stdout)
	}
	res.MustStderrContain(t, `gotrace: instr: target "traced!Traced.Orders:Total": position`)
	res.MustStderrNotContain(t, "gotrace: instrumented")
}
