package profiler

import (
	"errors"
	"fmt"
	"math/bits"
	"runtime/debug"
	"strings"
	"time"
)

// Attaching and detaching
//
// Since .NET Core 3.0 a profiler can be loaded into a running process and
// leave it again. The trigger (another process: command clrattach, or a
// program calling diag.AttachProfiler, which does not link this package)
// sends the runtime the library's path, the CLSID
// and some client data over the diagnostics socket. The runtime loads the
// library and calls InitializeForAttach(info, clientData) instead of
// Initialize; a profiler that does not implement it refuses to attach.
// ProfilerAttachComplete follows once the profiler is live.
//
// An attached profiler may set only some event mask flags (AttachAllowed);
// Info.SetAttachEventMask checks a mask and names the offending flags
// instead of returning a bare CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER.
//
// Info.RequestDetach asks the runtime to unload the profiler: once no
// thread runs profiler code any more, ProfilerDetachSucceeded is called,
// the runtime releases the profiler and no further callback arrives. The
// library itself stays loaded (a Go shared library cannot be unloaded); a
// later attach of the same library reuses it and the registered value,
// calling InitializeForAttach again on a fresh Info. Do not use an Info
// after ProfilerDetachSucceeded: the runtime has freed it.

// Event mask flags an attached profiler may set, by runtime version. The
// runtime checks every SetEventMask of a profiler that was attached against
// its COR_PRF_ALLOWABLE_AFTER_ATTACH and COR_PRF_HIGH_ALLOWABLE_AFTER_ATTACH.
const (
	// attachAllowedLow is the .NET Core 3.x-9 set.
	attachAllowedLow = MonitorThreads | MonitorModuleLoads | MonitorAssemblyLoads | MonitorAppDomainLoads |
		EnableStackSnapshot | MonitorGC | MonitorSuspends | MonitorClassLoads | MonitorExceptions |
		MonitorJITCompilation | EnableReJIT
	// .NET 10 adds DisableInlining and DisableOptimizations.
	attachAllowedLow10 = attachAllowedLow | DisableInlining | DisableOptimizations
	// attachAllowedHigh is the .NET Core 3.x set.
	attachAllowedHigh = HighInMemorySymbolsUpdated | HighDynamicFunctionUnloads | HighBasicGC |
		HighGCMovedObjects | HighLargeObjectAllocated
	// .NET 5 adds HighEventPipe.
	attachAllowedHigh5 = attachAllowedHigh | HighEventPipe
)

// AttachAllowed returns the event mask flags (ICorProfilerInfo5 high flags
// in high) that a profiler attached to a running process may set on a
// runtime whose version is major (3 for .NET Core 3.x, 8 for .NET 8; see
// RuntimeMajor). Every flag outside these makes SetEventMask fail with
// CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER.
func AttachAllowed(major int) (low Monitor, high HighMonitor) {
	low, high = attachAllowedLow, attachAllowedHigh
	if major >= 5 {
		high = attachAllowedHigh5
	}
	if major >= 10 {
		low = attachAllowedLow10
	}
	return low, high
}

// AttachMaskError is the error of CheckAttachMask and SetAttachEventMask:
// flags an attached profiler may not set. It matches (errors.Is)
// CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER.
type AttachMaskError struct {
	Major int         // runtime major version the check was made for
	Low   Monitor     // offending COR_PRF_MONITOR flags
	High  HighMonitor // offending COR_PRF_HIGH_MONITOR flags
}

// Error names the refused flags, the flags allowed after attach on
// that runtime, and the runtime's HRESULT.
func (e *AttachMaskError) Error() string {
	low, high := AttachAllowed(e.Major)
	return fmt.Sprintf("clrprof: a profiler attached to a running process may not set %s on this runtime (.NET %d); allowed after attach: %s: %v",
		flagNames(e.Low, e.High), e.Major, flagNames(low, high), CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER)
}

// flagNames lists the single flags of low and high, by name, joined by "|".
func flagNames(low Monitor, high HighMonitor) string {
	var names []string
	for _, b := range setBits(uint64(low)) {
		names = append(names, Monitor(b).String())
	}
	for _, b := range setBits(uint64(high)) {
		names = append(names, HighMonitor(b).String())
	}
	return strings.Join(names, "|")
}

// Unwrap returns CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER.
func (e *AttachMaskError) Unwrap() error { return CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER }

