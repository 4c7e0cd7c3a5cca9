package pprofbuild

import (
	"fmt"
	"sort"
	"sync"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/profiler"
)

// LiveHeap tracks the sampled allocations that are still alive, the way
// Go's heap profile reports in-use space: each sampled object stands for
// alloc.SampleWeight(size, rate) objects of its size, allocated at
// its stack, until a garbage collection frees it.
//
// Wire it up in the profiler: give Add the Samples of every alloc.Batch (of
// a recorder with SampleBytes = rate, named by SetRecorder), or AddObject the runtime's
// allocation ticks, and forward the GC callbacks:
// GarbageCollectionStarted to GCStarted, MovedReferences(2) to Moved,
// SurvivingReferences(2) to Surviving, GarbageCollectionFinished to
// GCFinished (the event mask needs MonitorGC, which also turns off
// concurrent GC). At each collection LiveHeap asks the runtime the
// generation of each tracked object (GetObjectGeneration); an object of a
// collected generation that no moved or surviving range covers is dead.
// A sample taken before a collection but delivered after it is dropped
// (its address is no longer the object's) and counted in Stale.
//
// At most max objects are tracked; samples past that are counted in Full.
type LiveHeap struct {
	info *profiler.Info
	rec  *alloc.Recorder
	rate int
	max  int

	mu     sync.Mutex
	epoch  uint64
	objs   map[profiler.ObjectID]*liveObj
	doomed []*liveObj // of the collected generations, by address
	inGC   bool
	stats  LiveHeapStats
	weak   map[profiler.ObjectHandle]*liveObj // UseWeakHandles
}

// UseWeakHandles makes AddObject track each object with a weak handle
// (Info.CreateHandle, ICorProfilerInfo13: .NET 7 and later) instead of by
// address: the GC callbacks are not needed (no MonitorGC, whose
// moved-reference reports cost allocation-heavy code several times its
// CPU time), and an object is known dead once its handle reads 0, which
// Sweep (called by AddTo) checks. Call it before the first AddObject; it
// fails with ErrNotAvailable on older runtimes.
func (h *LiveHeap) UseWeakHandles() error {
	if h.info.Version() < 13 {
		return fmt.Errorf("profiles: LiveHeap.UseWeakHandles: %w (ICorProfilerInfo13::CreateHandle, .NET 7+; the runtime has ICorProfilerInfo%d)", profiler.ErrNotAvailable, h.info.Version())
	}
	h.mu.Lock()
	h.weak = map[profiler.ObjectHandle]*liveObj{}
	h.mu.Unlock()
	return nil
}

// Sweep drops the objects tracked by weak handles that the runtime has
// collected (their handles read 0), and destroys those handles.
func (h *LiveHeap) Sweep() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for hd := range h.weak {
		id, err := h.info.GetObjectIDFromHandle(hd)
		if err != nil || id == 0 {
			h.info.DestroyHandle(hd)
			delete(h.weak, hd)
			h.stats.Freed++
		}
	}
}

type liveObj struct {
	addr, next profiler.ObjectID
	class      profiler.ClassID
	typeName   string // instead of class, when the source named the type
	size       uint64
	weight     float64               // how many objects of its size it stands for
	handle     profiler.ObjectHandle // a weak handle (UseWeakHandles)
	stack      []profiler.FunctionID
	seen       bool
}

// LiveHeapStats counts what a LiveHeap did.
type LiveHeapStats struct {
	Tracked   int   // objects tracked now
	Added     int64 // samples taken in
	Freed     int64 // tracked objects found dead
	Stale     int64 // samples dropped: a collection moved them before they arrived
	Full      int64 // samples dropped: max objects tracked
	GenErrors int64 // GetObjectGeneration failures (the object is taken as collected)
	GCs       int64 // garbage collections seen
	// HandleErrors counts objects not tracked: CreateHandle failed
	// (UseWeakHandles).
	HandleErrors int64
}

// NewLiveHeap returns a LiveHeap tracking at most max objects, for
// samples taken every rate bytes on average (Add) or for AddObject.
func NewLiveHeap(info *profiler.Info, rate, max int) *LiveHeap {
	return &LiveHeap{info: info, rate: rate, max: max, objs: map[profiler.ObjectID]*liveObj{}}
}

// SetRecorder names the allocation recorder whose samples Add takes (with
// SampleBytes = rate): GCStarted delivers its buffered samples first and
// moves it to the next epoch. Call it once the recorder is enabled.
func (h *LiveHeap) SetRecorder(rec *alloc.Recorder) {
	h.mu.Lock()
	h.rec = rec
	h.mu.Unlock()
}

// Add takes in sampled allocations (alloc.Batch.Samples).
func (h *LiveHeap) Add(samples []alloc.Sample) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range samples {
		switch {
		case s.Epoch != h.epoch:
			h.stats.Stale++
		case len(h.objs) >= h.max:
			h.stats.Full++
		default:
			h.objs[s.Object] = &liveObj{addr: s.Object, class: s.Class, size: s.Size, stack: s.Stack, weight: alloc.SampleWeight(s.Size, h.rate)}
			h.stats.Added++
		}
	}
}

