package conformance

import (
	"fmt"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// eventPipeNA is why the EventPipe scenarios cannot run before .NET 5.
func eventPipeNA(rt harness.Runtime) string {
	if rt.Major < 5 {
		return fmt.Sprintf("in-process EventPipe (ICorProfilerInfo12 sessions and providers, ICorProfilerCallback10 EventPipeEventDelivered) arrived with .NET 5; .NET Core %d.%d has neither", rt.Major, rt.Minor)
	}
	return ""
}

func init() {
	register(&scenario{
		Name:          "eventpipe",
		Upstream:      "eventpipe/eventpipe.cs, native/eventpipeprofiler/eventpipewritingprofiler",
		UpstreamLines: 0,
		CLSID:         "{2726B5B4-3F88-462D-AEC0-4EFDC8D7B921}",
		NotApplicable: eventPipeNA,
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			if rt.Major >= 8 { // ICorProfilerInfo14: the provider has a callback
				res.MustStdoutContain(t, "provider callback: enabled=true level=5 any=0xf00000000000 all=0x0\n",
					"provider callback: enabled=false")
			}
		},
	})
}

func init() {
	register(&scenario{
		Name:          "eventpipe_readevents",
		Upstream:      "eventpipe/eventpipe_readevents.cs, native/eventpipeprofiler/eventpipereadingprofiler",
		UpstreamLines: 0,
		CLSID:         "{9E7F78E2-B3BE-410B-AA8D-E210E4C757A4}",
		NotApplicable: eventPipeNA,
	})
}
