package profiler

/*
#cgo LDFLAGS: -lm
#include "alloc.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// AllocEvent is one recorded allocation.
type AllocEvent struct {
	// Class is the allocated object's class.
	Class ClassID
	Size  uint64 // bytes (GetObjectSize; objects of 4 GiB and more read 0)
}

// AllocSample is an allocation whose stack was taken (see
// AllocOptions.SampleBytes).
type AllocSample struct {
	// Class is the allocated object's class.
	Class ClassID
	// Size is its size in bytes (as AllocEvent.Size).
	Size uint64
	// Object is the object's ID when it was allocated, and Epoch the
	// number of [AllocRecorder.GCStarted] calls before the allocation: the
	// ID stays the object's address until the next garbage collection
	// (Epoch+1) moves or frees it. A tracker of live objects
	// (pprofbuild.LiveHeap) takes the samples of the current epoch only.
	Object ObjectID
	Epoch  uint64
	// Stack is the allocating thread's managed stack, innermost first; 0
	// stands for native frames.
	Stack []FunctionID
}

// AllocBatch is what the allocation recorder hands the user: one thread's
// allocations since its last batch.
type AllocBatch struct {
	// Thread is the thread that allocated.
	Thread ThreadRef
	// Events holds every allocation, in order; valid until the callback
	// returns.
	Events []AllocEvent
	// Samples holds the sampled allocations with their stacks (each is
	// also in Events); the slices are the callback's to keep.
	Samples []AllocSample
	// Dropped counts records lost to a full buffer since the last batch.
	Dropped uint64
}

// AllocOptions configures [Info.EnableAllocationRecording].
type AllocOptions struct {
	// Batch receives the records on a goroutine of the SDK. Required.
	Batch func(AllocBatch)
	// SampleBytes is the mean number of bytes a thread allocates between
	// two stack samples (a Poisson process, as in Go's heap profiler: an
	// allocation of s bytes is sampled with probability 1-exp(-s/mean); see
	// AllocSampleWeight). 0 takes no stacks.
	SampleBytes int
	// MaxDepth is the number of frames per sampled stack (default 64, at
	// most 256).
	MaxDepth int
	// BufferEvents is each thread's buffer size in 16-byte slots (a stack
	// sample takes 1 + depth/2), rounded up to a power of two; default
	// 1<<15 (512 KiB).
	BufferEvents int
	// Interval is how often the buffers are drained when the application
	// is quiet; default 10ms. A thread whose buffer is half full wakes the
	// draining goroutine at once.
	Interval time.Duration
	// FullWait is how long a thread whose buffer is full waits for the
	// draining goroutine to make room before it drops the record (counted
	// in Dropped); the wait restarts whenever the drain makes progress, so
	// it bounds only a stalled drain. The thread waits inside
	// ObjectAllocated, in cooperative mode. Default 500ms; negative: never
	// wait.
	FullWait time.Duration
	// SamplesOnly records only the sampled allocations (Samples), not
	// every allocation (Events stays empty): for a profiler that needs the
	// samples alone, such as a live heap profile, it saves the per
	// allocation record. Needs SampleBytes.
	SamplesOnly bool
}

// AllocStats counts what an allocation recorder delivered.
type AllocStats struct {
	// Events, Samples and Dropped count the allocations recorded, the
	// samples taken and the records lost to full buffers, since the start.
	Events, Samples, Dropped uint64
	// Waited counts records whose thread waited for room in its buffer.
	Waited uint64
	// Threads is the number of threads that have a buffer.
	Threads int
}

// AllocRecorder is the running allocation recorder.
type AllocRecorder struct {
	opts    AllocOptions
	rings   *ringSet
	events  []AllocEvent
	stop    chan struct{}
	done    chan struct{}
	closed  sync.Once
	nEvents atomic.Uint64
	nSample atomic.Uint64
	nDrop   atomic.Uint64
	busy    atomic.Bool // the last drain left a ring with more than one chunk or half full
}

var allocEnabled atomic.Bool

// EnableAllocationRecording records every object allocation in C: the
// SDK answers ObjectAllocated itself, without entering Go, appending the
// class and size (GetObjectSize) to the allocating thread's buffer, and
// for sampled allocations (SampleBytes) the thread's stack
// (DoStackSnapshot of the current thread). A goroutine drains the buffers
// every Interval and calls Batch. If the profiler also implements
// ObjectAllocated, it is still called, after the recording.
//
// Call it from Initialize: it adds EnableObjectAllocated and
// MonitorObjectAllocated (and EnableStackSnapshot with SampleBytes) to the
// event mask, which the runtime accepts only there. Call
// [AllocRecorder.Close] from Shutdown. Once per process.
func (x *Info) EnableAllocationRecording(opts AllocOptions) (*AllocRecorder, error) {
	if opts.Batch == nil {
		return nil, errors.New("clrprof: EnableAllocationRecording: AllocOptions.Batch is nil")
	}
	if opts.SampleBytes < 0 || opts.Interval < 0 || opts.MaxDepth < 0 || opts.MaxDepth > 256 || opts.BufferEvents < 0 || opts.BufferEvents > maxRingSlots {
		return nil, fmt.Errorf("clrprof: EnableAllocationRecording: bad options (SampleBytes %d, MaxDepth %d (at most 256), BufferEvents %d (at most %d), Interval %v)",
			opts.SampleBytes, opts.MaxDepth, opts.BufferEvents, maxRingSlots, opts.Interval)
	}
	if opts.SamplesOnly && opts.SampleBytes == 0 {
		return nil, errors.New("clrprof: EnableAllocationRecording: SamplesOnly without SampleBytes records nothing")
	}
	if opts.MaxDepth == 0 {
		opts.MaxDepth = 64
	}
	if opts.BufferEvents == 0 {
		opts.BufferEvents = 1 << 15
	}
	if opts.Interval == 0 {
		opts.Interval = 10 * time.Millisecond
	}
	if opts.FullWait == 0 {
		opts.FullWait = 500 * time.Millisecond
	}
	p := x.ptr(2)
	if p == nil {
		return nil, notAvailable("ICorProfilerInfo2", 2, x.Version())
	}
	if !allocEnabled.CompareAndSwap(false, true) {
		return nil, errors.New("clrprof: EnableAllocationRecording: already enabled in this process")
	}
	if C.clrprof_alloc_enable(p, C.uint64_t(opts.BufferEvents), C.uint64_t(opts.SampleBytes), C.int(opts.MaxDepth), C.int(boolInt(opts.SamplesOnly))) != 0 {
		return nil, errors.New("clrprof: EnableAllocationRecording: cannot set up the allocation hook")
	}
	C.clrprof_alloc_set.thresh = C.clrprof_alloc_set.slots / 2
	if err := allocWaker.init(C.clrprof_alloc_gate()); err != nil {
		C.clrprof_alloc_stop()
		return nil, fmt.Errorf("clrprof: EnableAllocationRecording: %w", err)
	}
	allocWaker.setWait(opts.FullWait)
	add := EnableObjectAllocated | MonitorObjectAllocated
	if opts.SampleBytes > 0 {
		add |= EnableStackSnapshot
	}
	if err := x.addEventMask(add); err != nil {
		C.clrprof_alloc_stop()
		return nil, fmt.Errorf("clrprof: EnableAllocationRecording: %w", err)
	}
	r := &AllocRecorder{
		opts:  opts,
		rings: &ringSet{s: &C.clrprof_alloc_set, dropped: map[*C.clrprof_ring]uint64{}},
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go allocWaker.loop(r.opts.Interval, r.stop, r.done, func() bool { return r.drain() > 0 && r.busy.Load() })
	return r, nil
}

// allocWaker wakes the allocation recorder's drain (see waker).
var allocWaker = &waker{bp: &C.clrprof_alloc_bp}

// allocChunk is the most slots the drain copies from a ring at once.
const allocChunk = 8192

// AllocSampleWeight is the number of allocations a sampled allocation of
// size bytes stands for, with SampleBytes mean: 1/(1-exp(-size/mean)).
func AllocSampleWeight(size uint64, mean int) float64 {
	if mean <= 0 {
		return 1
	}
	if size == 0 {
		size = 1
	}
	p := -math.Expm1(-float64(size) / float64(mean))
	if p <= 0 {
		return 1
	}
	return 1 / p
}

func (r *AllocRecorder) drain() (n int) {
	defer func() {
		if p := recover(); p != nil {
			reportPanic("allocation batch callback", p, debug.Stack())
		}
	}()
	half := int(C.clrprof_alloc_set.slots / 2)
	r.busy.Store(false)
	return r.rings.drain(allocChunk, func(v *ringView) int {
		if v.backlog > len(v.slots) || v.backlog > half {
			r.busy.Store(true)
		}
		ev := r.events[:0]
		var samples []AllocSample
		i := 0
		for i < len(v.slots) {
			s := v.slots[i]
			if s[0]&C.CLRPROF_ALLOC_SAMPLE == 0 {
				ev = append(ev, AllocEvent{Class: ClassID(s[0]), Size: s[1]})
				i++
				continue
			}
			depth := int(s[1] >> C.CLRPROF_ALLOC_DEPTH_SHIFT)
			need := 2 + (depth+1)/2
			if i+need > len(v.slots) {
				break // cannot happen (records are published whole); keep for the next drain
			}
			stack := make([]FunctionID, 0, depth)
			for k := 0; k < depth; k++ {
				stack = append(stack, FunctionID(v.slots[i+2+k/2][k%2]))
			}
			samples = append(samples, AllocSample{
				Class:  ClassID(s[0] &^ C.CLRPROF_ALLOC_SAMPLE),
				Size:   s[1] & (1<<C.CLRPROF_ALLOC_DEPTH_SHIFT - 1),
				Object: ObjectID(v.slots[i+1][0]),
				Epoch:  v.slots[i+1][1],
				Stack:  stack,
			})
			i += need
		}
		r.events = ev
		r.nEvents.Add(uint64(len(ev)))
		r.nSample.Add(uint64(len(samples)))
		r.nDrop.Add(v.dropped)
		if len(ev) > 0 || len(samples) > 0 || v.dropped > 0 {
			r.opts.Batch(AllocBatch{Thread: v.thread, Events: ev, Samples: samples, Dropped: v.dropped})
		}
		return i
	})
}

// GCStarted tells the recorder a garbage collection started: samples
// taken from now on carry the next Epoch. Call it first thing in
// GarbageCollectionStarted, then Flush, when you track sampled objects.
func (r *AllocRecorder) GCStarted() {
	C.clrprof_alloc_gc_started()
}

// Epoch is the number of GCStarted calls so far.
func (r *AllocRecorder) Epoch() uint64 {
	return uint64(C.clrprof_alloc_get_epoch())
}

// Flush drains the buffers now, on the calling goroutine.
func (r *AllocRecorder) Flush() { r.drain() }

// Stats returns the counts so far.
func (r *AllocRecorder) Stats() AllocStats {
	return AllocStats{Events: r.nEvents.Load(), Samples: r.nSample.Load(), Dropped: r.nDrop.Load(), Threads: r.rings.rings()}
}

// Close stops recording (allocations are still answered in C, without
// recording), stops the goroutine and delivers what the buffers hold.
func (r *AllocRecorder) Close() error {
	r.closed.Do(func() {
		C.clrprof_alloc_stop()
		close(r.stop)
		allocWaker.interrupt()
		<-r.done
		time.Sleep(time.Millisecond)
		for i := 0; i < 1<<20 && r.drain() > 0; i++ {
		}
	})
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