// setBits returns the single-bit values set in v, lowest first.
func setBits(v uint64) []uint64 {
	var out []uint64
	for v != 0 {
		b := uint64(1) << bits.TrailingZeros64(v)
		out = append(out, b)
		v &^= b
	}
	return out
}

// CheckAttachMask returns nil if an attached profiler may set low and high
// on a runtime of major version major, else an *AttachMaskError naming
// the flags it may not set.
func CheckAttachMask(major int, low Monitor, high HighMonitor) error {
	okLow, okHigh := AttachAllowed(major)
	if badLow, badHigh := low&^okLow, high&^okHigh; badLow != 0 || badHigh != 0 {
		return &AttachMaskError{Major: major, Low: badLow, High: badHigh}
	}
	return nil
}

// RuntimeMajor returns the runtime's major version as AttachAllowed wants
// it: 3 for .NET Core 3.x, 5 and up for .NET 5 and later. (Before .NET 5,
// GetRuntimeInformation reports the CLR version 4.0.30319; attach exists
// from .NET Core 3.0, so such a runtime counts as 3.)
func (x *Info) RuntimeMajor() (int, error) {
	ri, err := x.GetRuntimeInformation()
	if err != nil {
		return 0, err
	}
	return runtimeMajor(ri), nil
}

func runtimeMajor(ri RuntimeInformationResult) int {
	if ri.MajorVersion == 4 {
		return 3
	}
	return int(ri.MajorVersion)
}

// SetAttachEventMask sets the event mask of a profiler that was attached to
// a running process: it checks low and high against what the runtime
// allows after attach (AttachAllowed) and, if a flag is not allowed,
// returns an *AttachMaskError naming it without calling the runtime (which
// would answer a bare CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER, or
// E_FAIL for the flags that only a profiler loaded at startup may set).
// Otherwise it calls SetEventMask, or SetEventMask2 when high is not zero.
// Call it from InitializeForAttach (or later) instead of SetEventMask.
func (x *Info) SetAttachEventMask(low Monitor, high HighMonitor) error {
	major, err := x.RuntimeMajor()
	if err != nil {
		return fmt.Errorf("clrprof: SetAttachEventMask: runtime version: %w", err)
	}
	if err := CheckAttachMask(major, low, high); err != nil {
		return err
	}
	if high == 0 {
		err = x.SetEventMask(low)
	} else {
		err = x.SetEventMask2(low, high)
	}
	if errors.Is(err, CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER) {
		return fmt.Errorf("clrprof: the runtime (.NET %d) refused event mask %v / %v for an attached profiler although the allowed set contains it: %w", major, low, high, err)
	}
	return err
}

// RequestDetach asks the runtime to detach this profiler, from a new
// goroutine, and returns a channel that receives the runtime's answer to
// RequestProfilerDetach (nil: the detach has begun and
// ProfilerDetachSucceeded will follow). The runtime refuses the call on
// its own threads inside most callbacks (CORPROF_E_UNSUPPORTED_CALL_SEQUENCE);
// a goroutine's thread is never one of them, so RequestDetach may be
// called from anywhere, including a callback. expected is how long the
// profiler's callbacks usually take: the runtime waits about that long
// before it checks that no thread is still inside the profiler.
//
// On .NET Core 3.1 a detach the runtime accepted occasionally never
// completes (seen about once in 30 to 60 quick attach/detach cycles in this
// SDK's tests; never on .NET 8): ProfilerDetachSucceeded does not come, no
// further callbacks arrive, and the process runs on and exits normally.
//
// Detaching fails with CORPROF_E_IMMUTABLE_FLAGS_SET or
// CORPROF_E_IRREVERSIBLE_INSTRUMENTATION_PRESENT when the profiler set
// flags or instrumentation that cannot be undone; it stays attached then.
func (x *Info) RequestDetach(expected time.Duration) <-chan error {
	ch := make(chan error, 1)
	ms := expected.Milliseconds()
	if ms < 0 {
		ms = 0
	}
	if ms > 0xFFFFFFFF {
		ms = 0xFFFFFFFF
	}
	go func() {
		var err error
		defer func() {
			if r := recover(); r != nil {
				reportPanic("RequestDetach", r, debug.Stack())
				err = fmt.Errorf("clrprof: RequestDetach: panic: %v", r)
			}
			ch <- err
		}()
		err = x.requestProfilerDetach(uint32(ms))
	}()
	return ch
}
