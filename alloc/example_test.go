package alloc_test

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

// allocBytes sums the bytes allocated per class from the allocation
// recorder's batches, and keeps the sampled stacks.
type allocBytes struct {
	profiler.Base
	rec     *alloc.Recorder
	bytes   map[profiler.ClassID]uint64 // touched only by the Batch goroutine
	samples []alloc.Sample
}

func (p *allocBytes) Initialize(info *profiler.Info) error {
	p.bytes = map[profiler.ClassID]uint64{}
	rec, err := alloc.NewRecorder(info, alloc.Options{
		SampleBytes: 512 << 10, // a stack every 512 KiB allocated, on average
		Batch: func(b alloc.Batch) {
			for _, e := range b.Events {
				p.bytes[e.Class] += e.Size
			}
			p.samples = append(p.samples, b.Samples...)
		},
	})
	p.rec = rec
	return err
}

func (p *allocBytes) Shutdown() error {
	if p.rec != nil {
		p.rec.Close() // the last batch is delivered before Close returns
		fmt.Fprintf(os.Stderr, "%d classes, %d sampled stacks, %+v\n", len(p.bytes), len(p.samples), p.rec.Stats())
	}
	return nil
}

// Allocation recording: the SDK answers ObjectAllocated in C and hands
// the profiler batches per thread, with Poisson-sampled stacks (each stands
// for alloc.SampleWeight allocations; see ExampleSampleWeight). It
// needs a running CoreCLR, so this example has no output;
// pprofbuild.LiveHeap turns the samples into a heap profile.
func ExampleNewRecorder() {
	_ = profiler.Register("{6E1F2A3B-4C5D-4E6F-8091-A2B3C4D5E6F7}", &allocBytes{})
}

// The weight of an allocation sampled at a mean of 512 KiB: a 64-byte
// object stands for about 8193 such allocations, a 1 MiB one for itself.
func ExampleSampleWeight() {
	fmt.Printf("%.0f %.2f\n", alloc.SampleWeight(64, 512<<10), alloc.SampleWeight(1<<20, 512<<10))
	// Output: 8193 1.16
}

// allocWatcher prints the runtime's allocation ticks it keeps: one every
// MiB allocated on average, chosen in C, so that the others never enter Go.
type allocWatcher struct {
	profiler.Base
	ticks *alloc.TickSampler
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
	if w.ticks, err = alloc.NewTickSampler(info, 1<<20); err != nil {
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
func ExampleNewTickSampler() {
	_ = profiler.Register("{1C7E4A92-5B3D-4F08-9E6A-2D8C7B5F3A14}", &allocWatcher{})
}
