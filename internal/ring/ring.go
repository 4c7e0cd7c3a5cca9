// Package ring is the consumer side of the per-thread rings the recorders
// (packages elt and alloc) write from C: ring.c allocates, lists and
// reuses them, internal/include/ring.h holds the producer's inline
// functions and the layout the ELT stubs read. A recorder owns its C
// clrprof_ringset and clrprof_backpressure (in its own C) and hands their
// addresses to [Wrap] and [NewWaker]; everything here runs on the
// recorder's draining goroutine, never on a runtime thread.
package ring

/*
#cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
#include <stdlib.h>
#include "ring.h"

static clrprof_ringset *clrprof_ringset_new(void) { return calloc(1, sizeof(clrprof_ringset)); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// A Set is the Go view of a C clrprof_ringset: it walks the rings and
// drains them. Only one goroutine drains a set at a time (mu).
type Set struct {
	s    *C.clrprof_ringset
	mu   sync.Mutex
	buf  [][2]uint64
	view View // DrainDirect's, reused
	// dropped per ring as last reported, to report increments
	dropped map[*C.clrprof_ring]uint64
}

// MaxSlots bounds the per-thread buffer size users may ask for.
const MaxSlots = 1 << 24

// Wrap returns the Go view of the C clrprof_ringset at s (a recorder's, in
// C memory that is never freed).
func Wrap(s unsafe.Pointer) *Set {
	return &Set{s: (*C.clrprof_ringset)(s), dropped: map[*C.clrprof_ring]uint64{}}
}

// New allocates and initialises a set of its own (the tests').
func New(slots int, info unsafe.Pointer) (*Set, error) {
	if slots < 0 || slots > MaxSlots {
		return nil, fmt.Errorf("clrprof: per-thread buffer of %d events: want 0 (default) .. %d", slots, MaxSlots)
	}
	s := C.clrprof_ringset_new()
	if s == nil {
		return nil, errors.New("clrprof: per-thread buffers: out of memory")
	}
	if rc := C.clrprof_ringset_init(s, C.uint64_t(slots), info); rc != 0 {
		C.free(unsafe.Pointer(s))
		return nil, fmt.Errorf("clrprof: per-thread buffers: pthread_key_create: errno %d", int(rc))
	}
	return &Set{s: s, dropped: map[*C.clrprof_ring]uint64{}}, nil
}

// A View is what Drain hands its callback for one ring: the thread and
// the slots read (valid until the callback returns).
type View struct {
	// OSThreadID is the ring's thread's Linux thread ID, ManagedThreadID
	// the runtime's ThreadID of it (0 if the runtime did not know the
	// thread when it first recorded): a profiler.ThreadRef.
	OSThreadID      uint32
	ManagedThreadID uint64
	Slots           [][2]uint64
	Dropped         uint64 // events this ring dropped since the last report
	Backlog         int    // slots the ring held when read (Drain only)
}

func u64(p *C.uint64_t) *uint64 { return (*uint64)(unsafe.Pointer(p)) }

// Drain reads every ring once, at most max slots per ring (records never
// straddle a drain: keep decides how many of the slots read were
// consumed, so a multi-slot record cut short stays for the next drain),
// and returns the number of slots consumed.
func (rs *Set) Drain(max int, fn func(v *View) (keep int)) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	total := 0
	for r := (*C.clrprof_ring)(atomicLoadPointer(unsafe.Pointer(&rs.s.list))); r != nil; r = r.next {
		state := atomic.LoadInt32((*int32)(unsafe.Pointer(&r.state)))
		if state == C.CLRPROF_RING_FREE {
			continue
		}
		tailp, headp := u64(&r.tail), u64(&r.head)
		tail := atomic.LoadUint64(tailp)
		head := atomic.LoadUint64(headp)
		n := int(head - tail)
		backlog := n
		if n > max {
			n = max
		}
		v := View{OSThreadID: uint32(r.os_tid), ManagedThreadID: atomic.LoadUint64(u64(&r.managed_tid)), Backlog: backlog}
		d := atomic.LoadUint64(u64(&r.dropped))
		if prev := rs.dropped[r]; d != prev {
			v.Dropped = d - prev
			rs.dropped[r] = d
		}
		if n == 0 && v.Dropped == 0 {
			if state == C.CLRPROF_RING_DEAD {
				atomic.StoreInt32((*int32)(unsafe.Pointer(&r.state)), C.CLRPROF_RING_FREE)
			}
			continue
		}
		if cap(rs.buf) < n {
			rs.buf = make([][2]uint64, n)
		}
		buf := rs.buf[:n]
		mask := uint64(r.mask)
		slots := unsafe.Slice((*[2]uint64)(unsafe.Pointer(r.slots)), mask+1)
		for i := range buf {
			buf[i] = slots[(tail+uint64(i))&mask]
		}
		v.Slots = buf
		keep := fn(&v)
		if keep < 0 || keep > n {
			keep = n
		}
		atomic.StoreUint64(tailp, tail+uint64(keep))
		total += keep
	}
	return total
}

// DrainDirect reads every ring once, at most max slots per ring, handing
// fn the slots in place (in C memory, valid until fn returns; split where
// the ring wraps) and the ring's backlog when read; every slot handed is
// consumed. For one-slot records only.
func (rs *Set) DrainDirect(max int, fn func(v *View, backlog int)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	v := &rs.view // one view for every ring: nothing allocated per drain
	for r := (*C.clrprof_ring)(atomicLoadPointer(unsafe.Pointer(&rs.s.list))); r != nil; r = r.next {
		state := atomic.LoadInt32((*int32)(unsafe.Pointer(&r.state)))
		if state == C.CLRPROF_RING_FREE {
			continue
		}
		tailp, headp := u64(&r.tail), u64(&r.head)
		tail := atomic.LoadUint64(tailp)
		head := atomic.LoadUint64(headp)
		backlog := int(head - tail)
		*v = View{OSThreadID: uint32(r.os_tid), ManagedThreadID: atomic.LoadUint64(u64(&r.managed_tid))}
		d := atomic.LoadUint64(u64(&r.dropped))
		if prev := rs.dropped[r]; d != prev {
			v.Dropped = d - prev
			rs.dropped[r] = d
		}
		if backlog == 0 && v.Dropped == 0 {
			if state == C.CLRPROF_RING_DEAD {
				atomic.StoreInt32((*int32)(unsafe.Pointer(&r.state)), C.CLRPROF_RING_FREE)
			}
			continue
		}
		n := min(backlog, max)
		mask := uint64(r.mask)
		slots := unsafe.Slice((*[2]uint64)(unsafe.Pointer(r.slots)), mask+1)
		start := tail & mask
		first := min(uint64(n), mask+1-start)
		v.Slots = slots[start : start+first]
		fn(v, backlog)
		if rest := uint64(n) - first; rest > 0 {
			v.Dropped = 0
			v.Slots = slots[:rest]
			fn(v, backlog-int(first))
		}
		v.Slots = nil
		atomic.StoreUint64(tailp, tail+uint64(n))
	}
}

// Rings is the number of rings allocated so far.
func (rs *Set) Rings() int { return int(atomic.LoadUint64(u64(&rs.s.rings))) }

// Lost is the number of events lost because no ring could be allocated.
func (rs *Set) Lost() uint64 { return atomic.LoadUint64(u64(&rs.s.lost)) }

func atomicLoadPointer(p unsafe.Pointer) unsafe.Pointer {
	return atomic.LoadPointer((*unsafe.Pointer)(p))
}

// A Clock converts time-stamp counter readings to nanoseconds since the
// clock was made. The rate is measured once, against Go's monotonic clock
// over a 2ms spin, and then fixed, so that conversions are monotonic (the
// CPUs here have an invariant TSC: constant_tsc, nonstop_tsc).
type Clock struct {
	tsc0 uint64
	rate float64 // ns per tick
}

// NewClock measures the time-stamp counter's rate.
func NewClock() *Clock {
	start := time.Now()
	t0 := uint64(C.clrprof_tsc())
	for time.Since(start) < 2*time.Millisecond {
	}
	t1 := uint64(C.clrprof_tsc())
	mono := time.Since(start)
	c := &Clock{tsc0: t0, rate: 1}
	if t1 > t0 {
		c.rate = float64(mono) / float64(t1-t0)
	}
	return c
}

// Params returns the reading at the start and the rate (ns per tick).
func (c *Clock) Params() (tsc0 uint64, rate float64) { return c.tsc0, c.rate }

// A Waker is the Go side of a C clrprof_backpressure: its eventfd as an
// *os.File (made once per process and never closed: C keeps the number).
type Waker struct {
	bp   *C.clrprof_backpressure
	once sync.Once
	f    *os.File
}

// NewWaker returns the Waker of the C clrprof_backpressure at bp (a
// recorder's, in C memory that is never freed).
func NewWaker(bp unsafe.Pointer) *Waker { return &Waker{bp: (*C.clrprof_backpressure)(bp)} }

// Init prepares the eventfd; on is the recorder's gate (a C uint8_t).
func (w *Waker) Init(on unsafe.Pointer) error {
	if rc := C.clrprof_bp_init(w.bp, (*C.uint8_t)(on)); rc != 0 {
		return fmt.Errorf("eventfd: errno %d", int(rc))
	}
	w.once.Do(func() { w.f = os.NewFile(uintptr(w.bp.fd), "clrprof-ring-wake") })
	return nil
}

// SetWait sets how long a producer waits for room (<0: never).
func (w *Waker) SetWait(d time.Duration) {
	if d < 0 {
		d = 0
	}
	atomic.StoreUint64(u64(&w.bp.wait_ns), uint64(d))
}

// Waits is the number of records that waited for room.
func (w *Waker) Waits() uint64 { return atomic.LoadUint64(u64(&w.bp.waits)) }

// Interrupt ends a sleeping loop at once (Close).
func (w *Waker) Interrupt() { _ = w.f.SetReadDeadline(time.Now()) }

// Loop calls drain until stop is closed, then closes done: again at once
// while drain reports it is busy, else after sleeping interval or until a
// producer past its ring's threshold wakes it. Each drain clears the
// stalled flag (producers wait again).
func (w *Waker) Loop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}, drain func() (busy bool)) {
	defer close(done)
	var b [8]byte
	for {
		select {
		case <-stop:
			return
		default:
		}
		w.bp.stalled = 0
		if drain() {
			continue
		}
		w.bp.wake = 1
		_ = w.f.SetReadDeadline(time.Now().Add(interval))
		_, _ = w.f.Read(b[:])
		w.bp.wake = 0
	}
}
