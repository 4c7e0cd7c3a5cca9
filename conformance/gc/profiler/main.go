// Command profiler is the gc scenario's profiler. With COR_PRF_MONITOR_GC
// on, as upstream: GarbageCollectionStarted and Finished come in pairs (at
// most two starts ahead, never more finishes than starts), and the heap
// walk's ObjectReferences and RootReferences must show objects on the
// pinned object heap (generation 4, GetObjectGeneration) on runtimes that
// have one (.NET 5 and later; on older ones the app's pinned arrays are
// ordinary ones and the count is not required).
//
// Beyond upstream, at every GarbageCollectionFinished (which the runtime
// calls after the heap walk of the same collection), against the
// generation bounds it reports then (GetGenerationBounds):
//   - every object the walk reported lies inside a generation range
//     (frozen objects, IsFrozenObject, excepted);
//   - every range of MovedReferences2 (new addresses) and
//     SurvivingReferences2 lies inside one generation range, has a non-zero
//     length, and the old ranges of one collection do not overlap.
//
// And inside ObjectReferences, on runtimes with ICorProfilerInfo10 (.NET
// Core 3.0 and later), EnumerateObjectReferences must give every walked
// object the same non-null references as the callback.
package main

import (
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type span struct{ start, length uint64 }

type gcprof struct {
	profiler.Base
	info             *profiler.Info
	pinnedHeap       bool
	starts, finishes atomic.Int64

	mu                sync.Mutex
	walked            []profiler.ObjectID // this collection's ObjectReferences objects
	refs, roots       []profiler.ObjectID
	moved, survived   []span // new ranges, surviving ranges
	oldRanges         []span
	pohRefs, pohRoots int
	checkedObjects    int
	checkedRanges     int
	enumerated        int
}

func (p *gcprof) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(profiler.MonitorGC, 0); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	ri, err := info.GetRuntimeInformation()
	if err != nil {
		check.Failf("GetRuntimeInformation: %v", err)
		return err
	}
	// .NET Core reports 4.0.30319 here; .NET 5 and later their version.
	p.pinnedHeap = ri.MajorVersion >= 5
	check.Logf("pinned object heap: %v", p.pinnedHeap)
	return nil
}

func (p *gcprof) GarbageCollectionStarted(collected []bool, reason profiler.GCReason) error {
	if s, f := p.starts.Add(1), p.finishes.Load(); s-f > 2 {
		check.Failf("GarbageCollectionStarted: %d starts, %d finishes", s, f)
	}
	p.mu.Lock()
	p.walked, p.refs, p.roots = p.walked[:0], p.refs[:0], p.roots[:0]
	p.moved, p.survived, p.oldRanges = p.moved[:0], p.survived[:0], p.oldRanges[:0]
	p.mu.Unlock()
	return nil
}

