package profiler_test

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

// heapInspector looks at the objects the garbage collector's heap walk
// reports after each collection (MonitorGC): the layout of their class,
// the shape of arrays, and what they reference.
type heapInspector struct {
	profiler.Base
	info *profiler.Info
}

func (p *heapInspector) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorGC)
}

// ObjectReferences runs once per live object, with the runtime suspended:
// the ObjectID is valid for the whole callback.
func (p *heapInspector) ObjectReferences(obj profiler.ObjectID, class profiler.ClassID, refs []profiler.ObjectID) error {
	name, err := p.info.ClassName(class)
	if err != nil {
		return nil
	}
	if _, isArray, _ := p.info.IsArrayClass(class); isArray {
		if a, err := p.info.GetArrayObjectInfo(obj); err == nil && a.Len() > 1<<20 {
			fmt.Fprintf(os.Stderr, "%s: %v elements (lower bounds %v) at %v\n", name, a.Lengths, a.LowerBounds, a.Data)
		}
		return nil
	}
	if l, err := p.info.GetClassLayout(class); err == nil && len(l.Fields) > 50 {
		fmt.Fprintf(os.Stderr, "%s: %d fields in %d bytes, %d references\n", name, len(l.Fields), l.Size, len(refs))
	}
	return nil
}

// GetClassLayout and GetArrayObjectInfo inside the heap walk: report big
// arrays and classes with many fields.
func ExampleInfo_GetClassLayout() {
	if err := profiler.Register("{3E7B9A21-5C4D-4F8E-A1B2-6D0C9E8F7A53}", &heapInspector{}); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}

// heapCensus counts the objects of each class on the heap, on request,
// from a goroutine of its own.
type heapCensus struct {
	profiler.Base
	info atomic.Pointer[profiler.Info] // set by Initialize, read by the goroutine
}

func (p *heapCensus) Initialize(info *profiler.Info) error {
	p.info.Store(info)
	return nil
}

// census suspends the runtime, walks the heap and resumes it, on one
// thread; it retries while a collection holds the runtime suspended.
func (p *heapCensus) census(info *profiler.Info) (map[profiler.ClassID]int, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var err error
	for range 100 {
		if err = info.SuspendRuntime(); !errors.Is(err, profiler.CORPROF_E_SUSPENSION_IN_PROGRESS) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	if err != nil {
		return nil, err
	}
	defer info.ResumeRuntime()
	counts := map[profiler.ClassID]int{}
	err = info.EnumerateGCHeapObjects(func(obj profiler.ObjectID) bool {
		if c, err := info.GetClassFromObject(obj); err == nil {
			counts[c]++
		}
		return true
	})
	return counts, err // ErrNotAvailable before .NET 9
}

// EnumerateGCHeapObjects from a goroutine, between SuspendRuntime and
// ResumeRuntime: a census of the heap by class, every ten seconds.
func ExampleInfo_EnumerateGCHeapObjects() {
	p := &heapCensus{}
	if err := profiler.Register("{9D2F4B6A-1E3C-4A5B-8C7D-0F1E2D3C4B5A}", p); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	go func() {
		for range time.Tick(10 * time.Second) {
			info := p.info.Load()
			if info == nil {
				continue // not loaded yet
			}
			counts, err := p.census(info)
			if err != nil {
				fmt.Fprintln(os.Stderr, "census:", err)
				return
			}
			for c, n := range counts {
				if name, err := info.ClassName(c); err == nil && n > 10000 {
					fmt.Fprintf(os.Stderr, "%s: %d objects\n", name, n)
				}
			}
		}
	}()
}
