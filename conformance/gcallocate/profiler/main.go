// Command profiler is the gcallocate scenario's profiler: it turns on
// ObjectAllocated (COR_PRF_ENABLE_OBJECT_ALLOCATED) without
// COR_PRF_MONITOR_OBJECT_ALLOCATED, for the large object heap
// (COR_PRF_HIGH_MONITOR_LARGEOBJECT_ALLOCATED, .NET Core 3.0) and the
// pinned object heap (COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED, .NET 6),
// with the basic GC events. Every ObjectAllocated must then be for an
// object of generation 3 or 4 (GetObjectGeneration), and at shutdown there
// must have been at least one of each. On .NET Core 3.x, which has no pinned
// object heap nor its flag, only the large object heap part is asked for
// and checked; the profiler says which ("heaps: loh" or "heaps: loh+poh").
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type gcallocate struct {
	profiler.Base
	info     *profiler.Info
	poh      bool
	loh, pin atomic.Int64
}

func (p *gcallocate) Initialize(info *profiler.Info) error {
	p.info = info
	ri, err := info.GetRuntimeInformation()
	if err != nil {
		check.Failf("GetRuntimeInformation: %v", err)
		return err
	}
	// .NET Core reports 4.0.30319 here; .NET 5 and later their version.
	p.poh = ri.MajorVersion >= 6
	high := profiler.HighBasicGC | profiler.HighLargeObjectAllocated
	if p.poh {
		high |= profiler.HighPinnedObjectAllocated
		check.Logf("heaps: loh+poh")
	} else {
		check.Logf("heaps: loh")
	}
	if err := info.SetEventMask2(profiler.EnableObjectAllocated, high); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	return nil
}

func (p *gcallocate) ObjectAllocated(obj profiler.ObjectID, class profiler.ClassID) error {
	g, err := p.info.GetObjectGeneration(obj)
	switch {
	case err != nil:
		check.Failf("GetObjectGeneration: %v", err)
	case g.Generation == profiler.GCLargeObjectHeap:
		p.loh.Add(1)
	case g.Generation == profiler.GCPinnedObjectHeap && p.poh:
		p.pin.Add(1)
	default:
		name, _ := p.info.ClassName(class)
		check.Failf("ObjectAllocated for a %s in generation %d", name, g.Generation)
	}
	return nil
}

func (p *gcallocate) Shutdown() error {
	var final string
	switch {
	case p.poh && p.pin.Load() == 0:
		final = "no pinned object heap allocation"
	case p.loh.Load() == 0:
		final = "no large object heap allocation"
	}
	check.Logf("%d LOH objects allocated, %d POH objects allocated", p.loh.Load(), p.pin.Load())
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{55B9554D-6115-45A2-BE1E-C80F7FA35369}", &gcallocate{})
}

func main() {}
