package conformance

import (
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "gcallocate",
		Upstream:      "gc/gcallocate.cs, native/gcallocateprofiler",
		UpstreamLines: 99,
		CLSID:         "{55B9554D-6115-45A2-BE1E-C80F7FA35369}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 3 {
				return "COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED was added in .NET Core 3.0 (requested in dotnet/coreclr#24217) " +
					"and COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED in .NET 6 (dotnet/runtime#55448)"
			}
			return ""
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			// 3.x: the large object heap part only (no pinned object heap).
			if rt.Major >= 6 {
				res.MustStdoutContain(t, "heaps: loh+poh", "pinned array: True")
			} else {
				res.MustStdoutContain(t, "heaps: loh\n")
			}
		},
	})
}
