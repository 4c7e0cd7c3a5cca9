// Package capture takes heap snapshots inside a profiled .NET process: it
// turns the runtime's heap walk on for one full blocking collection that
// it induces (ICorProfilerInfo::ForceGC with COR_PRF_MONITOR_GC set only
// for that collection), and builds a heapsnap.Snapshot from the objects,
// references and roots the walk reports. It works on every runtime the
// SDK supports (2.0 to 11): the walk is part of the profiling API since
// .NET Framework 2.0.
//
// A profiler embeds a *Capturer (or forwards Initialize and the four GC
// callbacks to it) and calls Take from a goroutine of its own.
package capture

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/clrprof/clrprof/heapsnap"
	"github.com/clrprof/clrprof/heapwalk"
	"github.com/clrprof/clrprof/profiler"
)

// Options configure a Capturer.
type Options struct {
	// MaxObjects bounds a snapshot: a heap with more objects is refused
	// (ErrTooLarge) and what was gathered is freed. Default 20,000,000
	// (about 1.5 GB of the profiler's memory at most).
	MaxObjects int
	// Timeout bounds how long Take waits for each collection it induces
	// (ForceGC; default 5 minutes).
	Timeout time.Duration
	// SpillDir and SpillAfter: with SpillDir set, a snapshot of more than
	// SpillAfter objects (default 1,000,000) is written to a temporary file
	// in SpillDir during the walk and read back after it
	// (heapsnap.BuilderOptions): the walk then costs the profiler a write
	// buffer instead of ~40 bytes per object and 8 per reference, and the
	// build after it about 36 bytes per object and 4 per reference at its
	// peak instead of ~56 and 12.
	SpillDir   string
	SpillAfter int
}

// Errors of Take.
var (
	// ErrBusy: another snapshot is being taken.
	ErrBusy = errors.New("heapsnap/capture: a snapshot is already being taken")
	// ErrTooLarge: the heap has more objects than Options.MaxObjects.
	ErrTooLarge = errors.New("heapsnap/capture: heap larger than the bound")
	// ErrNotInitialized: Initialize was not called (the Capturer is not
	// part of a registered profiler, or the runtime has not started it).
	ErrNotInitialized = errors.New("heapsnap/capture: not initialized")
	// ErrNotStarted: the runtime has not finished starting (it refuses
	// the heap walk until then); try again later.
	ErrNotStarted = errors.New("heapsnap/capture: the runtime has not finished starting")
	// ErrShutdown: the runtime is shutting down.
	ErrShutdown = errors.New("heapsnap/capture: the runtime is shutting down")
)

// Stats describe the last snapshot taken.
type Stats struct {
	// Pause is how long ForceGC took: the application's threads are
	// suspended for the collection and the walk, so this is the pause
	// the snapshot cost the application (the Go callbacks included).
	Pause time.Duration
	// Build is the time spent resolving the references afterwards, while
	// the application runs.
	Build   time.Duration
	Objects int
	Roots   int
	// Collections is how many collections Take induced to get one walked
	// that collected the whole heap (normally 1, at most 3).
	Collections int
}

// beforeForceGC, when set (only by the tests' profiler, through
// testhook.go's build tag), runs in Take just before the first ForceGC.
var beforeForceGC func()

type phase int

const (
	idle       phase = iota
	armed            // waiting for a full collection to start
	collecting       // between its GarbageCollectionStarted and GarbageCollectionFinished
)

