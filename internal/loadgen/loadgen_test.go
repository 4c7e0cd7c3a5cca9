package loadgen

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func TestClosedAndOpenLoop(t *testing.T) {
	var hits, fails atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/fail" {
			fails.Add(1)
			http.Error(w, "no", 500)
			return
		}
		time.Sleep(2 * time.Millisecond)
	}))
	defer srv.Close()

	res, err := Run(context.Background(), Options{URL: srv.URL, Requests: []Request{{Path: "/a"}, {Path: "/fail"}},
		Concurrency: 4, Warmup: 50 * time.Millisecond, Duration: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// every request the measured phase sent is counted once, as an answer
	// or an error; the warm-up's are not
	if res.Requests == 0 || res.Errors == 0 || len(res.Latencies) != res.Requests+res.Errors {
		t.Fatalf("closed loop: %+v", res)
	}
	if int64(res.Requests+res.Errors) >= hits.Load() {
		t.Errorf("closed loop counted %d of %d hits: the warm-up was counted", res.Requests+res.Errors, hits.Load())
	}
	if res.Quantile(0) < 0 || res.Quantile(0.5) > res.Quantile(0.99) || res.Quantile(1) != res.Latencies[len(res.Latencies)-1] {
		t.Errorf("quantiles: %v %v %v", res.Quantile(0), res.Quantile(0.5), res.Quantile(0.99))
	}

	hits.Store(0)
	res, err = Run(context.Background(), Options{URL: srv.URL, Requests: []Request{{Path: "/a"}},
		Rate: 200, Duration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// an open loop at 200/s for 0.5 s sends exactly 100 requests
	if res.Requests != 100 || hits.Load() != 100 {
		t.Errorf("open loop: %d answered, %d hits, want 100", res.Requests, hits.Load())
	}
	t.Log(res)
}

// TestOpenLoopCountsFromDue: a server that stalls makes the requests due
// during the stall late, and their latency counts from when they were due.
func TestOpenLoopCountsFromDue(t *testing.T) {
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if n.Add(1) == 1 {
			time.Sleep(300 * time.Millisecond)
		}
	}))
	defer srv.Close()
	res, err := Run(context.Background(), Options{URL: srv.URL, Requests: []Request{{Path: "/"}},
		Rate: 100, Concurrency: 1, Duration: 400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	// with one connection, the ~30 requests due during the 300 ms stall
	// wait for it: the closed-loop view would see one slow request, the
	// open loop sees many
	slow := 0
	for _, l := range res.Latencies {
		if l >= 100*time.Millisecond {
			slow++
		}
	}
	if slow < 10 {
		t.Errorf("%d requests of %d at >= 100 ms; the stall was hidden", slow, len(res.Latencies))
	}
}
