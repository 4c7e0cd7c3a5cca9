package conformance

import (
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

func init() {
	register(&scenario{
		Name:          "gc",
		Upstream:      "gc/gc.cs, native/gcprofiler",
		UpstreamLines: 180,
		CLSID:         "{BCD8186F-1EEC-47E9-AFA7-396F879382C3}",
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			logLines(t, res, "collections;")
			// The pinned object heap (and with it upstream's check) exists
			// from .NET 5; the profiler and the app must agree on that.
			if rt.Major >= 5 {
				res.MustStdoutContain(t, "pinned object heap: true", "pinned heap: True;")
			} else {
				res.MustStdoutContain(t, "pinned object heap: false", "pinned heap: False;")
			}
		},
	})
}

// logLines logs the lines of the app's output that contain s: the figures a
// profiler prints, for go test -v.
func logLines(t *testing.T, res harness.Result, s string) {
	t.Helper()
	for _, l := range res.StdoutLines() {
		if strings.Contains(l, s) {
			t.Log(l)
		}
	}
}
