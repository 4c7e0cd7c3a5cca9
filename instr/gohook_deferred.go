//go:build cgo

package instr

/*
#include <stdint.h>
#include <stdlib.h>
#include "gohook_deferred.h"
*/
import "C"

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/internal/ring"
)

// DeferredPoll is how often the drain goroutine of deferred Go hooks
// (GoHooks.Deferred) empties the threads' rings when they were found
// empty; while its passes find records it goes on at once, and a thread
// that finds its ring half full wakes it before the poll is due.
const DeferredPoll = time.Millisecond

// DeferredRingSize is the default size in bytes of each thread's ring of
// deferred hook records (allocated at the thread's first deferred call,
// freed after the thread exits and its ring was drained). An enter record
// takes 8 bytes plus 8 per argument plus its strings (8 bytes and 2 per
// UTF-16 unit each), an exit record 16 bytes plus its strings, each 8 more
// with GoHooks.Timestamps: 256 KiB hold about 10,900 calls without
// arguments or timestamps. That is ample for calls that do some work; a
// thread calling a hooked method in a tight loop (a call every 20-30 ns,
// the gohook benchmark) fills it in a quarter of a millisecond, and
// although the drain keeps up with such a loop on average it falls behind
// for a millisecond or two when its thread waits for a core: on a 2-core
// machine such a loop lost 0.06-8% of its calls with the default size and
// none with 4 MiB rings (docs/instrumentation.md).
const DeferredRingSize = 256 << 10

// SetDeferredRingSize sets the size in bytes of the rings of deferred Go
// hooks created from then on (a thread's ring is created at its first
// deferred call): a power of two from 4 KiB to 1 GiB. Larger rings ride
// out longer bursts (a thread calling faster than the hooks run) before
// calls are dropped, at the cost of memory per thread (touched as it
// fills; a ring of 2 MiB or more is advised into huge pages, which the
// kernel uses if transparent_hugepage is madvise or always, and which
// then count 2 MiB at a time).
func SetDeferredRingSize(bytes int) error {
	if bytes < 4096 || bytes > 1<<30 || bytes&(bytes-1) != 0 {
		return fmt.Errorf("instr: deferred ring size %d: want a power of two from 4096 to 1<<30", bytes)
	}
	C.clrprof_q_setsize(C.uint32_t(bytes))
	return nil
}

// DeferredHookStats are the counts of the calls deferred Go hooks saw.
type DeferredHookStats struct {
	// Delivered counts the calls whose Enter record was taken from its
	// thread's ring and handed to the hooks (Enter, then Exit when the
	// method has returned, in the thread's order).
	Delivered uint64
	// Dropped counts the calls recorded neither at entry nor at exit
	// because their thread's ring was full (the drain fell behind).
	Dropped uint64
}

// DeferredStats returns the counts of every deferred rule of the process
// so far. Once the app's threads have stopped calling hooked methods and
// FlushDeferred has returned, Delivered + Dropped is the number of calls.
func DeferredStats() DeferredHookStats {
	return DeferredHookStats{Delivered: qDelivered.Load(), Dropped: qDropped.Load()}
}

var (
	qDelivered atomic.Uint64
	qDropped   atomic.Uint64
	qStart     sync.Once

	qMu       sync.Mutex // one drain pass at a time
	qStarted  bool       // startDeferred ran
	qThreads  = map[uint64]*qthread{}
	qLostSeen uint64
	// qSet is the consumer of the threads' rings (internal/ring: the C
	// set is gohook_deferred.c's, handed as an address because cgo types
	// are per package).
	qSet = ring.Wrap(unsafe.Pointer(&C.clrprof_q_set))

	qEpochWall time.Time
	qEpochMono uint64
)

type qthread struct {
	tid uint64
	// stack[:depth] are the states of the enters whose exits are still
	// to come.
	stack   []uint64
	depth   int
	seen    bool
	rec     qrec   // scratch
	scratch []byte // a record that goes on at the ring's start
	call    Call   // handed to Enter
	ret     Return // handed to Exit

	// Where run is, for deliverRun when a hook panics.
	cur *goEntry // the method of the record being delivered
	at  int      // its offset

	bits uint64 // the leaf loop's mask of the return value's bits
}

