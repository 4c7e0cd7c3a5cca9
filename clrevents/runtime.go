package clrevents

import (
	"encoding/binary"
	"fmt"
)

// RuntimeProvider is the name of the runtime's own event provider.
const RuntimeProvider = "Microsoft-Windows-DotNETRuntime"

// Keywords of the runtime provider (the keywords of ClrEtwAll.man) that
// enable the events this package decodes.
const (
	KeywordGC         uint64 = 0x1     // GC events; GCAllocationTick at Verbose level
	KeywordContention uint64 = 0x4000  // ContentionStart, ContentionStop
	KeywordException  uint64 = 0x8000  // ExceptionThrown
	KeywordThreading  uint64 = 0x10000 // thread pool worker threads
	// KeywordAllocationSampling enables AllocationSampled (.NET 10+) at
	// Informational level or above: in process (an EventPipe session of
	// the profiler) the keyword and level 4 are all it needs on 10.0.15
	// and 11.0.0; at level 3 no event comes. While it is enabled the
	// runtime sends no GCAllocationTick (by design, dotnet/runtime
	// #100356; seen on both).
	KeywordAllocationSampling uint64 = 0x80000000000
)

// Levels of EventPipe events.
const (
	LevelCritical      uint32 = 1
	LevelError         uint32 = 2
	LevelWarning       uint32 = 3
	LevelInformational uint32 = 4
	LevelVerbose       uint32 = 5
)

// Event IDs of the runtime provider's events decoded here.
const (
	IDGCStart                uint32 = 1
	IDGCEnd                  uint32 = 2
	IDGCRestartEEEnd         uint32 = 3
	IDGCHeapStats            uint32 = 4
	IDGCRestartEEBegin       uint32 = 7
	IDGCSuspendEEEnd         uint32 = 8
	IDGCSuspendEEBegin       uint32 = 9
	IDGCAllocationTick       uint32 = 10
	IDGCTriggered            uint32 = 35
	IDThreadPoolWorkerStart  uint32 = 50
	IDThreadPoolWorkerStop   uint32 = 51
	IDThreadPoolAdjustSample uint32 = 54
	IDThreadPoolAdjustment   uint32 = 55
	IDThreadPoolWorkerWait   uint32 = 57
	IDExceptionThrown        uint32 = 80
	IDContentionStart        uint32 = 81
	IDContentionStop         uint32 = 91
	IDAllocationSampled      uint32 = 303 // .NET 10+
)

// GCStart is GCStart (versions 0 to 2): a collection begins.
type GCStart struct {
	// Version is the version of the event the payload was written at.
	Version              uint32
	Count                uint32 // the collection's number
	Depth                uint32 // the generation collected (v1+)
	Reason               uint32 // the GC reason (GCReasonMap)
	Type                 uint32 // 0 blocking, 1 background, 2 blocking during background (v1+)
	ClrInstanceID        uint16 // v1+
	ClientSequenceNumber uint64 // v2
}

// GCEnd is GCEnd (versions 0 and 1): a collection ends.
type GCEnd struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// Count is the collection's number (GCStart's Count of the same one).
	Count uint32
	// Depth is the generation collected (a UInt16 in version 0).
	Depth uint32
	// ClrInstanceID identifies the runtime in the process (v1).
	ClrInstanceID uint16
}

// GCHeapStats is GCHeapStats (versions 0 to 2): the heap after a collection.
type GCHeapStats struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// GenerationSize0 .. GenerationSize4 are the bytes in generations 0,
	// 1, 2, the large object heap (3) and the pinned object heap (4, v2)
	// after the collection; TotalPromotedSize0 .. TotalPromotedSize4 the
	// bytes that survived it in each.
	GenerationSize0, TotalPromotedSize0 uint64
	// GenerationSize1 and TotalPromotedSize1: generation 1 (see above).
	GenerationSize1, TotalPromotedSize1 uint64
	// GenerationSize2 and TotalPromotedSize2: generation 2 (see above).
	GenerationSize2, TotalPromotedSize2 uint64
	// GenerationSize3 and TotalPromotedSize3: the large object heap.
	GenerationSize3, TotalPromotedSize3 uint64
	// FinalizationPromotedSize is the bytes of objects kept alive only
	// to run their finalizers.
	FinalizationPromotedSize uint64
	// FinalizationPromotedCount is the number of those objects.
	FinalizationPromotedCount uint64
	// PinnedObjectCount is the number of pinned objects the collection
	// saw; SinkBlockCount the number of sync blocks in use.
	PinnedObjectCount, SinkBlockCount uint32
	// GCHandleCount is the number of GC handles in use.
	GCHandleCount uint32
	// ClrInstanceID identifies the runtime in the process (v1+).
	ClrInstanceID uint16
	// GenerationSize4 and TotalPromotedSize4: the pinned object heap (v2).
	GenerationSize4, TotalPromotedSize4 uint64
}

