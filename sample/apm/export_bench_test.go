package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clrprof/clrprof/spanexport"
)

// BenchmarkSpanPath runs what the profiler does with each span the helper
// hands over: decode its record, queue it (Pipeline.Record) and export it
// over OTLP/HTTP, here to a loopback server that reads and drops each
// request. ns/op is the Go side's time per span, the export goroutine's
// included (the benchmark waits until every span was exported).
func BenchmarkSpanPath(b *testing.B) {
	var bodies atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		bodies.Add(n)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	b.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	p, err := spanexport.New(context.Background(), spanexport.Options{Logf: func(string, ...any) {}})
	if err != nil {
		b.Fatal(err)
	}
	r := sample()
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		s, err := decodeSpan(r)
		if err != nil {
			b.Fatal(err)
		}
		p.Record(s)
		if st := p.Stats(); st.Ended-st.Exported-st.Dropped > 4096 {
			for p.Stats().Exported+p.Stats().Dropped < st.Ended-1024 {
				time.Sleep(100 * time.Microsecond)
			}
		}
	}
	st, err := p.Shutdown(context.Background())
	if err != nil || st.Dropped != 0 || st.Lost != 0 {
		b.Fatalf("%+v %v", st, err)
	}
	b.ReportMetric(float64(bodies.Load())/float64(b.N), "B/span-sent")
}
