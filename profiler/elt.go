package profiler

/*
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"
#include "object.h"
#include "signals.h"
#include "guard.h"
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
)

// ELTKind says which hook recorded an event.
type ELTKind uint8

const (
	// ELTEnter: the function was entered.
	ELTEnter ELTKind = 1
	// ELTLeave: the function returned.
	ELTLeave ELTKind = 2
	// ELTTailcall: the function left by a tail call (no ELTLeave follows
	// for it; the callee's ELTEnter does).
	ELTTailcall ELTKind = 3
	// ELTUnwind: an exception unwound the function's frame (no ELTLeave
	// follows for it). Recorded only with ELTOptions.Unwinds.
	ELTUnwind ELTKind = 4
)

// String returns "enter", "leave", "tailcall" or "unwind".
func (k ELTKind) String() string {
	switch k {
	case ELTEnter:
		return "enter"
	case ELTLeave:
		return "leave"
	case ELTTailcall:
		return "tailcall"
	case ELTUnwind:
		return "unwind"
	}
	return fmt.Sprintf("ELTKind(%d)", uint8(k))
}

// ELTEvent is one recorded hook call.
type ELTEvent struct {
	// Function is the function entered or left.
	Function FunctionID
	// Kind says what happened: enter, leave, tail call or unwind.
	Kind ELTKind
	// Time is when the hook ran, on the monotonic clock, since the
	// recorder started (converted from the CPU's time-stamp counter).
	Time time.Duration
}

// ELTBatch is what the fast path hands the user: the events one thread
// recorded since the last batch, in order.
type ELTBatch struct {
	// Thread is the thread whose hooks recorded the events.
	Thread ThreadRef
	// Events is valid only until the callback returns; copy what you keep.
	Events []ELTEvent
	// Dropped counts events this thread lost since its last batch because
	// its buffer was full (make BufferEvents larger or Interval shorter).
	Dropped uint64
}

// ELTOptions configures [Info.EnableELT].
type ELTOptions struct {
	// Batch receives the recorded events, one thread's batch at a time, on
	// a single goroutine of the SDK (never on a runtime thread). Required.
	// A batch holds at most ChunkEvents events; a thread's events arrive in
	// order, split over as many batches as needed.
	Batch func(ELTBatch)
	// Filter, when set, is asked once per function, when the runtime
	// compiles it, whether its hooks are wanted (FunctionIDMapper2). nil
	// hooks every function.
	Filter func(FunctionID) bool
	// Unwinds records ELTUnwind events for frames that an exception
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
	// ELTStats.Lost.
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
	// in ELTBatch.Dropped and ELTStats.Dropped, and logged). The wait
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

// ELTStats counts what a recorder saw.
type ELTStats struct {
	Events  uint64 // delivered in batches
	Dropped uint64 // lost to full buffers (the drain did not make room within FullWait)
	// Lost counts events of threads that got no buffer (MaxMemory in use
	// by other threads, or no memory).
	Lost uint64
	// Waited counts events whose thread waited for room in its buffer.
	Waited  uint64
	Threads int // per-thread buffers allocated
}

// ELTRecorder is the running fast-path recorder; see [Info.EnableELT].
type ELTRecorder struct {
	opts    ELTOptions
	rings   *ringSet
	clock   *tscClock
	events  []ELTEvent
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
	filter  atomic.Pointer[func(FunctionID) bool]
	// guard: functions the runtime must not hook (eltasync.go); nil on
	// most runtimes.
	guard atomic.Pointer[eltGuard]
	// asyncRoles: call counting asks which functions are the runtime's
	// continuation dispatchers and which may be async variants
	// (eltasync.go); nil when the runtime has no runtime async.
	asyncRoles atomic.Pointer[Info]
	call       atomic.Pointer[func(*ELTCall)]
	callInfo   atomic.Pointer[Info]
}

// EnableELT installs the fast-path enter/leave/tailcall hooks
// (SetEnterLeaveFunctionHooks3) and starts recording. Call it from
// Initialize: it adds MonitorEnterLeave (and MonitorExceptions with
// Unwinds) to the event mask, which the runtime accepts only there.
//
// The hooks are assembly stubs that JIT'd code calls directly: each event
// (function ID, kind, time-stamp counter) is appended to the calling
// thread's buffer in C memory, with no lock, no call into Go and no system
// call, and every register the method's arguments or return value live in
// is preserved. A goroutine drains the buffers every Interval and calls
// Batch. Call [ELTRecorder.Close] from Shutdown for a final flush; hooks
// that fire after Close record nothing.
//
// Counting rules: every ELTEnter of a function is matched, on the same
// thread, by exactly one of ELTLeave (it returned), ELTTailcall (it left
// by a tail call), or ELTUnwind (an exception unwound it; recorded only
// with Unwinds: without it such frames have no matching event). Methods
// the runtime did not JIT (ReadyToRun/NGEN images) and methods inlined into
// their callers have no hooks; add DisableInlining (and, for framework
// code, DisableAllNGenImages) to the event mask to see them.
//
// Runtime async (docs/runtime-async.md): a runtime-async method's
// ELTEnter comes on its call and again on every resumption, possibly on
// another thread, and it gets no ELTLeave when it suspends: one ELTLeave
// (or ELTUnwind) when it completes. The events are delivered as the
// runtime calls the hooks; EnableCallCounts turns them into calls. On
// .NET 10 the SDK gives AsyncHelpers.AwaitAwaiter and UnsafeAwaitAwaiter
// no hooks (the JIT mis-compiles them with a leave hook).
//
// In test builds only (build tag clrprof_testhooks), CLRPROF_ELT_SLOW=1
// in the environment makes every event take the stubs' full-save path (a
// diagnostic for register-preservation tests).
func (x *Info) EnableELT(opts ELTOptions) (*ELTRecorder, error) {
	if opts.Batch == nil {
		return nil, errors.New("clrprof: EnableELT: ELTOptions.Batch is nil")
	}
	if err := x.checkNotification("EnableELT"); err != nil {
		return nil, err
	}
	if opts.Interval < 0 {
		return nil, fmt.Errorf("clrprof: EnableELT: negative Interval %v", opts.Interval)
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
	if x.ptr(3) == nil {
		return nil, notAvailable("ICorProfilerInfo3::SetEnterLeaveFunctionHooks3", 3, x.Version())
	}
	if err := x.eltCalled("EnableELT"); err != nil {
		return nil, err
	}
	eltState.mu.Lock()
	defer eltState.mu.Unlock()
	if eltState.enabled {
		return nil, errors.New("clrprof: EnableELT: enter/leave hooks are already installed (the runtime takes one set per process)")
	}
	if opts.BufferEvents < 0 || opts.BufferEvents > maxRingSlots {
		return nil, fmt.Errorf("clrprof: EnableELT: BufferEvents %d: want 1..%d", opts.BufferEvents, maxRingSlots)
	}
	if rc := C.clrprof_elt_setup(C.uint64_t(opts.BufferEvents), x.ptr(1)); rc != 0 {
		return nil, fmt.Errorf("clrprof: EnableELT: per-thread buffers: errno %d", int(rc))
	}
	ringBytes := 16 * int(C.clrprof_elt_set.slots)
	if opts.MaxMemory < ringBytes {
		return nil, fmt.Errorf("clrprof: EnableELT: MaxMemory %d is less than one thread's buffer (%d bytes)", opts.MaxMemory, ringBytes)
	}
	C.clrprof_elt_set.max_rings = C.uint64_t(opts.MaxMemory / ringBytes)
	C.clrprof_elt_set.thresh = C.clrprof_elt_set.slots / 2
	if err := eltWaker.init(&C.clrprof_elt_on); err != nil {
		return nil, fmt.Errorf("clrprof: EnableELT: %w", err)
	}
	eltWaker.setWait(opts.FullWait)
	if diagnostics && os.Getenv("CLRPROF_ELT_SLOW") == "1" {
		C.clrprof_elt_force_slow = 1
		logger().Warn("CLRPROF_ELT_SLOW=1: every enter/leave event takes the slow path (a diagnostic setting)")
	}
	if err := x.installMapper(opts.Filter, x.newELTGuard(false)); err != nil {
		return nil, err
	}
	if err := x.setEnterLeaveFunctionHooks3(C.clrprof_elt_hook(0), C.clrprof_elt_hook(1), C.clrprof_elt_hook(2)); err != nil {
		return nil, fmt.Errorf("clrprof: EnableELT: SetEnterLeaveFunctionHooks3: %w", err)
	}
	add := MonitorEnterLeave
	if opts.Unwinds {
		if C.clrprof_elt_record_unwinds() != 0 {
			return nil, errors.New("clrprof: EnableELT: cannot take over the exception unwind callbacks")
		}
		add |= MonitorExceptions
	}
	if err := x.addEventMask(add); err != nil {
		return nil, fmt.Errorf("clrprof: EnableELT: %w", err)
	}
	r := &ELTRecorder{
		opts:   opts,
		rings:  &ringSet{s: &C.clrprof_elt_set, dropped: map[*C.clrprof_ring]uint64{}},
		clock:  newTSCClock(),
		events: make([]ELTEvent, 0, opts.ChunkEvents),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	eltState.enabled = true
	C.clrprof_elt_on = 1
	go eltWaker.loop(r.opts.Interval, r.stop, r.done, r.drain)
	return r, nil
}

// eltCalled returns an error matching ErrNotAvailable on runtimes whose
// JIT-compiled code never calls the enter/leave hooks on Linux: .NET Core
// 2.0 (ICorProfilerInfo8 at most) accepts the hooks and the event mask, and
// then calls no hook at all (seen here: zero events from every test app), so
// recording there would silently record nothing.
func (x *Info) eltCalled(who string) error {
	if v := x.Version(); v <= 8 {
		err := fmt.Errorf("clrprof: %s: %w: this runtime (ICorProfilerInfo%d at most: .NET Core 2.0) accepts enter/leave hooks but its JIT-compiled code never calls them on Linux, so nothing would be recorded", who, ErrNotAvailable, v)
		logger().Warn(err.Error())
		return err
	}
	return nil
}

// addEventMask ORs add into the runtime's event mask.
func (x *Info) addEventMask(add Monitor) error {
	m, err := x.GetEventMask()
	if err != nil {
		return fmt.Errorf("GetEventMask: %w", err)
	}
	if err := x.SetEventMask(m | add); err != nil {
		return fmt.Errorf("SetEventMask(%v): %w", m|add, err)
	}
	return nil
}

// installMapper sets the function ID mapper when there is a filter or a
// guard.
func (x *Info) installMapper(filter func(FunctionID) bool, guard *eltGuard) error {
	if !setFilter(filter, guard, nil) {
		return nil
	}
	var err error
	if x.ptr(3) != nil {
		err = x.setFunctionIDMapper2(C.clrprof_elt_mapper2(), nil)
	} else {
		err = x.setFunctionIDMapper(C.clrprof_elt_mapper1())
	}
	if err != nil {
		return fmt.Errorf("clrprof: SetFunctionIDMapper: %w", err)
	}
	return nil
}

// setFilter records the user's filter and the runtime's guard for the
// function ID mapper; it reports whether the mapper must ask Go.
func setFilter(filter func(FunctionID) bool, guard *eltGuard, roles *Info) bool {
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
func callFilter(fn func(FunctionID) bool, id FunctionID) (on bool) {
	defer func() {
		if p := recover(); p != nil {
			reportPanic("ELT filter", p, debug.Stack())
			on = true
		}
	}()
	return fn(id)
}

// clrprofGoELTFilter answers the function ID mapper: 1 to hook f.
//
//export clrprofGoELTFilter
func clrprofGoELTFilter(f C.uintptr_t) (on C.int) {
	defer recoverExport("FunctionIDMapper", func() { on = 1 })
	if g := eltState.guard.Load(); g != nil && g.excludes(FunctionID(f)) {
		return 0
	}
	if fp := eltState.filter.Load(); fp == nil || callFilter(*fp, FunctionID(f)) {
		on = 1
	}
	if x := eltState.asyncRoles.Load(); x != nil {
		on |= C.int(x.asyncRole(FunctionID(f)))
	}
	return on
}

// eltWaker wakes the ELT recorder's drain (see waker).
var eltWaker = &waker{bp: &C.clrprof_elt_bp}

// drain delivers what every ring holds, at most ChunkEvents per batch over
// one reused buffer; it reports whether any ring still held more than
// half its capacity when it was read (another drain is due at once).
func (r *ELTRecorder) drain() (busy bool) {
	defer func() {
		if p := recover(); p != nil {
			reportPanic("ELT batch callback", p, debug.Stack())
		}
	}()
	tsc0, rate := r.clock.params()
	half := int(C.clrprof_elt_set.slots / 2)
	for {
		more := false
		r.rings.drainDirect(r.opts.ChunkEvents, func(v *ringView, backlog int) {
			if backlog > half {
				busy = true
			}
			if backlog > len(v.slots) {
				more = true
			}
			ev := r.events[:0]
			for _, s := range v.slots {
				ev = append(ev, ELTEvent{
					Function: FunctionID(s[0]),
					Kind:     ELTKind(s[1] >> C.CLRPROF_ELT_KIND_SHIFT),
					Time:     tscToNS(s[1]&(1<<C.CLRPROF_ELT_KIND_SHIFT-1), tsc0, rate),
				})
			}
			r.events = ev
			r.nEvents.Add(uint64(len(ev)))
			if v.dropped > 0 {
				r.nDrop.Add(v.dropped)
				if r.warned.CompareAndSwap(false, true) {
					logger().Warn("clrprof: ELT recorder: events dropped: a thread's buffer stayed full longer than FullWait (a slow Batch callback?); raise ELTOptions.BufferEvents or FullWait, make Batch cheaper, or count in C with Info.EnableCallCounts",
						"dropped", v.dropped, "thread", v.thread.OSThreadID)
				}
			}
			if len(ev) > 0 || v.dropped > 0 {
				r.opts.Batch(ELTBatch{Thread: v.thread, Events: ev, Dropped: v.dropped})
			}
		})
		if !more {
			return busy
		}
	}
}

// Flush drains the buffers now, on the calling goroutine (never call it
// from a hook or a cooperative-mode callback).
func (r *ELTRecorder) Flush() {
	r.drain()
}

// Stats returns the counts so far.
func (r *ELTRecorder) Stats() ELTStats {
	return ELTStats{Events: r.nEvents.Load(), Dropped: r.nDrop.Load(), Lost: r.rings.lost(),
		Waited: eltWaker.waits(), Threads: r.rings.rings()}
}

// Close stops recording (hooks that still fire record nothing), stops the
// draining goroutine and delivers what the buffers still hold. Call it from
// Shutdown. It is safe to call more than once.
func (r *ELTRecorder) Close() error {
	r.closed.Do(func() {
		C.clrprof_elt_on = 0
		close(r.stop)
		eltWaker.interrupt()
		<-r.done
		// A hook that was past the gate when it closed finishes within
		// nanoseconds; a short pause lets it publish.
		time.Sleep(time.Millisecond)
		r.drain()
		if st := r.Stats(); st.Dropped > 0 || st.Lost > 0 {
			logger().Warn("clrprof: ELT recorder: not every event was delivered", "events", st.Events, "dropped", st.Dropped, "lost", st.Lost,
				"hint", "raise ELTOptions.BufferEvents, FullWait or MaxMemory, or count in C with Info.EnableCallCounts")
		}
	})
	return nil
}

// tscToNS converts a time-stamp counter reading.
func tscToNS(t, tsc0 uint64, rate float64) time.Duration {
	return time.Duration(float64(int64(t-tsc0)) * rate)
}
