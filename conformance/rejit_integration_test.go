package conformance

import "github.com/clrprof/clrprof/internal/harness"

func init() {
	register(&scenario{
		Name:          "rejit",
		Upstream:      "rejit/rejit.cs, native/rejitprofiler",
		UpstreamLines: 588,
		CLSID:         "{7D3B9E21-5A4C-4F83-8B06-1E9C2D4A7F09}",
		CSOptions:     []harness.CSOption{harness.Optimize()},
		// As upstream (ProfileeOptions.OptimizationSensitive).
		Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"},
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major < 3:
				return "RequestReJITWithInliners is ICorProfilerInfo10, new in .NET Core 3.0"
			case rt.Major < 5:
				return "GetNativeCodeStartAddresses reports null starts for code versions not yet published, which upstream's check fails on (dotnet/runtime#13404, fixed in .NET 5 by dotnet/runtime#37195)"
			}
			return ""
		},
	})
}
