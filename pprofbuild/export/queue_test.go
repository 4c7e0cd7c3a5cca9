package export

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock records the waits asked of it and ends them at once.
type fakeClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (c *fakeClock) Now() time.Time { return time.Unix(0, 0) }
func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	ch := make(chan time.Time, 1)
	ch <- time.Unix(0, 0)
	return ch
}

// scripted answers each Send with the next error of its script, then nil.
type scripted struct {
	mu     sync.Mutex
	script []error
	sent   []string
	calls  int
}

func (s *scripted) String() string { return "scripted" }
func (s *scripted) Send(_ context.Context, b []*Profile) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.script) > 0 {
		err := s.script[0]
		s.script = s.script[1:]
		if err != nil {
			return err
		}
	}
	for _, p := range b {
		s.sent = append(s.sent, p.Name)
	}
	return nil
}

func TestBackoff(t *testing.T) {
	fail := Retry(errors.New("down"), 0)
	script := []error{fail, fail, fail, fail, fail, fail, Retry(errors.New("busy"), 7*time.Second), fail}
	c := &scripted{script: script}
	clk := &fakeClock{}
	e := newExporter(c, Options{InitialBackoff: time.Second, MaxBackoff: 8 * time.Second}, clk)
	e.Enqueue(&Profile{Name: "a"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// let the retries happen before Shutdown shortens them
	for e.Stats().Sent == 0 {
		time.Sleep(time.Millisecond)
	}
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	want := []time.Duration{1, 2, 4, 8, 8, 8, 7, 8} // seconds, ±20% but the Retry-After
	if len(clk.waits) != len(want) {
		t.Fatalf("waits %v, want about %v s", clk.waits, want)
	}
	for i, w := range want {
		w *= time.Second
		lo, hi := time.Duration(float64(w)*0.8), time.Duration(float64(w)*1.2)
		if i == 6 {
			lo, hi = w, w
		}
		if clk.waits[i] < lo || clk.waits[i] > hi {
			t.Errorf("wait %d: %v, want %v..%v", i, clk.waits[i], lo, hi)
		}
	}
	if st := e.Stats(); st.Sent != 1 || st.Retries != int64(len(script)) {
		t.Errorf("stats %+v", st)
	}
}

// blocking is a Client whose Send waits until released.
type blocking struct {
	release chan struct{}
	scripted
}

func (b *blocking) Send(ctx context.Context, batch []*Profile) error {
	select {
	case <-b.release:
	case <-ctx.Done():
		return Retry(ctx.Err(), 0)
	}
	return b.scripted.Send(ctx, batch)
}

func TestQueueFullDropsOldest(t *testing.T) {
	c := &blocking{release: make(chan struct{})}
	e := newExporter(c, Options{QueueSize: 4, MaxBatch: 1}, &fakeClock{})
	var logs []string
	e.o.Logf = func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }
	for i := range 10 {
		e.Enqueue(&Profile{Name: fmt.Sprint(i), Pprof: []byte{1}})
		if i == 0 {
			for e.inflightNow() == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}
	st := e.Stats()
	if st.Dropped != 6 || st.Queued != 4 {
		t.Fatalf("stats %+v", st)
	}
	e.mu.Lock()
	var names []string
	var dropped []int64
	for _, it := range e.q {
		names = append(names, it.p.Name)
		dropped = append(dropped, it.dropped)
	}
	e.mu.Unlock()
	// 0 is being sent; 1..6 dropped, the next one kept says so
	if fmt.Sprint(names) != "[0 7 8 9]" || fmt.Sprint(dropped) != "[0 6 0 0]" {
		t.Errorf("queue %v, dropped %v", names, dropped)
	}
	close(c.release)
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(c.sent) != "[0 7 8 9]" {
		t.Errorf("sent %v", c.sent)
	}
	if len(logs) == 0 {
		t.Error("no log of the drops")
	}
}

func TestShutdownBound(t *testing.T) {
	c := &blocking{release: make(chan struct{})}
	e := newExporter(c, Options{}, realClock{})
	for i := range 3 {
		e.Enqueue(&Profile{Name: fmt.Sprint(i)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err := e.Shutdown(ctx)
	if err == nil {
		t.Fatal("Shutdown with a hung backend returned nil")
	}
	if st := e.Stats(); st.Lost != 3 || st.Sent != 0 {
		t.Errorf("stats %+v", st)
	}
	e.Enqueue(&Profile{Name: "late"})
	if st := e.Stats(); st.Dropped != 1 {
		t.Errorf("after Shutdown: stats %+v", st)
	}
}

func TestPermanentErrorRejects(t *testing.T) {
	c := &scripted{script: []error{errors.New("400 bad")}}
	e := newExporter(c, Options{MaxBatch: 1}, &fakeClock{})
	e.Enqueue(&Profile{Name: "a"})
	for e.Stats().Rejected == 0 {
		time.Sleep(time.Millisecond)
	}
	// the rejection is to be said by the next profile enqueued: read it
	// before b is, and after (b may be sent at once, so not from the
	// queue: that read raced with the sender and failed once, index out
	// of range, with -race)
	e.mu.Lock()
	d := e.unreported
	e.mu.Unlock()
	e.Enqueue(&Profile{Name: "b"})
	e.mu.Lock()
	after := e.unreported
	e.mu.Unlock()
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if st := e.Stats(); st.Rejected != 1 || st.Sent != 1 || d != 1 || after != 0 || fmt.Sprint(c.sent) != "[b]" {
		t.Errorf("stats %+v, dropped to be noted %d (then %d), sent %v", st, d, after, c.sent)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for v, want := range map[string]time.Duration{
		"":                              0,
		"3":                             3 * time.Second,
		"x":                             0,
		"Thu, 01 Jan 2026 00:00:09 GMT": 9 * time.Second,
	} {
		if got := retryAfter(v, now); got != want {
			t.Errorf("retryAfter(%q) = %v, want %v", v, got, want)
		}
	}
}

func TestPartialSuccess(t *testing.T) {
	c := &scripted{script: []error{&PartialError{Rejected: 2, Message: "bad sample"}}}
	var logs []string
	var mu sync.Mutex
	e := newExporter(c, Options{Logf: func(f string, a ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(f, a...))
		mu.Unlock()
	}}, &fakeClock{})
	e.Enqueue(&Profile{Name: "a"})
	if err := e.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	mu.Lock()
	defer mu.Unlock()
	if st.PartlyRejected != 2 || st.Retries != 0 || c.calls != 1 || len(logs) != 1 {
		t.Errorf("stats %+v, %d calls, logs %q", st, c.calls, logs)
	}
}

// A request already in flight when Shutdown is called ends at Shutdown's
// bound, not at the request's own (longer) timeout.
func TestShutdownCancelsInFlight(t *testing.T) {
	c := &blocking{release: make(chan struct{})}
	e := newExporter(c, Options{Timeout: time.Hour}, realClock{})
	e.Enqueue(&Profile{Name: "a"})
	for e.inflightNow() == 0 {
		time.Sleep(time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	done := make(chan error)
	go func() { done <- e.Shutdown(ctx) }()
	select {
	case err := <-done:
		if err == nil {
			t.Error("Shutdown reported no loss")
		}
	case <-time.After(time.Minute):
		t.Fatal("Shutdown waited for the request in flight past its bound")
	}
	if st := e.Stats(); st.Lost != 1 {
		t.Errorf("stats %+v", st)
	}
}