// startDeferred sets up the rings' size and starts the drain goroutine
// (once, at the first deferred rule).
func startDeferred() {
	qStart.Do(func() {
		if testHooks {
			if v := os.Getenv("CLRPROF_GOHOOK_RING"); v != "" {
				if n, err := strconv.ParseUint(v, 10, 32); err == nil {
					C.clrprof_q_setsize(C.uint32_t(n))
				}
			}
		}
		qEpochWall = time.Now()
		qEpochMono = uint64(C.clrprof_q_now())
		qMu.Lock()
		qStarted = true
		qMu.Unlock()
		go func() {
			for {
				// While passes find a backlog the drain goes on at once
				// (as fast as the hooks run, one core at most). Once a
				// pass finds less it sleeps for DeferredPoll, or until
				// a thread finds its ring half full (gohook_deferred.c), so
				// that it takes records in large runs instead of
				// following a busy thread record by record (a pass
				// costs a few microseconds, and reading a line of the
				// ring the thread is writing costs both of them). The
				// announcement comes before the last look, so that no
				// ring fills unseen.
				for qPass() >= qBacklog {
					runtime.Gosched()
				}
				seen := C.clrprof_q_sleeping()
				if qPass() >= qBacklog {
					C.clrprof_q_awake()
					continue
				}
				C.clrprof_q_wait(seen, C.int64_t(DeferredPoll))
			}
		}()
	})
}

// qBacklog is the number of records a pass of the drain must find for the
// next pass to start at once.
const qBacklog = 1024

// qidinfo is the word a deferred wrap passes its entries (gohook_deferred.c) in
// place of e's id: the id in bits 0-21, and above it what the entries must
// know of e's values (which are strings, to copy) and whether to read the
// clock, so that a call reads nothing but its thread's ring.
func qidinfo(id int32, e *goEntry) (int32, error) {
	if id < 0 || id >= 1<<C.QID_BITS {
		return 0, fmt.Errorf("instr: deferred Go hooks: method id %d out of range (at most %d methods)", id, 1<<C.QID_BITS)
	}
	var info uint32
	for i, a := range e.args {
		if a.kind == KindString {
			info |= 1 << i
		}
	}
	for j, m := range e.inMem {
		if m.kind.kind == KindString {
			info |= 1 << (len(e.args) + j)
		}
	}
	if e.ret.kind == KindString {
		info |= C.QINFO_RETSTR
	}
	if e.hooks.Timestamps {
		info |= C.QINFO_TIME
	}
	return int32(uint32(id) | info<<C.QID_BITS), nil
}

// FlushDeferred delivers every record of deferred Go hooks queued so far
// (it returns when a pass over every thread's ring found none, or with
// ctx's error). Call it at Shutdown so that nothing queued is lost.
func FlushDeferred(ctx context.Context) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if qPass() == 0 {
			return nil
		}
	}
}

// qPass empties every ring once (at most its size per ring, so that a
// busy thread cannot hold the pass) and returns the records delivered.
func qPass() (total int) {
	qMu.Lock()
	defer qMu.Unlock()
	if !qStarted {
		return 0
	}
	for _, th := range qThreads {
		th.seen = false
	}
	// Every ring once (internal/ring walks them; a ring whose thread has
	// exited is freed once this pass has emptied it).
	qSet.Consume(func(b *ring.Batch) {
		th := qThreads[b.Serial]
		if th == nil {
			th = &qthread{tid: uint64(b.OSThreadID)}
			qThreads[b.Serial] = th
		}
		th.seen = true
		if b.Head != b.Tail {
			total += th.drainRing(b.Data, b.Tail, b.Head, b.Advance)
		}
		if b.Dropped != 0 {
			qDropped.Add(b.Dropped)
		}
	})
	for k, th := range qThreads {
		if !th.seen {
			delete(qThreads, k)
		}
	}
	if lost := qSet.Lost(); lost != qLostSeen {
		qDropped.Add(lost - qLostSeen)
		qLostSeen = lost
	}
	return total
}

// drainRing delivers the records of ring buf from position tail to head
// (positions grow without bound; a record may go on at buf's start) and
// hands each new tail to free once the records before it were delivered.
func (th *qthread) drainRing(buf []byte, tail, head uint64, free func(tail uint64)) (records int) {
	size := uint64(len(buf))
	for tail < head {
		off := tail & (size - 1)
		end := off + (head - tail)
		if end > size {
			end = size
		}
		used, n, err := th.deliver(buf[off:end])
		records += n
		if err == nil && used == 0 {
			// The record at tail goes on at the start of the ring: it is
			// delivered from a copy.
			used, n, err = th.deliverStraddling(buf, off, head-tail)
			records += n
		}
		if err != nil {
			// The C side wrote it: a bug, said once; what is left of the
			// ring is skipped.
			qBadOnce.Do(func() { fmt.Fprintf(os.Stderr, "clrprof: %v\n", err) })
			used = int(head - tail)
		}
		tail += uint64(used)
		free(tail)
	}
	return records
}

