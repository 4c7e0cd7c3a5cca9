//go:build clrprof_testhooks

package ring

import (
	"encoding/binary"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// Eight C threads write 200k events each into their own rings while a
// goroutine drains: every event arrives once, in order per thread, or is
// counted as dropped.
func TestRingDrainManyThreads(t *testing.T) {
	rs, err := New(4096, nil)
	if err != nil {
		t.Fatal(err)
	}
	const threads, events = 8, 200000
	next := map[uint64]uint64{}
	var got, dropped uint64
	var mu sync.Mutex
	drain := func() int {
		mu.Lock()
		defer mu.Unlock()
		return rs.Drain(1<<20, func(v *View) int {
			dropped += v.Dropped
			for _, s := range v.Slots {
				id, seq := s[0], s[1]
				if seq < next[id] {
					t.Fatalf("thread %d: event %d after %d", id, seq, next[id])
				}
				next[id] = seq + 1
				got++
			}
			return len(v.Slots)
		})
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
				drain()
				time.Sleep(50 * time.Microsecond)
			}
		}
	}()
	testThreads(rs, threads, events)
	close(stop)
	<-done
	for drain() > 0 {
	}
	drain() // report the last drops
	t.Logf("events=%d delivered=%d dropped=%d rings=%d", threads*events, got, dropped, rs.Rings())
	if got+dropped != threads*events {
		t.Errorf("delivered %d + dropped %d != %d", got, dropped, threads*events)
	}
	if got == 0 || len(next) != threads {
		t.Errorf("delivered %d from %d threads", got, len(next))
	}
	// The threads have exited: their rings are free, and a second round
	// reuses them instead of allocating.
	before := rs.Rings()
	mu.Lock()
	clear(next)
	mu.Unlock()
	testThreads(rs, threads, 10)
	for drain() > 0 {
	}
	if rs.Rings() > before+threads {
		t.Errorf("rings %d after a second round, %d before", rs.Rings(), before)
	}
	t.Logf("rings after a second round of %d threads: %d (before %d)", threads, rs.Rings(), before)
}

// checkBytes is a consumer of byte rings written by clrprof_ring_test_bytes:
// it reads each ring's records in place (a record's words may go on at
// the ring's start), checks that every thread's records come in order and
// whole, and advances tail record by record.
type checkBytes struct {
	t        *testing.T
	next     map[uint64]uint64 // serial -> next expected record
	got      uint64
	dropped  uint64
	serials  map[uint64]bool
	finished int
}

func (c *checkBytes) consume(b *Batch) {
	if b.Unit != 1 {
		c.t.Fatalf("byte ring with unit %d", b.Unit)
	}
	c.serials[b.Serial] = true
	c.dropped += b.Dropped
	if b.Finished {
		c.finished++
	}
	mask := uint64(len(b.Data) - 1)
	word := func(p uint64) uint64 { return binary.LittleEndian.Uint64(b.Data[p&mask:]) }
	for p := b.Tail; p < b.Head; {
		h := word(p)
		i, words := h>>8, h&0xff
		if words < 1 || words > 6 || p+8*words > b.Head {
			c.t.Fatalf("serial %d: bad record header %#x at %d (head %d)", b.Serial, h, p, b.Head)
		}
		if i < c.next[b.Serial] {
			c.t.Fatalf("serial %d: record %d after %d", b.Serial, i, c.next[b.Serial])
		}
		if want := 1 + i%6; words != want {
			c.t.Fatalf("serial %d: record %d of %d words, want %d", b.Serial, i, words, want)
		}
		id := uint64(0)
		for k := uint64(1); k < words; k++ {
			w := word(p + 8*k)
			if w&(1<<56-1) != i || (id != 0 && w>>56 != id) {
				c.t.Fatalf("serial %d: record %d word %d = %#x", b.Serial, i, k, w)
			}
			id = w >> 56
		}
		c.next[b.Serial] = i + 1
		c.got++
		p += 8 * words
		b.Advance(p)
	}
}