// Capturer takes heap snapshots. Its methods are safe for concurrent use.
type Capturer struct {
	profiler.Base
	opts Options
	info *profiler.Info

	take   sync.Mutex // one Take at a time
	maskMu sync.Mutex // held by Take while it may change the mask, and by the restore after an attach

	mu       sync.Mutex // guards what the GC callbacks fill
	phase    phase
	b        *heapsnap.Builder
	classes  map[profiler.ClassID]struct{}
	objects  int
	roots    int
	overflow bool
	walkErr  error
	done     chan struct{}
	shutdown bool

	loaded   []profiler.ClassID
	unloaded map[profiler.ClassID]struct{}
	slots    []staticSlot

	restore        profiler.Monitor // the mask PrepareAtStartup found
	restorePending bool             // ModuleLoadFinished has not taken it yet
	preparing      bool             // from PrepareAtStartup until the mask is restored
	startErr       error
	frozen         string
	scratch        []uint64 // ObjectReferences' references, reused
	attachNote     string   // after an attach: what a snapshot cannot name
	last           Stats

	rec    *heapwalk.Recorder // the walk recorded in C; nil: Go's ObjectReferences
	recErr error              // why there is no recorder
}

// New returns a Capturer.
func New(opts Options) *Capturer {
	if opts.MaxObjects <= 0 {
		opts.MaxObjects = 20_000_000
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Minute
	}
	return &Capturer{opts: opts, unloaded: map[profiler.ClassID]struct{}{}}
}

func (c *Capturer) newBuilder() *heapsnap.Builder {
	return heapsnap.NewBuilderWith(heapsnap.BuilderOptions{SpillDir: c.opts.SpillDir, SpillAfter: c.opts.SpillAfter})
}

// Initialize keeps info. A profiler that embeds the Capturer and has its
// own Initialize calls this one from it.
func (c *Capturer) Initialize(info *profiler.Info) error {
	c.info = info
	// the walk recorded in C: an object costs the pause a few hundred
	// nanoseconds less than a Go callback (the guard's two signal-mask
	// system calls and cgo's transition)
	c.rec, c.recErr = heapwalk.New(info)
	return nil
}

// PrepareAtStartup must be called at the end of the profiler's
// Initialize (after its own SetEventMask). The runtime turns the heap walk
// on after start-up only when background (concurrent) GC is off (else
// SetEventMask fails with CORPROF_E_CONCURRENT_GC_NOT_PROFILABLE), and it
// turns background GC off for good only when the event mask asks for the
// walk (COR_PRF_MONITOR_GC) as Initialize returns. So this asks for the
// walk and for module loads, and the Capturer's ModuleLoadFinished, at
// the first module load (System.Private.CoreLib's, before any managed code
// runs, so before any collection), restores the mask the profiler had.
// The application then runs without background GC (its full collections
// block, as with DOTNET_gcConcurrent=0), and no collection is walked until
// Take. A profiler with its own ModuleLoadFinished calls the Capturer's
// from it.
func (c *Capturer) PrepareAtStartup() error {
	if c.info == nil {
		return ErrNotInitialized
	}
	mask, err := c.info.GetEventMask()
	if err != nil {
		return fmt.Errorf("heapsnap/capture: GetEventMask: %w", err)
	}
	// class loads stay on: a snapshot names the static fields of the
	// classes loaded
	c.mu.Lock()
	c.restore, c.restorePending, c.preparing = mask|profiler.MonitorClassLoads, true, true
	c.mu.Unlock()
	if err := c.info.SetEventMask(mask | profiler.MonitorGC | profiler.MonitorModuleLoads | profiler.MonitorClassLoads); err != nil {
		return fmt.Errorf("heapsnap/capture: asking for the heap walk at start-up: %w", err)
	}
	return nil
}

