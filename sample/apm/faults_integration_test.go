package main_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/apmtest"
	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
)

// When the helper's own code throws (here: a tag value whose ToString
// throws, met while the span is encoded), the application never sees it:
// it runs to its end, the other activities become spans, and apm counts
// the failures (helper_faults) and logs the first, once.
func TestHelperFaults(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/apm")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skip("the helper is built against the net10.0 reference assemblies")
		}
		app := harness.CompileCS(t, []string{"testdata/faults.cs"}, "", harness.For(rt))
		c := exporttest.StartCollector(t)
		const ops, bad = 40, 8 // every fifth refuses
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{fmt.Sprint(ops)},
			Env: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.TracesEndpoint(), "OTEL_BSP_SCHEDULE_DELAY=200",
				"CLRPROF_APM_SOURCES=Clrprof.Test.Faults", "CLRPROF_APM_REDIS=0",
				// apm's own GOGC applies; the application's does not.
				"CLRPROF_APM_GOGC=150", "GOGC=400"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, fmt.Sprintf("faults: done ops=%d listened=%d", ops, ops))
		res.MustStderrContain(t, "apm: Go collects its own heap at GOGC=150 (CLRPROF_APM_GOGC)")
		if n := strings.Count(res.Stderr, "apm: the helper failed"); n != 1 {
			t.Errorf("the helper's failure logged %d times, want once:\n%s", n, res.Stderr)
		}
		res.MustStderrContain(t, "apm: the helper failed, without reaching the application (logged once, counted in helper_faults): span: System.InvalidOperationException: this tag value refuses to be a string")
		want := fmt.Sprintf("received=%d exported=%d dropped=0 lost=0 undecodable=0 helper_faults=%d", ops-bad, ops-bad, bad)
		if m := regexp.MustCompile(`apm: Shutdown: (.*)`).FindStringSubmatch(res.Stderr); m == nil || m[1] != want {
			t.Errorf("apm's report %q, want %q:\n%s", m, want, res.Stderr)
		}
		reqs, err := c.TraceRequests()
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, s := range apmtest.FromOTLP(reqs) {
			names[s.Name] = true
		}
		for i := 0; i < ops; i++ {
			if got, want := names[fmt.Sprintf("op %d", i)], i%5 != 4; got != want {
				t.Errorf("span op %d exported: %v, want %v", i, got, want)
			}
		}
	})
}
