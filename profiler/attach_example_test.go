package profiler_test

import (
	"errors"
	"fmt"

	"github.com/clrprof/clrprof/profiler"
)

// An attached profiler may not ask for every event: CheckAttachMask (and
// Info.SetAttachEventMask, which calls it) names the flags it may not set.
func ExampleCheckAttachMask() {
	err := profiler.CheckAttachMask(8, profiler.MonitorJITCompilation|profiler.MonitorEnterLeave, 0)
	var me *profiler.AttachMaskError
	if errors.As(err, &me) {
		fmt.Println(me.Low)
	}
	fmt.Println(profiler.CheckAttachMask(8, profiler.MonitorJITCompilation|profiler.MonitorGC, 0))
	// Output:
	// MonitorEnterLeave
	// <nil>
}
