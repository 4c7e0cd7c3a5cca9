package profiler

/*
#include "stack.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/cgo"
	"sync"
	"time"
	"unsafe"
)

// StackFrame is one frame of a stack snapshot, innermost first. Function
// is 0 for a run of native (unmanaged) frames.
type StackFrame struct {
	// Function is the frame's managed function, 0 for native frames.
	Function FunctionID
	// IP is the frame's instruction pointer.
	IP Address
	// Frame is the frame info for generic instantiations
	// ([Info.FunctionFullName]); valid only inside a WalkStack callback,
	// 0 in StackTrace results.
	Frame FrameInfo
}

// ThreadStack is one thread's stack in a [Info.SnapshotAllThreads] result.
type ThreadStack struct {
	// Thread is the managed thread the snapshot was taken of.
	Thread     ThreadID
	OSThreadID uint32 // 0 if the runtime did not say
	// Frames are the thread's frames, innermost first.
	Frames    []StackFrame
	Truncated bool  // deeper frames were cut off at the limit
	Err       error // the snapshot of this thread failed
	// Skipped tells that the thread was not walked: the walk function
	// of [Info.SnapshotThreads] said so.
	Skipped bool
}

// maxStackDepth bounds one snapshot.
const maxStackDepth = 4096

// StackTrace walks a thread's managed stack (DoStackSnapshot) and returns up
// to max frames, innermost first, collected in C without a Go callback per
// frame. thread 0 is the calling thread, which is always allowed (from a
// callback, say). Another thread can be walked only while it is stopped:
// on Linux, between [Info.SuspendRuntime] and [Info.ResumeRuntime]
// (ICorProfilerInfo10, .NET Core 3.0 and later; see SnapshotAllThreads).
// Requires EnableStackSnapshot in the event mask. A stack deeper than max
// is cut off, and the error is nil.
func (x *Info) StackTrace(thread ThreadID, max int) ([]StackFrame, error) {
	frames, _, err := x.stackTrace(thread, max)
	return frames, err
}

func (x *Info) stackTrace(thread ThreadID, max int) ([]StackFrame, bool, error) {
	p := x.ptr(2)
	if p == nil {
		return nil, false, notAvailable("ICorProfilerInfo2::DoStackSnapshot", 2, x.Version())
	}
	if max <= 0 || max > maxStackDepth {
		return nil, false, fmt.Errorf("clrprof: StackTrace: max %d: want 1..%d", max, maxStackDepth)
	}
	bp := stackBuf(2 * max)
	defer stackBufs.Put(bp)
	buf := *bp
	var n, more C.int
	hr := C.clrprof_stack_collect(p, C.uintptr_t(thread), (*C.uintptr_t)(unsafe.Pointer(&buf[0])), (*C.uintptr_t)(unsafe.Pointer(&buf[max])), C.int(max), &n, &more)
	if hr < 0 && !(more != 0 && HRESULT(hr) == CORPROF_E_STACKSNAPSHOT_ABORTED) {
		return nil, false, fmt.Errorf("clrprof: DoStackSnapshot: %w", HRESULT(hr))
	}
	frames := make([]StackFrame, int(n))
	for i := range frames {
		frames[i] = StackFrame{Function: FunctionID(buf[i]), IP: Address(buf[max+i])}
	}
	return frames, more != 0, nil
}

// stackBufs holds the buffers C fills with a stack's function IDs and
// instruction pointers: a sampler takes one trace after another, and a
// fresh 2×max buffer for each was a large part of what a profiler
// sampling allocations allocated in Go (most traces are far shorter
// than max; only the frames found are copied out).
var stackBufs sync.Pool // of *[]uintptr

// stackBuf returns a pooled buffer of n uintptrs (contents undefined).
func stackBuf(n int) *[]uintptr {
	if bp, _ := stackBufs.Get().(*[]uintptr); bp != nil && cap(*bp) >= n {
		*bp = (*bp)[:n]
		return bp
	}
	b := make([]uintptr, n)
	return &b
}

// WalkStack walks a thread's managed stack (see StackTrace for which
// threads), calling fn for every frame, innermost first, while the frame
// info is valid; fn returning false stops the walk (without an error).
// fn runs on the calling goroutine, inside the runtime's stack walk: it
// must not call back into DoStackSnapshot or block.
func (x *Info) WalkStack(thread ThreadID, fn func(StackFrame) bool) error {
	p := x.ptr(2)
	if p == nil {
		return notAvailable("ICorProfilerInfo2::DoStackSnapshot", 2, x.Version())
	}
	if fn == nil {
		return errors.New("clrprof: WalkStack: nil callback")
	}
	w := &stackWalk{fn: fn}
	h := cgo.NewHandle(w)
	defer h.Delete()
	hr := C.clrprof_stack_walk(p, C.uintptr_t(thread), C.uintptr_t(h))
	if w.panicked != nil {
		return fmt.Errorf("clrprof: WalkStack: callback panicked: %v", w.panicked)
	}
	if hr < 0 && !(w.stopped && HRESULT(hr) == CORPROF_E_STACKSNAPSHOT_ABORTED) {
		return fmt.Errorf("clrprof: DoStackSnapshot: %w", HRESULT(hr))
	}
	return nil
}

type stackWalk struct {
	fn       func(StackFrame) bool
	stopped  bool
	panicked any
}

// clrprofGoStackFrame is WalkStack's per-frame callback: 1 to go on.
//
//export clrprofGoStackFrame
func clrprofGoStackFrame(h C.uintptr_t, f, ip, frame C.uintptr_t) (goOn C.int) {
	var w *stackWalk
	defer func() {
		if r := recover(); r != nil {
			if w != nil {
				w.panicked = r
				w.stopped = true
			}
			goOn = 0
		}
	}()
	w = cgo.Handle(h).Value().(*stackWalk)
	if !w.fn(StackFrame{Function: FunctionID(f), IP: Address(ip), Frame: FrameInfo(frame)}) {
		w.stopped = true
		return 0
	}
	return 1
}

// SnapshotAllThreads suspends the runtime (SuspendRuntime), takes the
// stack of every managed thread (EnumThreads, then StackTrace with max
// frames each), and resumes it (ResumeRuntime, also after a failure). While
// a garbage collection has the runtime suspended, SuspendRuntime fails with
// CORPROF_E_SUSPENSION_IN_PROGRESS; SnapshotAllThreads retries for up to
// about 5 ms before it returns that error (wrapped: test it with
// errors.Is), so a sampler that counts its failed ticks by cause sees only
// the suspensions that lasted longer. It
// needs ICorProfilerInfo10 (.NET Core 3.0 and later): on older runtimes it
// returns an error matching ErrNotAvailable, and only the calling thread's
// stack can be taken. Call it from a goroutine of your own, never from a
// callback, and do not hold locks that callbacks take (the runtime waits
// for threads in cooperative-mode callbacks before it is suspended).
//
// A sampler that keeps its cost within a budget uses [Info.Snapshot],
// which also says how long the runtime was suspended and held.
func (x *Info) SnapshotAllThreads(max int) ([]ThreadStack, error) {
	s, err := x.Snapshot(max)
	return s.Stacks, err
}

// A Snapshot is one [Info.Snapshot]: every managed thread's stack, and
// where the call's time went.
type Snapshot struct {
	// Stacks are the managed threads' stacks, as SnapshotAllThreads
	// returns them.
	Stacks []ThreadStack
	// Waited is the time spent first retrying SuspendRuntime while the
	// runtime was suspended for something else (a garbage collection,
	// mostly): the snapshot held no thread then, the application's threads
	// were already stopped.
	Waited time.Duration
	// Suspending is the SuspendRuntime call that succeeded: the runtime
	// brings every managed thread to a safe point, and a thread that stops
	// early waits for the others (on a busy machine, for each to be
	// scheduled); a garbage collection that began just before the call is
	// waited for within it, which the profiler cannot tell apart.
	Suspending time.Duration
	// Held is the time from SuspendRuntime's return to ResumeRuntime's:
	// the stacks were walked in it, with every managed thread stopped.
	Held time.Duration
	// Retries is how many times SuspendRuntime was called again.
	Retries int
}

// Cost is what the snapshot can have cost the application, at most:
// Suspending and Held (not Waited).
func (s Snapshot) Cost() time.Duration { return s.Suspending + s.Held }

// Snapshot is [Info.SnapshotAllThreads] that also says where the call's
// time went: waiting for another suspension to end (Waited), suspending
// (Suspending), walking with the runtime held (Held). A sampler that
// skips ticks to keep its cost within a budget charges [Snapshot.Cost],
// not the whole call, which a garbage collection can stretch to
// milliseconds without costing the application anything. The Snapshot is
// filled in also when err is not nil, as far as the call got.
func (x *Info) Snapshot(max int) (Snapshot, error) {
	return x.SnapshotThreads(max, nil)
}

// SnapshotThreads is [Info.Snapshot] walking only the threads walk
// returns true for: walk is called with the runtime suspended, for each
// managed thread with its OS thread id (0 if the runtime did not say),
// and a thread it refuses is in Stacks with Skipped set and no frames. A
// CPU sampler walks only the threads whose CPU time grew since its last
// tick, which shortens the time the runtime is held by the walks of the
// idle ones. walk must not call into the runtime's stack walks or block;
// nil walks every thread. If walk panics, the snapshot stops there,
// resumes the runtime and returns the panic as its error.
func (x *Info) SnapshotThreads(max int, walk func(thread ThreadID, osThread uint32) bool) (Snapshot, error) {
	var s Snapshot
	if x.ptr(10) == nil {
		return s, notAvailable("ICorProfilerInfo10::SuspendRuntime", 10, x.Version())
	}
	if max <= 0 || max > maxStackDepth {
		return s, fmt.Errorf("clrprof: SnapshotAllThreads: max %d: want 1..%d", max, maxStackDepth)
	}
	// SuspendRuntime leaves the runtime's thread store locked by the
	// calling OS thread until ResumeRuntime: both must run on one thread.
	// A goroutine may move between them; on .NET 11 a ResumeRuntime from
	// another thread leaves the lock held by the first, and the next
	// suspension (the runtime's own, for a GC, included) waits forever.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0 := time.Now()
	began, err := x.suspendRetrying(&s)
	suspended := time.Now()
	s.Waited = began.Sub(t0)
	if err != nil {
		s.Waited = suspended.Sub(t0)
		return s, fmt.Errorf("clrprof: SuspendRuntime: %w", err)
	}
	s.Suspending = suspended.Sub(began)
	s.Stacks, err = x.allStacks(max, walk)
	if rerr := x.ResumeRuntime(); rerr != nil && err == nil {
		err = fmt.Errorf("clrprof: ResumeRuntime: %w", rerr)
	}
	s.Held = time.Since(suspended)
	return s, err
}

// While the runtime is suspended for something else (a garbage collection,
// mostly), SuspendRuntime fails with CORPROF_E_SUSPENSION_IN_PROGRESS;
// SnapshotAllThreads then tries again, up to suspendRetries times,
// suspendRetryDelay apart (a collection suspends the runtime for
// milliseconds at most on the workloads measured here).
const (
	suspendRetries    = 20
	suspendRetryDelay = 250 * time.Microsecond
)

// suspendRetrying suspends the runtime, retrying while another suspension
// is in progress, and returns when the call that succeeded began.
func (x *Info) suspendRetrying(s *Snapshot) (time.Time, error) {
	for try := 0; ; try++ {
		began := time.Now()
		err := x.SuspendRuntime()
		if err == nil || !errors.Is(err, CORPROF_E_SUSPENSION_IN_PROGRESS) || try == suspendRetries {
			return began, err
		}
		s.Retries++
		time.Sleep(suspendRetryDelay)
	}
}

// callWalk calls a SnapshotThreads walk function, its panic an error
// (the runtime is suspended: the snapshot must go on to resume it).
func callWalk(walk func(ThreadID, uint32) bool, t ThreadID, os uint32) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("clrprof: SnapshotThreads: the walk function panicked: %v", r)
		}
	}()
	return walk(t, os), nil
}

func (x *Info) allStacks(max int, walk func(ThreadID, uint32) bool) ([]ThreadStack, error) {
	en, err := x.EnumThreads()
	if err != nil {
		return nil, fmt.Errorf("clrprof: EnumThreads: %w", err)
	}
	defer en.Release()
	var out []ThreadStack
	for {
		ids, err := en.Next()
		if err != nil {
			return out, fmt.Errorf("clrprof: EnumThreads: %w", err)
		}
		if len(ids) == 0 {
			return out, nil
		}
		for _, t := range ids {
			ts := ThreadStack{Thread: t}
			if os, err := x.GetThreadInfo(t); err == nil {
				ts.OSThreadID = os
			}
			if walk != nil {
				ok, err := callWalk(walk, t, ts.OSThreadID)
				if err != nil {
					return out, err
				}
				if !ok {
					ts.Skipped = true
					out = append(out, ts)
					continue
				}
			}
			ts.Frames, ts.Truncated, ts.Err = x.stackTrace(t, max)
			out = append(out, ts)
		}
	}
}
