//go:build cgo

package instr

/*
#include <stdint.h>
#include <stdlib.h>
#include "gohook_q.h"
*/
import "C"

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// DeferredPoll is how often the drain goroutine of deferred Go hooks
// (GoHooks.Deferred) empties the threads' rings when they were found
// empty; while its passes find records it goes on at once.
const DeferredPoll = time.Millisecond

// DeferredRingSize is the default size in bytes of each thread's ring of
// deferred hook records (allocated at the thread's first deferred call,
// freed after the thread exits and its ring was drained). An enter record
// takes 24 bytes plus 8 per argument plus its strings (8 bytes and 2 per
// UTF-16 unit each), an exit record 32 bytes plus its strings: 256 KiB hold
// about 4,600 calls without arguments.
const DeferredRingSize = 256 << 10

// SetDeferredRingSize sets the size in bytes of the rings of deferred Go
// hooks created from then on (a thread's ring is created at its first
// deferred call): a power of two from 4 KiB to 1 GiB. Larger rings ride
// out longer bursts (a thread calling faster than the hooks run) before
// calls are dropped, at the cost of memory per thread (touched as it
// fills).
func SetDeferredRingSize(bytes int) error {
	if bytes < 4096 || bytes > 1<<30 || bytes&(bytes-1) != 0 {
		return fmt.Errorf("instr: deferred ring size %d: want a power of two from 4096 to 1<<30", bytes)
	}
	C.clrprof_q_setsize(C.uint32_t(bytes))
	return nil
}

// DeferredCounts are the counts of the calls deferred Go hooks saw.
type DeferredCounts struct {
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
func DeferredStats() DeferredCounts {
	return DeferredCounts{Delivered: qDelivered.Load(), Dropped: qDropped.Load()}
}

var (
	qDelivered atomic.Uint64
	qDropped   atomic.Uint64
	qStart     sync.Once

	qMu       sync.Mutex // one drain pass at a time
	qRings    []*C.qring
	qBuf      []byte
	qThreads  = map[uint64]*qthread{}
	qLostSeen uint64

	qEpochWall time.Time
	qEpochMono uint64
)

type qthread struct {
	tid   uint64
	stack []uint64 // the states of the enters whose exits are still to come
	seen  bool
	rec   qrec // scratch
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
		qBuf = make([]byte, 64<<10)
		go func() {
			t := time.NewTicker(DeferredPoll)
			defer t.Stop()
			for range t.C {
				// While passes find records the drain goes on at once
				// (as fast as the hooks run, one core at most); it
				// waits for the next tick once a pass finds none.
				for qPass() > 0 {
					runtime.Gosched()
				}
			}
		}()
	})
}

// setDeferred tells the C side which of e's values are strings (to copy)
// and whether to read the clock, before e's code can run.
func setDeferred(id int32, e *goEntry) error {
	var info C.uint16_t
	for i, a := range e.args {
		if a.kind == KindString {
			info |= 1 << i
		}
	}
	if e.ret.kind == KindString {
		info |= C.QINFO_RETSTR
	}
	if e.hooks.Timestamps {
		info |= C.QINFO_TIME
	}
	if C.clrprof_q_setinfo(C.int32_t(id), info) != 0 {
		return fmt.Errorf("instr: deferred Go hooks: method id %d out of range", id)
	}
	startDeferred()
	return nil
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
	if qBuf == nil {
		return 0
	}
	var n int
	for {
		var p **C.qring
		if len(qRings) > 0 {
			p = &qRings[0]
		}
		n = int(C.clrprof_q_rings(p, C.int(len(qRings))))
		if n <= len(qRings) {
			break
		}
		qRings = make([]*C.qring, n+16)
	}
	for _, th := range qThreads {
		th.seen = false
	}
	for _, r := range qRings[:n] {
		th := qThreads[uint64(r.serial)]
		if th == nil {
			th = &qthread{tid: uint64(r.tid)}
			qThreads[uint64(r.serial)] = th
		}
		th.seen = true
		limit, taken := int(r.size), 0
		for taken < limit {
			got := int(C.clrprof_q_take(r, (*C.uint8_t)(unsafe.Pointer(&qBuf[0])), C.uint32_t(len(qBuf))))
			if got == 0 {
				break
			}
			taken += got
			total += th.deliver(qBuf[:got])
		}
		d := uint64(atomic.LoadUint64((*uint64)(unsafe.Pointer(&r.dropped))))
		if seen := uint64(r.dropped_seen); d != seen {
			qDropped.Add(d - seen)
			r.dropped_seen = C.uint64_t(d)
		}
	}
	for k, th := range qThreads {
		if !th.seen {
			delete(qThreads, k)
		}
	}
	if lost := uint64(C.clrprof_q_lost()); lost != qLostSeen {
		qDropped.Add(lost - qLostSeen)
		qLostSeen = lost
	}
	return total
}

