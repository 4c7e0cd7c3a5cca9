package pprofbuild

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/pprof/profile"
)

// names of test frames without a runtime: every ID is pre-resolved.
func testNames(ids ...profiler.FunctionID) *Names {
	n := &Names{funcs: map[profiler.FunctionID]string{}, classes: map[profiler.ClassID]string{}}
	for _, id := range ids {
		n.funcs[id] = fmt.Sprintf("F%d", id)
	}
	return n
}

func TestBuilderAggregatesAndBounds(t *testing.T) {
	b := NewBuilder([]SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, "cpu", 2)
	b.Add([]profiler.FunctionID{1, 2}, nil, 1, 10)
	b.Add([]profiler.FunctionID{1, 2}, nil, 1, 5)
	b.Add([]profiler.FunctionID{1, 2}, []Label{{Key: "thread", Value: "7"}}, 1, 1)
	b.Add([]profiler.FunctionID{3}, nil, 2, 100) // over the bound
	b.AddNamed([]string{"[GC gen 2]"}, nil, 1, 1)
	if b.Len() != 3 || b.Overflowed() != 2 {
		t.Fatalf("Len %d Overflowed %d, want 3 (two stacks and the overflow) and 2", b.Len(), b.Overflowed())
	}
	p := b.Build(testNames(0, 1, 2, 3), Meta{Start: time.Unix(100, 0), Duration: time.Second}, true)
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	var total int64
	for _, s := range q.Sample {
		k := ""
		for _, l := range s.Location {
			k += l.Line[0].Function.Name + ";"
		}
		k += fmt.Sprint(s.Label["thread"])
		got[k] += s.Value[1]
		total += s.Value[1]
	}
	want := map[string]int64{"F1;F2;[]": 15, "F1;F2;[7]": 1, OverflowFrame + ";[]": 101}
	if fmt.Sprint(got) != fmt.Sprint(want) || total != 117 {
		t.Errorf("samples %v, want %v (totals kept: %d)", got, want, total)
	}
	if q.DefaultSampleType != "cpu" || len(q.Comments) != 1 {
		t.Errorf("default %q comments %q", q.DefaultSampleType, q.Comments)
	}
	if b.Len() != 0 {
		t.Errorf("reset left %d samples", b.Len())
	}
}

func TestGCStatsFromEvents(t *testing.T) {
	g := NewGCStats()
	// A gen 1 collection inside a pause, a background gen 2 outside one,
	// a suspension for something else.
	g.Event(&clrevents.GCSuspendEEBegin{Version: 1, Reason: 1})
	g.Event(&clrevents.GCStart{Version: 2, Depth: 1})
	time.Sleep(2 * time.Millisecond)
	g.Event(&clrevents.GCPhase{ID: clrevents.IDGCRestartEEEnd, Version: 1})
	g.Event(&clrevents.GCStart{Version: 2, Depth: 2, Type: 1})
	g.Event(&clrevents.GCSuspendEEBegin{Version: 1, Reason: 3})
	g.Event(&clrevents.GCPhase{ID: clrevents.IDGCRestartEEEnd, Version: 1})
	b := NewBuilder(GCTypes, "", 10)
	c := g.AddTo(b, true)
	if c[1] != 1 || c[2] != 1 || c[0] != 0 {
		t.Errorf("collections %v", c)
	}
	if g.pauses[1] != 0 {
		t.Errorf("reset left pauses %v", g.pauses)
	}
	if g.Total() != 2 {
		t.Errorf("Total %d after the reset, want the 2 collections", g.Total())
	}
	p := b.Build(testNames(), Meta{}, false)
	for _, s := range p.Sample {
		name := s.Location[0].Line[0].Function.Name
		switch name {
		case "[GC gen 1]":
			if s.Value[0] != 1 || s.Value[1] < int64(2*time.Millisecond) {
				t.Errorf("gen 1: %v, want 1 collection and a pause of 2 ms or more", s.Value)
			}
		case "[GC gen 2]":
			if s.Value[0] != 1 || s.Value[1] != 0 {
				t.Errorf("gen 2 (background): %v, want 1 collection and no pause", s.Value)
			}
		default:
			t.Errorf("unexpected sample %s", name)
		}
	}
	if OldestCollected([]bool{true, true, false, false}) != 1 || OldestCollected([]bool{true, true, true, true}) != 2 || OldestCollected(nil) != -1 {
		t.Error("OldestCollected")
	}
}

func TestContentionPairs(t *testing.T) {
	b := NewBuilder(ContentionTypes, "delay", 10)
	c := NewContention(b)
	c.Start(1, []profiler.FunctionID{5})
	c.Stop(2, 100) // no start on thread 2
	c.Stop(1, 1234)
	c.Start(1, []profiler.FunctionID{5})
	c.Stop(1, -1) // version 0: the profiler's clock
	if c.Unpaired() != 1 {
		t.Errorf("unpaired %d", c.Unpaired())
	}
	p := b.Build(testNames(5), Meta{}, false)
	if len(p.Sample) != 1 || p.Sample[0].Value[0] != 2 || p.Sample[0].Value[1] < 1234 {
		t.Errorf("samples %v", p.Sample)
	}
}

