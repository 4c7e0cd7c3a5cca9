package export_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/pprofbuild/export"
)

func TestOTLPDownThenUp(t *testing.T) {
	col := exporttest.StartCollector(t)
	for _, proto := range []string{export.ProtocolGRPC, export.ProtocolHTTP} {
		t.Run(strings.ReplaceAll(proto, "/", "-"), func(t *testing.T) {
			ep := col.HTTPEndpoint()
			if proto == export.ProtocolGRPC {
				ep = col.GRPCEndpoint()
			}
			before, _ := col.Received()
			c, err := export.NewOTLP(export.OTLPOptions{Protocol: proto, Endpoint: ep, Gzip: true, Resource: resource(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			e := export.New(c, opts(t, nil))
			want := map[string]sent{}
			enqueuePeriods(t, e, 1, 2, want)
			col.Stop()
			enqueuePeriods(t, e, 3, 6, want)
			col.Start()
			enqueuePeriods(t, e, 7, 8, want)
			if err := shutdown(t, e, 20*time.Second); err != nil {
				t.Fatal(err)
			}
			got, err := col.Received()
			if err != nil {
				t.Fatal(err)
			}
			checkOTLP(t, got[len(before):], want)
			st := e.Stats()
			t.Logf("stats %+v", st)
			if st.Retries == 0 || st.Dropped+st.Lost+st.Rejected != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// The same faults in front of the Collector's HTTP receiver (a reverse
// proxy answers 500, 429 with Retry-After, or hangs, then passes the
// requests on): the profiles arrive once it answers, exactly once.
func TestOTLPHTTPFaults(t *testing.T) {
	col := exporttest.StartCollector(t)
	target, _ := url.Parse("http://" + col.HTTPAddr)
	for _, tc := range []struct {
		name  string
		fault func(n int, w http.ResponseWriter, r *http.Request) bool
	}{
		{"500", func(n int, w http.ResponseWriter, r *http.Request) bool {
			if n <= 2 {
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
			if n <= 1 {
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
			var mu sync.Mutex
			var n int
			var times []time.Time
			proxy := httputil.NewSingleHostReverseProxy(target)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				k := n
				times = append(times, time.Now())
				mu.Unlock()
				if tc.fault(k, w, r) {
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer srv.Close()
			before, _ := col.Received()
			c, err := export.NewOTLP(export.OTLPOptions{Endpoint: srv.URL + "/v1development/profiles", Gzip: true, Resource: resource(t)})
			if err != nil {
				t.Fatal(err)
			}
			e := export.New(c, opts(t, func(o *export.Options) { o.Timeout = 300 * time.Millisecond; o.MaxBatch = 3 }))
			want := map[string]sent{}
			enqueuePeriods(t, e, 1, 1, want)
			if err := shutdown(t, e, 10*time.Second); err != nil {
				t.Fatal(err)
			}
			got, err := col.Received()
			if err != nil {
				t.Fatal(err)
			}
			checkOTLP(t, got[len(before):], want)
			st := e.Stats()
			t.Logf("stats %+v", st)
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

// A gRPC receiver that hangs: a TCP proxy in front of the Collector's gRPC
// receiver accepts connections and answers nothing for a second, then
// passes them on. The requests time out, are retried, and every profile
// arrives once.
func TestOTLPGRPCHang(t *testing.T) {
	col := exporttest.StartCollector(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var hang atomic.Bool
	hang.Store(true)
	var wg sync.WaitGroup
	defer wg.Wait()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				if hang.Load() {
					io.Copy(io.Discard, c) // until the client gives up on it
					return
				}
				up, err := net.Dial("tcp", col.GRPCAddr)
				if err != nil {
					return
				}
				defer up.Close()
				go func() {
					io.Copy(up, c)
					up.Close()
				}()
				io.Copy(c, up)
			}()
		}
	}()
	c, err := export.NewOTLP(export.OTLPOptions{Protocol: export.ProtocolGRPC, Endpoint: "http://" + ln.Addr().String(), Gzip: true, Resource: resource(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	before, _ := col.Received()
	e := export.New(c, opts(t, func(o *export.Options) { o.Timeout = 300 * time.Millisecond }))
	want := map[string]sent{}
	enqueuePeriods(t, e, 1, 1, want)
	time.Sleep(time.Second)
	if st := e.Stats(); st.Sent != 0 || st.Retries == 0 {
		t.Errorf("while the receiver hangs: %+v", st)
	}
	hang.Store(false)
	// a call that failed closes the client's connections, so the
	// next one dials anew
	start := time.Now()
	if err := shutdown(t, e, 60*time.Second); err != nil {
		t.Fatal(err)
	}
	got, err := col.Received()
	if err != nil {
		t.Fatal(err)
	}
	checkOTLP(t, got[len(before):], want)
	t.Logf("stats %+v; delivered %v after the receiver stopped hanging", e.Stats(), time.Since(start).Round(time.Millisecond))
	c.Close()
	ln.Close()
}
