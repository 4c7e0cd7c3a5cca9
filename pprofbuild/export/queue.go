package export

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"
)

// Profile is one period of one profile type, as a profiler hands it to an
// Exporter.
type Profile struct {
	// Name is the profile type ("cpu", "wall", "heap", ...): Pyroscope's
	// __name__, the OTLP profile's "profile.name" attribute.
	Name string
	// Start and End are the period the profile covers.
	Start, End time.Time
	// Pprof is the profile as pprof's protocol buffer, gzip-compressed or
	// not (as profile.Profile.Write or pprofbuild.Write give it). The
	// Exporter only reads it: the same bytes may go to several Exporters
	// and to a file.
	Pprof []byte
	// Labels are labels of this profile's series besides the resource's
	// (optional): Pyroscope's series labels; for OTLP, attributes of
	// every sample.
	Labels map[string]string
}

// Client sends profiles to one backend: [NewPyroscope], [NewOTLP].
type Client interface {
	// Send sends a batch in one request, within ctx. An error that
	// says the request may succeed later is retried ([Retry]); any
	// other is permanent and the batch is dropped.
	Send(ctx context.Context, batch []*Profile) error
	// String names the backend for logs ("pyroscope http://...").
	String() string
}

// RetryError is an error a Client returns for a request worth retrying:
// a connection failure, a timeout, 408, 429, or a server error (5xx, or
// gRPC's UNAVAILABLE, RESOURCE_EXHAUSTED, ...). After is how long the
// server asked to wait (Retry-After), 0 if it did not say.
type RetryError struct {
	Err   error
	After time.Duration
}

func (e *RetryError) Error() string { return e.Err.Error() }
func (e *RetryError) Unwrap() error { return e.Err }

// PartialError is what a Client returns when the backend accepted a
// request but said it rejected part of it (OTLP's partial success): the
// batch is not retried, and the rejected items are counted apart
// (Stats.PartlyRejected) and logged.
type PartialError struct {
	Rejected int64 // items the backend rejected (OTLP: profiles, one per sample type)
	Message  string
}

func (e *PartialError) Error() string {
	return fmt.Sprintf("%d rejected: %s", e.Rejected, e.Message)
}

// Retry wraps err as a RetryError.
func Retry(err error, after time.Duration) error { return &RetryError{Err: err, After: after} }