// GCSuspendEEBegin is GCSuspendEEBegin (versions 0 and 1): the runtime
// starts suspending managed threads.
type GCSuspendEEBegin struct {
	// Version is the version of the event the payload was written at.
	Version       uint32
	Reason        uint32 // a UInt16 in version 0 (GCSuspendEEReasonMap)
	Count         uint32 // v1
	ClrInstanceID uint16 // v1
}

// GCPhase is one of the payload-less phase events of a collection:
// GCSuspendEEEnd, GCRestartEEBegin, GCRestartEEEnd (versions 0 and 1).
type GCPhase struct {
	ID uint32 // IDGCSuspendEEEnd, IDGCRestartEEBegin or IDGCRestartEEEnd
	// Version is the version of the event the payload was written at.
	Version       uint32
	ClrInstanceID uint16 // v1
}

// GCTriggered is GCTriggered (version 0): why a collection was triggered.
type GCTriggered struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// Reason is why the collection was triggered (the GC reason codes of
	// GCStart.Reason).
	Reason uint32
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
}

// GCAllocationTick is GCAllocationTick (versions 0 to 4): about every
// 100 KB allocated, the allocation that crossed the mark.
type GCAllocationTick struct {
	// Version is the version of the event the payload was written at.
	Version            uint32
	AllocationAmount   uint32 // bytes since the last tick, truncated to 32 bits
	AllocationKind     uint32 // 0 small, 1 large, 2 pinned
	ClrInstanceID      uint16 // v1+
	AllocationAmount64 uint64 // v2+
	TypeID             uint64 // the ClassID (v2+)
	TypeName           string // v2+
	HeapIndex          uint32 // v2+
	Address            uint64 // the object's address (v3+)
	ObjectSize         uint64 // v4
}

// AllocationSampled is AllocationSampled (version 0, .NET 10 and later;
// KeywordAllocationSampling): the runtime's randomized allocation
// sampling. Each managed thread draws, for every byte it allocates, an
// independent trial that succeeds with probability 1/AllocationSamplingMean;
// the first success in an object raises this event for it (once per
// object, on the allocating thread, before the object can move), so an
// object of ObjectSize bytes is sampled with probability
// [AllocationSampledProbability](ObjectSize). Seen on 10.0.15 and 11.0.0
// with exactly these fields.
type AllocationSampled struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// AllocationKind is the heap: 0 small, 1 large, 2 pinned object heap.
	AllocationKind uint32
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
	// TypeID is the object's type (its MethodTable: the ClassID).
	TypeID uint64
	// TypeName is the type's name ("System.Byte[]").
	TypeName string
	// Address is the object's address (its ObjectID until the next
	// collection).
	Address uint64
	// ObjectSize is the object's size in bytes, header and padding
	// included (what GC.GetAllocatedBytesForCurrentThread counts).
	ObjectSize uint64
	// SampledByteOffset is the offset in the object of the byte whose
	// trial succeeded (0 .. ObjectSize-1 from a sound runtime).
	SampledByteOffset uint64
}

// ExceptionThrown is ExceptionThrown (versions 0 and 1; version 0 has no
// payload).
type ExceptionThrown struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// ExceptionType is the exception's type name ("System.InvalidOperationException").
	ExceptionType string
	// ExceptionMessage is the exception's message.
	ExceptionMessage string
	// ExceptionEIP is the instruction pointer where it was thrown.
	ExceptionEIP uint64
	// ExceptionHRESULT is the exception's HResult.
	ExceptionHRESULT uint32
	// ExceptionFlags: 0x1 it has an inner exception, 0x2 nested, 0x4
	// rethrown, 0x8 corrupted state, 0x10 a CLS-compliant exception.
	ExceptionFlags uint16
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
}

// ContentionStart is ContentionStart (versions 0 to 2): a thread starts
// waiting for a lock.
type ContentionStart struct {
	// Version is the version of the event the payload was written at.
	Version            uint32
	ContentionFlags    uint8  // 0 managed, 1 native
	ClrInstanceID      uint16 // v1+
	LockID             uint64 // v2
	AssociatedObjectID uint64 // v2
	LockOwnerThreadID  uint64 // v2
}

// ContentionStop is ContentionStop (versions 0 and 1): the wait ends.
type ContentionStop struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// ContentionFlags: 0 a managed lock, 1 a native one.
	ContentionFlags uint8
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
	DurationNs    float64 // v1
}

// ThreadPoolWorkerThread is ThreadPoolWorkerThreadStart, Stop and Wait.
type ThreadPoolWorkerThread struct {
	ID uint32 // IDThreadPoolWorkerStart, Stop or Wait
	// Version is the version of the event the payload was written at.
	Version uint32
	// ActiveWorkerThreadCount is the number of worker threads running.
	ActiveWorkerThreadCount uint32
	// RetiredWorkerThreadCount is the number of worker threads retired
	// (kept, not running work).
	RetiredWorkerThreadCount uint32
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
}

