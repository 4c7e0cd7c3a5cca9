package conformance

import (
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "handles",
		Upstream:      "handles/handles.cs, native/handlesprofiler",
		UpstreamLines: 325,
		CLSID:         "{A0F96622-522D-4654-AA56-BF421E79B210}",
		NotApplicable: func(rt harness.Runtime) string {
			if rt.Major < 7 {
				return "the runtime lacks ICorProfilerInfo13 (CreateHandle, DestroyHandle, GetObjectIDFromHandle: .NET 7)"
			}
			return ""
		},
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			// The three handles were made and every step was checked.
			res.MustStdoutContain(t, "Weak handle created", "Strong handle created", "Pinned handle created",
				"weak: gone as expected", "strong: handle destroyed", "pinned: handle destroyed",
				"strong: gone as expected", "pinned: gone as expected")
		},
	})
}
