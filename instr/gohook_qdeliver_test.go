package instr

import (
	"encoding/binary"
	"testing"
)

// qrecs appends an enter and an exit record of method id with no
// arguments and return value ret, calls times.
func qrecs(buf []byte, id int32, ret uint64, calls int) []byte {
	for i := 0; i < calls; i++ {
		var h [qHeader]byte
		binary.LittleEndian.PutUint32(h[0:], qHeader)
		h[4] = qEnter
		binary.LittleEndian.PutUint32(h[8:], uint32(id))
		buf = append(buf, h[:]...)
		var x [qHeader + 8]byte
		binary.LittleEndian.PutUint32(x[0:], qHeader+8)
		x[4] = qExit
		binary.LittleEndian.PutUint32(x[8:], uint32(id))
		binary.LittleEndian.PutUint64(x[qHeader:], ret)
		buf = append(buf, x[:]...)
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
		Enter: func(c Call) uint64 { panic("enter") },
		Exit:  func(r Return) { states = append(states, r.State); panic("exit") },
	}, ret: valueKind{kind: KindInt}}
	q := &goEntry{hooks: &GoHooks{
		Enter: func(c Call) uint64 { return 7 },
		Exit:  func(r Return) { states = append(states, r.State); rets = append(rets, r.Value.Int()) },
	}, ret: valueKind{kind: KindInt}}
	pid, qid := addGoEntry(p), addGoEntry(q)
	buf := qrecs(nil, pid, 1, 2)
	buf = qrecs(buf, qid, 5, 1)
	buf = qrecs(buf, pid, 1, 1)
	th := &qthread{tid: 1}
	before := qDelivered.Load()
	if n := th.deliver(buf); n != 8 {
		t.Errorf("delivered %d records, want 8", n)
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
	if q.panics.Load() != 0 || len(th.stack) != 0 {
		t.Errorf("q's panics %d, stack %v", q.panics.Load(), th.stack)
	}
}

// BenchmarkDeferredDeliver measures the drain's Go side per call (an enter
// and an exit record of a method with no arguments asked for, empty
// hooks).
func BenchmarkDeferredDeliver(b *testing.B) {
	e := &goEntry{hooks: &GoHooks{Enter: func(Call) uint64 { return 0 }, Exit: func(Return) {}}, ret: valueKind{kind: KindInt}}
	const calls = 1024
	buf := qrecs(nil, addGoEntry(e), 7, calls)
	th := &qthread{tid: 1}
	b.ResetTimer()
	for i := 0; i < b.N; i += calls {
		if n := th.deliver(buf); n != 2*calls {
			b.Fatal(n)
		}
	}
}
