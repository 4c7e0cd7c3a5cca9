// Command gcheapprof is the profiler of package profiler's GC heap walk and
// high-flag tests (gcheap_integration_test.go), with the app
// testdata/gcheap/gcheap.cs. CLRPROF_GCHEAP_MODE chooses what it does; it
// prints on stderr, in lines starting "gcheapprof: ":
//
// Mode "walk": from a goroutine of its own (a thread the runtime does not
// know, outside every callback), once the app has created gcheap.ready,
//
//   - "suspended suspend=E walk=E resume=E counted=N objects=T
//     notavailable=B": SuspendRuntime, EnumerateGCHeapObjects counting the
//     objects of class HeapCounted (N) and all objects (T), ResumeRuntime;
//     B: the walk's error matches ErrNotAvailable;
//   - "stopped walk=E visited=V": in the same suspension, a walk whose
//     callback returns false at the third object;
//   - "self walk=E counted=N objects=T notavailable=B suspensioninprogress=S":
//     EnumerateGCHeapObjects alone, the runtime to suspend itself for it;
//
// and then creates gcheap.done.
//
// Mode "incallback": in the Shutdown callback, "incallback suspend=E walk=E
// resume=E objects=T notavailable=B": SuspendRuntime, EnumerateGCHeapObjects
// counting every object, ResumeRuntime.
//
// Mode "skip" or "noskip": SetEventMask2(MonitorGC, HighGCSkipAllocatedByClassStatistic)
// or SetEventMask2(MonitorGC, 0) in Initialize ("uncheckedskip": "skip"
// with CLRPROF_UNCHECKED_HIGH_FLAGS=1 set by the test, so the flag reaches
// the runtime however old), "mask skip=B err=E
// notavailable=B check=E"; at Shutdown "gc started=S finished=F bycls=C"
// (GarbageCollectionStarted, GarbageCollectionFinished and
// ObjectsAllocatedByClass calls).
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type gcheapprof struct {
	profiler.Base
	info *profiler.Info
	mode string

	target atomic.Uint64 // HeapCounted's ClassID

	started, finished, bycls atomic.Int64
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gcheapprof: "+format+"\n", args...)
}

func (p *gcheapprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.mode = os.Getenv("CLRPROF_GCHEAP_MODE")
	switch p.mode {
	case "walk":
		if err := info.SetEventMask(profiler.MonitorClassLoads); err != nil {
			return err
		}
		go p.walker()
	case "skip", "noskip", "uncheckedskip":
		var high profiler.HighMonitor
		if p.mode != "noskip" {
			high = profiler.HighGCSkipAllocatedByClassStatistic
		}
		check := info.CheckHighEvents(high)
		err := info.SetEventMask2(profiler.MonitorGC, high)
		logf("mask skip=%v err=%v notavailable=%v check=%v", high != 0, err, errors.Is(err, profiler.ErrNotAvailable), check)
		if err != nil {
			// Refused: count the callbacks of MonitorGC alone.
			return info.SetEventMask2(profiler.MonitorGC, 0)
		}
	case "incallback":
		return info.SetEventMask(profiler.MonitorClassLoads)
	default:
		return fmt.Errorf("gcheapprof: CLRPROF_GCHEAP_MODE=%q", p.mode)
	}
	return nil
}

func (p *gcheapprof) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	if name, err := p.info.ClassName(c); err == nil && name == "HeapCounted" {
		p.target.Store(uint64(c))
	}
	return nil
}

// walker waits for the app to be ready (it polls for the file: no callback
// tells it), then walks the heap three ways.
func (p *gcheapprof) walker() {
	for {
		if _, err := os.Stat("gcheap.ready"); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	target := profiler.ClassID(p.target.Load())
	count := func() (counted, objects int, err error) {
		err = p.info.EnumerateGCHeapObjects(func(obj profiler.ObjectID) bool {
			objects++
			if c, err := p.info.GetClassFromObject(obj); err == nil && c == target {
				counted++
			}
			return true
		})
		return
	}

	// Suspend, walk and resume from one thread, as corprof.idl describes.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	serr := p.info.SuspendRuntime()
	counted, objects, werr := count()
	visited := 0
	verr := p.info.EnumerateGCHeapObjects(func(profiler.ObjectID) bool {
		visited++
		return visited < 3
	})
	var rerr error
	if serr == nil {
		rerr = p.info.ResumeRuntime()
	}
	logf("suspended suspend=%v walk=%v resume=%v counted=%d objects=%d notavailable=%v", serr, werr, rerr, counted, objects, errors.Is(werr, profiler.ErrNotAvailable))
	logf("stopped walk=%v visited=%d", verr, visited)

	counted, objects, werr = count()
	logf("self walk=%v counted=%d objects=%d notavailable=%v suspensioninprogress=%v", werr, counted, objects, errors.Is(werr, profiler.ErrNotAvailable), errors.Is(werr, profiler.CORPROF_E_SUSPENSION_IN_PROGRESS))

	if err := os.WriteFile("gcheap.done", nil, 0o644); err != nil {
		logf("gcheap.done: %v", err)
	}
}

func (p *gcheapprof) GarbageCollectionStarted(generations []bool, reason profiler.GCReason) error {
	p.started.Add(1)
	return nil
}

func (p *gcheapprof) GarbageCollectionFinished() error {
	p.finished.Add(1)
	return nil
}

func (p *gcheapprof) ObjectsAllocatedByClass(classes []profiler.ClassID, counts []uint32) error {
	p.bycls.Add(1)
	return nil
}

func (p *gcheapprof) Shutdown() error {
	if p.mode == "incallback" {
		// SuspendRuntime inside a callback, on a managed thread, and a walk
		// under it.
		err := p.info.SuspendRuntime()
		objects := 0
		werr := p.info.EnumerateGCHeapObjects(func(profiler.ObjectID) bool { objects++; return true })
		var rerr error
		if err == nil {
			rerr = p.info.ResumeRuntime()
		}
		logf("incallback suspend=%v walk=%v resume=%v objects=%d notavailable=%v", err, werr, rerr, objects, errors.Is(werr, profiler.ErrNotAvailable))
		return nil
	}
	if p.mode != "walk" {
		logf("gc started=%d finished=%d bycls=%d", p.started.Load(), p.finished.Load(), p.bycls.Load())
	}
	return nil
}

func init() {
	profiler.Register("{3C1D8E52-7A94-4F0B-9E6D-21B5C4A8F7E3}", &gcheapprof{})
}

func main() {}
