package instr

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"
)

// qrecs appends an enter and an exit record of method id with no
// arguments and return value ret, calls times.
func qrecs(buf []byte, id int32, ret uint64, calls int) []byte {
	for i := 0; i < calls; i++ {
		var q qbuild
		at := q.hdr(qEnter, 0, 0, id, 0)
		q.end(at)
		at = q.hdr(qExit, 0, 0, id, 0)
		q.u64(ret)
		q.end(at)
		buf = append(buf, q.b...)
	}
	return buf
}

// TestDeliverPanics: a hook that panics is recovered and counted, the
// records after it are delivered, and an Enter that panicked gives its
// Exit state 0.
func TestDeliverPanics(t *testing.T) {
	var states []uint64
	var rets []int64
	p := &goEntry{hooks: &GoHooks{
		Enter: func(c *Call) uint64 { panic("enter") },
		Exit:  func(r *Return) { states = append(states, r.State()); panic("exit") },
	}, ret: valueKind{kind: KindInt}}
	q := &goEntry{hooks: &GoHooks{
		Enter: func(c *Call) uint64 { return 7 },
		Exit:  func(r *Return) { states = append(states, r.State()); rets = append(rets, r.Value().Int()) },
	}, ret: valueKind{kind: KindInt}}
	pid, qid := addGoEntry(p), addGoEntry(q)
	buf := qrecs(nil, pid, 1, 2)
	buf = qrecs(buf, qid, 5, 1)
	buf = qrecs(buf, pid, 1, 1)
	th := &qthread{tid: 1}
	before := qDelivered.Load()
	if used, n, err := th.deliver(buf); n != 8 || used != len(buf) || err != nil {
		t.Errorf("delivered %d records (%d of %d bytes, %v), want 8", n, used, len(buf), err)
	}
	if d := qDelivered.Load() - before; d != 4 {
		t.Errorf("qDelivered +%d, want 4", d)
	}
	if want := []uint64{0, 0, 7, 0}; len(states) != len(want) || states[0] != 0 || states[1] != 0 || states[2] != 7 || states[3] != 0 {
		t.Errorf("exit states %v, want %v", states, want)
	}
	if len(rets) != 1 || rets[0] != 5 {
		t.Errorf("q's return values %v, want [5]", rets)
	}
	if got := p.panics.Load(); got != 6 {
		t.Errorf("p's panics %d, want 6 (3 enters, 3 exits)", got)
	}
	if q.panics.Load() != 0 || th.depth != 0 {
		t.Errorf("q's panics %d, stack %v", q.panics.Load(), th.stack[:th.depth])
	}
}