func (p *gcprof) ObjectReferences(obj profiler.ObjectID, class profiler.ClassID, refs []profiler.ObjectID) error {
	var enumerated []profiler.ObjectID
	var enumErr error
	if p.info.Version() >= 10 {
		enumerated, enumErr = p.info.EnumerateObjectReferences(obj)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.walked = append(p.walked, obj)
	n := len(p.refs)
	for _, r := range refs {
		if r != 0 {
			p.refs = append(p.refs, r)
		}
	}
	if p.info.Version() < 10 {
		return nil
	}
	if enumErr != nil {
		check.Failf("EnumerateObjectReferences(%#x): %v", uint64(obj), enumErr)
		return nil
	}
	want := slices.Clone(p.refs[n:])
	var got []profiler.ObjectID
	for _, r := range enumerated {
		if r != 0 {
			got = append(got, r)
		}
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(want, got) {
		check.Failf("object %#x: ObjectReferences gave %d non-null references, EnumerateObjectReferences %d, or other ones", uint64(obj), len(want), len(got))
		return nil
	}
	p.enumerated++
	return nil
}

func (p *gcprof) RootReferences(roots []profiler.ObjectID) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range roots {
		if r != 0 {
			p.roots = append(p.roots, r)
		}
	}
	return nil
}

func (p *gcprof) MovedReferences2(oldStarts, newStarts []profiler.ObjectID, lengths []uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range oldStarts {
		p.oldRanges = append(p.oldRanges, span{uint64(oldStarts[i]), lengths[i]})
		p.moved = append(p.moved, span{uint64(newStarts[i]), lengths[i]})
	}
	return nil
}

func (p *gcprof) SurvivingReferences2(starts []profiler.ObjectID, lengths []uint64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i := range starts {
		p.survived = append(p.survived, span{uint64(starts[i]), lengths[i]})
	}
	return nil
}

func (p *gcprof) GarbageCollectionFinished() error {
	gc := p.finishes.Add(1)
	if s := p.starts.Load(); s < gc {
		check.Failf("GarbageCollectionFinished: %d starts, %d finishes", s, gc)
	}
	bounds, err := p.info.GetGenerationBounds()
	if err != nil {
		check.Failf("GetGenerationBounds: %v", err)
		return nil
	}
	inside := func(s span) bool {
		for _, b := range bounds {
			start := uint64(b.RangeStart)
			if s.start >= start && s.start+s.length <= start+uint64(b.RangeLength) {
				return true
			}
		}
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, obj := range p.walked {
		if inside(span{uint64(obj), 1}) {
			p.checkedObjects++
			continue
		}
		if frozen, err := p.info.IsFrozenObject(obj); err == nil && frozen {
			continue
		}
		check.Failf("GC %d: walked object %#x is outside every generation range", gc, uint64(obj))
	}
	for _, list := range [][]span{p.moved, p.survived} {
		for _, s := range list {
			p.checkedRanges++
			if s.length == 0 || !inside(s) {
				check.Failf("GC %d: moved or surviving range [%#x, +%#x) is empty or outside every generation range", gc, s.start, s.length)
			}
		}
	}
	slices.SortFunc(p.oldRanges, func(a, b span) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	for i := 1; i < len(p.oldRanges); i++ {
		if prev := p.oldRanges[i-1]; prev.start+prev.length > p.oldRanges[i].start {
			check.Failf("GC %d: MovedReferences2 old ranges overlap at %#x", gc, p.oldRanges[i].start)
		}
	}
	p.pohRefs += p.countPinned(p.refs)
	p.pohRoots += p.countPinned(p.roots)
	return nil
}

// countPinned counts the objects on the pinned object heap; references to
// objects outside the GC heap (frozen strings) are skipped.
func (p *gcprof) countPinned(objs []profiler.ObjectID) int {
	n := 0
	for _, obj := range objs {
		g, err := p.info.GetObjectGeneration(obj)
		switch {
		case errors.Is(err, profiler.CORPROF_E_NOT_GC_OBJECT):
		case err != nil:
			check.Failf("GetObjectGeneration(%#x): %v", uint64(obj), err)
			return n
		case g.Generation == profiler.GCPinnedObjectHeap:
			n++
		}
	}
	return n
}

func (p *gcprof) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final string
	switch {
	case p.starts.Load() == 0:
		final = "no GarbageCollectionStarted"
	case p.finishes.Load() == 0:
		final = "no GarbageCollectionFinished"
	case p.checkedObjects == 0 || p.checkedRanges == 0:
		final = "no walked object or moved/surviving range was checked"
	case p.pinnedHeap && (p.pohRoots == 0 || p.pohRefs == 0):
		final = "no pinned object heap objects among the root or object references"
	case p.info.Version() >= 10 && p.enumerated == 0:
		final = "no object's references compared with EnumerateObjectReferences"
	}
	check.Logf("%d collections; %d walked objects and %d moved/surviving ranges inside the generation bounds; pinned heap objects: %d in root references, %d in object references; references of %d objects the same by EnumerateObjectReferences",
		p.finishes.Load(), p.checkedObjects, p.checkedRanges, p.pohRoots, p.pohRefs, p.enumerated)
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{BCD8186F-1EEC-47E9-AFA7-396F879382C3}", &gcprof{})
}

func main() {}
