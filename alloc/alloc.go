package alloc

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
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
	"unsafe"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/internal/ring"
	"github.com/clrprof/clrprof/profiler"
)

// Event is one recorded allocation.
type Event struct {
	// Class is the allocated object's class.
	Class profiler.ClassID
	Size  uint64 // bytes (GetObjectSize; objects of 4 GiB and more read 0)
}

// Sample is an allocation whose stack was taken (see
// Options.SampleBytes).
type Sample struct {
	// Class is the allocated object's class.
	Class profiler.ClassID
	// Size is its size in bytes (as Event.Size).
	Size uint64
	// Object is the object's ID when it was allocated, and Epoch the
	// number of [Recorder.GCStarted] calls before the allocation: the
	// ID stays the object's address until the next garbage collection
	// (Epoch+1) moves or frees it. A tracker of live objects
	// (pprofbuild.LiveHeap) takes the samples of the current epoch only.
	Object profiler.ObjectID
	Epoch  uint64
	// Stack is the allocating thread's managed stack, innermost first; 0
	// stands for native frames.
	Stack []profiler.FunctionID
}

// Batch is what the allocation recorder hands the user: one thread's
// allocations since its last batch.
type Batch struct {
	// Thread is the thread that allocated.
	Thread profiler.ThreadRef
	// Events holds every allocation, in order; valid until the callback
	// returns.
	Events []Event
	// Samples holds the sampled allocations with their stacks (each is
	// also in Events); the slices are the callback's to keep.
	Samples []Sample
	// Dropped counts records lost to a full buffer since the last batch.
	Dropped uint64
}