// BenchmarkDeferredDeliver measures the drain's Go side per call (an enter
// and an exit record of a method with no arguments asked for, empty
// hooks).
func BenchmarkDeferredDeliver(b *testing.B) {
	e := &goEntry{hooks: &GoHooks{Enter: func(*Call) uint64 { return 0 }, Exit: func(*Return) {}}, ret: valueKind{kind: KindInt}}
	const calls = 1024
	buf := qrecs(nil, addGoEntry(e), 7, calls)
	th := &qthread{tid: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i += calls {
		if _, n, _ := th.deliver(buf); n != 2*calls {
			b.Fatal(n)
		}
	}
}

// TestDrainRing: records read in place from a ring, from any starting
// position, those that go on at the ring's start included, are delivered
// whole and in order, and the ring's room is freed up to head.
func TestDrainRing(t *testing.T) {
	var got []int64
	e := &goEntry{hooks: &GoHooks{
		Enter: func(c *Call) uint64 { return uint64(c.Args()[0].Int()) },
		Exit: func(r *Return) {
			if int64(r.State()) != r.Value().Int() {
				t.Errorf("state %d for the exit returning %d", r.State(), r.Value().Int())
			}
			got = append(got, r.Value().Int())
		},
	}, args: []valueKind{{kind: KindInt}}, ret: valueKind{kind: KindInt}}
	id := addGoEntry(e)
	// Calls with one argument (a 16-byte enter) and a clock (a 24-byte
	// exit with it), then an 8-byte enter and 16-byte exit of another
	// method without hooks.
	var q qbuild
	const calls = 9
	for i := 0; i < calls; i++ {
		at := q.hdr(qEnter, 1, 0, id, 0)
		q.u64(uint64(i))
		q.end(at)
		at = q.hdr(qExit, 0, 0, id, uint64(1000+i))
		q.u64(uint64(i))
		q.end(at)
		at = q.hdr(qEnter, 0, 0, -1, 0)
		q.end(at)
		at = q.hdr(qExit, 0, 0, -1, 0)
		q.u64(0)
		q.end(at)
	}
	const size = 512 // smaller than the records: the ring wraps
	for start := uint64(0); start < size; start += 8 {
		got = got[:0]
		th := &qthread{tid: 1}
		ring := make([]byte, size)
		tail := start
		var freed uint64
		// Written and drained in pieces that fit, as the thread and the
		// drain would.
		for b := q.b; len(b) > 0; {
			n := 0
			for n < len(b) && n+int(binary.LittleEndian.Uint16(b[n:])) <= size/2 {
				n += int(binary.LittleEndian.Uint16(b[n:]))
			}
			for i := 0; i < n; i++ {
				ring[(tail+uint64(i))%size] = b[i]
			}
			head := tail + uint64(n)
			th.drainRing(ring, tail, head, func(t uint64) { freed = t })
			if freed != head {
				t.Fatalf("start %d: freed to %d, want %d", start, freed, head)
			}
			tail, b = head, b[n:]
		}
		if len(got) != calls || th.depth != 0 {
			t.Fatalf("start %d: exits %v, depth %d", start, got, th.depth)
		}
		for i, v := range got {
			if v != int64(i) {
				t.Fatalf("start %d: exits %v", start, got)
			}
		}
	}
}

// FuzzDeliverQ: whatever the bytes, deliver never panics, delivers only
// whole records, and what it leaves is an unfinished record or an error.
func FuzzDeliverQ(f *testing.F) {
	e := &goEntry{hooks: &GoHooks{Enter: func(*Call) uint64 { return 1 }, Exit: func(*Return) {}},
		args: []valueKind{{kind: KindString}, {kind: KindInt}}, ret: valueKind{kind: KindString}}
	id := addGoEntry(e)
	f.Add(qrecs(nil, id, 3, 2))
	var q qbuild
	at := q.hdr(qEnter, 2, 1, id, 7)
	q.u64(0)
	q.u64(9)
	q.str("x", false, false)
	q.end(at)
	at = q.hdr(qExit, 0, qExcFlag|qRetStrFlag|qTypeStrFlag, id, 8)
	q.u64(0)
	q.str("y", false, true)
	q.str("System.Exception", false, false)
	q.end(at)
	f.Add(q.b)
	f.Add(q.b[:len(q.b)-8])
	f.Fuzz(func(t *testing.T, b []byte) {
		th := &qthread{tid: 1}
		used, n, err := th.deliver(b)
		if used < 0 || used > len(b) || n > len(b)/qHeader {
			t.Fatalf("used %d of %d bytes, %d records", used, len(b), n)
		}
		if rest := b[used:]; err == nil && len(rest) >= qHeader {
			if size := int(binary.LittleEndian.Uint16(rest)); size <= len(rest) {
				t.Fatalf("a whole record of %d bytes left without an error", size)
			}
		}
	})
}

// TestDeliverLeaves: runs of leaf calls (an 8-byte enter followed at once
// by its 16-byte exit, which leaves delivers without the stack) mixed with
// the records the general path takes (nested calls, an exception leaving,
// a clock, a method without an Enter, another method between) reach the
// hooks in order, each Exit with its own Enter's state and its value, and
// what a record of the general path set (an exception, a clock) does not
// reach the leaf calls after it.
func TestDeliverLeaves(t *testing.T) {
	var got []string
	var ids [3]int32
	mk := func(name string, enter bool) *goEntry {
		h := &GoHooks{Exit: func(r *Return) {
			got = append(got, fmt.Sprintf("%s exit m=%d state=%d value=%d %s exc=%v type=%q time=%v", name, r.Method(), r.State(), r.Value().Int(), r.Value().Type, r.Exception(), r.ExceptionType(), !r.Time().IsZero()))
		}}
		if enter {
			n := uint64(0)
			h.Enter = func(c *Call) uint64 {
				n++
				got = append(got, fmt.Sprintf("%s enter m=%d args=%d time=%v", name, c.Method(), len(c.Args()), !c.Time().IsZero()))
				return n
			}
		}
		return &goEntry{hooks: h, method: int32(len(name)), ret: valueKind{kind: KindInt, typ: "System.Int32"}}
	}
	ids[0] = addGoEntry(mk("a", true))
	ids[1] = addGoEntry(mk("bb", true))
	ids[2] = addGoEntry(mk("ccc", false))
	var q qbuild
	var want []string
	leaf := func(i int, ret uint64, state uint64) {
		name := [...]string{"a", "bb", "ccc"}[i]
		at := q.hdr(qEnter, 0, 0, ids[i], 0)
		q.end(at)
		at = q.hdr(qExit, 0, 0, ids[i], 0)
		q.u64(ret)
		q.end(at)
		if i != 2 {
			want = append(want, fmt.Sprintf("%s enter m=%d args=0 time=false", name, len(name)))
		}
		want = append(want, fmt.Sprintf("%s exit m=%d state=%d value=%d System.Int32 exc=false type=\"\" time=false", name, len(name), state, ret))
	}
	leaf(0, 10, 1)
	leaf(0, 11, 2)
	leaf(1, 20, 1)
	leaf(2, 30, 0)
	leaf(0, 12, 3)
	// a enters (state 4), bb's leaf calls run inside, a returns.
	at := q.hdr(qEnter, 0, 0, ids[0], 0)
	q.end(at)
	want = append(want, "a enter m=1 args=0 time=false")
	leaf(1, 21, 2)
	leaf(1, 22, 3)
	at = q.hdr(qExit, 0, 0, ids[0], 0)
	q.u64(13)
	q.end(at)
	want = append(want, "a exit m=1 state=4 value=13 System.Int32 exc=false type=\"\" time=false")
	// An exception leaves bb (the general path), then a leaf again.
	at = q.hdr(qEnter, 0, 0, ids[1], 0)
	q.end(at)
	at = q.hdr(qExit, 0, qExcFlag, ids[1], 0)
	q.u64(0)
	q.end(at)
	want = append(want, "bb enter m=2 args=0 time=false", "bb exit m=2 state=4 value=0 System.Int32 exc=true type=\"\" time=false")
	leaf(1, 23, 5)
	// A call with a clock (the general path), then a leaf.
	at = q.hdr(qEnter, 0, 0, ids[0], 77)
	q.end(at)
	at = q.hdr(qExit, 0, 0, ids[0], 78)
	q.u64(14)
	q.end(at)
	want = append(want, "a enter m=1 args=0 time=true", "a exit m=1 state=5 value=14 System.Int32 exc=false type=\"\" time=true")
	leaf(0, 15, 6)
	leaf(0, 16, 7)

	th := &qthread{tid: 1}
	used, n, err := th.deliver(q.b)
	if err != nil || used != len(q.b) || n != 2*13 {
		t.Fatalf("deliver: %d records, %d of %d bytes, %v; want 26, all", n, used, len(q.b), err)
	}
	if len(got) != len(want) {
		t.Fatalf("got %d hook calls, want %d:\n%s", len(got), len(want), strings.Join(got, "\n"))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("hook call %d: %s, want %s", i, got[i], want[i])
		}
	}
	if th.depth != 0 {
		t.Errorf("stack %v left", th.stack[:th.depth])
	}
}