// PrepareAtAttach is PrepareAtStartup for a profiler attached to a
// running process: call it at the end of InitializeForAttach (after the
// profiler's own SetAttachEventMask). The runtime accepts the heap walk
// (COR_PRF_MONITOR_GC) from an attaching profiler by turning background GC
// off; PrepareAtAttach asks for the walk there and, from a goroutine a
// second later (once InitializeForAttach has returned), gives the
// profiler's mask back, after which Take turns the walk on for its
// collection only, as after start-up (tried on 3.1, 8, 10 and 11: the
// walk turned off and on again after an attach is accepted). Until then
// the walk is on and answered in C between snapshots. Classes loaded
// before the attach are not seen (no ClassLoadFinished reports them, and
// GetClassFromToken from a thread of the profiler's own killed the process
// on 10.0.15), so their static fields are not named: their objects are
// reached through the runtime's handles instead.
func (c *Capturer) PrepareAtAttach() error {
	if c.info == nil {
		return ErrNotInitialized
	}
	mask, err := c.info.GetEventMask()
	if err != nil {
		return fmt.Errorf("heapsnap/capture: GetEventMask: %w", err)
	}
	if err := c.info.SetEventMask(mask | profiler.MonitorGC | profiler.MonitorClassLoads); err != nil {
		return fmt.Errorf("heapsnap/capture: asking for the heap walk at attach: %w", err)
	}
	if c.rec != nil {
		c.rec.PassToGo(false)
	}
	c.mu.Lock()
	c.attachNote = "static fields of classes loaded before the attach are not named"
	c.mu.Unlock()
	go func() {
		time.Sleep(time.Second)
		// serialized with Take, which must not see the mask change under it
		c.maskMu.Lock()
		defer c.maskMu.Unlock()
		cur, err := c.info.GetEventMask()
		if err == nil && mask&profiler.MonitorGC == 0 {
			err = c.info.SetEventMask(cur &^ profiler.MonitorGC)
		}
		if err != nil {
			// the walk stays on; snapshots work as before
			fmt.Fprintf(os.Stderr, "heapsnap/capture: after the attach, the heap walk stays on: %v\n", err)
			return
		}
		if c.rec != nil {
			c.rec.PassToGo(true)
		}
	}()
	return nil
}

// InitializeForAttach keeps info, as Initialize does. A profiler that
// embeds the Capturer and has its own InitializeForAttach calls this one
// from it.
func (c *Capturer) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	return c.Initialize(info)
}

// ModuleLoadFinished restores the profiler's event mask after
// PrepareAtStartup, at the first module load.
func (c *Capturer) ModuleLoadFinished(moduleID profiler.ModuleID, status profiler.HRESULT) error {
	c.mu.Lock()
	pending, mask := c.restorePending, c.restore
	c.restorePending = false
	c.mu.Unlock()
	if pending {
		err := c.info.SetEventMask(mask)
		c.mu.Lock()
		if err != nil {
			c.startErr = fmt.Errorf("heapsnap/capture: restoring the event mask after start-up: %w", err)
		}
		// only now may Take change the mask: before, it would find the
		// walk on, leave it so, and have it turned off under its feet
		c.preparing = false
		c.mu.Unlock()
	}
	return nil
}

// Shutdown makes later Takes fail with ErrShutdown.
func (c *Capturer) Shutdown() error {
	c.mu.Lock()
	c.shutdown = true
	c.mu.Unlock()
	return nil
}

// LastStats returns the figures of the last snapshot taken.
func (c *Capturer) LastStats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last
}

