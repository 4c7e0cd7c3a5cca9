package pprofbuild

import (
	"fmt"
	"sync"
	"time"

	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/profiler"
)

// GCStats counts garbage collections per generation and the time the
// runtime was suspended for them. Feed it either the runtime's events
// (Event, .NET 5 and later: GCSuspendEEBegin, GCStart, GCRestartEEEnd)
// or the profiling API's callbacks (every runtime: RuntimeSuspendStarted,
// GarbageCollectionStarted, RuntimeResumeFinished; the event mask needs
// MonitorSuspends and HighBasicGC or MonitorGC), never both. A pause is
// timed from the start of the suspension to the end of the restart, on
// the profiler's clock when the event or callback arrives, and goes to the
// oldest generation collected in it.
type GCStats struct {
	mu          sync.Mutex
	suspendedAt time.Time
	suspended   bool
	gen         int // generation of the collection in this pause; -1 none
	collections [maxGen + 1]int64
	pauses      [maxGen + 1]int64 // ns
	pauseCount  [maxGen + 1]int64
	background  int64 // collections that started outside a pause
	// suspensions only (WithoutGenerations): pauses for GC whose
	// collection was not reported
	noGen                   bool
	unknownCount, unknownNs int64
	total                   int64 // collections since NewGCStats
}

// UnknownGenerationFrame is the pseudo-frame under which a GCStats fed
// suspensions only (WithoutGenerations) puts its pauses.
const UnknownGenerationFrame = "[GC, generation not reported]"

// WithoutGenerations makes g count every suspension for GC as one
// collection of unknown generation (under UnknownGenerationFrame), for
// a profiler that sees the runtime's suspensions but not its collections:
// on .NET Core 2.x GarbageCollectionStarted needs MonitorGC, which turns
// concurrent GC off and reports every moved object.
func (g *GCStats) WithoutGenerations() {
	g.mu.Lock()
	g.noGen = true
	g.mu.Unlock()
}

const maxGen = 4 // 0, 1, 2, LOH (3), POH (4)

// NewGCStats returns an empty GCStats.
func NewGCStats() *GCStats { return &GCStats{gen: -1} }

// SuspendStarted is RuntimeSuspendStarted (only reason SuspendForGC counts)
// or the GCSuspendEEBegin event.
func (g *GCStats) SuspendStarted(forGC bool) {
	if !forGC {
		return
	}
	g.mu.Lock()
	g.suspendedAt, g.suspended, g.gen = time.Now(), true, -1
	g.mu.Unlock()
}

// Collection records a collection of generation gen (GCStart's Depth,
// or the oldest generation GarbageCollectionStarted says is collected).
func (g *GCStats) Collection(gen int) {
	if gen < 0 || gen > maxGen {
		return
	}
	g.mu.Lock()
	g.collections[gen]++
	g.total++
	if g.suspended {
		g.gen = max(g.gen, gen)
	} else {
		g.background++
	}
	g.mu.Unlock()
}

// Resumed is RuntimeResumeFinished or the GCRestartEEEnd event.
func (g *GCStats) Resumed() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.suspended {
		return
	}
	g.suspended = false
	gen := g.gen
	if gen < 0 && g.noGen {
		g.unknownCount++
		g.total++
		g.unknownNs += int64(time.Since(g.suspendedAt))
		return
	}
	if gen < 0 {
		return // a suspension for GC without a collection seen in it
	}
	g.pauses[gen] += int64(time.Since(g.suspendedAt))
	g.pauseCount[gen]++
}

// Total is the number of collections counted since NewGCStats, of every
// generation and of unknown generation, whatever AddTo has reset.
func (g *GCStats) Total() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.total
}

// OldestCollected is the oldest generation a GarbageCollectionStarted
// collects (-1 for none).
func OldestCollected(collected []bool) int {
	gen := -1
	for i, c := range collected {
		if c && i <= 2 {
			gen = i
		}
	}
	return gen
}

