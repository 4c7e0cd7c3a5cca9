package elt

/*
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/internal/ring"
	"github.com/clrprof/clrprof/profiler"
)

// CallCountOptions configures [NewCallCounter].
type CallCountOptions struct {
	// Filter, when set, is asked once per function, when the runtime
	// compiles it, whether to count it (as in Options). nil counts every
	// function the runtime compiles with hooks.
	Filter func(profiler.FunctionID) bool
	// StackFrames is the depth of each thread's shadow stack (24 bytes a
	// frame); default 1<<14. Calls nested deeper are still counted, but
	// their inclusive time is not measured (CallCountStats.Overflow).
	StackFrames int
}

// FunctionCalls is one function's counts in a [CallCounter] snapshot.
type FunctionCalls struct {
	// Function is the function counted.
	Function profiler.FunctionID
	// Calls counts the function's entries (every call, including those an
	// exception ended and those still running).
	Calls uint64
	// Inclusive is the time spent in the function's calls that have
	// ended, callees included; a recursive call is counted once, in its
	// outermost call.
	Inclusive time.Duration
}

// ShadowStack is a thread's shadow stack in a [CallCounter.Stacks] copy.
type ShadowStack struct {
	// Thread is the thread whose calls these are.
	Thread profiler.ThreadRef
	// Functions are the calls open on the thread, outermost first.
	Functions []profiler.FunctionID
}

// CallCountStats says what a [CallCounter] could not count exactly. All
// zero but Threads, Functions and MemoryBytes means every hooked call was
// counted and timed.
type CallCountStats struct {
	Threads   int // threads that called a counted function
	Functions int // functions numbered by the function ID mapper
	// Refused counts functions left without hooks because the table of
	// functions (4,194,303) was full or memory was short: their calls are
	// not counted.
	Refused uint64
	// Lost counts calls not counted because memory for a thread's counters
	// could not be allocated.
	Lost uint64
	// Overflow counts calls nested deeper than StackFrames: counted, not
	// timed.
	Overflow uint64
	// Unmatched counts leaves and tail calls that matched no open call of
	// the function on the thread (their calls were counted, at entry).
	Unmatched uint64
	// Unwound counts calls that ended without their leave (an exception
	// unwound them), closed at the next leave of a caller; Unwinds counts
	// those closed by the runtime's exception unwind callback.
	Unwound, Unwinds uint64
	// Unmapped counts hook calls with an ID the mapper never handed out.
	Unmapped uint64
	// Suspended counts frames closed because they were no longer on their
	// thread's stack when a later hook ran there (the caller's stack
	// pointer says so): a runtime-async method that suspended, whose Leave
	// comes only when it completes. Such a frame's time ends at that later
	// hook.
	Suspended uint64
	// Resumed counts enters that were resumptions of a runtime-async
	// method (directly under the runtime's continuation dispatcher): timed,
	// not counted as calls.
	Resumed uint64
	// MemoryBytes is the C memory allocated for the counters, the function
	// table and the shadow stacks.
	MemoryBytes uint64
}

// CallCounter counts calls and measures inclusive time per function in C;
// see [NewCallCounter].
type CallCounter struct {
	clock  *ring.Clock
	closed sync.Once
}

// NewCallCounter counts every call of every hooked function in C,
// without an event per call: the enter/leave/tailcall hooks (assembly
// stubs, SetEnterLeaveFunctionHooks3) find the function's counter through
// the number the SDK's function ID mapper gave it when it was compiled,
// count the call, and keep a shadow stack per thread from which the
// leave hook adds the call's inclusive time. Nothing is buffered, so
// nothing is dropped, however fast the application calls; Go reads the
// counts when it wants them ([CallCounter.Snapshot]). Exceptions are
// followed through the runtime's unwind callbacks (MonitorExceptions is
// added to the event mask; a profiler that implements those callbacks
// still receives them).
//
// Runtime async (docs/runtime-async.md): a runtime-async method's enter
// hook runs on its call and on every resumption, and no leave runs when
// it suspends. The hooks also receive the caller's stack pointer, so a
// frame that is no longer on its thread's stack is closed at the next hook
// there (CallCountStats.Suspended), and an enter directly under the
// runtime's continuation dispatcher (hooked for that purpose even when
// Filter refuses it; it is then neither counted nor reported) is a
// resumption (CallCountStats.Resumed): timed, not counted as a call. A
// runtime-async call's Inclusive time is therefore the time its frames
// were on a thread, without the time it was suspended.
//
// Call it from Initialize. It adds MonitorEnterLeave and MonitorExceptions
// to the event mask; only one of NewRecorder, EnableWithInfo and
// NewCallCounter can be used in a process. Methods the runtime did not
// JIT (ReadyToRun images), calls inlined by the JIT, and recursive calls
// in tail position that the JIT compiled as a jump (unless the runtime
// runs with DOTNET_TailCallLoopOpt=0) have no hooks, so they are not
// counted; implement JITInlining to learn which functions were inlined,
// or add DisableInlining to the event mask. It needs
// ICorProfilerInfo3 and a runtime whose JIT'd code calls the hooks (not
// .NET Core 2.0: ErrNotAvailable, also logged).
func NewCallCounter(info *profiler.Info, opts CallCountOptions) (*CallCounter, error) {
	if opts.StackFrames < 0 || opts.StackFrames > 1<<24 {
		return nil, fmt.Errorf("clrprof: elt.NewCallCounter: StackFrames %d: want 0 (default) .. %d", opts.StackFrames, 1<<24)
	}
	if opts.StackFrames == 0 {
		opts.StackFrames = 1 << 14
	}
	if profimpl.Ptr(info, 3) == nil {
		return nil, profimpl.NotAvailable("ICorProfilerInfo3::SetEnterLeaveFunctionHooks3", 3, info.Version())
	}
	if err := eltCalled(info, "elt.NewCallCounter"); err != nil {
		return nil, err
	}
	eltState.mu.Lock()
	defer eltState.mu.Unlock()
	if eltState.enabled {
		return nil, errors.New("clrprof: elt.NewCallCounter: enter/leave hooks are already installed (the runtime takes one set per process)")
	}
	if rc := C.clrprof_cnt_setup(C.uint64_t(opts.StackFrames), profimpl.Ptr(info, 1)); rc != 0 {
		return nil, fmt.Errorf("clrprof: elt.NewCallCounter: pthread_key_create: errno %d", int(rc))
	}
	var roles *profiler.Info
	if major, err := info.RuntimeMajor(); err == nil && major >= 10 {
		roles = info // runtime async: find the dispatchers (eltasync.go)
	}
	setFilter(opts.Filter, newELTGuard(info, false), roles)
	if err := profimpl.SetFunctionIDMapper2(info, C.clrprof_cnt_mapper2(), nil); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewCallCounter: SetFunctionIDMapper2: %w", err)
	}
	if err := profimpl.SetEnterLeaveFunctionHooks3(info, C.clrprof_cnt_hookaddr(0), C.clrprof_cnt_hookaddr(1), C.clrprof_cnt_hookaddr(2)); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewCallCounter: SetEnterLeaveFunctionHooks3: %w", err)
	}
	if C.clrprof_elt_record_unwinds() != 0 {
		return nil, errors.New("clrprof: elt.NewCallCounter: cannot take over the exception unwind callbacks")
	}
	if err := addEventMask(info, profiler.MonitorEnterLeave|profiler.MonitorExceptions); err != nil {
		return nil, fmt.Errorf("clrprof: elt.NewCallCounter: %w", err)
	}
	eltState.enabled = true
	C.clrprof_elt_on = 1
	return &CallCounter{clock: ring.NewClock()}, nil
}

// Snapshot returns the counts so far of every function called at least
// once, most called first. Threads keep counting while it reads: each
// count is one the thread had reached, and the snapshot taken after
// [CallCounter.Close] is final.
func (c *CallCounter) Snapshot() []FunctionCalls {
	n := uint64(C.clrprof_cnt_functions())
	if n <= 1 {
		return nil
	}
	fids := make([]uint64, n)
	calls := make([]uint64, n)
	ticks := make([]uint64, n)
	C.clrprof_cnt_snapshot(C.uint64_t(n), (*C.uint64_t)(unsafe.Pointer(&fids[0])), (*C.uint64_t)(unsafe.Pointer(&calls[0])), (*C.uint64_t)(unsafe.Pointer(&ticks[0])))
	_, rate := c.clock.Params()
	var out []FunctionCalls
	for i := uint64(1); i < n; i++ {
		if calls[i] == 0 || fids[i] == 0 {
			continue
		}
		out = append(out, FunctionCalls{Function: profiler.FunctionID(fids[i]), Calls: calls[i], Inclusive: time.Duration(float64(ticks[i]) * rate)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Calls != out[j].Calls {
			return out[i].Calls > out[j].Calls
		}
		return out[i].Function < out[j].Function
	})
	return out
}

// Stacks copies the shadow stacks of the threads that are running (at
// most maxFrames frames each, outermost first). The threads keep running
// while it reads: a stack is what the thread had at about that moment.
func (c *CallCounter) Stacks(maxFrames int) []ShadowStack {
	if maxFrames <= 0 {
		return nil
	}
	threads := int(c.Stats().Threads)
	if threads == 0 {
		return nil
	}
	tids := make([]uint64, 3*threads)
	fids := make([]uint64, threads*maxFrames)
	n := int(C.clrprof_cnt_stacks(C.uint64_t(threads), C.uint64_t(maxFrames), (*C.uint64_t)(unsafe.Pointer(&tids[0])), (*C.uint64_t)(unsafe.Pointer(&fids[0]))))
	out := make([]ShadowStack, 0, n)
	for i := 0; i < n; i++ {
		d := int(tids[3*i+2])
		fs := make([]profiler.FunctionID, d)
		for j := range fs {
			fs[j] = profiler.FunctionID(fids[i*maxFrames+j])
		}
		out = append(out, ShadowStack{Thread: profiler.ThreadRef{OSThreadID: uint32(tids[3*i]), ManagedThreadID: profiler.ThreadID(tids[3*i+1])}, Functions: fs})
	}
	return out
}

// Stats returns what could not be counted exactly, and the sizes.
func (c *CallCounter) Stats() CallCountStats {
	var s [12]uint64
	C.clrprof_cnt_stats((*C.uint64_t)(unsafe.Pointer(&s[0])))
	return CallCountStats{
		Threads: int(s[0]), Functions: int(s[1]), Refused: s[2], Lost: s[3], Overflow: s[4],
		Unmatched: s[5], Unwound: s[6], Unmapped: s[7], MemoryBytes: s[8], Unwinds: s[9],
		Suspended: s[10], Resumed: s[11],
	}
}

// Close stops counting (hooks that still fire count nothing); snapshots
// taken afterwards are final. Call it from Shutdown. It logs a warning if
// any call could not be counted (Refused, Lost, Unmapped). It is safe to
// call more than once.
func (c *CallCounter) Close() error {
	c.closed.Do(func() {
		C.clrprof_elt_on = 0
		// A hook past the gate finishes within nanoseconds.
		time.Sleep(time.Millisecond)
		if s := c.Stats(); s.Refused > 0 || s.Lost > 0 || s.Unmapped > 0 {
			profimpl.Logger().Warn("clrprof: call counts: not every call was counted", "refusedFunctions", s.Refused, "lostCalls", s.Lost, "unmappedCalls", s.Unmapped)
		}
	})
	return nil
}
