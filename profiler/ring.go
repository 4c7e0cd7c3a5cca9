package profiler

/*
#include <stdlib.h>
#include "ring.h"

static clrprof_ringset *clrprof_ringset_new(void) { return calloc(1, sizeof(clrprof_ringset)); }
*/
import "C"

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// ThreadRef names the runtime thread a batch of recorded events came from.
type ThreadRef struct {
	// OSThreadID is the thread's Linux thread ID (gettid).
	OSThreadID uint32
	// ManagedThreadID is the runtime's ThreadID of the thread, or 0 when
	// the runtime did not know the thread when it first recorded.
	ManagedThreadID ThreadID
}

// A ringSet is the Go view of a C clrprof_ringset: it walks the rings and
// drains them. Only one goroutine drains a set at a time (mu).
type ringSet struct {
	s    *C.clrprof_ringset
	mu   sync.Mutex
	buf  [][2]uint64
	view ringView // drainDirect's, reused
	// dropped per ring as last reported, to report increments
	dropped map[*C.clrprof_ring]uint64
}

// maxRingSlots bounds the per-thread buffer size users may ask for.
const maxRingSlots = 1 << 24

func newRingSet(slots int, info unsafe.Pointer) (*ringSet, error) {
	if slots < 0 || slots > maxRingSlots {
		return nil, fmt.Errorf("clrprof: per-thread buffer of %d events: want 0 (default) .. %d", slots, maxRingSlots)
	}
	s := C.clrprof_ringset_new()
	if s == nil {
		return nil, E_OUTOFMEMORY
	}
	if rc := C.clrprof_ringset_init(s, C.uint64_t(slots), info); rc != 0 {
		C.free(unsafe.Pointer(s))
		return nil, fmt.Errorf("clrprof: per-thread buffers: pthread_key_create: errno %d", int(rc))
	}
	return &ringSet{s: s, dropped: map[*C.clrprof_ring]uint64{}}, nil
}

// ringView is what drain hands its callback for one ring: the thread and
// the slots read (valid until the callback returns).
type ringView struct {
	thread  ThreadRef
	slots   [][2]uint64
	dropped uint64 // events this ring dropped since the last report
	backlog int    // slots the ring held when read
}

func u64(p *C.uint64_t) *uint64 { return (*uint64)(unsafe.Pointer(p)) }

// drain reads every ring once, at most max slots per ring (records never
// straddle a drain: keep decides how many of the slots read were
// consumed, so a multi-slot record cut short stays for the next drain),
// and returns the number of slots consumed.
func (rs *ringSet) drain(max int, fn func(v *ringView) (keep int)) int {
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
		v := ringView{thread: ThreadRef{OSThreadID: uint32(r.os_tid), ManagedThreadID: ThreadID(atomic.LoadUint64(u64(&r.managed_tid)))}, backlog: backlog}
		d := atomic.LoadUint64(u64(&r.dropped))
		if prev := rs.dropped[r]; d != prev {
			v.dropped = d - prev
			rs.dropped[r] = d
		}
		if n == 0 && v.dropped == 0 {
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
		v.slots = buf
		keep := fn(&v)
		if keep < 0 || keep > n {
			keep = n
		}
		atomic.StoreUint64(tailp, tail+uint64(keep))
		total += keep
	}
	return total
}

// drainDirect reads every ring once, at most max slots per ring, handing
// fn the slots in place (in C memory, valid until fn returns; split where
// the ring wraps) and the ring's backlog when read; every slot handed is
// consumed. For one-slot records only.
func (rs *ringSet) drainDirect(max int, fn func(v *ringView, backlog int)) {
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
		*v = ringView{thread: ThreadRef{OSThreadID: uint32(r.os_tid), ManagedThreadID: ThreadID(atomic.LoadUint64(u64(&r.managed_tid)))}}
		d := atomic.LoadUint64(u64(&r.dropped))
		if prev := rs.dropped[r]; d != prev {
			v.dropped = d - prev
			rs.dropped[r] = d
		}
		if backlog == 0 && v.dropped == 0 {
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
		v.slots = slots[start : start+first]
		fn(v, backlog)
		if rest := uint64(n) - first; rest > 0 {
			v.dropped = 0
			v.slots = slots[:rest]
			fn(v, backlog-int(first))
		}
		v.slots = nil
		atomic.StoreUint64(tailp, tail+uint64(n))
	}
}

// threads is the number of rings allocated so far.
func (rs *ringSet) rings() int { return int(atomic.LoadUint64(u64(&rs.s.rings))) }

// lost is the number of events lost because no ring could be allocated.
func (rs *ringSet) lost() uint64 { return atomic.LoadUint64(u64(&rs.s.lost)) }

func atomicLoadPointer(p unsafe.Pointer) unsafe.Pointer {
	return atomic.LoadPointer((*unsafe.Pointer)(p))
}

// tscClock converts time-stamp counter readings to nanoseconds since the
// clock was made. The rate is measured once, against Go's monotonic clock
// over a 2ms spin, and then fixed, so that conversions are monotonic (the
// CPUs here have an invariant TSC: constant_tsc, nonstop_tsc).
type tscClock struct {
	tsc0 uint64
	rate float64 // ns per tick
}

func newTSCClock() *tscClock {
	start := time.Now()
	t0 := uint64(C.clrprof_tsc())
	for time.Since(start) < 2*time.Millisecond {
	}
	t1 := uint64(C.clrprof_tsc())
	mono := time.Since(start)
	c := &tscClock{tsc0: t0, rate: 1}
	if t1 > t0 {
		c.rate = float64(mono) / float64(t1-t0)
	}
	return c
}

// params returns the reading at the start and the rate (ns per tick).
func (c *tscClock) params() (tsc0 uint64, rate float64) { return c.tsc0, c.rate }

// A waker is the Go side of a C clrprof_backpressure: its eventfd as an
// *os.File (made once per process and never closed: C keeps the number).
type waker struct {
	bp   *C.clrprof_backpressure
	once sync.Once
	f    *os.File
}

// init prepares the eventfd; on is the recorder's gate.
func (w *waker) init(on *C.uint8_t) error {
	if rc := C.clrprof_bp_init(w.bp, on); rc != 0 {
		return fmt.Errorf("eventfd: errno %d", int(rc))
	}
	w.once.Do(func() { w.f = os.NewFile(uintptr(w.bp.fd), "clrprof-ring-wake") })
	return nil
}

// setWait sets how long a producer waits for room (<0: never).
func (w *waker) setWait(d time.Duration) {
	if d < 0 {
		d = 0
	}
	atomic.StoreUint64(u64(&w.bp.wait_ns), uint64(d))
}

// waits is the number of records that waited for room.
func (w *waker) waits() uint64 { return atomic.LoadUint64(u64(&w.bp.waits)) }

// interrupt ends a sleeping loop at once (Close).
func (w *waker) interrupt() { _ = w.f.SetReadDeadline(time.Now()) }

// loop calls drain until stop is closed, then closes done: again at once
// while drain reports it is busy, else after sleeping interval or until a
// producer past its ring's threshold wakes it. Each drain clears the
// stalled flag (producers wait again).
func (w *waker) loop(interval time.Duration, stop <-chan struct{}, done chan<- struct{}, drain func() (busy bool)) {
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