// ThreadPoolAdjustmentSample is the runtime's
// ThreadPoolWorkerThreadAdjustmentSample event: one throughput sample
// the thread pool's hill-climbing takes.
type ThreadPoolAdjustmentSample struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// Throughput is the work items completed per second in the sample.
	Throughput float64
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
}

// ThreadPoolAdjustment is the runtime's
// ThreadPoolWorkerThreadAdjustmentAdjustment event: the thread pool
// changes its number of worker threads.
type ThreadPoolAdjustment struct {
	// Version is the version of the event the payload was written at.
	Version uint32
	// AverageThroughput is the work items per second that led to it.
	AverageThroughput float64
	// NewWorkerThreadCount is the number of worker threads wanted now.
	NewWorkerThreadCount uint32
	// Reason: 0 warm-up, 1 initializing, 2 random move, 3 climbing
	// move, 4 change point, 5 stabilizing, 6 starvation, 7 thread timed
	// out.
	Reason uint32
	// ClrInstanceID identifies the runtime in the process.
	ClrInstanceID uint16
}

// Raw is an event DecodeRuntime does not know (or a version newer than it
// knows with a payload it cannot read): its identity and bytes.
type Raw struct {
	// ID and Version are the event's ID and version.
	ID, Version uint32
	// Data is a copy of the payload.
	Data []byte
}