func TestTicks(t *testing.T) {
	var k Ticks
	k.Tick(nil)
	k.Tick(fmt.Errorf("clrprof: SuspendRuntime: %w", profiler.CORPROF_E_SUSPENSION_IN_PROGRESS))
	k.Tick(errors.New("boom"))
	if got := k.Report(true); got != "ticks=3 failures=2 (boom:1, suspension-in-progress:1)" {
		t.Errorf("report %q", got)
	}
	if got := k.Report(false); got != "ticks=0 failures=0" {
		t.Errorf("after reset %q", got)
	}
	k.Tick(nil)
	k.Skip()
	k.Skip()
	if got := k.Report(true); got != "ticks=3 failures=0 skipped=2 (overhead budget)" {
		t.Errorf("with skips %q", got)
	}
	k.Tick(nil)
	k.Thread(fmt.Errorf("clrprof: DoStackSnapshot: %w", profiler.CORPROF_E_UNSUPPORTED_CALL_SEQUENCE))
	k.Thread(errors.New("boom"))
	k.Thread(errors.New("boom"))
	k.Thread(nil)
	if got := k.Report(true); got != "ticks=1 failures=0 thread_failures=3 (boom:2, unsupported-call-sequence:1) threads_without_frames=1" {
		t.Errorf("with threads %q", got)
	}
	if got := k.Report(false); got != "ticks=0 failures=0" {
		t.Errorf("after reset %q", got)
	}
}

// The range logic of a collection, without a runtime: the tracked objects
// of the collected generations (doomed, as GCStarted leaves them) survive
// where a moved or surviving range covers them, at their new addresses,
// and are freed otherwise; the others are untouched; a sample of an older
// epoch is stale.
func TestLiveHeapRanges(t *testing.T) {
	h := NewLiveHeap(nil, 1000, 10)
	h.Add([]alloc.Sample{
		{Object: 100, Size: 10, Class: 1}, {Object: 200, Size: 10, Class: 1},
		{Object: 300, Size: 10, Class: 1}, {Object: 5000, Size: 10, Class: 1},
	})
	// What GCStarted does once the runtime said 100, 200 and 300 are in a
	// collected generation.
	h.epoch++
	h.inGC = true
	h.doomed = []*liveObj{h.objs[100], h.objs[200], h.objs[300]}
	for _, o := range h.doomed {
		o.seen, o.next = false, o.addr
	}
	h.Moved([]profiler.ObjectID{90, 400}, []profiler.ObjectID{1090, 10}, []uint64{20, 10})
	h.Surviving([]profiler.ObjectID{195}, []uint64{10})
	h.GCFinished()
	h.Add([]alloc.Sample{{Object: 777, Size: 10, Epoch: 0}}) // allocated before the collection
	st := h.Stats()
	if st.Tracked != 3 || st.Freed != 1 || st.Stale != 1 || st.Added != 4 {
		t.Errorf("stats %+v, want 3 tracked, 1 freed, 1 stale, 4 added", st)
	}
	for _, a := range []profiler.ObjectID{1100, 200, 5000} {
		if h.objs[a] == nil {
			t.Errorf("no object at %d: %v", a, h.objs)
		}
	}
}

// TestWrite checks that Write's output is a pprof file profile.Parse
// reads back equal, twice in a row (the compressor is reused).
func TestWrite(t *testing.T) {
	b := NewBuilder([]SampleType{{Type: "samples", Unit: "count"}}, "", 10)
	b.AddNamed([]string{"leaf", "root"}, nil, 3)
	b.AddNamed([]string{"other"}, []Label{{Key: "k", Value: "v"}}, 5)
	p := b.Build(nil, Meta{Comments: []string{"c"}}, false)
	for i := 0; i < 2; i++ {
		var buf bytes.Buffer
		if err := Write(&buf, p); err != nil {
			t.Fatal(err)
		}
		if b := buf.Bytes(); len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
			t.Fatalf("not gzip: % x", b[:min(len(b), 4)])
		}
		q, err := profile.Parse(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if len(q.Sample) != 2 || q.Sample[0].Value[0]+q.Sample[1].Value[0] != 8 || len(q.Comments) != 1 {
			t.Fatalf("read back %d samples, comments %q:\n%v", len(q.Sample), q.Comments, q)
		}
	}
}

