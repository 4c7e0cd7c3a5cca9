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

// allocWatcher prints the runtime's allocation ticks it keeps: one every
// MiB allocated on average, chosen in C, so that the others never enter Go.
type allocWatcher struct {
	profiler.Base
	ticks *profiler.AllocationTickSampler
}

func (w *allocWatcher) Initialize(info *profiler.Info) error {
	_, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
		Name:     clrevents.RuntimeProvider,
		Keywords: clrevents.KeywordGC,
		Level:    profiler.EventPipeVerbose, // GCAllocationTick
	}}, false)
	if err != nil {
		return err // ErrNotAvailable before .NET 5
	}
	// Before HighEventPipe: the runtime must not be delivering events yet.
	if w.ticks, err = info.SampleAllocationTicks(1 << 20); err != nil {
		return err
	}
	return info.SetEventMask2(0, profiler.HighEventPipe)
}

func (w *allocWatcher) EventPipeEventDelivered(provider profiler.EventPipeProvider, eventID, version uint32, metadata, payload []byte,
	activity, related uuid.UUID, thread profiler.ThreadID, stack []profiler.Address) error {
	if eventID != clrevents.IDGCAllocationTick {
		return nil
	}
	ev, err := clrevents.DecodeRuntime(eventID, version, payload)
	if err != nil {
		return nil
	}
	if tick, ok := ev.(*clrevents.GCAllocationTick); ok {
		fmt.Printf("%s: this tick stands for %d bytes allocated\n", tick.TypeName, w.ticks.KeptBytes())
	}
	return nil
}

// A profiler that samples the runtime's allocation ticks in C: only the
// kept ones reach EventPipeEventDelivered, each with the bytes it stands
// for.
func ExampleInfo_SampleAllocationTicks() {
	_ = profiler.Register("{1C7E4A92-5B3D-4F08-9E6A-2D8C7B5F3A14}", &allocWatcher{})
}