// deliver runs the hooks of a run of one thread's records.
func (th *qthread) deliver(b []byte) int {
	n, enters := 0, 0
	for len(b) > 0 {
		k, e, rest, err := th.deliverRun(b)
		n, enters, b = n+k, enters+e, rest
		if err != nil {
			// The C side wrote it: a bug, said once.
			qBadOnce.Do(func() { fmt.Fprintf(os.Stderr, "clrprof: %v\n", err) })
			break
		}
	}
	qDelivered.Add(uint64(enters))
	return n
}

// deliverRun runs the hooks of b's records until the end of b or a hook
// that panics: that panic is recovered and counted here, and rest is what
// follows its record (one deferred recover for a run of records instead of
// one per hook). An Enter that panicked has state 0 for its Exit.
func (th *qthread) deliverRun(b []byte) (n, enters int, rest []byte, err error) {
	r := &th.rec
	var e *goEntry
	lastID := int32(-1)
	inEnter := false
	defer func() {
		if x := recover(); x != nil {
			e.recovered(x)
			if inEnter {
				th.stack = append(th.stack, 0)
			}
		}
	}()
	for len(b) > 0 {
		if b, err = r.next(b); err != nil {
			return n, enters, nil, err
		}
		rest = b
		n++
		if r.id != lastID {
			e, lastID = goLookup(r.id), r.id
		}
		switch r.kind {
		case qEnter:
			enters++
			var state uint64
			if e != nil && e.hooks.Enter != nil {
				inEnter = true
				state = e.deferredEnter(th.tid, r)
				inEnter = false
			}
			th.stack = append(th.stack, state)
		case qExit:
			var state uint64
			if k := len(th.stack); k > 0 {
				state = th.stack[k-1]
				th.stack = th.stack[:k-1]
			}
			if e != nil && e.hooks.Exit != nil {
				e.deferredExit(th.tid, state, r)
			}
		}
	}
	return n, enters, rest, nil
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
	v.Kind, v.Type, v.unsigned = k.kind, k.typ, k.unsigned
	switch k.kind {
	case KindString:
		if s == nil {
			v.trunc = true // no room for it in the ring
			return
		}
		v.str, v.null, v.trunc = s.s, s.null, s.trunc
	case KindObject, KindVoid:
	default:
		v.bits = bits
	}
}

// deferredEnter runs e's Enter for record r (deliverRun recovers a panic).
func (e *goEntry) deferredEnter(tid uint64, r *qrec) uint64 {
	c := Call{Method: e.method, Thread: tid}
	if r.time != 0 {
		c.Time = qTime(r.time)
	}
	if r.nargs > 0 {
		c.Args = make([]Value, r.nargs)
		for i := 0; i < r.nargs && i < len(e.args); i++ {
			var s *qstr
			if r.flags&(1<<i) != 0 {
				s = &r.strs[i]
			}
			c.Args[i].setq(&e.args[i], r.args[i], s)
		}
	}
	return e.hooks.Enter(c)
}

// deferredExit runs e's Exit for record r (deliverRun recovers a panic).
func (e *goEntry) deferredExit(tid uint64, state uint64, r *qrec) {
	var rs *qstr
	if r.flags&qRetStrFlag != 0 {
		rs = &r.strs[0]
	}
	ret := Return{Method: e.method, Thread: tid, State: state}
	if r.time != 0 {
		ret.Time = qTime(r.time)
	}
	ret.Value.setq(&e.ret, r.ret, rs)
	if r.flags&qExcFlag != 0 {
		ret.Exception = true
		if r.flags&qTypeStrFlag != 0 {
			ret.ExceptionType = r.strs[1].s
			ret.ExceptionTypeTruncated = r.strs[1].trunc
		}
	}
	e.hooks.Exit(ret)
}
