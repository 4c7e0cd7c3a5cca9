// Package ring owns the per-thread rings every recorder writes from C
// (packages elt and alloc: two-word slots; instr's deferred Go hooks: byte
// records). Its C (ring.c, internal/include/ringset.h) is the rings' cold
// half: allocating a ring (large ones in huge pages), listing it in its
// set, the pthread key that marks it dead at its thread's exit, and the
// after-exit policy each set chooses (reuse by a new thread, or free);
// internal/include/ring.h and ringcore.h hold the producers' inline
// functions and the layout the ELT stubs read. Its Go is the one consumer
// (Set.Consume, and Drain/DrainDirect for slot rings). A recorder owns
// its C clrprof_ringset (and clrprof_backpressure) and hands their
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

// A Set is the Go view of a C clrprof_ringset (ringset.h): the one
// consumer of every recorder's rings (the ELT and allocation recorders'
// slot rings, instr's deferred hook byte rings). Consume walks the rings
// and hands each one's published records, in place; Drain and DrainDirect
// are the slot rings' forms of it. Only one goroutine consumes a set at a
// time (mu).
type Set struct {
	s     *C.clrprof_ringset
	mu    sync.Mutex
	buf   [][2]uint64
	view  View  // DrainDirect's, reused
	batch Batch // Consume's, reused
}

// MaxSlots bounds the per-thread buffer size users may ask for.
const MaxSlots = 1 << 24

// Wrap returns the Go view of the C clrprof_ringset at s (a recorder's, in
// C memory that is never freed). It is an unsafe.Pointer because cgo
// types are per package: a recorder hands the address of its own C
// variable (this package is internal; the pointer never reaches a user).
func Wrap(s unsafe.Pointer) *Set {
	return &Set{s: (*C.clrprof_ringset)(s)}
}

// New allocates and initialises a set of slot rings of its own (the
// tests').
func New(slots int, info unsafe.Pointer) (*Set, error) {
	if slots < 0 || slots > MaxSlots {
		return nil, fmt.Errorf("clrprof: per-thread buffer of %d events: want 0 (default) .. %d", slots, MaxSlots)
	}
	s := C.clrprof_ringset_new()
	if s == nil {
		return nil, errors.New("clrprof: per-thread buffers: out of memory")
	}
	if rc := C.clrprof_ring_init(s, C.uint64_t(slots), info); rc != 0 {
		C.free(unsafe.Pointer(s))
		return nil, fmt.Errorf("clrprof: per-thread buffers: pthread_key_create: errno %d", int(rc))
	}
	return &Set{s: s}, nil
}

// A Batch is one ring as Consume hands it: its thread, its records in
// place and where the consumer is in them.
type Batch struct {
	// Serial is the key of the thread that holds (or held) the ring: set
	// at every claim, never reused, so a ring claimed by a new thread
	// (REUSE sets) gets a new one.
	Serial uint64
	// OSThreadID is the thread's Linux thread ID, ManagedThreadID the
	// runtime's ThreadID of it (0 if the runtime did not know the thread
	// when it first recorded, or the set has no profiler info).
	OSThreadID      uint32
	ManagedThreadID uint64
	// Data is the ring's memory (C memory, valid until the callback
	// returns; read-only to the consumer): position p (in Unit bytes) is
	// at byte (p*Unit) % len(Data).
	Data []byte
	Unit int
	// Tail and Head are the positions of the first record not consumed
	// and after the last one published when the ring was read: the
	// records are Data's [Tail, Head).
	Tail, Head uint64
	// Dropped is the records the ring's thread dropped since the last
	// report.
	Dropped uint64
	// Finished: the thread has exited (Head is final).
	Finished bool

	tail *uint64
}

// Advance hands the producer back the room of the records before tail
// (Tail <= tail <= Head): one release store of the ring's tail.
func (b *Batch) Advance(tail uint64) {
	atomic.StoreUint64(b.tail, tail)
	b.Tail = tail
}

func u64(p *C.uint64_t) *uint64 { return (*uint64)(unsafe.Pointer(p)) }

// Consume walks the set's rings once and calls fn for each ring a thread
// holds or held and the consumer has not finished with (empty ones too),
// which reads Data's [Tail, Head) in place and calls Advance for what it
// consumed. Then, to a ring whose thread has exited and which is drained,
// it applies the set's after-exit policy: a new thread may claim it
// (REUSE), or it is freed (RELEASE) once the walk is over.
func (rs *Set) Consume(fn func(b *Batch)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.consume(fn)
}