// deliverStraddling delivers the record at offset off of buf that goes
// on at buf's start (avail bytes are written from off on).
func (th *qthread) deliverStraddling(buf []byte, off, avail uint64) (used, n int, err error) {
	size := uint64(len(buf))
	if size-off < 8 || avail < 8 {
		return 0, 0, errQRecord
	}
	length := uint64(binary.LittleEndian.Uint16(buf[off:]))
	if length <= size-off || length > avail || length > size {
		return 0, 0, errQRecord
	}
	th.scratch = append(append(th.scratch[:0], buf[off:]...), buf[:length-(size-off)]...)
	used, n, err = th.deliver(th.scratch)
	if err == nil && used != len(th.scratch) {
		err = errQRecord
	}
	return used, n, err
}

// deliver runs the hooks of the whole records at the start of b (one
// thread's) and returns the bytes they take and how many there were; a
// record b holds only the start of is left (used < len(b)).
func (th *qthread) deliver(b []byte) (used, n int, err error) {
	enters, panicked := 0, true
	for panicked && err == nil && used < len(b) {
		var k, e, u int
		k, e, u, panicked, err = th.deliverRun(b[used:])
		n, enters, used = n+k, enters+e, used+u
	}
	qDelivered.Add(uint64(enters))
	return used, n, err
}

// deliverRun runs the hooks of b's records until the end of b, a record
// b holds only the start of, or a hook that panics: that panic is
// recovered and counted here (panicked), and used ends after its record
// (one deferred recover for a run of records instead of one per hook). An
// Enter that panicked has state 0 for its Exit.
func (th *qthread) deliverRun(b []byte) (n, enters, used int, panicked bool, err error) {
	defer func() {
		if x := recover(); x != nil {
			// th.at is the record whose hook panicked: it is delivered.
			th.cur.recovered(x)
			h := qhead(binary.LittleEndian.Uint64(b[th.at:]))
			used = th.at + h.size
			if h.kind == qEnter {
				th.push(0)
			}
			n, enters = countQ(b[:used])
			panicked, err = true, nil
		}
	}()
	n, enters, used, err = th.run(b)
	return n, enters, used, false, err
}

// countQ counts the records of b (whole records, read before) and the
// enters among them.
func countQ(b []byte) (n, enters int) {
	for off := 0; off+qHeader <= len(b); {
		h := qhead(binary.LittleEndian.Uint64(b[off:]))
		n++
		if h.kind == qEnter {
			enters++
		}
		off += h.size
	}
	return n, enters
}

func (th *qthread) push(state uint64) {
	if th.depth == len(th.stack) {
		th.stack = append(th.stack, 0)
		th.stack = th.stack[:cap(th.stack)]
	}
	th.stack[th.depth] = state
	th.depth++
}