// retryAfter reads an HTTP Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second
	}
	if t, err := time.Parse(time.RFC1123, v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// Options configure an Exporter's queue; the zero value gives the
// defaults.
type Options struct {
	// QueueSize bounds the profiles held waiting to be sent (default
	// 512: at contprof's six profiles a minute, 85 minutes of a backend
	// being away); QueueBytes bounds their size (default 64 MiB). Past
	// either, the oldest profile not being sent is dropped.
	QueueSize  int
	QueueBytes int
	// MaxBatch bounds the profiles per request (default 16).
	MaxBatch int
	// Timeout bounds one request (default 10 s).
	Timeout time.Duration
	// InitialBackoff and MaxBackoff bound the wait between retries of a
	// failing request (defaults 1 s and 30 s): it doubles from the first
	// to the second, with 20% jitter, or is what the server asked
	// (Retry-After, at most 5 minutes).
	InitialBackoff, MaxBackoff time.Duration
	// Logf logs what an Exporter drops and when its backend fails and
	// recovers (default: nothing).
	Logf func(format string, args ...any)
}

func (o *Options) defaults() {
	if o.QueueSize <= 0 {
		o.QueueSize = 512
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 64 << 20
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 16
	}
	o.MaxBatch = max(1, min(o.MaxBatch, o.QueueSize/2))
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	if o.InitialBackoff <= 0 {
		o.InitialBackoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 30 * time.Second
	}
	o.MaxBackoff = max(o.MaxBackoff, o.InitialBackoff)
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
}

// Stats counts what an Exporter did with the profiles it was given.
type Stats struct {
	Enqueued int64 // profiles given to Enqueue
	Sent     int64 // accepted by the backend
	Dropped  int64 // dropped because the queue was full
	Rejected int64 // dropped because the backend refused them for good
	Lost     int64 // still queued when Shutdown's bound ran out
	Retries  int64 // failed requests retried
	// PartlyRejected counts what the backend said it rejected of
	// requests it accepted (PartialError)
	PartlyRejected int64
	Queued         int // waiting now
}

type clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

type item struct {
	p *Profile
	// dropped is how many profiles were dropped (queue full, rejected)
	// since the last one that said so: this one says it in its comments
	dropped int64
}

// Exporter ships profiles to one backend from a goroutine of its own,
// through a bounded in-memory queue: [Exporter.Enqueue] never waits on
// the network, a failing request is retried with back-off while the
// profiles fit the queue, and what does not fit is dropped, counted,
// logged, and written into the comments of the next profile sent.
type Exporter struct {
	c     Client
	o     Options
	clk   clock
	mu    sync.Mutex
	q     []item
	bytes int
	// inflight is how many items at the head of q the sender holds
	inflight   int
	st         Stats
	unreported int64 // dropped since the last profile that said so
	streak     int64 // dropped since the last request that succeeded
	wake       chan struct{}
	closing    chan struct{}
	flushCtx   context.Context
	// abort cancels the request in flight when Shutdown's bound runs out
	abortCtx  context.Context
	abort     context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New starts an Exporter sending to c.
func New(c Client, o Options) *Exporter {
	return newExporter(c, o, realClock{})
}

func newExporter(c Client, o Options, clk clock) *Exporter {
	o.defaults()
	e := &Exporter{c: c, o: o, clk: clk, wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	e.abortCtx, e.abort = context.WithCancel(context.Background())
	go e.run()
	return e
}

func (e *Exporter) String() string { return e.c.String() }

// Enqueue queues p to be sent; it does not wait for the network and does
// not copy p (do not change it afterwards). When the queue is full the
// oldest profile not being sent is dropped. After Shutdown, p is dropped.
func (e *Exporter) Enqueue(p *Profile) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.st.Enqueued++
	select {
	case <-e.closing:
		e.st.Dropped++
		return
	default:
	}
	it := item{p: p, dropped: e.unreported}
	e.unreported = 0
	e.q = append(e.q, it)
	e.bytes += len(p.Pprof)
	for (len(e.q) > e.o.QueueSize || e.bytes > e.o.QueueBytes) && len(e.q) > e.inflight+1 {
		old := e.q[e.inflight]
		e.q = append(e.q[:e.inflight], e.q[e.inflight+1:]...)
		e.bytes -= len(old.p.Pprof)
		e.st.Dropped++
		e.streak++
		// what the dropped one would have said passes to the next one
		e.q[e.inflight].dropped += old.dropped + 1
		if e.streak == 1 || e.streak%100 == 0 {
			e.o.Logf("export to %s: queue full (%d profiles, %d bytes): dropped %s profile of %s; %d dropped so far",
				e.c, len(e.q), e.bytes, old.p.Name, old.p.Start.UTC().Format(time.RFC3339), e.st.Dropped)
		}
	}
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Stats returns the counts so far.
func (e *Exporter) Stats() Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := e.st
	s.Queued = len(e.q)
	return s
}

// Shutdown sends what is queued, retrying as long as ctx allows, and
// stops the Exporter: at ctx's deadline a request in flight is cancelled
// and what is left is counted as Lost, logged, and returned as an error.
// While shutting down, the waits between retries are at most 100 ms,
// unless the server asked for longer (Retry-After).
func (e *Exporter) Shutdown(ctx context.Context) error {
	e.closeOnce.Do(func() {
		e.mu.Lock()
		e.flushCtx = ctx
		close(e.closing)
		e.mu.Unlock()
	})
	select {
	case <-e.done:
	case <-ctx.Done():
		e.abort() // the request in flight, if any, ends at once
		<-e.done
	}
	e.abort()
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.q); n > 0 {
		e.st.Lost += int64(n)
		e.q, e.bytes = nil, 0
		e.o.Logf("export to %s: shutdown: %d profiles not sent within the bound (%v)", e.c, n, context.Cause(ctx))
		return fmt.Errorf("export to %s: %d profiles not sent at shutdown", e.c, n)
	}
	return nil
}

func (e *Exporter) run() {
	defer close(e.done)
	backoff := time.Duration(0)
	failing := 0
	for {
		e.mu.Lock()
		closing := e.isClosing()
		var flush context.Context
		if closing {
			flush = e.flushCtx
		}
		n := min(len(e.q), e.o.MaxBatch)
		if n == 0 {
			e.mu.Unlock()
			if closing {
				return
			}
			select {
			case <-e.wake:
			case <-e.closing:
			}
			continue
		}
		if flush != nil && flush.Err() != nil {
			e.mu.Unlock()
			return
		}
		batch := make([]*Profile, n)
		notes := make([]string, n)
		for i := range n {
			batch[i] = e.q[i].p
			if d := e.q[i].dropped; d > 0 {
				notes[i] = fmt.Sprintf("export to %s: %d profiles dropped before this one (queue full or rejected); so far %d dropped (queue full), %d rejected", e.c, d, e.st.Dropped, e.st.Rejected)
			}
		}
		e.inflight = n
		e.mu.Unlock()

		batch = withNotes(batch, notes)
		ctx, cancel := context.WithTimeout(e.abortCtx, e.o.Timeout)
		err := e.c.Send(ctx, batch)
		cancel()

		var dropped int64 // while the backend was failing
		var pe *PartialError
		partial := errors.As(err, &pe)
		if partial {
			err = nil
		}
		e.mu.Lock()
		e.inflight = 0
		if partial {
			e.st.PartlyRejected += pe.Rejected
		}
		var re *RetryError
		retry := err != nil && errors.As(err, &re)
		if err == nil || !retry {
			for _, it := range e.q[:n] {
				e.bytes -= len(it.p.Pprof)
			}
			e.q = append(e.q[:0:0], e.q[n:]...)
			if err == nil {
				e.st.Sent += int64(n)
				dropped, e.streak = e.streak, 0
			} else {
				e.st.Rejected += int64(n)
				if len(e.q) > 0 {
					e.q[0].dropped += int64(n)
				} else {
					e.unreported += int64(n)
				}
			}
		} else {
			e.st.Retries++
		}
		queued := len(e.q)
		e.mu.Unlock()

		if partial {
			e.o.Logf("export to %s: the backend rejected part of a request: %v", e.c, pe)
		}
		switch {
		case err == nil:
			if failing > 0 {
				e.o.Logf("export to %s: recovered after %d failed requests; %d profiles dropped meanwhile (queue full), %d queued", e.c, failing, dropped, queued)
			}
			failing, backoff = 0, 0
			continue
		case !retry:
			e.o.Logf("export to %s: %d profiles rejected: %v", e.c, n, err)
			continue
		}
		failing++
		if backoff == 0 {
			backoff = e.o.InitialBackoff
		} else {
			backoff = min(2*backoff, e.o.MaxBackoff)
		}
		wait := time.Duration(float64(backoff) * (0.8 + 0.4*rand.Float64()))
		if re.After > 0 {
			wait = min(re.After, 5*time.Minute)
		}
		if failing == 1 {
			e.o.Logf("export to %s failing: %v; retrying in %v (%d profiles queued)", e.c, err, wait.Round(time.Millisecond), queued)
		}
		if closing && re.After == 0 {
			wait = min(wait, 100*time.Millisecond)
		}
		timer := e.clk.After(wait)
		if closing {
			select {
			case <-timer:
			case <-flush.Done():
			}
			continue
		}
		select {
		case <-timer:
		case <-e.closing:
			// Shutdown's bound now rules: retry at once, unless the
			// server asked for a wait
			if re.After > 0 {
				e.mu.Lock()
				f := e.flushCtx
				e.mu.Unlock()
				select {
				case <-timer:
				case <-f.Done():
				}
			}
		}
	}
}

func (e *Exporter) isClosing() bool {
	select {
	case <-e.closing:
		return true
	default:
		return false
	}
}

func (e *Exporter) inflightNow() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.inflight
}