// DecodeRuntime decodes the payload of the runtime provider's event id at
// version into one of the structs of this package (a pointer: *GCStart,
// *GCEnd, *GCHeapStats, *GCSuspendEEBegin, *GCPhase, *GCTriggered,
// *GCAllocationTick, *ExceptionThrown, *ContentionStart, *ContentionStop,
// *ThreadPoolWorkerThread, *ThreadPoolAdjustmentSample,
// *ThreadPoolAdjustment, *AllocationSampled), or a *Raw for an event it does not decode. A
// payload shorter than its version's fields is an error (wrapping
// ErrShort). A version newer than the ones known is read as the newest
// known one (fields are only ever appended). Data is not retained, except
// in a *Raw (a copy).
func DecodeRuntime(id, version uint32, data []byte) (any, error) {
	r := &reader{b: data}
	var ev any
	v := version
	switch id {
	case IDGCStart:
		e := &GCStart{Version: v}
		e.Count = r.u32("Count")
		if v >= 1 {
			e.Depth = r.u32("Depth")
		}
		e.Reason = r.u32("Reason")
		if v >= 1 {
			e.Type = r.u32("Type")
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		if v >= 2 {
			e.ClientSequenceNumber = r.u64("ClientSequenceNumber")
		}
		ev = e
	case IDGCEnd:
		e := &GCEnd{Version: v}
		e.Count = r.u32("Count")
		if v == 0 {
			e.Depth = uint32(r.u16("Depth"))
		} else {
			e.Depth = r.u32("Depth")
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		ev = e
	case IDGCHeapStats:
		e := &GCHeapStats{Version: v}
		e.GenerationSize0, e.TotalPromotedSize0 = r.u64("GenerationSize0"), r.u64("TotalPromotedSize0")
		e.GenerationSize1, e.TotalPromotedSize1 = r.u64("GenerationSize1"), r.u64("TotalPromotedSize1")
		e.GenerationSize2, e.TotalPromotedSize2 = r.u64("GenerationSize2"), r.u64("TotalPromotedSize2")
		e.GenerationSize3, e.TotalPromotedSize3 = r.u64("GenerationSize3"), r.u64("TotalPromotedSize3")
		e.FinalizationPromotedSize = r.u64("FinalizationPromotedSize")
		e.FinalizationPromotedCount = r.u64("FinalizationPromotedCount")
		e.PinnedObjectCount = r.u32("PinnedObjectCount")
		e.SinkBlockCount = r.u32("SinkBlockCount")
		e.GCHandleCount = r.u32("GCHandleCount")
		if v >= 1 {
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		if v >= 2 {
			e.GenerationSize4, e.TotalPromotedSize4 = r.u64("GenerationSize4"), r.u64("TotalPromotedSize4")
		}
		ev = e
	case IDGCSuspendEEBegin:
		e := &GCSuspendEEBegin{Version: v}
		if v == 0 {
			e.Reason = uint32(r.u16("Reason"))
		} else {
			e.Reason = r.u32("Reason")
			e.Count = r.u32("Count")
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		ev = e
	case IDGCSuspendEEEnd, IDGCRestartEEBegin, IDGCRestartEEEnd:
		e := &GCPhase{ID: id, Version: v}
		if v >= 1 {
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		ev = e
	case IDGCTriggered:
		ev = &GCTriggered{Version: v, Reason: r.u32("Reason"), ClrInstanceID: r.u16("ClrInstanceID")}
	case IDGCAllocationTick:
		e := &GCAllocationTick{Version: v}
		e.AllocationAmount = r.u32("AllocationAmount")
		e.AllocationKind = r.u32("AllocationKind")
		if v >= 1 {
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		if v >= 2 {
			e.AllocationAmount64 = r.u64("AllocationAmount64")
			e.TypeID = r.u64("TypeID")
			e.TypeName = r.str("TypeName")
			e.HeapIndex = r.u32("HeapIndex")
		}
		if v >= 3 {
			e.Address = r.u64("Address")
		}
		if v >= 4 {
			e.ObjectSize = r.u64("ObjectSize")
		}
		ev = e
	case IDExceptionThrown:
		e := &ExceptionThrown{Version: v}
		if v >= 1 {
			e.ExceptionType = r.str("ExceptionType")
			e.ExceptionMessage = r.str("ExceptionMessage")
			e.ExceptionEIP = r.u64("ExceptionEIP")
			e.ExceptionHRESULT = r.u32("ExceptionHRESULT")
			e.ExceptionFlags = r.u16("ExceptionFlags")
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		ev = e
	case IDContentionStart:
		e := &ContentionStart{Version: v}
		e.ContentionFlags = r.u8("ContentionFlags")
		if v >= 1 {
			e.ClrInstanceID = r.u16("ClrInstanceID")
		}
		if v >= 2 {
			e.LockID = r.u64("LockID")
			e.AssociatedObjectID = r.u64("AssociatedObjectID")
			e.LockOwnerThreadID = r.u64("LockOwnerThreadID")
		}
		ev = e
	case IDContentionStop:
		e := &ContentionStop{Version: v}
		e.ContentionFlags = r.u8("ContentionFlags")
		e.ClrInstanceID = r.u16("ClrInstanceID")
		if v >= 1 {
			e.DurationNs = r.f64("DurationNs")
		}
		ev = e
	case IDThreadPoolWorkerStart, IDThreadPoolWorkerStop, IDThreadPoolWorkerWait:
		e := &ThreadPoolWorkerThread{ID: id, Version: v}
		e.ActiveWorkerThreadCount = r.u32("ActiveWorkerThreadCount")
		e.RetiredWorkerThreadCount = r.u32("RetiredWorkerThreadCount")
		e.ClrInstanceID = r.u16("ClrInstanceID")
		ev = e
	case IDThreadPoolAdjustSample:
		ev = &ThreadPoolAdjustmentSample{Version: v, Throughput: r.f64("Throughput"), ClrInstanceID: r.u16("ClrInstanceID")}
	case IDThreadPoolAdjustment:
		e := &ThreadPoolAdjustment{Version: v}
		e.AverageThroughput = r.f64("AverageThroughput")
		e.NewWorkerThreadCount = r.u32("NewWorkerThreadCount")
		e.Reason = r.u32("Reason")
		e.ClrInstanceID = r.u16("ClrInstanceID")
		ev = e
	case IDAllocationSampled:
		e := &AllocationSampled{Version: v}
		e.AllocationKind = r.u32("AllocationKind")
		e.ClrInstanceID = r.u16("ClrInstanceID")
		e.TypeID = r.u64("TypeID")
		e.TypeName = r.str("TypeName")
		e.Address = r.u64("Address")
		e.ObjectSize = r.u64("ObjectSize")
		e.SampledByteOffset = r.u64("SampledByteOffset")
		ev = e
	default:
		return &Raw{ID: id, Version: version, Data: append([]byte(nil), data...)}, nil
	}
	if r.err != nil {
		return nil, fmt.Errorf("clrevents: runtime event %d version %d: %w", id, version, r.err)
	}
	return ev, nil
}

// AllocationTickBytes reads only the bytes a GCAllocationTick payload
// (IDGCAllocationTick) reports, AllocationAmount64 from version 2 and
// AllocationAmount before, without decoding the rest of the event (the type
// name is a string to convert): for a sampler that keeps a few of the
// runtime's allocation ticks and decodes only those with DecodeRuntime.
// ok is false if data is too short to hold the field.
func AllocationTickBytes(version uint32, data []byte) (bytes uint64, ok bool) {
	if version >= 2 {
		// AllocationAmount, AllocationKind (4 bytes each), ClrInstanceID
		// (2), then AllocationAmount64.
		if len(data) < 18 {
			return 0, false
		}
		return binary.LittleEndian.Uint64(data[10:]), true
	}
	if len(data) < 4 {
		return 0, false
	}
	return uint64(binary.LittleEndian.Uint32(data)), true
}