// The byte-record consumer and both after-exit policies: C threads write
// variable-length records (8 to 48 bytes, wrapping at the ring's end) into
// rings of 4 KiB while a goroutine consumes them in place; every record
// arrives once, whole and in order, or is counted as dropped. After the
// threads exit and their rings are drained, a RELEASE set has freed every
// ring, and a REUSE set has kept them and a second round of threads
// claims them (new serials, no new rings).
func TestRingBytesAfterExit(t *testing.T) {
	for _, release := range []bool{true, false} {
		name := "reuse"
		if release {
			name = "release"
		}
		t.Run(name, func(t *testing.T) {
			rs := newByteSet(4096, release)
			c := &checkBytes{t: t, next: map[uint64]uint64{}, serials: map[uint64]bool{}}
			var mu sync.Mutex
			drain := func() {
				mu.Lock()
				defer mu.Unlock()
				rs.Consume(c.consume)
			}
			round := func(threads, events int) {
				stop, done := make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					for {
						select {
						case <-stop:
							return
						default:
							drain()
							runtime.Gosched()
						}
					}
				}()
				testBytes(rs, threads, events)
				close(stop)
				<-done
				drain() // the rest, and the rings of the exited threads
				drain()
			}
			const threads, events = 6, 50000
			round(threads, events)
			t.Logf("%s: records=%d delivered=%d dropped=%d rings=%d serials=%d", name, threads*events, c.got, c.dropped, rs.Rings(), len(c.serials))
			if c.got+c.dropped != threads*events || c.got == 0 {
				t.Errorf("delivered %d + dropped %d, want %d", c.got, c.dropped, threads*events)
			}
			if len(c.serials) != threads || c.finished < threads {
				t.Errorf("%d threads' rings seen, %d seen finished; want %d", len(c.serials), c.finished, threads)
			}
			if release {
				if n := rs.Rings(); n != 0 {
					t.Errorf("%d rings held after every thread exited and was drained, want 0 (freed)", n)
				}
				if rs.s.list != nil {
					t.Errorf("the set still lists rings")
				}
			} else if n := rs.Rings(); n != threads {
				t.Errorf("%d rings held after the first round, want %d (kept for reuse)", n, threads)
			}
			// A second round: rings of the same set (claimed again under
			// REUSE, new under RELEASE), new serials either way.
			before := rs.Rings()
			clear(c.serials)
			c.got, c.dropped, c.finished = 0, 0, 0
			round(threads, 1000)
			if c.got+c.dropped != threads*1000 || len(c.serials) != threads {
				t.Errorf("second round: delivered %d + dropped %d from %d rings, want %d from %d", c.got, c.dropped, len(c.serials), threads*1000, threads)
			}
			for s := range c.serials {
				if s <= threads {
					t.Errorf("second round: serial %d of the first round", s)
				}
			}
			if release && rs.Rings() != 0 {
				t.Errorf("second round: %d rings held, want 0", rs.Rings())
			}
			if !release && rs.Rings() != before {
				t.Errorf("second round: %d rings, %d before (the free rings are not reused)", rs.Rings(), before)
			}
		})
	}
}

// A ring of 2 MiB of records or more is a mapping of its own with the
// records aligned to 2 MiB (huge pages); it is consumed and freed as a
// small one.
func TestRingHuge(t *testing.T) {
	rs := newByteSet(4<<20, true)
	c := &checkBytes{t: t, next: map[uint64]uint64{}, serials: map[uint64]bool{}}
	var aligned bool
	testBytes(rs, 1, 2000)
	rs.Consume(func(b *Batch) {
		aligned = uintptr(unsafe.Pointer(unsafe.SliceData(b.Data)))%(2<<20) == 0 && len(b.Data) == 4<<20
		c.consume(b)
	})
	rs.Consume(c.consume)
	if !aligned {
		t.Errorf("a 4 MiB ring's records are not 2 MiB-aligned")
	}
	if c.got != 2000 || rs.Rings() != 0 {
		t.Errorf("delivered %d of 2000, %d rings held after (want 0)", c.got, rs.Rings())
	}
}
