package export_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/pprofbuild/export"
)

// fast retries: the tests' "periods" are 100 ms
var fastOpts = export.Options{InitialBackoff: 50 * time.Millisecond, MaxBackoff: 200 * time.Millisecond, Timeout: 2 * time.Second}

func opts(t testing.TB, f func(*export.Options)) export.Options {
	o := fastOpts
	o.Logf = logf(t)
	if f != nil {
		f(&o)
	}
	return o
}

func newPyro(t testing.TB, srv *exporttest.Pyroscope) export.Client {
	c, err := export.NewPyroscope(export.PyroscopeOptions{URL: srv.URL(), Resource: resource(t)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// enqueuePeriods enqueues every kind for periods from..to, one period
// every 100 ms, and returns what it sent.
func enqueuePeriods(t *testing.T, e *export.Exporter, from, to int, want map[string]sent) {
	for n := from; n <= to; n++ {
		for _, k := range kinds {
			ep, pp := testProfile(t, k, n)
			if want != nil {
				want[fmt.Sprintf("%s/%d", k, n)] = sent{ep, pp}
			}
			e.Enqueue(ep)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func shutdown(t *testing.T, e *export.Exporter, d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return e.Shutdown(ctx)
}

// The receiver is stopped for several periods and restarted: nothing
// that fit the queue is lost, nothing arrives twice.
func TestPyroscopeDownThenUp(t *testing.T) {
	srv := exporttest.StartPyroscope(t, "")
	e := export.New(newPyro(t, srv), opts(t, nil))
	want := map[string]sent{}
	enqueuePeriods(t, e, 1, 2, want)
	srv.Stop()
	enqueuePeriods(t, e, 3, 8, want)
	if st := e.Stats(); st.Retries == 0 {
		t.Errorf("no retries while the receiver was down: %+v", st)
	}
	srv.Restart()
	enqueuePeriods(t, e, 9, 10, want)
	if err := shutdown(t, e, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	checkPyroscope(t, srv.Received(), want, nil)
	st := e.Stats()
	t.Logf("stats %+v", st)
	if st.Sent != int64(len(want)) || st.Dropped+st.Lost+st.Rejected != 0 {
		t.Errorf("stats %+v", st)
	}
}

// The receiver never comes back: Enqueue goes on without waiting, the
// queue keeps its bound and drops the oldest, Shutdown returns within its
// bound, and the loss is counted and logged.
func TestPyroscopeNeverBack(t *testing.T) {
	srv := exporttest.StartPyroscope(t, "")
	srv.Stop()
	var mu sync.Mutex
	var logs []string
	o := opts(t, func(o *export.Options) {
		o.QueueSize = 8
		o.Logf = func(f string, a ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(f, a...))
			mu.Unlock()
			t.Logf(f, a...)
		}
	})
	e := export.New(newPyro(t, srv), o)
	for n := 1; n <= 10; n++ {
		for _, k := range kinds {
			ep, _ := testProfile(t, k, n)
			e.Enqueue(ep)
		}
	}
	start := time.Now()
	err := shutdown(t, e, 300*time.Millisecond)
	t.Logf("Shutdown took %v: %v", time.Since(start), err)
	if err == nil {
		t.Error("Shutdown reported no loss")
	}
	st := e.Stats()
	if st.Enqueued != 30 || st.Sent != 0 || st.Dropped+st.Lost != 30 || st.Dropped == 0 || st.Lost == 0 || st.Lost > 8 {
		t.Errorf("stats %+v", st)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(logs, "\n")
	for _, w := range []string{"queue full", "failing", "not sent within the bound"} {
		if !strings.Contains(joined, w) {
			t.Errorf("no log saying %q:\n%s", w, joined)
		}
	}
}

// After drops, the next profile that arrives says so in its comments.
func TestDroppedInNextComments(t *testing.T) {
	srv := exporttest.StartPyroscope(t, "")
	srv.Stop()
	e := export.New(newPyro(t, srv), opts(t, func(o *export.Options) { o.QueueSize = 4; o.MaxBatch = 1 }))
	for n := 1; n <= 4; n++ {
		for _, k := range kinds {
			ep, _ := testProfile(t, k, n)
			e.Enqueue(ep)
		}
	}
	srv.Restart()
	if err := shutdown(t, e, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	st := e.Stats()
	got := srv.Received()
	if int64(len(got)) != st.Sent || st.Sent+st.Dropped != 12 || st.Dropped == 0 {
		t.Fatalf("stats %+v, %d received", st, len(got))
	}
	var said int
	for _, g := range got {
		for _, c := range g.Comments {
			if strings.Contains(c, "dropped before this one") {
				said++
				t.Logf("%s/%s: %s", g.Labels["__name__"], g.Labels["period"], c)
			}
		}
	}
	if said == 0 {
		t.Error("no profile says what was dropped before it")
	}
}

// A receiver answering 500, 429 with Retry-After, or hanging: the
// profiles arrive once it answers, exactly once.
func TestPyroscopeFaults(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(n int, w http.ResponseWriter, r *http.Request) bool
	}{
		{"500", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n <= 3 {
				http.Error(w, "boom", http.StatusInternalServerError)
				return true
			}
			return false
		}},
		{"429-retry-after", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n <= 1 {
				w.Header().Set("Retry-After", "1")
				http.Error(w, "slow down", http.StatusTooManyRequests)
				return true
			}
			return false
		}},
		{"hang", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n <= 2 {
				select {
				case <-r.Context().Done():
				case <-time.After(2 * time.Second): // the client gave up long before (its timeout: 300 ms)
				}
				return true
			}
			return false
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := exporttest.StartPyroscope(t, "")
			var mu sync.Mutex
			var n int
			var times []time.Time
			srv.SetFault(func(w http.ResponseWriter, r *http.Request) bool {
				mu.Lock()
				n++
				k := n
				times = append(times, time.Now())
				mu.Unlock()
				return tc.fault(k, w, r)
			})
			e := export.New(newPyro(t, srv), opts(t, func(o *export.Options) { o.Timeout = 300 * time.Millisecond; o.MaxBatch = 3 }))
			want := map[string]sent{}
			start := time.Now()
			enqueuePeriods(t, e, 1, 1, want)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("enqueueing took %v", d) // Enqueue must not wait on the network
			}
			if err := shutdown(t, e, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			checkPyroscope(t, srv.Received(), want, nil)
			st := e.Stats()
			t.Logf("stats %+v, %d requests", st, srv.Requests())
			if st.Retries == 0 {
				t.Errorf("no retries: %+v", st)
			}
			if tc.name == "429-retry-after" {
				mu.Lock()
				defer mu.Unlock()
				if gap := times[1].Sub(times[0]); gap < 900*time.Millisecond {
					t.Errorf("retried %v after a 429 with Retry-After: 1", gap)
				}
			}
		})
	}
}