// Take induces a full blocking collection with the heap walk on and
// returns the snapshot of what survived it. Call it from a goroutine, never
// from inside a profiler callback (the runtime refuses ForceGC on its own
// threads). A second Take while one runs fails with ErrBusy.
func (c *Capturer) Take() (*heapsnap.Snapshot, error) {
	if c.info == nil {
		return nil, ErrNotInitialized
	}
	if !c.take.TryLock() {
		return nil, ErrBusy
	}
	defer c.take.Unlock()

	c.mu.Lock()
	if c.shutdown {
		c.mu.Unlock()
		return nil, ErrShutdown
	}
	if c.startErr != nil {
		err := c.startErr
		c.mu.Unlock()
		return nil, err
	}
	if c.preparing {
		c.mu.Unlock()
		return nil, fmt.Errorf("%w (the event mask PrepareAtStartup changed is not restored yet)", ErrNotStarted)
	}
	c.phase, c.b, c.classes = armed, c.newBuilder(), map[profiler.ClassID]struct{}{}
	c.objects, c.roots, c.overflow, c.walkErr = 0, 0, false, nil
	done := make(chan struct{})
	c.done = done
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		if c.b != nil {
			c.b.Discard() // not built: its spill file goes too
		}
		c.phase, c.b, c.classes, c.done = idle, nil, nil, nil
		c.mu.Unlock()
	}()

	// the static fields' storage, found before the collection; their
	// values are read while it is walked
	slots, sst := c.findStatics()
	c.mu.Lock()
	c.slots = slots
	c.mu.Unlock()

	c.maskMu.Lock()
	defer c.maskMu.Unlock() // after the mask is given back (defers run last first)
	mask, err := c.info.GetEventMask()
	if err != nil {
		return nil, fmt.Errorf("heapsnap/capture: GetEventMask: %w", err)
	}
	if mask&profiler.MonitorGC == 0 {
		if err := c.info.SetEventMask(mask | profiler.MonitorGC); err != nil {
			if errors.Is(err, profiler.CORPROF_E_RUNTIME_UNINITIALIZED) {
				return nil, fmt.Errorf("%w (SetEventMask: %v)", ErrNotStarted, err)
			}
			return nil, fmt.Errorf("heapsnap/capture: turning the heap walk on (SetEventMask): %w", err)
		}
		defer func() {
			// back to what the profiler had: the walk costs every
			// collection while it is on
			if cur, err := c.info.GetEventMask(); err == nil {
				_ = c.info.SetEventMask(cur &^ profiler.MonitorGC)
			}
		}()
	}

	// ForceGC must run on a thread that never ran managed code: a locked
	// goroutine of our own is one (Go's threads are its own). ForceGC
	// returns after the collection, its walk and its
	// GarbageCollectionFinished, so done is closed when it returns, or the
	// collection was not walked as a whole-heap one: a collection of the
	// app's own that was under way absorbed the induced one, or the walk
	// was off (mask changed by someone else). Then ask again, a bounded
	// number of times, and never wait for a walk that will not come (seen
	// 2026-12-06: on 3.1.23 a Take that found the walk still on from
	// start-up waited for its whole Timeout, and the exit snapshot with it).
	if beforeForceGC != nil {
		beforeForceGC()
	}
	start := time.Now()
	var pause time.Duration
	const maxInduced = 3
	walkedOne, induced := false, 0
	for induced < maxInduced && !walkedOne {
		induced++
		t0 := time.Now()
		gcErr := make(chan error, 1)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			gcErr <- c.info.ForceGC()
		}()
		select {
		case err := <-gcErr:
			pause += time.Since(t0)
			if errors.Is(err, profiler.CORPROF_E_NOT_YET_AVAILABLE) || errors.Is(err, profiler.CORPROF_E_RUNTIME_UNINITIALIZED) {
				// early in start-up the runtime takes the mask but not yet
				// an induced collection (seen on 3.1.23 and 10.0.15)
				return nil, fmt.Errorf("%w (ForceGC: %v)", ErrNotStarted, err)
			}
			if err != nil {
				return nil, fmt.Errorf("heapsnap/capture: ForceGC: %w", err)
			}
		case <-time.After(c.opts.Timeout):
			return nil, fmt.Errorf("heapsnap/capture: the induced collection did not end within %v", c.opts.Timeout)
		}
		select {
		case <-done:
			walkedOne = true
		default:
		}
	}
	if !walkedOne {
		mask, _ := c.info.GetEventMask()
		return nil, fmt.Errorf("heapsnap/capture: %d induced collections ended without a whole-heap collection walked (event mask %#x; MonitorGC on: %v)",
			maxInduced, uint32(mask), mask&profiler.MonitorGC != 0)
	}

	c.mu.Lock()
	b, classes, overflow, walkErr := c.b, c.classes, c.overflow, c.walkErr
	objects, roots := c.objects, c.roots
	c.b = nil
	c.mu.Unlock()
	walker := "Go callbacks (" + fmt.Sprint(c.recErr) + ")"
	if c.rec != nil {
		// the objects the C recorder kept during the pause go into the
		// Builder now, while the application runs
		walker = "recorded in C"
		st := c.rec.Stats()
		switch {
		case st.Overflow:
			overflow = true
		case st.OutOfMemory:
			walkErr = errors.New("heapsnap/capture: the heap walk's buffer could not grow (out of memory)")
		case st.SizeErr != nil && walkErr == nil:
			walkErr = fmt.Errorf("heapsnap/capture: %w", st.SizeErr)
		}
		if !overflow && walkErr == nil {
			c.rec.Objects(func(obj profiler.ObjectID, cls profiler.ClassID, size uint64, refs []profiler.ObjectID) bool {
				c.add(b, classes, obj, cls, size, refs)
				objects++
				return true
			})
		}
		c.rec.Reset()
	}
	if overflow || walkErr != nil {
		b.Discard()
	}
	if overflow {
		return nil, fmt.Errorf("%w: more than %d objects (Options.MaxObjects)", ErrTooLarge, c.opts.MaxObjects)
	}
	if walkErr != nil {
		return nil, walkErr
	}
	t0 := time.Now()
	c.mu.Lock()
	frozen := c.frozen
	c.mu.Unlock()
	var unnamed int
	for cls := range classes {
		name, err := c.info.ClassName(cls)
		if err != nil {
			unnamed++
			name = fmt.Sprintf("<class %#x: %v>", uint64(cls), err)
		}
		b.Type(uint64(cls), name)
	}
	b.SetMeta("taken", start.UTC().Format(time.RFC3339Nano))
	b.SetMeta("pid", fmt.Sprint(os.Getpid()))
	b.SetMeta("pause", pause.String())
	if ri, err := c.info.GetRuntimeInformation(); err == nil {
		b.SetMeta("runtime", fmt.Sprintf("%d.%d.%d (%s)", ri.MajorVersion, ri.MinorVersion, ri.BuildNumber, ri.VersionString))
	}
	if unnamed > 0 {
		b.SetMeta("unnamed types", fmt.Sprint(unnamed))
	}
	statics := fmt.Sprintf("%d reference fields of %d loaded classes named; %d not initialized yet", sst.slots, sst.classes, sst.notInitialized)
	if sst.failed > 0 {
		statics += fmt.Sprintf("; %d failed (first: %v)", sst.failed, sst.firstErr)
	}
	b.SetMeta("static fields", statics)
	b.SetMeta("frozen objects", frozen)
	b.SetMeta("heap walk", walker)
	c.mu.Lock()
	if c.attachNote != "" {
		b.SetMeta("attached", c.attachNote)
	}
	c.mu.Unlock()
	s, err := b.Build()
	if err != nil {
		return nil, err
	}
	st := Stats{Pause: pause, Build: time.Since(t0), Objects: objects, Roots: roots, Collections: induced}
	c.mu.Lock()
	c.last = st
	c.mu.Unlock()
	return s, nil
}

