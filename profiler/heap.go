package profiler

/*
#include "heap.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime/cgo"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
)

// Heap and object inspection: the idiomatic forms of the ICorProfilerInfo
// calls that take caller-filled arrays or callbacks. The others
// ([Info.GetGenerationBounds], [Info.GetObjectGeneration],
// [Info.GetObjectSize2], [Info.IsFrozenObject], [Info.GetNonGCHeapBounds],
// [Info.EnumerateNonGCObjects], [Info.CreateHandle] ...) are generated.
//
// An ObjectID is the object's address and is valid only until the next
// garbage collection moves or frees the object: inspect objects inside the
// callback that gave their ID (ObjectAllocated, ObjectReferences, the GC
// callbacks), while the runtime is suspended ([Info.SuspendRuntime]), or
// through a handle ([Info.CreateHandle], [Info.GetObjectIDFromHandle]).

// FieldLayout is where one instance field of a class lies in its objects.
type FieldLayout struct {
	Field metadata.Token // the field's FieldDef
	// Offset is from the ObjectID (the object's method table pointer
	// is at offset 0, so the first field of a 64-bit object is at 8).
	Offset uint32
}

// ClassLayout is the layout of a class's instances, from
// [Info.GetClassLayout].
type ClassLayout struct {
	// Fields are the class's own instance fields (not those of its base
	// classes), in the runtime's order.
	Fields []FieldLayout
	// Size is what the runtime reports as the class's size: the base
	// size of an instance on the heap, object header and method table
	// pointer included (40 for a class with a long, a reference and an
	// int on 64-bit).
	Size uint32
}

// GetClassLayout returns where the instance fields of a class lie
// (ICorProfilerInfo2::GetClassLayout). Arrays and strings have no fixed
// layout: the runtime answers E_INVALIDARG (see [Info.GetArrayObjectInfo]
// and [Info.GetStringLayout2]).
func (x *Info) GetClassLayout(class ClassID) (ClassLayout, error) {
	// First the count, then the fields. The runtime fills min(count, cap)
	// entries and always returns the full count.
	r, err := x.getClassLayout(class, nil, 0)
	if err != nil {
		return ClassLayout{}, err
	}
	out := ClassLayout{Size: r.ClassSize}
	if r.FieldOffset == 0 {
		return out, nil
	}
	for range 4 {
		buf := make([]fieldOffset, r.FieldOffset)
		r, err = x.getClassLayout(class, unsafe.Pointer(&buf[0]), uint32(len(buf)))
		if err != nil {
			return ClassLayout{}, err
		}
		if int(r.FieldOffset) <= len(buf) {
			out.Size = r.ClassSize
			out.Fields = make([]FieldLayout, r.FieldOffset)
			for i := range out.Fields {
				out.Fields[i] = FieldLayout{Field: buf[i].Field, Offset: buf[i].Offset}
			}
			return out, nil
		}
	}
	return ClassLayout{}, fmt.Errorf("clrprof: GetClassLayout: the field count keeps changing (%d)", r.FieldOffset)
}

// ArrayInfo describes an array object, from [Info.GetArrayObjectInfo].
type ArrayInfo struct {
	// Lengths and LowerBounds have one entry per dimension (rank).
	Lengths     []uint32
	LowerBounds []int32
	// Data is the address of the first element; elements are laid out
	// in row-major order. It moves with the object.
	Data Address
	// Element is the element type (ELEMENT_TYPE_*, as in
	// [Info.IsArrayClass]); ElementClass the element's class when the
	// elements are objects or value types.
	Element      metadata.ElementType
	ElementClass ClassID
}

// Len is the number of elements: the product of the lengths.
func (a ArrayInfo) Len() uint64 {
	n := uint64(1)
	for _, l := range a.Lengths {
		n *= uint64(l)
	}
	return n
}

// GetArrayObjectInfo describes an array object: its dimensions, their lower
// bounds and where its elements are (ICorProfilerInfo2::GetArrayObjectInfo,
// with the rank from GetClassFromObject and IsArrayClass). An object that is
// not an array gives an error matching E_INVALIDARG.
func (x *Info) GetArrayObjectInfo(obj ObjectID) (ArrayInfo, error) {
	if obj == 0 {
		return ArrayInfo{}, fmt.Errorf("clrprof: GetArrayObjectInfo: null object: %w", E_INVALIDARG)
	}
	class, err := x.GetClassFromObject(obj)
	if err != nil {
		return ArrayInfo{}, err
	}
	ac, isArray, err := x.IsArrayClass(class)
	if err != nil {
		return ArrayInfo{}, err
	}
	if !isArray || ac.Rank == 0 {
		return ArrayInfo{}, fmt.Errorf("clrprof: GetArrayObjectInfo: object %#x is not an array: %w", uint64(obj), E_INVALIDARG)
	}
	if ac.Rank > 64 { // the runtime's limit is 32
		return ArrayInfo{}, fmt.Errorf("clrprof: GetArrayObjectInfo: rank %d: %w", ac.Rank, E_UNEXPECTED)
	}
	out := ArrayInfo{
		Lengths:      make([]uint32, ac.Rank),
		LowerBounds:  make([]int32, ac.Rank),
		Element:      ac.BaseElemType,
		ElementClass: ac.BaseClassID,
	}
	out.Data, err = x.getArrayObjectInfo(obj, ac.Rank, unsafe.Pointer(&out.Lengths[0]), unsafe.Pointer(&out.LowerBounds[0]))
	if err != nil {
		return ArrayInfo{}, err
	}
	return out, nil
}

// EnumerateObjectReferences returns the objects that obj references (its
// fields and elements that hold references, null ones as 0), as the
// garbage collector sees them (ICorProfilerInfo10::EnumerateObjectReferences,
// .NET Core 3.0 and later; older runtimes give an error matching
// ErrNotAvailable). The references are collected in C, without a Go
// callback per reference.
func (x *Info) EnumerateObjectReferences(obj ObjectID) ([]ObjectID, error) {
	p := x.ptr(10)
	if p == nil {
		return nil, notAvailable("ICorProfilerInfo10::EnumerateObjectReferences", 10, x.Version())
	}
	if obj == 0 {
		return nil, fmt.Errorf("clrprof: EnumerateObjectReferences: null object: %w", E_INVALIDARG)
	}
	buf := make([]uintptr, 16)
	for range 4 {
		var n C.int
		hr := C.clrprof_object_refs(p, C.uintptr_t(obj), (*C.uintptr_t)(unsafe.Pointer(&buf[0])), C.int(len(buf)), &n)
		if hr < 0 {
			return nil, fmt.Errorf("clrprof: EnumerateObjectReferences: %w", HRESULT(hr))
		}
		if int(n) <= len(buf) {
			out := make([]ObjectID, int(n))
			for i := range out {
				out[i] = ObjectID(buf[i])
			}
			return out, nil
		}
		buf = make([]uintptr, int(n))
	}
	return nil, errors.New("clrprof: EnumerateObjectReferences: the reference count keeps changing")
}

// EnumerateGCHeapObjects calls fn for every object on the garbage-collected
// heap (ICorProfilerInfo15::EnumerateGCHeapObjects, .NET 9 and later, from
// dotnet/runtime#103735; older runtimes give an error matching
// ErrNotAvailable without calling the runtime); fn returning false stops
// the walk, without an error. fn runs on the calling goroutine, once per
// object, while the runtime is suspended: it may ask about the object
// ([Info.GetClassFromObject], [Info.GetObjectSize2] ...), and must be short,
// must not allocate managed objects, wait for managed threads or take locks
// that callbacks take. An ObjectID is valid only until the runtime
// resumes. A panic in fn stops the walk and is returned as an error.
//
// The heap can only be walked with the runtime suspended. There are two
// ways, measured on 10.0.15 and 11.0.0:
//
//   - From a goroutine of your own (a thread the runtime does not know,
//     outside every callback): call [Info.SuspendRuntime] (retry while it
//     fails with CORPROF_E_SUSPENSION_IN_PROGRESS: a collection holds the
//     runtime), then EnumerateGCHeapObjects, then [Info.ResumeRuntime];
//     corprof.idl describes the three calls "from the same thread", so lock
//     the goroutine to its thread (runtime.LockOSThread) for the sequence.
//     Without SuspendRuntime the runtime
//     should suspend itself for the walk, but from such a thread it fails
//     every time with CORPROF_E_SUSPENSION_IN_PROGRESS on 10.0.15 and
//     11.0.0 (dotnet/runtime#132643, fixed after 11.0.0).
//   - Inside the Shutdown callback (a managed thread): alone, the runtime
//     suspending itself for the walk, or between SuspendRuntime and
//     ResumeRuntime; both work.
//
// Other callbacks are not measured. In particular not the GC callbacks
// (GarbageCollectionStarted/Finished and the reference callbacks run while
// a collection holds the runtime suspended; the runtime's own test,
// src/tests/profiler/native/gcheapenumerationprofiler, walks from another
// thread, which waits for the collection to end).
func (x *Info) EnumerateGCHeapObjects(fn func(ObjectID) bool) error {
	p := x.ptr(15)
	if p == nil {
		return notAvailable("ICorProfilerInfo15::EnumerateGCHeapObjects", 15, x.Version())
	}
	if fn == nil {
		return errors.New("clrprof: EnumerateGCHeapObjects: nil callback")
	}
	w := &heapWalk{fn: fn}
	h := cgo.NewHandle(w)
	defer h.Delete()
	hr := C.clrprof_heap_walk(p, C.uintptr_t(h))
	if w.panicked != nil {
		return fmt.Errorf("clrprof: EnumerateGCHeapObjects: callback panicked: %v", w.panicked)
	}
	if hr < 0 {
		return fmt.Errorf("clrprof: EnumerateGCHeapObjects: %w", HRESULT(hr))
	}
	return nil
}

type heapWalk struct {
	fn       func(ObjectID) bool
	panicked any
}

// clrprofGoHeapObject is EnumerateGCHeapObjects's per-object callback: 1
// to go on.
//
//export clrprofGoHeapObject
func clrprofGoHeapObject(h C.uintptr_t, obj C.uintptr_t) (goOn C.int) {
	var w *heapWalk
	defer func() {
		if r := recover(); r != nil {
			if w != nil {
				w.panicked = r
			}
			goOn = 0
		}
	}()
	w = cgo.Handle(h).Value().(*heapWalk)
	if w.fn(ObjectID(obj)) {
		return 1
	}
	return 0
}
