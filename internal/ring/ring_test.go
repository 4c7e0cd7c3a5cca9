//go:build clrprof_testhooks

package ring

import (
	"sync"
	"testing"
	"time"
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