// AddObject tracks one sampled object reported where it is now, by a
// source that reports it on the allocating thread before any collection
// can move it: the runtime's GCAllocationTick event (.NET 5 and later:
// about every 100 KB allocated, the object that crossed the mark, its
// address and type name; see clrevents.GCAllocationTick), with the stack
// the caller took (Info.StackTrace(0, n) in EventPipeEventDelivered). The
// object stands for weight objects of its size: for an allocation tick,
// AllocationAmount64 / ObjectSize (the bytes allocated since the previous
// tick, in objects like it).
func (h *LiveHeap) AddObject(obj profiler.ObjectID, typeName string, size uint64, weight float64, stack []profiler.FunctionID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.objs)+len(h.weak) >= h.max {
		h.stats.Full++
		return
	}
	o := &liveObj{addr: obj, typeName: typeName, size: size, weight: weight, stack: stack}
	if h.weak != nil {
		hd, err := h.info.CreateHandle(obj, profiler.HandleTypeWeak)
		if err != nil || hd == 0 {
			h.stats.HandleErrors++
			return
		}
		o.handle = hd
		h.weak[hd] = o
	} else {
		h.objs[obj] = o
	}
	h.stats.Added++
}

// GCStarted is GarbageCollectionStarted: it delivers the samples still
// buffered (their addresses are still right), then notes which tracked
// objects are in the collected generations.
func (h *LiveHeap) GCStarted(collected []bool) {
	h.mu.Lock()
	rec := h.rec
	h.mu.Unlock()
	if rec != nil {
		rec.Flush()
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.rec != nil {
		h.rec.GCStarted()
	}
	h.epoch++
	h.stats.GCs++
	h.inGC = true
	h.doomed = h.doomed[:0]
	for _, o := range h.objs {
		g, err := h.info.GetObjectGeneration(o.addr)
		if err != nil {
			h.stats.GenErrors++
		} else if int(g.Generation) >= len(collected) || !collected[g.Generation] {
			continue
		}
		o.seen, o.next = false, o.addr
		h.doomed = append(h.doomed, o)
	}
	sort.Slice(h.doomed, func(i, j int) bool { return h.doomed[i].addr < h.doomed[j].addr })
}

// in calls fn for each doomed object in [start, start+n).
func (h *LiveHeap) in(start profiler.ObjectID, n uint64, fn func(*liveObj)) {
	i := sort.Search(len(h.doomed), func(i int) bool { return h.doomed[i].addr >= start })
	for ; i < len(h.doomed) && uint64(h.doomed[i].addr-start) < n; i++ {
		fn(h.doomed[i])
	}
}

// Moved is MovedReferences2 (or MovedReferences, lengths widened): the
// objects of the ranges survived, at their new addresses.
func (h *LiveHeap) Moved(oldStarts, newStarts []profiler.ObjectID, lengths []uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range oldStarts {
		if i >= len(newStarts) || i >= len(lengths) {
			break
		}
		old, nw := oldStarts[i], newStarts[i]
		h.in(old, lengths[i], func(o *liveObj) { o.seen, o.next = true, nw+(o.addr-old) })
	}
}

// Surviving is SurvivingReferences2 (or SurvivingReferences): the objects
// of the ranges survived where they are.
func (h *LiveHeap) Surviving(starts []profiler.ObjectID, lengths []uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range starts {
		if i >= len(lengths) {
			break
		}
		h.in(starts[i], lengths[i], func(o *liveObj) { o.seen = true })
	}
}

// GCFinished is GarbageCollectionFinished: collected objects no range
// covered are dead, the others take their new addresses.
func (h *LiveHeap) GCFinished() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.inGC {
		return
	}
	h.inGC = false
	for _, o := range h.doomed {
		delete(h.objs, o.addr)
	}
	for _, o := range h.doomed {
		if !o.seen {
			h.stats.Freed++
			continue
		}
		o.addr = o.next
		h.objs[o.addr] = o
	}
	h.doomed = h.doomed[:0]
}

// Stats returns the counts so far.
func (h *LiveHeap) Stats() LiveHeapStats {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.stats
	s.Tracked = len(h.objs) + len(h.weak)
	return s
}

// LiveHeapTypes are the sample types of a live heap profile, as in Go's:
// inuse_objects/count and inuse_space/bytes.
var LiveHeapTypes = []SampleType{{Type: "inuse_objects", Unit: "count"}, {Type: "inuse_space", Unit: "bytes"}}

// AddTo adds the live objects to b (a Builder of LiveHeapTypes), scaled
// to estimates, by allocation stack, with the class as the label "object".
func (h *LiveHeap) AddTo(b *Builder, names *Names) {
	h.Sweep()
	h.mu.Lock()
	objs := make([]liveObj, 0, len(h.objs)+len(h.weak))
	for _, o := range h.objs {
		objs = append(objs, *o)
	}
	for _, o := range h.weak {
		objs = append(objs, *o)
	}
	h.mu.Unlock()
	for _, o := range objs {
		name := o.typeName
		if name == "" {
			name = names.Class(o.class)
		}
		b.Add(o.stack, []Label{{Key: "object", Value: name}}, int64(o.weight+0.5), int64(o.weight*float64(o.size)+0.5))
	}
}
