package conformance

import (
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const chaincCLSID = "{8E2B1C3D-4F5A-4B6C-9D7E-0F1A2B3C4D5E}"

var chaincVerdict = regexp.MustCompile(`(?m)^chainc: Shutdown jits=([1-9]\d*) allocs=([1-9]\d*) modules=0 inlining=\d+ failed=0$`)

func init() {
	// moduleload's Go port with a native profiler chained beside it
	// (CLRPROF_CHAIN_PATH): the Go profiler's checks must pass as when it
	// runs alone, and the native one's too (profiler/testdata/chainc: its
	// JIT compilations and allocations, none of the module loads only the
	// Go profiler asked for, its own mask through GetEventMask).
	register(&scenario{
		Name:          "chained",
		Upstream:      "unittest/moduleload.cs, native/moduleload, with a native profiler chained (CLRPROF_CHAIN_PATH)",
		UpstreamLines: 137,
		App:           []string{"../moduleload/app.cs"},
		Profiler:      "../moduleload/profiler",
		CLSID:         "{2E6F4A83-7D1B-4C59-A0E2-8B3C5D7F9A06}",
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			native := harness.BuildCShared(t, []string{"../profiler/testdata/chainc/chainc.c"}, "-Wall", "-Werror", "-I../internal/include")
			return harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: sc.CLSID,
				Env:           []string{"CLRPROF_CHAIN_PATH=" + native, "CLRPROF_CHAIN_CLSID=" + chaincCLSID, "CLRPROF_LOG_LEVEL=info"},
			})
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			res.MustStderrContain(t, "chain: loaded the chained profiler", "chainc: Initialize")
			m := chaincVerdict.FindString(res.Stderr)
			if m == "" || strings.Contains(res.Stderr, "chainc: FAIL") {
				t.Errorf("the chained native profiler did not pass:\n%s", res.Describe())
			}
			t.Logf("%s", m)
		},
	})
}
