// Package heapwalk records the runtime's heap walk in C: the
// ObjectReferences callbacks of a garbage collection, answered without
// entering Go for each object, for heap snapshots (package heapsnap).
//
// Make a [Recorder] with [New] in Initialize; Start it from
// GarbageCollectionStarted of the collection to record, Stop it from
// GarbageCollectionFinished, then read [Recorder.Objects].
package heapwalk

// #cgo CFLAGS: -I${SRCDIR}/../internal/include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
// #include "heapwalk.h"
import "C"

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/profiler"
)

// A Recorder records the runtime's heap walk (the
// ObjectReferences callbacks of a collection made while COR_PRF_MONITOR_GC
// is on) in C, without entering Go for each object: the runtime's
// threads are suspended for the whole walk, so what each object costs is
// the application's pause. While a recording is off, ObjectReferences goes
// to the profiler's Go method as before.
//
// Get one with [New] in Initialize; call Start from
// GarbageCollectionStarted of the collection to record, Stop from its
// GarbageCollectionFinished, then Objects (outside the collection is fine:
// the recording stays until the next Start or Reset). One per process.
// While a recording is on, Go's ObjectReferences (every Compose member's
// too) does not get that collection's objects.
type Recorder struct{}

var heapWalkInstalled atomic.Bool

// New takes over the ObjectReferences callback for
// recordings. It needs ICorProfilerInfo4 (GetObjectSize2: .NET Core 2.0
// and later). Call it from Initialize, before the runtime can deliver the
// callback.
func New(info *profiler.Info) (*Recorder, error) {
	p := profimpl.Ptr(info, 4)
	if p == nil {
		return nil, profimpl.NotAvailable("ICorProfilerInfo4", 4, info.Version())
	}
	if !heapWalkInstalled.CompareAndSwap(false, true) {
		return nil, errors.New("clrprof: heapwalk.New: already installed in this process")
	}
	if C.clrprof_heapwalk_install(p) != 0 {
		return nil, errors.New("clrprof: heapwalk.New: cannot take over ObjectReferences")
	}
	return &Recorder{}, nil
}

// Start starts recording, with room for at most maxObjects objects: a walk
// with more is dropped as it comes (Stats.Overflow), so that memory stays
// bounded.
func (r *Recorder) Start(maxObjects int) {
	C.clrprof_heapwalk_start(C.uint64_t(maxObjects))
}

// Stop stops recording: later ObjectReferences go to Go again.
func (r *Recorder) Stop() { C.clrprof_heapwalk_stop() }

// Stats describe the last recording.
type Stats struct {
	Objects  int  // objects recorded
	Overflow bool // more than Start's maxObjects came: nothing kept
	// OutOfMemory: the recording's buffer could not grow; nothing kept.
	OutOfMemory bool
	// SizeErr is the first GetObjectSize2 failure (its object's size is
	// recorded as 0), nil if none.
	SizeErr error
}

// Stats describe the last recording.
func (r *Recorder) Stats() Stats {
	var res C.clrprof_heapwalk_result
	C.clrprof_heapwalk_result_get(&res)
	st := Stats{Objects: int(res.objects), Overflow: res.overflow != 0, OutOfMemory: res.nomem != 0}
	if res.size_obj != 0 {
		st.SizeErr = fmt.Errorf("GetObjectSize2(%#x): %w", uint64(res.size_obj), profimpl.HRESULT(int32(res.size_hr)))
	}
	return st
}

// Objects calls yield for each object of the last recording, in the
// order the runtime reported them, with its references (refs is reused
// between calls: copy what you keep). It stops when yield returns false.
// Call it after Stop, not during a later recording.
func (r *Recorder) Objects(yield func(obj profiler.ObjectID, cls profiler.ClassID, size uint64, refs []profiler.ObjectID) bool) {
	var res C.clrprof_heapwalk_result
	C.clrprof_heapwalk_result_get(&res)
	if res.words == nil || res.nwords == 0 {
		return
	}
	// the buffer is C memory that stays until the next Start or Reset
	w := unsafe.Slice((*uint64)(unsafe.Pointer(res.words)), int(res.nwords))
	for i := 0; i+4 <= len(w); {
		n := int(w[i+3])
		if i+4+n > len(w) {
			return
		}
		var refs []profiler.ObjectID
		if n > 0 {
			refs = unsafe.Slice((*profiler.ObjectID)(unsafe.Pointer(&w[i+4])), n)
		}
		if !yield(profiler.ObjectID(w[i]), profiler.ClassID(w[i+1]), w[i+2], refs) {
			return
		}
		i += 4 + n
	}
}

// Reset frees the last recording.
func (r *Recorder) Reset() { C.clrprof_heapwalk_reset() }

// PassToGo sets whether ObjectReferences goes on to the profiler's Go
// method while no recording is on (the default, true). A profiler that
// keeps COR_PRF_MONITOR_GC on for other reasons, and does not want every
// collection's walk to call Go once per object, turns it off: the
// callback is then answered in C and dropped outside recordings.
func (r *Recorder) PassToGo(on bool) {
	v := 0
	if on {
		v = 1
	}
	C.clrprof_heapwalk_pass_to_go(C.int(v))
}
