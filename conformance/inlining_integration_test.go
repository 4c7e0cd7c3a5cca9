package conformance

import "github.com/clrprof/clrprof/internal/harness"

func init() {
	register(&scenario{
		Name:          "inlining",
		Upstream:      "unittest/inlining.cs, native/inlining",
		UpstreamLines: 210,
		CLSID:         "{9A5C3E17-2B8D-4F61-B7A4-0E6D8C1F2B07}",
		CSOptions:     []harness.CSOption{harness.Optimize()},
		// As upstream (ProfileeOptions.OptimizationSensitive): the first,
		// tier-0 compilation of tiered runtimes inlines nothing.
		Env: []string{"COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"},
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major == 2 && rt.Minor == 0 {
				return eltNotOnLinux20
			}
			return ""
		},
	})
}
