package profiler

import (
	"fmt"
	"os"
	"sync"
)

// High event flags that runtimes older than the flag accept in
// SetEventMask2 and then ignore, with the oldest runtime that knows them.
// The flags are numbered in the order they were added, so a runtime knows
// either all of a group or none. Info is the ICorProfilerInfoN that came
// with that runtime; Major, when set, is the runtime's major version (as
// RuntimeMajor reports it) where the Info version cannot tell.
var highFlagsSince = []struct {
	flags HighMonitor
	info  int
	major int
	since string
}{
	// COR_PRF_HIGH_BASIC_GC (dotnet/coreclr#22866) and the two after it.
	{HighBasicGC | HighGCMovedObjects | HighLargeObjectAllocated, 10, 0, ".NET Core 3.0"},
	{HighEventPipe, 12, 0, ".NET 5"},
	// dotnet/runtime#55448; .NET 6 still implements ICorProfilerInfo12.
	{HighPinnedObjectAllocated, 12, 6, ".NET 6"},
	// dotnet/runtime#123177, merged to main on 2026-01-20, after .NET 10
	// shipped: .NET 11. .NET 10 has the same ICorProfilerInfo15, so the
	// major version decides. Passed unchecked, 2.0.0 to 10.0.15 accept the
	// bit and go on calling ObjectsAllocatedByClass
	// (TestHighGCSkipAllocatedByClassStatistic).
	{HighGCSkipAllocatedByClassStatistic, 15, 11, ".NET 11"},
}

// EventMaskError is the error of SetEventMask2 for high flags newer than
// the runtime: the runtime would accept them and never deliver what they
// ask for. It matches (errors.Is) ErrNotAvailable and unwraps to
// E_INVALIDARG.
type EventMaskError struct {
	High  HighMonitor // the flags the runtime does not know
	Since string      // the oldest runtime that knows the first of them
}

// Error names the flags and the oldest runtime that knows them.
func (e *EventMaskError) Error() string {
	return fmt.Sprintf("clrprof: SetEventMask2: %s %v (needs %s or later)",
		flagNames(0, e.High), ErrNotAvailable, e.Since)
}

// Is reports whether target is ErrNotAvailable.
func (e *EventMaskError) Is(target error) bool { return target == ErrNotAvailable }

// Unwrap returns E_INVALIDARG.
func (e *EventMaskError) Unwrap() error { return E_INVALIDARG }

// SetEventMask2 sets the events the runtime reports, both halves
// (ICorProfilerInfo5::SetEventMask2). Runtimes accept high flags added
// after them and silently ignore them (.NET Core 2.x takes HighBasicGC and
// never calls the GC callbacks): SetEventMask2 first checks that the
// runtime knows every high flag in eventsHigh and otherwise returns an
// *EventMaskError naming them, which matches ErrNotAvailable, without
// changing the mask. HighBasicGC, HighGCMovedObjects and
// HighLargeObjectAllocated need .NET Core 3.0, HighEventPipe
// .NET 5, HighPinnedObjectAllocated .NET 6,
// HighGCSkipAllocatedByClassStatistic .NET 11.
//
// HighGCSkipAllocatedByClassStatistic, with MonitorGC, makes the garbage
// collector skip the heap walk that counts the objects allocated since the
// last collection by class: ObjectsAllocatedByClass is never called, while
// GarbageCollectionStarted, GarbageCollectionFinished, SurvivingReferences
// and the other MonitorGC callbacks are (that walk can take seconds on a
// large heap: dotnet/runtime#108230).
func (x *Info) SetEventMask2(eventsLow Monitor, eventsHigh HighMonitor) error {
	if x.ptr(5) == nil {
		return notAvailable("ICorProfilerInfo5::SetEventMask2", 5, x.Version())
	}
	// In test builds only, CLRPROF_UNCHECKED_HIGH_FLAGS=1 passes every high
	// flag to the runtime, to show what a runtime does with one it does not
	// know (a diagnostic switch, see diag_off.go).
	if !diagnostics || os.Getenv("CLRPROF_UNCHECKED_HIGH_FLAGS") != "1" {
		if err := x.CheckHighEvents(eventsHigh); err != nil {
			return err
		}
	}
	if err := x.checkNotificationMask("SetEventMask2", eventsLow, eventsHigh); err != nil {
		return err
	}
	if err := x.setEventMask2(eventsLow, eventsHigh); err != nil {
		return err
	}
	x.watchMask(eventsLow)
	return nil
}

// CheckHighEvents reports, without changing the event mask, whether the
// runtime knows every flag of high: nil, or the *EventMaskError (matching
// ErrNotAvailable) that SetEventMask2 would return for them. A profiler
// that can do its work in another way on older runtimes asks first.
func (x *Info) CheckHighEvents(high HighMonitor) error {
	var missing HighMonitor
	since := ""
	for _, g := range highFlagsSince {
		if high&g.flags == 0 || x.knows(g.info, g.major) {
			continue
		}
		missing |= high & g.flags
		if since == "" {
			since = g.since
		}
	}
	if missing != 0 {
		return &EventMaskError{High: missing, Since: since}
	}
	return nil
}

// knows reports whether the runtime implements ICorProfilerInfo<info> and,
// if major is set, is of at least that major version.
func (x *Info) knows(info, major int) bool {
	if x.Version() < info {
		return false
	}
	if major == 0 {
		return true
	}
	maskRuntime.once.Do(func() {
		maskRuntime.major, maskRuntime.err = x.RuntimeMajor()
	})
	// If the version cannot be read, let the runtime decide.
	return maskRuntime.err != nil || maskRuntime.major >= major
}

// One runtime per process: its major version is read once.
var maskRuntime struct {
	once  sync.Once
	major int
	err   error
}
