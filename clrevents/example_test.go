package clrevents_test

import (
	"fmt"

	"github.com/clrprof/clrprof/clrevents"
)

// Decoding a runtime event's payload (here ContentionStop version 1, as a
// profiler receives it in EventPipeEventDelivered).
func ExampleDecodeRuntime() {
	var p clrevents.Payload
	p.Byte(0).UInt16(7).Double(1.5e6) // ContentionFlags, ClrInstanceID, DurationNs
	ev, err := clrevents.DecodeRuntime(clrevents.IDContentionStop, 1, p.Bytes())
	if err != nil {
		panic(err)
	}
	stop := ev.(*clrevents.ContentionStop)
	fmt.Printf("waited %.1f ms for a managed lock: %v\n", stop.DurationNs/1e6, stop.ContentionFlags == 0)
	// Output: waited 1.5 ms for a managed lock: true
}