// addFrozen adds the objects of the non-GC (frozen) heap, which the heap
// walk does not report (string literals, RuntimeType objects: .NET 8 and
// later), as objects rooted by RootFrozen: they are never freed, so they
// count in no one's retained size. It says what it did.
func (c *Capturer) addFrozen(b *heapsnap.Builder, classes map[profiler.ClassID]struct{}) string {
	e, err := c.info.EnumerateNonGCObjects()
	if errors.Is(err, profiler.ErrNotAvailable) {
		return "none before .NET 8 (no non-GC heap)"
	}
	if err != nil {
		return fmt.Sprintf("not listed: EnumerateNonGCObjects: %v", err)
	}
	defer e.Release()
	n, failed := 0, 0
	var firstErr error
	for id, err := range e.All() {
		if err != nil {
			return fmt.Sprintf("%d listed, then EnumerateNonGCObjects failed: %v", n, err)
		}
		cls, err1 := c.info.GetClassFromObject(id)
		size, err2 := c.info.GetObjectSize2(id)
		if err1 != nil || err2 != nil {
			if failed == 0 {
				firstErr = errors.Join(err1, err2)
			}
			failed++
			continue
		}
		b.Object(uint64(id), uint64(cls), size, nil)
		b.Root(uint64(id), heapsnap.RootFrozen)
		classes[cls] = struct{}{}
		n++
	}
	if failed > 0 {
		return fmt.Sprintf("%d (and %d whose class or size the runtime did not give; first: %v)", n, failed, firstErr)
	}
	return fmt.Sprint(n)
}

