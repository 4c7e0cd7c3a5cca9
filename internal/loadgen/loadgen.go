// Package loadgen loads an HTTP service the way the benchmark measures a
// service under a profiler: a closed loop of fixed concurrency (each
// connection sends its next request when the last one answered: the
// throughput a service reaches) or an open loop at a fixed rate (requests
// are due on a schedule whatever the service does, and a request's latency
// counts from when it was due, so a stall is not hidden by the requests it
// delayed: coordinated omission is avoided). A warm-up is run and thrown
// away first.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Request is one request of the load; Path is appended to the base URL.
type Request struct {
	Method string // default GET
	Path   string
}

// Options describe a run.
type Options struct {
	URL string // base URL, e.g. http://127.0.0.1:5080
	// Requests are sent in turn (request i is Requests[i%len]).
	Requests []Request
	// Concurrency > 0: a closed loop of that many connections.
	Concurrency int
	// Rate > 0 (requests/s): an open loop; Concurrency then bounds the
	// requests in flight (default 256), and a request that finds them all
	// busy waits, its latency counting from when it was due.
	Rate     float64
	Warmup   time.Duration
	Duration time.Duration
	// Timeout of one request (default 10 s); a request that times out is
	// an error.
	Timeout time.Duration
}

// Result is what a run measured, warm-up excluded.
type Result struct {
	Requests int           // answered with a status below 500
	Errors   int           // transport errors, timeouts and 5xx
	Elapsed  time.Duration // the measured phase
	// Latencies, sorted, of every request of the measured phase (errors
	// included, at the time they failed).
	Latencies []time.Duration
	FirstErr  error
}

// RequestsPerSecond is Requests over Elapsed.
func (r Result) RequestsPerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Quantile returns the q-quantile (0..1) of the latencies, nearest rank.
func (r Result) Quantile(q float64) time.Duration {
	n := len(r.Latencies)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	i = max(0, min(n-1, i))
	return r.Latencies[i]
}

func (r Result) String() string {
	return fmt.Sprintf("%d requests in %.1fs: %.0f/s, %d errors, p50 %.2f ms, p99 %.2f ms",
		r.Requests, r.Elapsed.Seconds(), r.RequestsPerSecond(), r.Errors,
		ms(r.Quantile(0.5)), ms(r.Quantile(0.99)))
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// Run runs the warm-up, then the measured phase, and returns what the
// measured phase saw.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.URL == "" || len(o.Requests) == 0 || o.Duration <= 0 {
		return Result{}, errors.New("loadgen: URL, Requests and Duration are required")
	}
	if o.Concurrency <= 0 && o.Rate <= 0 {
		return Result{}, errors.New("loadgen: Concurrency or Rate is required")
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	conns := o.Concurrency
	if o.Rate > 0 && conns <= 0 {
		conns = 256
	}
	tr := &http.Transport{MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, DisableCompression: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: o.Timeout}
	reqs := make([]*http.Request, len(o.Requests))
	for i, r := range o.Requests {
		m := r.Method
		if m == "" {
			m = http.MethodGet
		}
		req, err := http.NewRequestWithContext(ctx, m, o.URL+r.Path, nil)
		if err != nil {
			return Result{}, err
		}
		reqs[i] = req
	}
	if o.Warmup > 0 {
		if _, err := phase(ctx, client, reqs, o, conns, o.Warmup); err != nil {
			return Result{}, err
		}
	}
	return phase(ctx, client, reqs, o, conns, o.Duration)
}

func phase(ctx context.Context, client *http.Client, reqs []*http.Request, o Options, conns int, d time.Duration) (Result, error) {
	var (
		mu  sync.Mutex
		res Result
		wg  sync.WaitGroup
	)
	start := time.Now()
	end := start.Add(d)
	record := func(lat time.Duration, err error) {
		mu.Lock()
		res.Latencies = append(res.Latencies, lat)
		if err != nil {
			res.Errors++
			if res.FirstErr == nil {
				res.FirstErr = err
			}
		} else {
			res.Requests++
		}
		mu.Unlock()
	}
	send := func(i int) error {
		resp, err := client.Do(reqs[i%len(reqs)])
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode >= 500 {
			err = fmt.Errorf("%s %s: status %d", reqs[i%len(reqs)].Method, reqs[i%len(reqs)].URL.Path, resp.StatusCode)
		}
		return err
	}
	if o.Rate <= 0 {
		var next int
		var nmu sync.Mutex
		for range conns {
			wg.Go(func() {
				for ctx.Err() == nil && time.Now().Before(end) {
					nmu.Lock()
					i := next
					next++
					nmu.Unlock()
					t0 := time.Now()
					err := send(i)
					record(time.Since(t0), err)
				}
			})
		}
	} else {
		// open loop: request i is due at start + i/Rate
		interval := time.Duration(float64(time.Second) / o.Rate)
		slots := make(chan struct{}, conns)
		for i := 0; ; i++ {
			due := start.Add(time.Duration(i) * interval)
			if !due.Before(end) || ctx.Err() != nil {
				break
			}
			if w := time.Until(due); w > 0 {
				time.Sleep(w)
			}
			slots <- struct{}{}
			wg.Go(func() {
				defer func() { <-slots }()
				err := send(i)
				record(time.Since(due), err)
			})
		}
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if err := ctx.Err(); err != nil {
		return res, err
	}
	slices.Sort(res.Latencies)
	return res, nil
}
