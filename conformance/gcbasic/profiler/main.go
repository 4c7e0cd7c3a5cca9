// Command profiler is the gcbasic scenario's profiler: with only the basic
// GC events on (HighBasicGC: no heap walk, no allocation events),
// GarbageCollectionStarted and Finished must come in pairs, at most two
// starts ahead, and at the first collection every range GetGenerationBounds
// reports must be of generation 0 to 4 (4: the pinned object heap).
//
// Gen 1 is still empty at the first collection. How that shows depends on
// the GC, and upstream checks it only for the segments GC: there gen 1 is a
// filler object (0x18 bytes on 64-bit) on the ephemeral segment, so its
// range and reservation are at most that long. The regions GC, the default
// on 64-bit from .NET 7, reserves a whole region for each generation: gen
// 1's range is still at most a filler long, but its reservation is the
// region (upstream skips the check there). The profiler prints which GC it
// assumed ("gc: segments" or "gc: regions", from the runtime's major
// version) and checks, on regions, that the reservation is at least a
// region's minimum (256 KiB) and a multiple of 8.
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

// genFiller is the size of an empty generation's free object on 64-bit.
const genFiller = 0x18

type gcbasic struct {
	profiler.Base
	info             *profiler.Info
	regions          bool
	starts, finishes atomic.Int64
}

func (p *gcbasic) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(0, profiler.HighBasicGC); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	ri, err := info.GetRuntimeInformation()
	if err != nil {
		check.Failf("GetRuntimeInformation: %v", err)
		return err
	}
	// .NET Core reports 4.0.30319 here; .NET 5 and later their version.
	p.regions = ri.MajorVersion >= 7
	if p.regions {
		check.Logf("gc: regions")
	} else {
		check.Logf("gc: segments")
	}
	return nil
}

func (p *gcbasic) GarbageCollectionStarted(collected []bool, reason profiler.GCReason) error {
	starts := p.starts.Add(1)
	if fin := p.finishes.Load(); starts-fin > 2 {
		check.Failf("GarbageCollectionStarted: %d starts but only %d finishes", starts, fin)
		return nil
	}
	if starts != 1 {
		return nil
	}
	ranges, err := p.info.GetGenerationBounds()
	if err != nil {
		check.Failf("GetGenerationBounds: %v", err)
		return nil
	}
	gen1 := 0
	for _, r := range ranges {
		if r.Generation > profiler.GCPinnedObjectHeap {
			check.Failf("generation bounds: invalid generation %d", r.Generation)
			continue
		}
		if r.Generation != 1 {
			continue
		}
		gen1++
		check.That(r.RangeLength <= genFiller, "first collection: gen 1 range is %#x long, want <= %#x", r.RangeLength, genFiller)
		if p.regions {
			check.That(r.RangeLengthReserved >= 256<<10 && r.RangeLengthReserved%8 == 0,
				"first collection, regions: gen 1 reserves %#x, want a region", r.RangeLengthReserved)
		} else {
			check.That(r.RangeLengthReserved <= genFiller, "first collection, segments: gen 1 reserves %#x, want <= %#x", r.RangeLengthReserved, genFiller)
		}
	}
	check.That(gen1 == 1, "first collection: %d gen 1 ranges, want 1", gen1)
	return nil
}

func (p *gcbasic) GarbageCollectionFinished() error {
	if fin, starts := p.finishes.Add(1), p.starts.Load(); fin > starts {
		check.Failf("GarbageCollectionFinished: %d finishes after %d starts", fin, starts)
	}
	return nil
}

func (p *gcbasic) Shutdown() error {
	var final string
	switch {
	case p.starts.Load() == 0:
		final = "no GarbageCollectionStarted"
	case p.finishes.Load() == 0:
		final = "no GarbageCollectionFinished"
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{A040B953-EDE7-42D9-9077-AA69BB2BE024}", &gcbasic{})
}

func main() {}