// Event feeds GCStats one decoded runtime event (clrevents.DecodeRuntime);
// other events are ignored.
func (g *GCStats) Event(ev any) {
	switch e := ev.(type) {
	case *clrevents.GCSuspendEEBegin:
		g.SuspendStarted(e.Version == 0 || e.Reason == 1 || e.Reason == 6) // SuspendForGC, SuspendForGCPrep
	case *clrevents.GCStart:
		g.Collection(int(e.Depth))
	case *clrevents.GCPhase:
		if e.ID == clrevents.IDGCRestartEEEnd {
			g.Resumed()
		}
	}
}

// GCTypes are the sample types of a GC profile: gc_collections/count
// (collections of the generation) and gc_pause/nanoseconds (the runtime
// suspended for them).
var GCTypes = []SampleType{{Type: "gc_collections", Unit: "count"}, {Type: "gc_pause", Unit: "nanoseconds"}}

// AddTo adds one sample per generation with collections to b (a Builder
// of GCTypes), under the pseudo-frame "[GC gen N]", and with reset starts
// the counts over.
func (g *GCStats) AddTo(b *Builder, reset bool) (collections [maxGen + 1]int64) {
	g.mu.Lock()
	c, p := g.collections, g.pauses
	uc, un := g.unknownCount, g.unknownNs
	if reset {
		g.collections, g.pauses, g.pauseCount = [maxGen + 1]int64{}, [maxGen + 1]int64{}, [maxGen + 1]int64{}
		g.unknownCount, g.unknownNs = 0, 0
	}
	g.mu.Unlock()
	if uc > 0 {
		b.AddNamed([]string{UnknownGenerationFrame}, nil, uc, un)
	}
	for gen := range c {
		if c[gen] > 0 || p[gen] > 0 {
			b.AddNamed([]string{fmt.Sprintf("[GC gen %d]", gen)}, nil, c[gen], p[gen])
		}
	}
	return c
}

// Contention pairs the ContentionStart and ContentionStop events of each
// thread (delivered on the waiting thread, .NET 5 and later): Start keeps
// the stack the caller took (Info.StackTrace(0, n) inside
// EventPipeEventDelivered), Stop adds one sample with the wait's duration
// (ContentionStop's DurationNs, version 1; the profiler's clock for
// version 0) to the Builder (of ContentionTypes).
type Contention struct {
	b       *Builder
	mu      sync.Mutex
	pending map[profiler.ThreadID]pendingWait
	// Unpaired counts stops without a start (the session began during a
	// wait, or the start's stack could not be taken).
	unpaired int64
}

type pendingWait struct {
	stack []profiler.FunctionID
	at    time.Time
}

// ContentionTypes are the sample types of a contention profile:
// contentions/count and delay/nanoseconds (as Go's mutex profile).
var ContentionTypes = []SampleType{{Type: "contentions", Unit: "count"}, {Type: "delay", Unit: "nanoseconds"}}

// NewContention returns a Contention adding to b.
func NewContention(b *Builder) *Contention {
	return &Contention{b: b, pending: map[profiler.ThreadID]pendingWait{}}
}

// Start records that thread began to wait, at stack.
func (c *Contention) Start(thread profiler.ThreadID, stack []profiler.FunctionID) {
	c.mu.Lock()
	c.pending[thread] = pendingWait{stack, time.Now()}
	c.mu.Unlock()
}

// Stop records the end of thread's wait; durationNs < 0 means the event
// did not say.
func (c *Contention) Stop(thread profiler.ThreadID, durationNs float64) {
	c.mu.Lock()
	w, ok := c.pending[thread]
	delete(c.pending, thread)
	if !ok {
		c.unpaired++
	}
	c.mu.Unlock()
	if !ok {
		return
	}
	if durationNs < 0 {
		durationNs = float64(time.Since(w.at))
	}
	c.b.Add(w.stack, nil, 1, int64(durationNs))
}

// Unpaired is the number of stops without a start.
func (c *Contention) Unpaired() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unpaired
}
