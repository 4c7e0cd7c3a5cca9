//go:build clrprof_testhooks

package elt

import (
	"runtime"
	"testing"

	"github.com/clrprof/clrprof/internal/ring"
	"github.com/clrprof/clrprof/profiler"
)

// The fast-path stubs preserve every general-purpose register but %rsp
// and %rbp (which the call itself uses) and %xmm0-%xmm15, on the fast path
// (a ring exists) and on the full-save slow path (first event of a thread,
// or forced), and record the events they were called for.
func TestELTStubsPreserveRegisters(t *testing.T) {
	rs, err := testELTSetup(1024)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("xsave area: %d bytes (0 = fxsave)", testXSaveSize())
	defer testELTGate(false, false)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	kinds := []Kind{Enter, Leave, Tailcall}
	var want []Event
	for _, slow := range []bool{false, true, false} {
		testELTGate(true, slow)
		for which, k := range kinds {
			id := uint64(0x1000 + len(want))
			if bad := testELTCall(which, id); bad != 0 {
				t.Errorf("%v (slow=%v) changed registers, mask %#x", k, slow, bad)
			}
			want = append(want, Event{Function: profiler.FunctionID(id), Kind: k})
		}
	}
	// A closed gate records nothing and still preserves registers.
	testELTGate(false, false)
	if bad := testELTCall(0, 0xdead); bad != 0 {
		t.Errorf("closed gate changed registers, mask %#x", bad)
	}
	var got []Event
	rs.Drain(1<<20, func(v *ring.View) int {
		for _, s := range v.Slots {
			got = append(got, Event{Function: profiler.FunctionID(s[0]), Kind: Kind(s[1] >> 61)})
		}
		return len(v.Slots)
	})
	if len(got) != len(want) {
		t.Fatalf("recorded %d events, want %d: %v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// The counting stubs preserve the same registers, on the slow path (the
// thread's first event) and the fast path, and count.
func TestCountStubsPreserveRegisters(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const f = 0x7f0012345678
	idx := testCountSetup(f)
	if idx == 0 {
		t.Fatal("the mapper gave no index")
	}
	defer testCountOff()
	defer testELTGate(false, false)
	cc := &CallCounter{clock: ring.NewClock()}
	for _, slow := range []bool{false, true, false} {
		testELTGate(true, slow)
		for _, which := range []int{3, 4, 3, 5} { // enter, leave, enter, tailcall
			if bad := testELTCall(which, idx); bad != 0 {
				t.Errorf("counting hook %d (slow=%v) changed registers, mask %#x", which, slow, bad)
			}
		}
	}
	testELTGate(false, false)
	var calls uint64
	for _, c := range cc.Snapshot() {
		if c.Function == f {
			calls += c.Calls
		}
	}
	if calls != 6 {
		t.Errorf("%d calls counted, want 6", calls)
	}
	if s := cc.Stats(); s.Unmatched != 0 || s.Lost != 0 || s.Unmapped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// The recorder's drain converts events in place into one reused slice: it
// allocates nothing per event (at most a constant per drain).
func TestELTDrainDoesNotAllocatePerEvent(t *testing.T) {
	rs, err := testELTSetup(1 << 12)
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	testELTGate(true, false)
	defer testELTGate(false, false)
	var got int
	r := &Recorder{
		opts:   Options{Batch: func(b Batch) { got += len(b.Events) }, ChunkEvents: 256},
		rings:  rs,
		clock:  ring.NewClock(),
		events: make([]Event, 0, 256),
	}
	// (The stubs' ring for this thread may be one an earlier test made
	// smaller: stay under 1024 slots per round.)
	const perRun, rounds = 800, 10
	record := func() {
		for i := 0; i < perRun/2; i++ {
			testELTCall(0, 0x1234)
			testELTCall(1, 0x1234)
		}
	}
	record()
	r.drain() // the ring exists and is known to the drain
	got = 0
	var before, after runtime.MemStats
	var mallocs uint64
	for i := 0; i < rounds; i++ {
		record() // (the test's own calls allocate)
		runtime.ReadMemStats(&before)
		r.drain()
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
	}
	allocs := float64(mallocs) / rounds
	if got != rounds*perRun {
		t.Errorf("delivered %d events, want %d", got, rounds*perRun)
	}
	if allocs > 2 {
		t.Errorf("%.1f allocations per drain of %d events", allocs, perRun)
	}
	t.Logf("%.1f allocations per drain of %d events in chunks of 256", allocs, perRun)
}
