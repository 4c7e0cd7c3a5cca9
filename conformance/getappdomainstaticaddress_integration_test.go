package conformance

import (
	"path/filepath"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "getappdomainstaticaddress",
		Upstream:      "unittest/getappdomainstaticaddress.cs, native/getappdomainstaticaddress",
		UpstreamLines: 641,
		CLSID:         "{4C7E2A95-3F6B-4D18-9E2C-5A8B1D3F6E08}",
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major < 3:
				return "collectible AssemblyLoadContexts are new in .NET Core 3.0"
			case rt.Major < 5:
				return "GetAppDomainStaticAddress crashes (SIGSEGV in the runtime, seen here) for a type of a collectible context that a collection has just freed, before ModuleUnloadStarted says so (dotnet/runtime#33367, fixed in .NET 5 by dotnet/runtime#34677 and #41076)"
			}
			return ""
		},
		Run: func(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
			dll := harness.CompileCS(t, []string{filepath.Join(sc.Name, "lib.cs")}, t.TempDir(), harness.Library(), harness.OutName("ConfUnloadLib.dll"), harness.For(rt))
			return harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: sc.CLSID,
				Args:          []string{dll},
			})
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			for _, l := range res.StdoutLines() {
				if len(l) > 26 && l[:26] == "getappdomainstaticaddress:" {
					t.Log(l)
				}
			}
		},
	})
}
