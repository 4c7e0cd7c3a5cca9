package conformance

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "assembly",
		Upstream:      "assembly/ALCTest.cs, native/assemblyprofiler",
		UpstreamLines: 77,
		CLSID:         "{5D9F3A12-7E4B-4C86-B2A1-9F0E6D3C8B15}",
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major < 3:
				return "collectible AssemblyLoadContexts are new in .NET Core 3.0"
			case rt.Major < 8:
				return "an unloaded context's assemblies get AssemblyUnloadFinished but never AssemblyUnloadStarted (observed on 3.1: 0 started, 2 finished; dotnet/runtime#86178; 8.0.4 reports both)"
			}
			return ""
		},
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			exe := harness.CompileCS(t, []string{filepath.Join(sc.Name, "testfile.cs")}, t.TempDir(), harness.OutName("ConfTestFile.exe"), harness.For(rt))
			return harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: sc.CLSID, Args: []string{exe}})
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			for _, l := range res.StdoutLines() {
				if strings.HasPrefix(l, "assembly: ") {
					t.Log(l)
				}
			}
		},
	})
}
