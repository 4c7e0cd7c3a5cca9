// Command heapprof is the profiler of package profiler's heap API test.
// It prints on stderr, in lines starting "heapprof: ":
//
//   - "layout fields=N tokens=T offsets=O size=S err=E" for the first
//     HeapProbe allocated, from GetClassLayout (T: how many field tokens
//     are FieldDefs; O: the offsets, sorted);
//   - "array class=C lengths=L lower=B inobject=I len=N err=E" for the
//     first int[,] and long[] allocated, from GetArrayObjectInfo (I: the
//     data address lies inside the object, by GetObjectSize2);
//   - "notarray err=E" from GetArrayObjectInfo on the HeapProbe;
//   - "refs same=S differ=D nonnull=N err=E" at Shutdown:
//     for every HeapNode the ObjectReferences callback reported, whether
//     EnumerateObjectReferences (ICorProfilerInfo10) gave the same non-null
//     references;
//   - "mask F err=E notavailable=B" from SetEventMask2(0, F) in Initialize,
//     for three high flags of different ages;
//   - "heapwalk err=E notavailable=B objects=N" from EnumerateGCHeapObjects
//     at Shutdown, inside the callback, without SuspendRuntime
//     (ICorProfilerInfo15 only).
package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/clrprof/clrprof/profiler"
)

type heapprof struct {
	profiler.Base
	info *profiler.Info

	mu                    sync.Mutex
	layoutDone            bool
	arrays                map[string]bool
	same, differ, nonNull int
	refsErr               error
}

func (p *heapprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.arrays = map[string]bool{}
	// SetEventMask2 refuses high flags newer than the runtime.
	for _, f := range []profiler.HighMonitor{profiler.HighBasicGC, profiler.HighEventPipe, profiler.HighPinnedObjectAllocated} {
		check := info.CheckHighEvents(f)
		err := info.SetEventMask2(0, f)
		fmt.Fprintf(os.Stderr, "heapprof: mask %v err=%v notavailable=%v\n", f, err, errors.Is(err, profiler.ErrNotAvailable))
		fmt.Fprintf(os.Stderr, "heapprof: check %v err=%v\n", f, check)
	}
	return info.SetEventMask2(profiler.MonitorObjectAllocated|profiler.EnableObjectAllocated|profiler.MonitorGC, 0)
}

func (p *heapprof) ObjectAllocated(obj profiler.ObjectID, class profiler.ClassID) error {
	name, err := p.info.ClassName(class)
	if err != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch name {
	case "HeapProbe":
		if p.layoutDone {
			return nil
		}
		p.layoutDone = true
		l, err := p.info.GetClassLayout(class)
		tokens := 0
		var offs []uint32
		for _, f := range l.Fields {
			if f.Field>>24 == 0x04 {
				tokens++
			}
			offs = append(offs, f.Offset)
		}
		slices.Sort(offs)
		fmt.Fprintf(os.Stderr, "heapprof: layout fields=%d tokens=%d offsets=%v size=%d err=%v\n", len(l.Fields), tokens, offs, l.Size, err)
		_, err = p.info.GetArrayObjectInfo(obj)
		fmt.Fprintf(os.Stderr, "heapprof: notarray err=%v invalidarg=%v\n", err, errors.Is(err, profiler.E_INVALIDARG))
	case "int[,]", "long[]":
		if p.arrays[name] {
			return nil
		}
		p.arrays[name] = true
		a, err := p.info.GetArrayObjectInfo(obj)
		size, serr := p.info.GetObjectSize2(obj)
		in := serr == nil && uint64(a.Data) > uint64(obj) && uint64(a.Data) < uint64(obj)+size
		fmt.Fprintf(os.Stderr, "heapprof: array class=%s lengths=%v lower=%v inobject=%v len=%d err=%v\n", name, a.Lengths, a.LowerBounds, in, a.Len(), err)
	}
	return nil
}

func (p *heapprof) ObjectReferences(obj profiler.ObjectID, class profiler.ClassID, refs []profiler.ObjectID) error {
	name, err := p.info.ClassName(class)
	if err != nil || name != "HeapNode" {
		return nil
	}
	got, err := p.info.EnumerateObjectReferences(obj)
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		if p.refsErr == nil {
			p.refsErr = err
		}
		return nil
	}
	want := nonNull(refs)
	have := nonNull(got)
	p.nonNull += len(have)
	if slices.Equal(want, have) {
		p.same++
	} else {
		p.differ++
		fmt.Fprintf(os.Stderr, "heapprof: refs of %#x: callback %v, EnumerateObjectReferences %v\n", uint64(obj), want, have)
	}
	return nil
}

func nonNull(ids []profiler.ObjectID) []profiler.ObjectID {
	var out []profiler.ObjectID
	for _, id := range ids {
		if id != 0 {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

func (p *heapprof) Shutdown() error {
	p.mu.Lock()
	fmt.Fprintf(os.Stderr, "heapprof: refs same=%d differ=%d nonnull=%d err=%v notavailable=%v\n", p.same, p.differ, p.nonNull, p.refsErr, errors.Is(p.refsErr, profiler.ErrNotAvailable))
	p.mu.Unlock()
	objects := 0
	err := p.info.EnumerateGCHeapObjects(func(profiler.ObjectID) bool { objects++; return true })
	fmt.Fprintf(os.Stderr, "heapprof: heapwalk err=%v notavailable=%v objects=%d\n", err, errors.Is(err, profiler.ErrNotAvailable), objects)
	return nil
}

func init() {
	profiler.Register("{6B0E3F7A-2C41-4D9B-8E15-A37C9D0F5B21}", &heapprof{})
}

func main() {}
