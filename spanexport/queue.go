package spanexport

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

const maxBackoff = 2 * time.Second

// queue is a span processor with a bounded queue: OnEnd never blocks (a
// full queue drops the span and counts it); one goroutine exports batches
// and retries a batch the collector did not take until it does.
//
// The queue is a ring under a mutex, not a channel: a span ended into a
// channel the worker waits on wakes the worker for every span (a futex wake
// and two context switches each, the largest part of what a span cost the
// shop under sample/apm on 2026-12-06). Here OnEnd wakes the worker only
// when a whole batch is waiting; a partial batch leaves at the schedule
// delay.
type queue struct {
	exp  sdktrace.SpanExporter
	cfg  queueConfig
	logf func(string, ...any)

	mu   sync.Mutex
	ring []sdktrace.ReadOnlySpan // cfg.size slots
	head int                     // the oldest span's slot
	n    int                     // spans waiting
	wake chan struct{}           // one token: a whole batch is waiting

	ended, exported, dropped, lost, failures atomic.Int64
	lastDropLog                              atomic.Int64 // unix ns

	closing  chan struct{}
	stopped  chan struct{}
	once     sync.Once
	deadline atomic.Int64 // unix ns: stop retrying after it (set at shutdown)
}

func newQueue(exp sdktrace.SpanExporter, cfg queueConfig, logf func(string, ...any)) *queue {
	q := &queue{exp: exp, cfg: cfg, logf: logf, ring: make([]sdktrace.ReadOnlySpan, cfg.size),
		wake: make(chan struct{}, 1), closing: make(chan struct{}), stopped: make(chan struct{})}
	go q.run()
	return q
}

func (q *queue) stats() Stats {
	return Stats{Ended: q.ended.Load(), Exported: q.exported.Load(), Dropped: q.dropped.Load(),
		Lost: q.lost.Load(), Failures: q.failures.Load()}
}

func (q *queue) OnStart(context.Context, sdktrace.ReadWriteSpan) {}

func (q *queue) OnEnd(s sdktrace.ReadOnlySpan) {
	q.ended.Add(1)
	select {
	case <-q.closing:
		q.dropped.Add(1)
		return
	default:
	}
	q.mu.Lock()
	if q.n == len(q.ring) {
		q.mu.Unlock()
		n := q.dropped.Add(1)
		now := time.Now().UnixNano()
		if last := q.lastDropLog.Load(); now-last > int64(10*time.Second) && q.lastDropLog.CompareAndSwap(last, now) {
			q.logf("the span queue is full (%d spans; the collector is unreachable or slow): dropping spans, %d so far", len(q.ring), n)
		}
		return
	}
	q.ring[(q.head+q.n)%len(q.ring)] = s
	q.n++
	full := q.n == q.cfg.batch
	q.mu.Unlock()
	if full {
		select {
		case q.wake <- struct{}{}:
		default:
		}
	}
}

// take moves up to a batch of the oldest spans into batch; with whole, only
// a whole batch (nothing when fewer wait).
func (q *queue) take(batch []sdktrace.ReadOnlySpan, whole bool) []sdktrace.ReadOnlySpan {
	q.mu.Lock()
	defer q.mu.Unlock()
	k := min(q.n, q.cfg.batch)
	if whole && k < q.cfg.batch {
		return batch
	}
	for range k {
		batch = append(batch, q.ring[q.head])
		q.ring[q.head] = nil
		q.head = (q.head + 1) % len(q.ring)
	}
	q.n -= k
	return batch
}

// waiting is the number of spans in the queue.
func (q *queue) waiting() int64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return int64(q.n)
}

func (q *queue) ForceFlush(context.Context) error { return nil }

func (q *queue) Shutdown(ctx context.Context) error {
	q.once.Do(func() {
		dl, ok := ctx.Deadline()
		if !ok {
			dl = time.Now().Add(5 * time.Second)
		}
		// Leave the exporter's own Shutdown a moment after the last try.
		q.deadline.Store(dl.Add(-250 * time.Millisecond).UnixNano())
		close(q.closing)
	})
	select {
	case <-q.stopped:
	case <-ctx.Done():
	}
	return q.exp.Shutdown(ctx)
}

func (q *queue) run() {
	defer close(q.stopped)
	batch := make([]sdktrace.ReadOnlySpan, 0, q.cfg.batch)
	timer := time.NewTimer(q.cfg.delay)
	defer timer.Stop()
	for {
		whole := true
		select {
		case <-q.wake:
		case <-timer.C:
			whole = false
			timer.Reset(q.cfg.delay)
		case <-q.closing:
			q.drain(batch[:0])
			return
		}
		// Whole batches while they wait; after the delay, the rest too.
		for {
			batch = q.take(batch[:0], whole)
			if len(batch) == 0 {
				break
			}
			if !q.export(batch) {
				q.lost.Add(q.waiting())
				return
			}
			if len(batch) < q.cfg.batch {
				break
			}
		}
		clear(batch)
	}
}

// drain exports what is queued at shutdown, batch by batch, until the
// deadline.
func (q *queue) drain(batch []sdktrace.ReadOnlySpan) {
	for {
		if batch = q.take(batch[:0], false); len(batch) == 0 {
			return
		}
		if !q.export(batch) {
			q.lost.Add(q.waiting())
			return
		}
	}
}

// export sends a batch until the collector takes it. It gives up (the
// batch counted lost, false returned) only once Shutdown has set a deadline
// and that deadline passed.
func (q *queue) export(batch []sdktrace.ReadOnlySpan) bool {
	backoff := 100 * time.Millisecond
	for {
		ctx, cancel := context.WithTimeout(context.Background(), q.cfg.timeout)
		if dl := q.deadline.Load(); dl != 0 {
			cancel()
			ctx, cancel = context.WithDeadline(context.Background(), time.Unix(0, dl))
		}
		err := q.exp.ExportSpans(ctx, batch)
		cancel()
		if err == nil {
			q.exported.Add(int64(len(batch)))
			return true
		}
		if q.failures.Add(1) == 1 {
			q.logf("export failed (retrying; spans queue meanwhile): %v", firstLine(err))
		}
		if dl := q.deadline.Load(); dl != 0 && time.Now().UnixNano() >= dl {
			q.lost.Add(int64(len(batch)))
			q.logf("export failed at shutdown: %v", firstLine(err))
			return false
		}
		select {
		case <-time.After(backoff):
		case <-q.closing:
			// Shutting down: try again soon, until the deadline.
			time.Sleep(50 * time.Millisecond)
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

func firstLine(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}
