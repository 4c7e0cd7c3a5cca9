// Command profiler is the handles scenario's profiler (ICorProfilerInfo13:
// CreateHandle, DestroyHandle, GetObjectIDFromHandle; .NET 7). As each of
// the app's three test objects is allocated it wraps it in a handle: weak,
// strong, pinned. Then, at the end of each induced collection:
//  1. the weak handle's object is gone (GetObjectIDFromHandle gives 0), the
//     strong and pinned ones are alive (and of their class), and the pinned
//     object did not move;
//  2. the strong and pinned objects are still alive; their handles are
//     destroyed and replaced by weak ones;
//  3. both objects are gone.
//
// A fourth induced collection is a failure; so is no collection at all.
package main

import (
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

const ns = "HandlesApp."

type handles struct {
	profiler.Base
	info *profiler.Info

	mu                   sync.Mutex
	induced              bool
	gcs                  int
	weak, strong, pinned profiler.ObjectHandle
	pinnedObj            profiler.ObjectID
}

func (p *handles) Initialize(info *profiler.Info) error {
	p.info = info
	err := info.SetEventMask2(profiler.EnableObjectAllocated|profiler.MonitorObjectAllocated,
		profiler.HighBasicGC|profiler.HighLargeObjectAllocated|profiler.HighPinnedObjectAllocated)
	if err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	return nil
}

func (p *handles) ObjectAllocated(obj profiler.ObjectID, class profiler.ClassID) error {
	name, err := p.info.ClassName(class)
	if err != nil {
		return nil
	}
	var dst *profiler.ObjectHandle
	var typ profiler.HandleType
	switch name {
	case ns + "TestClassForWeakHandle":
		dst, typ = &p.weak, profiler.HandleTypeWeak
	case ns + "TestClassForStrongHandle":
		dst, typ = &p.strong, profiler.HandleTypeStrong
	case ns + "TestClassForPinnedHandle":
		dst, typ = &p.pinned, profiler.HandleTypePinned
	default:
		return nil
	}
	h, err := p.info.CreateHandle(obj, typ)
	if err != nil {
		check.Failf("CreateHandle(%s, %v): %v", name, typ, err)
		return nil
	}
	p.mu.Lock()
	*dst = h
	if typ == profiler.HandleTypePinned {
		p.pinnedObj = obj
	}
	p.mu.Unlock()
	check.Logf("%v handle created", typ)
	return nil
}

func (p *handles) GarbageCollectionStarted(collected []bool, reason profiler.GCReason) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.induced = reason == profiler.GCInduced
	if p.induced {
		p.gcs++
	}
	return nil
}

// alive returns the handle's object, failing the check unless it is alive
// (want) or gone (!want).
func (p *handles) alive(what string, h profiler.ObjectHandle, want bool) profiler.ObjectID {
	if h == 0 {
		check.Failf("%s: no handle", what)
		return 0
	}
	obj, err := p.info.GetObjectIDFromHandle(h)
	if err != nil {
		check.Failf("%s: GetObjectIDFromHandle: %v", what, err)
		return 0
	}
	switch {
	case want && obj == 0:
		check.Failf("%s: the object should be alive", what)
	case !want && obj != 0:
		check.Failf("%s: the object should be gone", what)
	case want:
		class, err := p.info.GetClassFromObject(obj)
		if err != nil {
			check.Failf("%s: GetClassFromObject: %v", what, err)
			return 0
		}
		name, _ := p.info.ClassName(class)
		check.Logf("%s: alive as expected (%s)", what, name)
	default:
		check.Logf("%s: gone as expected", what)
	}
	return obj
}

func (p *handles) GarbageCollectionFinished() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.induced {
		return nil
	}
	switch p.gcs {
	case 1:
		p.alive("weak", p.weak, false)
		p.alive("strong", p.strong, true)
		obj := p.alive("pinned", p.pinned, true)
		check.That(obj == p.pinnedObj, "the pinned object moved from %#x to %#x", uint64(p.pinnedObj), uint64(obj))
	case 2:
		strongObj := p.alive("strong", p.strong, true)
		pinnedObj := p.alive("pinned", p.pinned, true)
		p.strong = p.rewrap("strong", p.strong, strongObj)
		p.pinned = p.rewrap("pinned", p.pinned, pinnedObj)
	case 3:
		p.alive("strong", p.strong, false)
		p.alive("pinned", p.pinned, false)
	default:
		check.Failf("induced collection %d: no more than 3 expected", p.gcs)
	}
	return nil
}

// rewrap destroys h and returns a weak handle for obj.
func (p *handles) rewrap(what string, h profiler.ObjectHandle, obj profiler.ObjectID) profiler.ObjectHandle {
	if err := p.info.DestroyHandle(h); err != nil {
		check.Failf("%s: DestroyHandle: %v", what, err)
		return h
	}
	if obj == 0 {
		return 0
	}
	w, err := p.info.CreateHandle(obj, profiler.HandleTypeWeak)
	if err != nil {
		check.Failf("%s: CreateHandle(weak): %v", what, err)
		return 0
	}
	check.Logf("%s: handle destroyed, object rewrapped in a weak handle", what)
	return w
}

func (p *handles) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final string
	if p.gcs != 3 {
		final = "want 3 induced collections"
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{A0F96622-522D-4654-AA56-BF421E79B210}", &handles{})
}

func main() {}
