// Command profiler is the nongcheap scenario's profiler (ICorProfilerInfo14,
// .NET 8). With every allocation reported (and the basic GC events):
//   - an object of the non-GC heap is one for which GetObjectGeneration
//     fails with CORPROF_E_NOT_GC_OBJECT (upstream also looks at the
//     generation the runtime writes then, INT32_MAX with empty ranges; the
//     SDK returns no range with an error), and IsFrozenObject must say so;
//     any other GetObjectGeneration failure is a failure;
//   - at every GarbageCollectionFinished: GetNonGCHeapBounds gives 1 to 16
//     segments, each with a start and no longer than its reservation, as
//     GetGenerationBounds's ranges; no two of all these start or end at the
//     same address or overlap; EnumerateNonGCObjects lists exactly as many
//     objects as ObjectAllocated reported on the non-GC heap, the first at
//     the first segment's start, every one frozen (IsFrozenObject);
//   - at shutdown there was a collection and a non-GC heap object.
package main

import (
	"errors"
	"slices"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

const maxSegments = 16

type nongcheap struct {
	profiler.Base
	info       *profiler.Info
	nonGC, gcs atomic.Int64
}

func (p *nongcheap) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(profiler.EnableObjectAllocated|profiler.MonitorObjectAllocated, profiler.HighBasicGC); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	return nil
}

func (p *nongcheap) ObjectAllocated(obj profiler.ObjectID, class profiler.ClassID) error {
	_, err := p.info.GetObjectGeneration(obj)
	switch {
	case errors.Is(err, profiler.CORPROF_E_NOT_GC_OBJECT):
		p.nonGC.Add(1)
		frozen, ferr := p.info.IsFrozenObject(obj)
		check.That(ferr == nil && frozen, "non-GC object %#x: IsFrozenObject %v, %v", uint64(obj), frozen, ferr)
	case err != nil:
		check.Failf("GetObjectGeneration(%#x): %v", uint64(obj), err)
	}
	return nil
}

func (p *nongcheap) GarbageCollectionFinished() error {
	p.gcs.Add(1)
	var starts, ends []uint64
	segs, err := p.info.GetNonGCHeapBounds()
	var first profiler.ObjectID
	switch {
	case err != nil:
		check.Failf("GetNonGCHeapBounds: %v", err)
	case len(segs) == 0 || len(segs) > maxSegments:
		check.Failf("GetNonGCHeapBounds: %d segments", len(segs))
	default:
		first = segs[0].RangeStart
		for i, s := range segs {
			check.That(s.RangeStart != 0, "non-GC segment %d: no start", i)
			check.That(s.RangeLength <= s.RangeLengthReserved, "non-GC segment %d: length %#x beyond its reservation %#x", i, s.RangeLength, s.RangeLengthReserved)
			starts = append(starts, uint64(s.RangeStart))
			ends = append(ends, uint64(s.RangeStart)+uint64(s.RangeLengthReserved))
		}
	}
	gens, err := p.info.GetGenerationBounds()
	switch {
	case err != nil:
		check.Failf("GetGenerationBounds: %v", err)
	case len(gens) == 0 || len(gens) > maxSegments:
		check.Failf("GetGenerationBounds: %d ranges", len(gens))
	default:
		for i, g := range gens {
			check.That(g.RangeStart != 0, "generation range %d: no start", i)
			check.That(g.RangeLength <= g.RangeLengthReserved, "generation range %d: length %#x beyond its reservation %#x", i, g.RangeLength, g.RangeLengthReserved)
			starts = append(starts, uint64(g.RangeStart))
			ends = append(ends, uint64(g.RangeStart)+uint64(g.RangeLengthReserved))
		}
	}
	// As upstream: starts and ends sorted separately, then compared
	// neighbour by neighbour.
	slices.Sort(starts)
	slices.Sort(ends)
	for i := 0; i+1 < len(starts); i++ {
		check.That(starts[i] != starts[i+1], "two segments start at %#x", starts[i])
		check.That(ends[i] != ends[i+1], "two segments end at %#x", ends[i])
		check.That(ends[i] <= starts[i+1], "segments overlap: one ends at %#x after the next starts at %#x", ends[i], starts[i+1])
	}

	e, err := p.info.EnumerateNonGCObjects()
	if err != nil {
		check.Failf("EnumerateNonGCObjects: %v", err)
		return nil
	}
	defer e.Release()
	n := 0
	for {
		objs, err := e.Next()
		if err != nil {
			check.Failf("ObjectEnum.Next: %v", err)
			return nil
		}
		if len(objs) == 0 {
			break
		}
		for _, obj := range objs {
			if n == 0 {
				check.That(obj == first, "EnumerateNonGCObjects: first object %#x, first segment at %#x", uint64(obj), uint64(first))
			}
			frozen, err := p.info.IsFrozenObject(obj)
			check.That(err == nil && frozen, "EnumerateNonGCObjects: %#x: IsFrozenObject %v, %v", uint64(obj), frozen, err)
			n++
		}
	}
	check.That(int64(n) == p.nonGC.Load(), "EnumerateNonGCObjects lists %d objects, ObjectAllocated reported %d", n, p.nonGC.Load())
	return nil
}

func (p *nongcheap) Shutdown() error {
	var final []string
	if p.gcs.Load() == 0 {
		final = append(final, "no garbage collection")
	}
	if p.nonGC.Load() == 0 {
		final = append(final, "no non-GC heap object allocated")
	}
	check.Logf("non-GC objects allocated: %d", p.nonGC.Load())
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{EF0D191C-3FC7-4311-88AF-E474CBEB2859}", &nongcheap{})
}

func main() {}
