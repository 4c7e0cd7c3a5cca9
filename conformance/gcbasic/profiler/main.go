// Command profiler is the gcbasic scenario's profiler: with only the basic
// GC events on (HighBasicGC), GarbageCollectionStarted and Finished must
// come in pairs, at most two starts ahead, and at the first collection the
// runtime's generation bounds must be valid and gen 1 still empty (its range
// no longer than a filler object).
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

// genFiller is the largest an empty generation's range can be on 64-bit: a
// free object's filler.
const genFiller = 0x18

type gcbasic struct {
	profiler.Base
	info             *profiler.Info
	starts, finishes atomic.Int64
}

func (p *gcbasic) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(0, profiler.HighBasicGC); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
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
	for _, r := range ranges {
		switch r.Generation {
		case 0, 2, 3, 4:
		case 1:
			check.That(r.RangeLength <= genFiller, "first collection: gen 1 range is %#x long, want <= %#x", r.RangeLength, genFiller)
			check.That(r.RangeLengthReserved <= genFiller, "first collection: gen 1 reserves %#x, want <= %#x", r.RangeLengthReserved, genFiller)
		default:
			check.Failf("generation bounds: invalid generation %d", r.Generation)
		}
	}
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