// Options configures [NewRecorder].
type Options struct {
	// Batch receives the records on a goroutine of the SDK. Required.
	Batch func(Batch)
	// SampleBytes is the mean number of bytes a thread allocates between
	// two stack samples (a Poisson process, as in Go's heap profiler: an
	// allocation of s bytes is sampled with probability 1-exp(-s/mean); see
	// SampleWeight). 0 takes no stacks.
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

// Stats counts what an allocation recorder delivered.
type Stats struct {
	// Events, Samples and Dropped count the allocations recorded, the
	// samples taken and the records lost to full buffers, since the start.
	Events, Samples, Dropped uint64
	// Waited counts records whose thread waited for room in its buffer.
	Waited uint64
	// Threads is the number of threads that have a buffer.
	Threads int
}

// Recorder is the running allocation recorder.
type Recorder struct {
	opts    Options
	rings   *ring.Set
	events  []Event
	stop    chan struct{}
	done    chan struct{}
	closed  sync.Once
	nEvents atomic.Uint64
	nSample atomic.Uint64
	nDrop   atomic.Uint64
	busy    atomic.Bool // the last drain left a ring with more than one chunk or half full
}

var allocEnabled atomic.Bool

// NewRecorder records every object allocation in C: the
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
// [Recorder.Close] from Shutdown. Once per process.
func NewRecorder(info *profiler.Info, opts Options) (*Recorder, error) {
	if opts.Batch == nil {
		return nil, errors.New("clrprof: alloc.NewRecorder: Options.Batch is nil")
	}
	if opts.SampleBytes < 0 || opts.Interval < 0 || opts.MaxDepth < 0 || opts.MaxDepth > 256 || opts.BufferEvents < 0 || opts.BufferEvents > ring.MaxSlots {
		return nil, fmt.Errorf("clrprof: alloc.NewRecorder: bad options (SampleBytes %d, MaxDepth %d (at most 256), BufferEvents %d (at most %d), Interval %v)",
			opts.SampleBytes, opts.MaxDepth, opts.BufferEvents, ring.MaxSlots, opts.Interval)
	}
	if opts.SamplesOnly && opts.SampleBytes == 0 {
		return nil, errors.New("clrprof: alloc.NewRecorder: SamplesOnly without SampleBytes records nothing")
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
	p := profimpl.Ptr(info, 2)
	if p == nil {
		return nil, profimpl.NotAvailable("ICorProfilerInfo2", 2, info.Version())
	}
	if !allocEnabled.CompareAndSwap(false, true) {
		return nil, errors.New("clrprof: alloc.NewRecorder: already enabled in this process")
	}
	if C.clrprof_alloc_enable(p, C.uint64_t(opts.BufferEvents), C.uint64_t(opts.SampleBytes), C.int(opts.MaxDepth), C.int(boolInt(opts.SamplesOnly))) != 0 {
		return nil, errors.New("clrprof: alloc.NewRecorder: cannot set up the allocation hook")
	}
	C.clrprof_alloc_set.thresh = C.clrprof_alloc_set.bytes / 16 / 2
	if err := allocWaker.Init(unsafe.Pointer(C.clrprof_alloc_gate())); err != nil {
		C.clrprof_alloc_stop()
		return nil, fmt.Errorf("clrprof: alloc.NewRecorder: %w", err)
	}
	allocWaker.SetWait(opts.FullWait)
	add := profiler.EnableObjectAllocated | profiler.MonitorObjectAllocated
	if opts.SampleBytes > 0 {
		add |= profiler.EnableStackSnapshot
	}
	if err := addEventMask(info, add); err != nil {
		C.clrprof_alloc_stop()
		return nil, fmt.Errorf("clrprof: alloc.NewRecorder: %w", err)
	}
	r := &Recorder{
		opts:  opts,
		rings: ring.Wrap(unsafe.Pointer(&C.clrprof_alloc_set)),
		stop:  make(chan struct{}),
		done:  make(chan struct{}),
	}
	go allocWaker.Loop(r.opts.Interval, r.stop, r.done, func() bool { return r.drain() > 0 && r.busy.Load() })
	return r, nil
}

// allocWaker wakes the allocation recorder's drain (see waker).
var allocWaker = ring.NewWaker(unsafe.Pointer(&C.clrprof_alloc_bp))

// allocChunk is the most slots the drain copies from a ring at once.
const allocChunk = 8192

// SampleWeight is the number of allocations a sampled allocation of
// size bytes stands for, with SampleBytes mean: 1/(1-exp(-size/mean)).
func SampleWeight(size uint64, mean int) float64 {
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

func (r *Recorder) drain() (n int) {
	defer func() {
		if p := recover(); p != nil {
			profimpl.ReportPanic("allocation batch callback", p, debug.Stack())
		}
	}()
	half := int(C.clrprof_alloc_set.bytes / 16 / 2)
	r.busy.Store(false)
	return r.rings.Drain(allocChunk, func(v *ring.View) int {
		if v.Backlog > len(v.Slots) || v.Backlog > half {
			r.busy.Store(true)
		}
		ev := r.events[:0]
		var samples []Sample
		i := 0
		for i < len(v.Slots) {
			s := v.Slots[i]
			if s[0]&C.CLRPROF_ALLOC_SAMPLE == 0 {
				ev = append(ev, Event{Class: profiler.ClassID(s[0]), Size: s[1]})
				i++
				continue
			}
			depth := int(s[1] >> C.CLRPROF_ALLOC_DEPTH_SHIFT)
			need := 2 + (depth+1)/2
			if i+need > len(v.Slots) {
				break // cannot happen (records are published whole); keep for the next drain
			}
			stack := make([]profiler.FunctionID, 0, depth)
			for k := 0; k < depth; k++ {
				stack = append(stack, profiler.FunctionID(v.Slots[i+2+k/2][k%2]))
			}
			samples = append(samples, Sample{
				Class:  profiler.ClassID(s[0] &^ C.CLRPROF_ALLOC_SAMPLE),
				Size:   s[1] & (1<<C.CLRPROF_ALLOC_DEPTH_SHIFT - 1),
				Object: profiler.ObjectID(v.Slots[i+1][0]),
				Epoch:  v.Slots[i+1][1],
				Stack:  stack,
			})
			i += need
		}
		r.events = ev
		r.nEvents.Add(uint64(len(ev)))
		r.nSample.Add(uint64(len(samples)))
		r.nDrop.Add(v.Dropped)
		if len(ev) > 0 || len(samples) > 0 || v.Dropped > 0 {
			r.opts.Batch(Batch{Thread: profiler.ThreadRef{OSThreadID: v.OSThreadID, ManagedThreadID: profiler.ThreadID(v.ManagedThreadID)}, Events: ev, Samples: samples, Dropped: v.Dropped})
		}
		return i
	})
}

// GCStarted tells the recorder a garbage collection started: samples
// taken from now on carry the next Epoch. Call it first thing in
// GarbageCollectionStarted, then Flush, when you track sampled objects.
func (r *Recorder) GCStarted() {
	C.clrprof_alloc_gc_started()
}

// Epoch is the number of GCStarted calls so far.
func (r *Recorder) Epoch() uint64 {
	return uint64(C.clrprof_alloc_get_epoch())
}

// Flush drains the buffers now, on the calling goroutine.
func (r *Recorder) Flush() { r.drain() }

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Events: r.nEvents.Load(), Samples: r.nSample.Load(), Dropped: r.nDrop.Load(), Threads: r.rings.Rings()}
}

// Close stops recording (allocations are still answered in C, without
// recording), stops the goroutine and delivers what the buffers hold.
func (r *Recorder) Close() error {
	r.closed.Do(func() {
		C.clrprof_alloc_stop()
		close(r.stop)
		allocWaker.Interrupt()
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

// addEventMask ORs add into the runtime's event mask.
func addEventMask(info *profiler.Info, add profiler.Monitor) error {
	m, err := info.GetEventMask()
	if err != nil {
		return fmt.Errorf("GetEventMask: %w", err)
	}
	if err := info.SetEventMask(m | add); err != nil {
		return fmt.Errorf("SetEventMask(%v): %w", m|add, err)
	}
	return nil
}
