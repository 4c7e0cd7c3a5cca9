package profiler_test

import (
	"fmt"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

// gcWatcher prints every garbage collection the runtime reports through
// its own events (.NET 5 and later).
type gcWatcher struct {
	profiler.Base
}

func (w *gcWatcher) Initialize(info *profiler.Info) error {
	_, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
		Name:     clrevents.RuntimeProvider,
		Keywords: clrevents.KeywordGC,
		Level:    profiler.EventPipeInformational,
	}}, false)
	if err != nil {
		return err // ErrNotAvailable before .NET 5
	}
	return info.SetEventMask2(0, profiler.HighEventPipe)
}

func (w *gcWatcher) EventPipeEventDelivered(provider profiler.EventPipeProvider, eventID, version uint32, metadata, payload []byte,
	activity, related uuid.UUID, thread profiler.ThreadID, stack []profiler.Address) error {
	ev, err := clrevents.DecodeRuntime(eventID, version, payload)
	if err != nil {
		return nil
	}
	if gc, ok := ev.(*clrevents.GCStart); ok {
		fmt.Printf("GC #%d of generation %d (reason %d)\n", gc.Count, gc.Depth, gc.Reason)
	}
	return nil
}

// A profiler that reads the runtime's GC events in process with an
// EventPipe session (only the runtime's provider is enabled, so every
// event delivered is the runtime's).
func ExampleInfo_EventPipeStartSession() {
	_ = profiler.Register("{6F2C8B41-3D7A-4E95-B1C0-9A8E7D6F5C43}", &gcWatcher{})
}
