package conformance

import (
	"fmt"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "gcbasic",
		Upstream:      "gc/gcbasic.cs, native/gcbasicprofiler",
		UpstreamLines: 172,
		CLSID:         "{A040B953-EDE7-42D9-9077-AA69BB2BE024}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 3 {
				return "COR_PRF_HIGH_BASIC_GC was added in .NET Core 3.0 (dotnet/coreclr#22866): " +
					"2.x accepts the flag and never calls the GC callbacks for it (the SDK's SetEventMask2 refuses it there with ErrNotAvailable)"
			}
			return ""
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			// The profiler assumes the regions GC from .NET 7 (the
			// default on 64-bit); the pinned arrays exist from .NET 5.
			want := "gc: segments"
			if rt.Major >= 7 {
				want = "gc: regions"
			}
			res.MustStdoutContain(t, want)
			res.MustStdoutContain(t, fmt.Sprintf("pinned arrays: %s", map[bool]string{true: "True", false: "False"}[rt.Major >= 5]))
		},
	})
}
