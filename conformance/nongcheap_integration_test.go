package conformance

import (
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "nongcheap",
		Upstream:      "gc/nongcheap.cs, native/nongcheap",
		UpstreamLines: 273,
		CLSID:         "{EF0D191C-3FC7-4311-88AF-E474CBEB2859}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 8 {
				return "the non-GC heap, ObjectAllocated for its objects and ICorProfilerInfo14 " +
					"(EnumerateNonGCObjects, GetNonGCHeapBounds) came with .NET 8"
			}
			return ""
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			logLines(t, res, "non-GC objects allocated")
		},
	})
}
