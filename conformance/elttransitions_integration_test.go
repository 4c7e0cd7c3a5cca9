package conformance

import "github.com/clrprof/clrprof/internal/harness"

func init() {
	register(&scenario{
		Name:          "elttransitions",
		Upstream:      "elttransitions/elttransitions.cs, native/elttransitions",
		UpstreamLines: 225,
		App:           []string{"../transitions/app.cs"},
		CLSID:         "{B4E81D27-6C3A-4F90-8E15-9D2A7C6B3E05}",
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major == 2 && rt.Minor == 0:
				return eltNotOnLinux20
			case rt.Major < 5:
				return "upstream's reverse P/Invoke target is an UnmanagedCallersOnly method, new in .NET 5 (transitions covers the delegate variant)"
			}
			return ""
		},
		Run: runTransitionsWith([]string{"TRANSITIONS_REVERSE_TARGET=DoReversePInvoke"},
			transitionsVariant{"BlittableToUnmanagedCallersOnly", "DoPInvoke", "DoReversePInvoke", 26},
		),
	})
	// The same check with the reverse P/Invoke through a marshalled
	// delegate, which every runtime with ELT on Linux has (not upstream's
	// variant: upstream runs the UnmanagedCallersOnly one only).
	register(&scenario{
		Name:          "elttransitionsdelegate",
		Upstream:      "elttransitions/elttransitions.cs (with a delegate instead of UnmanagedCallersOnly), native/elttransitions",
		UpstreamLines: 225,
		App:           []string{"../transitions/app.cs"},
		Profiler:      "../elttransitions/profiler",
		CLSID:         "{B4E81D27-6C3A-4F90-8E15-9D2A7C6B3E05}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major == 2 && rt.Minor == 0 {
				return eltNotOnLinux20
			}
			return ""
		},
		Run: runTransitionsWith([]string{"TRANSITIONS_REVERSE_TARGET=DoDelegateReversePInvoke"},
			transitionsVariant{"BlittableToDelegate", "DoPInvoke", "Invoke", 26},
		),
	})
}