// TestGCStatsWithoutGenerations: fed suspensions only, every suspension
// for GC is one collection under UnknownGenerationFrame; a suspension for
// something else is not; without WithoutGenerations such pauses are not
// counted at all.
func TestGCStatsWithoutGenerations(t *testing.T) {
	for _, noGen := range []bool{true, false} {
		g := NewGCStats()
		if noGen {
			g.WithoutGenerations()
		}
		for _, forGC := range []bool{true, false, true} {
			g.SuspendStarted(forGC)
			g.Resumed()
		}
		b := NewBuilder(GCTypes, "gc_pause", 10)
		g.AddTo(b, true)
		p := b.Build(nil, Meta{}, true)
		var n int64
		for _, s := range p.Sample {
			if s.Location[0].Line[0].Function.Name == UnknownGenerationFrame {
				n += s.Value[0]
			}
		}
		want := int64(0)
		if noGen {
			want = 2
		}
		if n != want || g.Total() != want {
			t.Errorf("WithoutGenerations %v: %d collections under %s, Total %d, want %d", noGen, n, UnknownGenerationFrame, g.Total(), want)
		}
	}
}

// ThreadCPU reads the thread's CPU-time clock, the same count as
// schedstat's first field: both grow with a spin on the thread, and agree.
func TestThreadCPUClock(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := uint32(syscall.Gettid())
	c0, ok0 := threadClock(tid)
	s0, ok1 := threadSchedstat(tid)
	if !ok0 || !ok1 {
		t.Fatalf("clock %v schedstat %v", ok0, ok1)
	}
	// Spin for 30 ms of this thread's CPU time (not of wall time: on a
	// loaded machine a 30 ms wall spin got 4.5 ms of CPU once).
	n := 0
	for {
		n++
		if c, _ := threadClock(tid); c-c0 >= int64(30*time.Millisecond) {
			break
		}
	}
	c1, _ := threadClock(tid)
	s1, _ := threadSchedstat(tid)
	t.Logf("clock +%v, schedstat +%v (%d turns)", time.Duration(c1-c0), time.Duration(s1-s0), n)
	if c1-c0 < int64(5*time.Millisecond) || s1-s0 < int64(5*time.Millisecond) {
		t.Errorf("a 30 ms spin: clock +%v schedstat +%v", time.Duration(c1-c0), time.Duration(s1-s0))
	}
	if d := c1 - s1; d < -int64(10*time.Millisecond) || d > int64(10*time.Millisecond) {
		t.Errorf("clock %d and schedstat %d differ by %v", c1, s1, time.Duration(d))
	}
	if v, ok := ThreadCPU(tid); !ok || v < c1 {
		t.Errorf("ThreadCPU = %d, %v after the clock read %d", v, ok, c1)
	}
	if _, ok := ThreadCPU(0); ok {
		t.Errorf("ThreadCPU(0) answered")
	}
}

// BenchmarkBuilderAdd adds a sampler's stacks: 64 frames, 200 distinct
// stacks, a span label on half of them.
func BenchmarkBuilderAdd(b *testing.B) {
	stacks := make([][]profiler.FunctionID, 200)
	for i := range stacks {
		st := make([]profiler.FunctionID, 64)
		for j := range st {
			st[j] = profiler.FunctionID(0x7f0000001000 + 0x40*uint64((i*7+j)%500))
		}
		stacks[i] = st
	}
	labels := []Label{{Key: "span_id", Value: "00f067aa0ba902b7"}}
	bl := NewBuilder([]SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, "cpu", 1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var l []Label
		if i%2 == 0 {
			l = labels
		}
		bl.Add(stacks[i%len(stacks)], l, 1, 10000000)
	}
}

// Distinct stacks, pseudo frames and labels are distinct samples, however
// their parts could line up.
func TestBuilderKeysDistinct(t *testing.T) {
	type in struct {
		frames []profiler.FunctionID
		pseudo []string
		labels []Label
	}
	ins := []in{
		{frames: []profiler.FunctionID{1, 2}},
		{frames: []profiler.FunctionID{1}},
		{frames: []profiler.FunctionID{0x201}},
		{frames: []profiler.FunctionID{1, 2}, pseudo: []string{"x"}},
		{frames: []profiler.FunctionID{1, 2}, labels: []Label{{Key: "x", Value: ""}}},
		{frames: []profiler.FunctionID{1, 2}, pseudo: []string{"a", "b"}},
		{frames: []profiler.FunctionID{1, 2}, pseudo: []string{"ab"}},
		{frames: []profiler.FunctionID{1, 2}, labels: []Label{{Key: "a", Value: "b"}}},
		{frames: []profiler.FunctionID{1, 2}, labels: []Label{{Key: "ab", Value: ""}}},
		{pseudo: []string{"[stack table full]"}},
		{},
	}
	seen := map[string]int{}
	for i, x := range ins {
		k := key(x.frames, x.pseudo, x.labels)
		if j, ok := seen[k]; ok {
			t.Errorf("inputs %d and %d share a key", j, i)
		}
		seen[k] = i
		if k2 := key(x.frames, x.pseudo, x.labels); k2 != k {
			t.Errorf("input %d: two keys", i)
		}
	}
}
