package conformance

import "github.com/clrprof/clrprof/internal/harness"

// eltNotOnLinux20 is why no ELT scenario runs on .NET Core 2.0.
const eltNotOnLinux20 = ".NET Core 2.0 accepts enter/leave hooks on Linux x64 but its JIT-compiled code never calls them (observed; the SDK's elt.EnableWithInfo refuses it for that reason)"

func init() {
	// Upstream splits the slow-path ELT test in two, one for the
	// arguments at enter and one for the return values at leave; so does
	// this suite, with one app and one profiler (ELT_CHECK says which half).
	register(&scenario{
		Name:          "eltenter",
		Upstream:      "elt/slowpatheltenter.cs, native/eltprofiler",
		UpstreamLines: 788,
		App:           []string{"../elt/app.cs"},
		Profiler:      "../elt/profiler",
		CLSID:         "{3F1C2E7A-9B54-4D08-A6E3-7C21B0D9E403}",
		Env:           []string{"ELT_CHECK=enter"},
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major == 2 && rt.Minor == 0:
				return eltNotOnLinux20
			case rt.Major < 3:
				return "before .NET Core 3.0, GetFunctionEnter3Info on Linux x64 gives argument ranges that do not hold the arguments (dotnet/coreclr#19622, fixed by dotnet/coreclr#25147 in 3.0)"
			}
			return ""
		},
	})
	register(&scenario{
		Name:          "eltleave",
		Upstream:      "elt/slowpatheltleave.cs, native/eltprofiler",
		UpstreamLines: 788,
		App:           []string{"../elt/app.cs"},
		Profiler:      "../elt/profiler",
		CLSID:         "{3F1C2E7A-9B54-4D08-A6E3-7C21B0D9E403}",
		Env:           []string{"ELT_CHECK=leave"},
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major == 2 && rt.Minor == 0:
				return eltNotOnLinux20
			case rt.Major < 8:
				return "on .NET Core 2.1 and 3.1, GetFunctionLeave3Info on Linux x64 gives, for a struct returned in floating-point registers (or split between rax and xmm0), a range that does not hold the value (observed: primitives, strings and integer-only structs are right; .NET 8 is right throughout)"
			}
			return ""
		},
	})
}