// GarbageCollectionStarted starts gathering when a snapshot is armed and
// this collection collects the whole heap (generation 2).
func (c *Capturer) GarbageCollectionStarted(generationCollected []bool, reason profiler.GCReason) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == armed && len(generationCollected) > 2 && generationCollected[2] {
		c.phase = collecting
		if c.rec != nil {
			c.rec.Start(c.opts.MaxObjects)
		}
	}
	return nil
}

// RootReferences2 records the roots of the collection being walked.
func (c *Capturer) RootReferences2(rootRefIDs []profiler.ObjectID, rootKinds []profiler.GCRootKind, rootFlags []profiler.GCRootFlags, rootIDs []profiler.Address) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase != collecting || c.overflow {
		return nil
	}
	for i, id := range rootRefIDs {
		if id == 0 {
			continue
		}
		c.b.Root(uint64(id), rootKind(rootKinds[i], rootFlags[i]))
		c.roots++
	}
	return nil
}

func rootKind(k profiler.GCRootKind, f profiler.GCRootFlags) heapsnap.RootKind {
	switch {
	case f&profiler.GCRootWeakref != 0:
		return heapsnap.RootWeak
	case f&profiler.GCRootPinning != 0:
		return heapsnap.RootPinning
	}
	switch k {
	case profiler.GCRootStack:
		return heapsnap.RootStack
	case profiler.GCRootFinalizer:
		return heapsnap.RootFinalizer
	case profiler.GCRootHandle:
		return heapsnap.RootHandle
	}
	return heapsnap.RootOther
}

// ObjectReferences records one live object of the collection being walked.
func (c *Capturer) ObjectReferences(objectID profiler.ObjectID, classID profiler.ClassID, objectRefIDs []profiler.ObjectID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase != collecting || c.overflow {
		return nil
	}
	if c.objects >= c.opts.MaxObjects {
		// refuse, and free what was gathered now rather than after the walk
		c.overflow = true
		c.b.Discard()
		c.b = heapsnap.NewBuilder()
		return nil
	}
	size, err := c.info.GetObjectSize2(objectID)
	if err != nil && c.walkErr == nil {
		c.walkErr = fmt.Errorf("heapsnap/capture: GetObjectSize2(%#x): %w", uint64(objectID), err)
	}
	c.add(c.b, c.classes, objectID, classID, size, objectRefIDs)
	c.objects++
	return nil
}

// add gives b one object of the walk and notes its class. The Builder
// copies the references, so one scratch slice converts them for every
// object (Take's feed and ObjectReferences never run at once: the latter
// gathers only between GarbageCollectionStarted and Finished).
func (c *Capturer) add(b *heapsnap.Builder, classes map[profiler.ClassID]struct{}, obj profiler.ObjectID, cls profiler.ClassID, size uint64, refs []profiler.ObjectID) {
	c.scratch = c.scratch[:0]
	for _, r := range refs {
		c.scratch = append(c.scratch, uint64(r))
	}
	b.Object(uint64(obj), uint64(cls), size, c.scratch)
	classes[cls] = struct{}{}
}

// GarbageCollectionFinished ends gathering.
func (c *Capturer) GarbageCollectionFinished() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.phase == collecting {
		if c.rec != nil {
			c.rec.Stop()
		}
		if !c.overflow {
			for _, sl := range c.slots {
				c.b.Static(load(sl.addr), uint64(sl.addr), sl.name)
			}
			// here, in a GC callback: the runtime answers GetClassFromObject
			// on our own thread afterwards with CORPROF_E_UNSUPPORTED_CALL_SEQUENCE
			c.frozen = c.addFrozen(c.b, c.classes)
		}
		c.phase = idle
		close(c.done)
	}
	return nil
}
