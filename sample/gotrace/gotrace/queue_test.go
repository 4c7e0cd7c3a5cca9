package gotrace

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// fakeExporter refuses exports while down, and records what it took.
type fakeExporter struct {
	mu   sync.Mutex
	down bool
	got  map[string]int
	fail int
}

func (f *fakeExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		f.fail++
		return errors.New("collector down")
	}
	for _, s := range spans {
		f.got[s.Name()]++
	}
	return nil
}

func (f *fakeExporter) Shutdown(context.Context) error { return nil }

func (f *fakeExporter) setDown(d bool) {
	f.mu.Lock()
	f.down = d
	f.mu.Unlock()
}

func spans(n int, prefix string) []sdktrace.ReadOnlySpan {
	var stubs tracetest.SpanStubs
	for i := 0; i < n; i++ {
		stubs = append(stubs, tracetest.SpanStub{Name: fmt.Sprintf("%s%d", prefix, i)})
	}
	return stubs.Snapshots()
}

// TestQueueRetriesUntilBack: spans ended while the exporter refuses are
// kept (within the bound) and delivered once it takes them again; OnEnd
// never blocks; what exceeds the bound is dropped and counted.
func TestQueueRetriesUntilBack(t *testing.T) {
	exp := &fakeExporter{got: map[string]int{}, down: true}
	q := newQueue(exp, 100)
	start := time.Now()
	for _, s := range spans(150, "s") {
		q.OnEnd(s)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("OnEnd blocked: %v for 150 spans", d)
	}
	time.Sleep(1500 * time.Millisecond) // at least one failed batch
	exp.setDown(false)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := q.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	st := q.stats()
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if st.ended != 150 || st.exported+st.dropped != 150 || st.lost != 0 || int64(len(exp.got)) != st.exported {
		t.Errorf("stats %+v, exporter got %d distinct spans", st, len(exp.got))
	}
	// The queue holds 100 spans and the worker one batch: at most 50 dropped.
	if st.dropped > 50 || exp.fail == 0 || st.failures == 0 {
		t.Errorf("dropped %d (want <= 50), failed exports %d/%d", st.dropped, exp.fail, st.failures)
	}
	for n, c := range exp.got {
		if c != 1 {
			t.Errorf("span %s delivered %d times", n, c)
		}
	}
}

// TestQueueShutdownBound: with the exporter down for good, Shutdown returns
// at its deadline and counts what was not delivered.
func TestQueueShutdownBound(t *testing.T) {
	exp := &fakeExporter{got: map[string]int{}, down: true}
	q := newQueue(exp, 1000)
	for _, s := range spans(300, "s") {
		q.OnEnd(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	_ = q.Shutdown(ctx)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Shutdown took %v with a 1 s deadline", d)
	}
	select {
	case <-q.stopped:
	case <-time.After(2 * time.Second):
		t.Fatal("the worker did not stop")
	}
	st := q.stats()
	if st.exported != 0 || st.lost+st.dropped != 300 {
		t.Errorf("stats %+v: want all 300 lost or dropped", st)
	}
}
