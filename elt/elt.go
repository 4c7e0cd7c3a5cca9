package elt

/*
#cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/internal/ring"
	"github.com/clrprof/clrprof/profiler"
)

// Kind says which hook recorded an event.
type Kind uint8

const (
	// Enter: the function was entered.
	Enter Kind = 1
	// Leave: the function returned.
	Leave Kind = 2
	// Tailcall: the function left by a tail call (no Leave follows
	// for it; the callee's Enter does).
	Tailcall Kind = 3
	// Unwind: an exception unwound the function's frame (no Leave
	// follows for it). Recorded only with Options.Unwinds.
	Unwind Kind = 4
)

// String returns "enter", "leave", "tailcall" or "unwind".
func (k Kind) String() string {
	switch k {
	case Enter:
		return "enter"
	case Leave:
		return "leave"
	case Tailcall:
		return "tailcall"
	case Unwind:
		return "unwind"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Event is one recorded hook call.
type Event struct {
	// Function is the function entered or left.
	Function profiler.FunctionID
	// Kind says what happened: enter, leave, tail call or unwind.
	Kind Kind
	// Time is when the hook ran, on the monotonic clock, since the
	// recorder started (converted from the CPU's time-stamp counter).
	Time time.Duration
}

// Batch is what the fast path hands the user: the events one thread
// recorded since the last batch, in order.
type Batch struct {
	// Thread is the thread whose hooks recorded the events.
	Thread profiler.ThreadRef
	// Events is valid only until the callback returns; copy what you keep.
	Events []Event
	// Dropped counts events this thread lost since its last batch because
	// its buffer was full (make BufferEvents larger or Interval shorter).
	Dropped uint64
}

// Options configures [NewRecorder].
type Options struct {
	// Batch receives the recorded events, one thread's batch at a time, on
	// a single goroutine of the SDK (never on a runtime thread). Required.
	// A batch holds at most ChunkEvents events; a thread's events arrive in
	// order, split over as many batches as needed.
	Batch func(Batch)
	// Filter, when set, is asked once per function, when the runtime
	// compiles it, whether its hooks are wanted (FunctionIDMapper2). nil
	// hooks every function.
	Filter func(profiler.FunctionID) bool
	// Unwinds records Unwind events for frames that an exception
	// unwinds (it adds MonitorExceptions to the event mask and answers
	// ExceptionUnwindFunctionEnter/Leave in C; a profiler that implements
	// those callbacks still receives them).
	Unwinds bool
	// BufferEvents is each thread's buffer size in events (16 bytes each),
	// rounded up to a power of two; default 1<<16 (1 MiB).
	BufferEvents int
	// MaxMemory bounds the buffers of all threads together, in bytes
	// (default 64 MiB): at most MaxMemory / (16*BufferEvents) threads
	// record at a time (a buffer whose thread has exited is reused); the
	// events of a thread beyond that are lost and counted in
	// Stats.Lost.
	MaxMemory int
	// Interval is how often the buffers are drained when the application
	// is quiet; default 10ms. A thread whose buffer is half full wakes the
	// draining goroutine at once.
	Interval time.Duration
	// ChunkEvents is the most events handed to Batch at once (the drain
	// reuses one buffer of this size); default 4096.
	ChunkEvents int
	// FullWait is how long a thread whose buffer is full waits for the
	// draining goroutine to make room before it drops the event (counted
	// in Batch.Dropped and Stats.Dropped, and logged). The wait
	// ends as soon as there is room; it restarts whenever the drain makes
	// progress, so it bounds only a stalled drain (a Batch callback that
	// blocks). The thread waits in the hook, in cooperative mode: the
	// runtime cannot collect garbage meanwhile. Default 500ms (on a loaded
	// machine the drain's thread can be off its core for tens of
	// milliseconds: 50ms dropped events in a benchmark run); negative:
	// never wait (drop at once when full). After a wait that gave up, no
	// thread waits until the drain runs again.
	FullWait time.Duration
}

// Stats counts what a recorder saw.
type Stats struct {
	Events  uint64 // delivered in batches
	Dropped uint64 // lost to full buffers (the drain did not make room within FullWait)
	// Lost counts events of threads that got no buffer (MaxMemory in use
	// by other threads, or no memory).
	Lost uint64
	// Waited counts events whose thread waited for room in its buffer.
	Waited  uint64
	Threads int // per-thread buffers allocated
}

// Recorder is the running fast-path recorder; see [NewRecorder].
type Recorder struct {
	opts    Options
	rings   *ring.Set
	clock   *ring.Clock
	events  []Event
	stop    chan struct{}
	done    chan struct{}
	closed  sync.Once
	nEvents atomic.Uint64
	nDrop   atomic.Uint64
	warned  atomic.Bool
}

// eltState is process-wide: the runtime takes one set of hooks.
var eltState struct {
	mu      sync.Mutex
	enabled bool
	filter  atomic.Pointer[func(profiler.FunctionID) bool]
	// guard: functions the runtime must not hook (eltasync.go); nil on
	// most runtimes.
	guard atomic.Pointer[eltGuard]
	// asyncRoles: call counting asks which functions are the runtime's
	// continuation dispatchers and which may be async variants
	// (eltasync.go); nil when the runtime has no runtime async.
	asyncRoles atomic.Pointer[profiler.Info]
	call       atomic.Pointer[func(*Call)]
	callInfo   atomic.Pointer[profiler.Info]
}

// NewRecorder installs the fast-path enter/leave/tailcall hooks
// (SetEnterLeaveFunctionHooks3) and starts recording. Call it from
// Initialize: it adds MonitorEnterLeave (and MonitorExceptions with
// Unwinds) to the event mask, which the runtime accepts only there.
//
// The hooks are assembly stubs that JIT'd code calls directly: each event
// (function ID, kind, time-stamp counter) is appended to the calling
// thread's buffer in C memory, with no lock, no call into Go and no system
// call, and every register the method's arguments or return value live in
// is preserved. A goroutine drains the buffers every Interval and calls
// Batch. Call [Recorder.Close] from Shutdown for a final flush; hooks
// that fire after Close record nothing.
//
// Counting rules: every Enter of a function is matched, on the same
// thread, by exactly one of Leave (it returned), Tailcall (it left
// by a tail call), or Unwind (an exception unwound it; recorded only
// with Unwinds: without it such frames have no matching event). Methods
// the runtime did not JIT (ReadyToRun/NGEN images) and methods inlined into
// their callers have no hooks; add DisableInlining (and, for framework
// code, DisableAllNGenImages) to the event mask to see them.
//
// Runtime async (docs/runtime-async.md): a runtime-async method's
// Enter comes on its call and again on every resumption, possibly on
// another thread, and it gets no Leave when it suspends: one Leave
// (or Unwind) when it completes. The events are delivered as the
// runtime calls the hooks; [NewCallCounter] turns them into calls. On
// .NET 10 the SDK gives AsyncHelpers.AwaitAwaiter and UnsafeAwaitAwaiter
// no hooks (the JIT mis-compiles them with a leave hook).
//
// In test builds only (build tag clrprof_testhooks), CLRPROF_ELT_SLOW=1
// in the environment makes every event take the stubs' full-save path (a
// diagnostic for register-preservation tests).
func NewRecorder(info *profiler.Info, opts Options) (*Recorder, error) {
	if opts.Batch == nil {
		return nil, errors.New("clrprof: elt.NewRecorder: Options.Batch is nil")
	}
	if err := profimpl.CheckNotification(info, "elt.NewRecorder"); err != nil {
		return nil, err
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: negative Interval %v", opts.Interval)
	}
	if opts.Interval == 0 {
		opts.Interval = 10 * time.Millisecond
	}
	if opts.BufferEvents == 0 {
		opts.BufferEvents = 1 << 16
	}
	if opts.MaxMemory == 0 {
		opts.MaxMemory = 64 << 20
	}
	if opts.ChunkEvents <= 0 {
		opts.ChunkEvents = 4096
	}
	if opts.FullWait == 0 {
		opts.FullWait = 500 * time.Millisecond
	}
	if profimpl.Ptr(info, 3) == nil {
		return nil, profimpl.NotAvailable("ICorProfilerInfo3::SetEnterLeaveFunctionHooks3", 3, info.Version())
	}
	if err := eltCalled(info, "elt.NewRecorder"); err != nil {
		return nil, err
	}
	eltState.mu.Lock()
	defer eltState.mu.Unlock()
	if eltState.enabled {
		return nil, errors.New("clrprof: elt.NewRecorder: enter/leave hooks are already installed (the runtime takes one set per process)")
	}
	if opts.BufferEvents < 0 || opts.BufferEvents > ring.MaxSlots {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: BufferEvents %d: want 1..%d", opts.BufferEvents, ring.MaxSlots)
	}
	if rc := C.clrprof_elt_setup(C.uint64_t(opts.BufferEvents), profimpl.Ptr(info, 1)); rc != 0 {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: per-thread buffers: errno %d", int(rc))
	}
	ringBytes := int(C.clrprof_elt_set.bytes)
	if opts.MaxMemory < ringBytes {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: MaxMemory %d is less than one thread's buffer (%d bytes)", opts.MaxMemory, ringBytes)
	}
	C.clrprof_elt_set.max_rings = C.uint64_t(opts.MaxMemory / ringBytes)
	C.clrprof_elt_set.thresh = C.clrprof_elt_set.bytes / 16 / 2
	if err := eltWaker.Init(unsafe.Pointer(&C.clrprof_elt_on)); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: %w", err)
	}
	eltWaker.SetWait(opts.FullWait)
	if profimpl.Diagnostics && os.Getenv("CLRPROF_ELT_SLOW") == "1" {
		C.clrprof_elt_force_slow = 1
		profimpl.Logger().Warn("CLRPROF_ELT_SLOW=1: every enter/leave event takes the slow path (a diagnostic setting)")
	}
	if err := installMapper(info, opts.Filter, newELTGuard(info, false)); err != nil {
		return nil, err
	}
	if err := profimpl.SetEnterLeaveFunctionHooks3(info, C.clrprof_elt_hook(0), C.clrprof_elt_hook(1), C.clrprof_elt_hook(2)); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: SetEnterLeaveFunctionHooks3: %w", err)
	}
	add := profiler.MonitorEnterLeave
	if opts.Unwinds {
		if C.clrprof_elt_record_unwinds() != 0 {
			return nil, errors.New("clrprof: elt.NewRecorder: cannot take over the exception unwind callbacks")
		}
		add |= profiler.MonitorExceptions
	}
	if err := addEventMask(info, add); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewRecorder: %w", err)
	}
	r := &Recorder{
		opts:   opts,
		rings:  ring.Wrap(unsafe.Pointer(&C.clrprof_elt_set)),
		clock:  ring.NewClock(),
		events: make([]Event, 0, opts.ChunkEvents),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	eltState.enabled = true
	C.clrprof_elt_on = 1
	go eltWaker.Loop(r.opts.Interval, r.stop, r.done, r.drain)
	return r, nil
}

// eltCalled returns an error matching ErrNotAvailable on runtimes whose
// JIT-compiled code never calls the enter/leave hooks on Linux: .NET Core
// 2.0 (ICorProfilerInfo8 at most) accepts the hooks and the event mask, and
// then calls no hook at all (seen here: zero events from every test app), so
// recording there would silently record nothing.
func eltCalled(info *profiler.Info, who string) error {
	if v := info.Version(); v <= 8 {
		err := fmt.Errorf("clrprof: %s: %w: this runtime (ICorProfilerInfo%d at most: .NET Core 2.0) accepts enter/leave hooks but its JIT-compiled code never calls them on Linux, so nothing would be recorded", who, profimpl.ErrNotAvailable, v)
		profimpl.Logger().Warn(err.Error())
		return err
	}
	return nil
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

// installMapper sets the function ID mapper when there is a filter or a
// guard.
func installMapper(info *profiler.Info, filter func(profiler.FunctionID) bool, guard *eltGuard) error {
	if !setFilter(filter, guard, nil) {
		return nil
	}
	var err error
	if profimpl.Ptr(info, 3) != nil {
		err = profimpl.SetFunctionIDMapper2(info, C.clrprof_elt_mapper2(), nil)
	} else {
		err = profimpl.SetFunctionIDMapper(info, C.clrprof_elt_mapper1())
	}
	if err != nil {
		return fmt.Errorf("clrprof: SetFunctionIDMapper: %w", err)
	}
	return nil
}

// setFilter records the user's filter and the runtime's guard for the
// function ID mapper; it reports whether the mapper must ask Go.
func setFilter(filter func(profiler.FunctionID) bool, guard *eltGuard, roles *profiler.Info) bool {
	eltState.filter.Store(nil)
	eltState.guard.Store(guard)
	eltState.asyncRoles.Store(roles)
	C.clrprof_elt_filtered = 0
	if filter == nil && guard == nil && roles == nil {
		return false
	}
	if filter != nil {
		eltState.filter.Store(&filter)
	}
	C.clrprof_elt_filtered = 1
	return true
}

// callFilter runs the user's filter; a panic hooks the function.
func callFilter(fn func(profiler.FunctionID) bool, id profiler.FunctionID) (on bool) {
	defer func() {
		if p := recover(); p != nil {
			profimpl.ReportPanic("ELT filter", p, debug.Stack())
			on = true
		}
	}()
	return fn(id)
}

// clrprofGoELTFilter answers the function ID mapper: 1 to hook f.
//
//export clrprofGoELTFilter
func clrprofGoELTFilter(f C.uintptr_t) (on C.int) {
	defer profimpl.RecoverExport("FunctionIDMapper", func() { on = 1 })
	if g := eltState.guard.Load(); g != nil && g.excludes(profiler.FunctionID(f)) {
		return 0
	}
	if fp := eltState.filter.Load(); fp == nil || callFilter(*fp, profiler.FunctionID(f)) {
		on = 1
	}
	if info := eltState.asyncRoles.Load(); info != nil {
		on |= C.int(asyncRole(info, profiler.FunctionID(f)))
	}
	return on
}

// eltWaker wakes the ELT recorder's drain (see waker).
var eltWaker = ring.NewWaker(unsafe.Pointer(&C.clrprof_elt_bp))

// drain delivers what every ring holds, at most ChunkEvents per batch over
// one reused buffer; it reports whether any ring still held more than
// half its capacity when it was read (another drain is due at once).
func (r *Recorder) drain() (busy bool) {
	defer func() {
		if p := recover(); p != nil {
			profimpl.ReportPanic("ELT batch callback", p, debug.Stack())
		}
	}()
	tsc0, rate := r.clock.Params()
	half := int(C.clrprof_elt_set.bytes / 16 / 2)
	for {
		more := false
		r.rings.DrainDirect(r.opts.ChunkEvents, func(v *ring.View, backlog int) {
			if backlog > half {
				busy = true
			}
			if backlog > len(v.Slots) {
				more = true
			}
			ev := r.events[:0]
			for _, s := range v.Slots {
				ev = append(ev, Event{
					Function: profiler.FunctionID(s[0]),
					Kind:     Kind(s[1] >> C.CLRPROF_ELT_KIND_SHIFT),
					Time:     tscToNS(s[1]&(1<<C.CLRPROF_ELT_KIND_SHIFT-1), tsc0, rate),
				})
			}
			r.events = ev
			r.nEvents.Add(uint64(len(ev)))
			if v.Dropped > 0 {
				r.nDrop.Add(v.Dropped)
				if r.warned.CompareAndSwap(false, true) {
					profimpl.Logger().Warn("clrprof: ELT recorder: events dropped: a thread's buffer stayed full longer than FullWait (a slow Batch callback?); raise Options.BufferEvents or FullWait, make Batch cheaper, or count in C with elt.NewCallCounter",
						"dropped", v.Dropped, "thread", v.OSThreadID)
				}
			}
			if len(ev) > 0 || v.Dropped > 0 {
				r.opts.Batch(Batch{Thread: profiler.ThreadRef{OSThreadID: v.OSThreadID, ManagedThreadID: profiler.ThreadID(v.ManagedThreadID)}, Events: ev, Dropped: v.Dropped})
			}
		})
		if !more {
			return busy
		}
	}
}

// Flush drains the buffers now, on the calling goroutine (never call it
// from a hook or a cooperative-mode callback).
func (r *Recorder) Flush() {
	r.drain()
}

// Stats returns the counts so far.
func (r *Recorder) Stats() Stats {
	return Stats{Events: r.nEvents.Load(), Dropped: r.nDrop.Load(), Lost: r.rings.Lost(),
		Waited: eltWaker.Waits(), Threads: r.rings.Rings()}
}

// Close stops recording (hooks that still fire record nothing), stops the
// draining goroutine and delivers what the buffers still hold. Call it from
// Shutdown. It is safe to call more than once.
func (r *Recorder) Close() error {
	r.closed.Do(func() {
		C.clrprof_elt_on = 0
		close(r.stop)
		eltWaker.Interrupt()
		<-r.done
		// A hook that was past the gate when it closed finishes within
		// nanoseconds; a short pause lets it publish.
		time.Sleep(time.Millisecond)
		r.drain()
		if st := r.Stats(); st.Dropped > 0 || st.Lost > 0 {
			profimpl.Logger().Warn("clrprof: ELT recorder: not every event was delivered", "events", st.Events, "dropped", st.Dropped, "lost", st.Lost,
				"hint", "raise Options.BufferEvents, FullWait or MaxMemory, or count in C with elt.NewCallCounter")
		}
	})
	return nil
}

// tscToNS converts a time-stamp counter reading.
func tscToNS(t, tsc0 uint64, rate float64) time.Duration {
	return time.Duration(float64(int64(t-tsc0)) * rate)
}