// run delivers b's records (deliverRun recovers a panicking hook: run
// keeps in th which record is being delivered).
//
// It is the drain's hot path, kept lean (the cost per call of empty hooks
// is issue 24's budget, docs/benchmarks.md): the records of calls without
// strings (an enter without arguments, an exit without a string) are
// decoded here without qrec.next, the hooks get th's Call and Return,
// reused (read-only to the hooks), and their pointer fields are written
// only when they change (no write barrier per call).
func (th *qthread) run(b []byte) (n, enters, used int, err error) {
	r := &th.rec
	var e *goEntry
	var enter func(*Call) uint64
	var exit func(*Return)
	lastID := int32(-1)
	off := 0
	for off < len(b) {
		at, p := off, b[off:]
		if len(p) < 8 {
			return n, enters, off, nil // b holds the start of a record
		}
		w := binary.LittleEndian.Uint64(p)
		size := int(uint16(w))
		if size < qHeader || size%8 != 0 {
			return n, enters, off, errQRecord
		}
		if size > len(p) {
			return n, enters, off, nil
		}
		// The records without arguments or strings are decoded here (by
		// their first word's low half: length, kind, clock, count and
		// flags), the others by next. The fields are taken from w here,
		// not through qhead: a qword0 kept live across the hook calls
		// made this loop twice as slow (BenchmarkDeferredDeliver).
		id, kind, flags := int32(w>>32), uint8(w>>16)&3, uint16(uint8(w>>24))
		var t, ret uint64
		var full *qrec // the decoded record, for those with arguments or strings
		switch uint32(w) {
		case 8 | qEnter<<16:
		case 16 | qEnter<<16 | 1<<18:
			t = binary.LittleEndian.Uint64(p[8:])
		case 16 | qExit<<16, 16 | qExit<<16 | qExcFlag<<24:
			ret = binary.LittleEndian.Uint64(p[8:])
		case 24 | qExit<<16 | 1<<18, 24 | qExit<<16 | 1<<18 | qExcFlag<<24:
			t, ret = binary.LittleEndian.Uint64(p[8:]), binary.LittleEndian.Uint64(p[16:])
		default:
			if _, err := r.next(p); err != nil {
				return n, enters, off, err
			}
			full, t, ret = r, r.time, r.ret
		}
		off += size
		if id != lastID {
			e, lastID = goLookup(id), id
			enter, exit = nil, nil
			if e != nil {
				enter, exit = e.hooks.Enter, e.hooks.Exit
			}
			th.cur = e
		}
		if uint32(w) == 8|qEnter<<16 {
			// A leaf's calls (an enter followed at once by its exit, no
			// arguments, strings or clock) go through leaves, without
			// the stack.
			if end, calls := th.leaves(b, at, id, e, enter, exit); calls > 0 {
				n, enters, off = n+2*calls, enters+calls, end
				continue
			}
		}
		n++
		th.at = at
		if kind == qEnter {
			enters++
			var state uint64
			if enter != nil {
				c := th.callFor(e, qTime(t))
				if full != nil && full.nargs > 0 {
					e.deferredArgs(c, full)
				}
				state = enter(c)
			}
			th.push(state)
			continue
		}
		var state uint64
		if th.depth > 0 {
			th.depth--
			state = th.stack[th.depth]
		}
		if exit != nil {
			x := th.returnFor(e, state, qTime(t), flags&qExcFlag != 0)
			if full == nil {
				x.value.setq(&e.ret, ret, nil)
			} else {
				e.deferredReturn(x, full)
			}
			exit(x)
		}
	}
	return n, enters, off, nil
}

// leaves delivers the calls of method e from offset off of b on while
// they are calls of a leaf (among the hooked methods) without arguments,
// strings or clock: an 8-byte enter followed at once by its 16-byte exit
// without an exception. It returns the offset after them and how many
// calls it delivered (two records each). The stack is not touched: the
// enter's state goes straight to its exit. Like run, it keeps in th.at
// the record being delivered, for deliverRun's recovery.
func (th *qthread) leaves(b []byte, off int, id int32, e *goEntry, enter func(*Call) uint64, exit func(*Return)) (end, calls int) {
	if e == nil || len(b)-off < 24 {
		return off, 0
	}
	// The hooks cannot write into the Call and Return they get, and every
	// call of the run differs from the one before only in its state and
	// its value's bits: both are readied once, and only those two fields
	// are written per call.
	th.callFor(e, time.Time{})
	x := th.returnFor(e, 0, time.Time{}, false)
	x.value.setq(&e.ret, 0, nil)
	if enter == nil {
		enter = qNoEnter
	}
	if exit == nil {
		exit = qNoExit
	}
	// The loop is the drain's hot path: Go keeps no register across a
	// call, so every value the loop needs after a hook returns is loaded
	// again, and there are as few as possible (th, b's base, the offset,
	// the last offset, the id word, the hooks; the mask and the Call and
	// Return are reached through th). A call's three words are read in
	// place as the C entries wrote them (native order, 8-byte aligned:
	// records start at multiples of 8 from b's start), in bounds by the
	// loop's condition (a whole 24-byte call starts at or before last).
	th.bits = e.ret.bitsMask()
	idw := uint64(uint32(id))<<32 | 8 | qEnter<<16
	base := unsafe.Pointer(unsafe.SliceData(b))
	at, last := off, len(b)-24
	for at <= last {
		rec := (*[3]uint64)(unsafe.Add(base, at))
		if rec[0] != idw || rec[1] != idw+(8|(qExit-qEnter)<<16) {
			break
		}
		th.at = at
		state := enter(&th.call)
		th.at = at + 8
		th.ret.state, th.ret.value.bits = state, rec[2]&th.bits
		exit(&th.ret)
		at += 24
	}
	return at, (at - off) / 24
}