func (rs *Set) consume(fn func(b *Batch)) {
	b := &rs.batch
	release := false
	for n := (*C.clrprof_ringnode)(atomic.LoadPointer((*unsafe.Pointer)(unsafe.Pointer(&rs.s.list)))); n != nil; n = n.next {
		statep := (*int32)(unsafe.Pointer(&n.state))
		state := atomic.LoadInt32(statep)
		if state == C.CLRPROF_RING_FREE || state == C.CLRPROF_RING_CLAIMING {
			continue
		}
		tailp := u64(n.tail)
		*b = Batch{
			Serial:          atomic.LoadUint64(u64(&n.serial)),
			OSThreadID:      uint32(n.os_tid),
			ManagedThreadID: atomic.LoadUint64(u64(&n.managed_tid)),
			Data:            unsafe.Slice((*byte)(unsafe.Pointer(n.data)), uint64(n.bytes)),
			Unit:            int(rs.s.unit),
			Tail:            atomic.LoadUint64(tailp),
			Head:            atomic.LoadUint64(u64(n.head)),
			Finished:        state == C.CLRPROF_RING_DEAD,
			tail:            tailp,
		}
		if d := atomic.LoadUint64(u64(n.dropped)); d != uint64(n.dropped_seen) {
			b.Dropped = d - uint64(n.dropped_seen)
			n.dropped_seen = C.uint64_t(d)
		}
		fn(b)
		if b.Finished && b.Tail == b.Head {
			atomic.StoreInt32(statep, C.CLRPROF_RING_FREE)
			release = release || rs.s.after_exit == C.CLRPROF_RING_RELEASE
		}
		b.Data = nil
	}
	if release {
		C.clrprof_ringset_sweep(rs.s)
	}
}

// A View is what Drain hands its callback for one slot ring: the thread
// and the slots read (valid until the callback returns).
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

// slots is b's Data as two-word slots (a slot ring's).
func (b *Batch) slots() [][2]uint64 {
	return unsafe.Slice((*[2]uint64)(unsafe.Pointer(unsafe.SliceData(b.Data))), len(b.Data)/16)
}

// Drain reads every slot ring once, at most max slots per ring (records
// never straddle a drain: keep decides how many of the slots read were
// consumed, so a multi-slot record cut short stays for the next drain),
// and returns the number of slots consumed.
func (rs *Set) Drain(max int, fn func(v *View) (keep int)) int {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	total := 0
	rs.consume(func(b *Batch) {
		n := int(b.Head - b.Tail)
		if n == 0 && b.Dropped == 0 {
			return
		}
		v := View{OSThreadID: b.OSThreadID, ManagedThreadID: b.ManagedThreadID, Backlog: n, Dropped: b.Dropped}
		n = min(n, max)
		if cap(rs.buf) < n {
			rs.buf = make([][2]uint64, n)
		}
		buf := rs.buf[:n]
		slots := b.slots()
		mask := uint64(len(slots) - 1)
		for i := range buf {
			buf[i] = slots[(b.Tail+uint64(i))&mask]
		}
		v.Slots = buf
		keep := fn(&v)
		if keep < 0 || keep > n {
			keep = n
		}
		b.Advance(b.Tail + uint64(keep))
		total += keep
	})
	return total
}

// DrainDirect reads every slot ring once, at most max slots per ring,
// handing fn the slots in place (in C memory, valid until fn returns;
// split where the ring wraps) and the ring's backlog when read; every
// slot handed is consumed. For one-slot records only.
func (rs *Set) DrainDirect(max int, fn func(v *View, backlog int)) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	v := &rs.view // one view for every ring: nothing allocated per drain
	rs.consume(func(b *Batch) {
		backlog := int(b.Head - b.Tail)
		if backlog == 0 && b.Dropped == 0 {
			return
		}
		*v = View{OSThreadID: b.OSThreadID, ManagedThreadID: b.ManagedThreadID, Dropped: b.Dropped}
		n := min(backlog, max)
		slots := b.slots()
		mask := uint64(len(slots) - 1)
		start := b.Tail & mask
		first := min(uint64(n), mask+1-start)
		v.Slots = slots[start : start+first]
		fn(v, backlog)
		if rest := uint64(n) - first; rest > 0 {
			v.Dropped = 0
			v.Slots = slots[:rest]
			fn(v, backlog-int(first))
		}
		v.Slots = nil
		b.Advance(b.Tail + uint64(n))
	})
}

// Rings is the number of rings held (allocated and not freed).
func (rs *Set) Rings() int { return int(atomic.LoadUint64(u64(&rs.s.rings))) }

// Lost is the number of events lost because no ring could be allocated.
func (rs *Set) Lost() uint64 { return atomic.LoadUint64(u64(&rs.s.lost)) }

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