// qNoEnter and qNoExit stand for the hook a GoHooks leaves nil, in the
// leaf loop.
func qNoEnter(*Call) uint64 { return 0 }
func qNoExit(*Return)       {}

// callFor readies th's Call, reused, for a call of e entered at tm (zero
// without a clock). The hooks cannot write into it: a field is written
// only when it differs from the call before's (no write barrier when
// nothing changed).
func (th *qthread) callFor(e *goEntry, tm time.Time) *Call {
	c := &th.call
	c.method, c.thread = e.method, th.tid
	if c.args != nil {
		c.args = nil
	}
	if c.members != nil {
		c.members = nil
	}
	if c.time != tm {
		c.time = tm
	}
	return c
}

// returnFor readies th's Return, reused, as callFor its Call, for an exit
// of e with state, at t, an exception leaving or not; the caller sets the
// value.
func (th *qthread) returnFor(e *goEntry, state uint64, tm time.Time, exc bool) *Return {
	x := &th.ret
	x.method, x.thread, x.state = e.method, th.tid, state
	if x.time != tm {
		x.time = tm
	}
	x.exc, x.excTrunc = exc, false
	if x.members != nil {
		x.members = nil
	}
	if x.excType != "" {
		x.excType = ""
	}
	return x
}

var qBadOnce sync.Once

func qTime(t uint64) time.Time {
	if t == 0 {
		return time.Time{}
	}
	return qEpochWall.Add(time.Duration(int64(t - qEpochMono)))
}

// setq sets *v to a record's value of kind k: strings from the record (s),
// never from memory. It writes the fields in place (the drain's hot path).
func (v *Value) setq(k *valueKind, bits uint64, s *qstr) {
	// v is reused: its strings are written only when they change (Type
	// compared by its bytes' address: not a call to compare the bytes).
	v.Kind, v.unsigned = k.kind, k.unsigned
	if unsafe.StringData(v.Type) != unsafe.StringData(k.typ) || len(v.Type) != len(k.typ) {
		v.Type = k.typ
	}
	if v.str != "" {
		v.str = ""
	}
	v.bits, v.null, v.trunc = bits&k.bitsMask(), false, false
	if k.kind == KindString {
		if s == nil {
			v.trunc = true // no room for it in the ring
			return
		}
		v.str, v.null, v.trunc = s.s, s.null, s.trunc
	}
}

// deferredArgs sets c.Args and the argument members from record r.
func (e *goEntry) deferredArgs(c *Call, r *qrec) {
	na := min(len(e.args), r.nargs)
	if na > 0 {
		c.args = make([]Value, na) // the hook may keep them
		for i := 0; i < na; i++ {
			var s *qstr
			if r.flags&(1<<i) != 0 {
				s = &r.strs[i]
			}
			c.args[i].setq(&e.args[i], r.args[i], s)
		}
	}
	if len(e.inMem) > 0 && r.nargs == na+len(e.inMem)+1 {
		c.members = e.memberValues(e.inMem, r.args[r.nargs-1], func(j int, k *valueKind) Value {
			var v Value
			var s *qstr
			if r.flags&(1<<(na+j)) != 0 {
				s = &r.strs[na+j]
			}
			v.setq(k, r.args[na+j], s)
			return v
		})
	}
}

// deferredReturn sets x's value and exception type from exit record r.
func (e *goEntry) deferredReturn(x *Return, r *qrec) {
	var rs *qstr
	if r.flags&qRetStrFlag != 0 {
		rs = &r.strs[0]
	}
	x.value.setq(&e.ret, r.ret, rs)
	if r.flags&qTypeStrFlag != 0 {
		x.excType = r.strs[1].s
		x.excTrunc = r.strs[1].trunc
	}
	if len(e.outMem) > 0 && r.nargs == len(e.outMem)+1 {
		vals := e.memberValues(e.outMem, r.args[0], func(j int, k *valueKind) Value {
			var v Value
			var s *qstr
			if r.flags&(8<<j) != 0 {
				s = &r.strs[2+j]
			}
			v.setq(k, r.args[1+j], s)
			return v
		})
		x.members = &vals
	}
}
