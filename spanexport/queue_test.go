package spanexport

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// fakeExporter refuses exports while down, or holds them until their
// context ends while hang is set, and records what it took.
type fakeExporter struct {
	mu   sync.Mutex
	down bool
	hang bool
	got  map[string]int
	fail int
}

func (f *fakeExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	f.mu.Lock()
	hang := f.hang
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		f.mu.Lock()
		f.fail++
		f.mu.Unlock()
		return ctx.Err()
	}
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

func (f *fakeExporter) failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail
}

func spanSnapshots(n int, prefix string) []sdktrace.ReadOnlySpan {
	var stubs tracetest.SpanStubs
	for i := 0; i < n; i++ {
		stubs = append(stubs, tracetest.SpanStub{Name: fmt.Sprintf("%s%d", prefix, i)})
	}
	return stubs.Snapshots()
}

func testConfig(size int) queueConfig {
	return queueConfig{size: size, batch: 10, delay: 20 * time.Millisecond, timeout: time.Second}
}

func quiet(string, ...any) {}

// TestQueueRetriesUntilBack: spans ended while the exporter refuses are
// kept (within the bound) and delivered once, when it takes them again;
// what exceeds the bound is dropped and counted. OnEnd returning at all
// while the exporter refuses is the non-blocking property (a blocking
// OnEnd would hang the test).
func TestQueueRetriesUntilBack(t *testing.T) {
	exp := &fakeExporter{got: map[string]int{}, down: true}
	q := newQueue(exp, testConfig(100), quiet)
	for _, s := range spanSnapshots(150, "s") {
		q.OnEnd(s)
	}
	for exp.failures() == 0 {
		time.Sleep(10 * time.Millisecond) // until a batch has been refused
	}
	exp.mu.Lock()
	exp.down = false
	exp.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := q.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	st := q.stats()
	exp.mu.Lock()
	defer exp.mu.Unlock()
	if st.Ended != 150 || st.Exported+st.Dropped != 150 || st.Lost != 0 || int64(len(exp.got)) != st.Exported {
		t.Errorf("stats %+v, exporter got %d distinct spans", st, len(exp.got))
	}
	// The queue holds 100 spans and the worker one batch of 10.
	if st.Dropped > 50 || st.Dropped < 40 || st.Failures == 0 {
		t.Errorf("dropped %d (want 40-50), failed exports %d", st.Dropped, st.Failures)
	}
	for n, c := range exp.got {
		if c != 1 {
			t.Errorf("span %s delivered %d times", n, c)
		}
	}
}

// TestQueueShutdownBound: with an exporter that never answers, Shutdown
// returns once its context ends and counts every span as lost or dropped.
func TestQueueShutdownBound(t *testing.T) {
	exp := &fakeExporter{got: map[string]int{}, hang: true}
	q := newQueue(exp, testConfig(1000), quiet)
	for _, s := range spanSnapshots(300, "s") {
		q.OnEnd(s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_ = q.Shutdown(ctx) // returning at all is the bound (the exporter never answers)
	<-q.stopped
	if exp.failures() == 0 {
		t.Error("no export was tried")
	}
	st := q.stats()
	if st.Exported != 0 || st.Lost+st.Dropped != 300 {
		t.Errorf("stats %+v: want all 300 lost or dropped", st)
	}
	// After Shutdown, OnEnd drops.
	q.OnEnd(spanSnapshots(1, "late")[0])
	if got := q.stats().Dropped; got != st.Dropped+1 {
		t.Errorf("a span ended after Shutdown: dropped %d, want %d", got, st.Dropped+1)
	}
}

// TestQueueBatches: the worker exports in batches of at most the batch
// size, and a partial batch after the schedule delay.
func TestQueueBatches(t *testing.T) {
	var mu sync.Mutex
	var sizes []int
	exp := exporterFunc(func(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
		mu.Lock()
		sizes = append(sizes, len(spans))
		mu.Unlock()
		return nil
	})
	q := newQueue(exp, testConfig(100), quiet)
	for _, s := range spanSnapshots(25, "s") {
		q.OnEnd(s)
	}
	for q.stats().Exported != 25 {
		time.Sleep(5 * time.Millisecond) // the last 5 leave after the delay, without Shutdown
	}
	if err := q.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	total := 0
	for _, n := range sizes {
		if n > 10 || n == 0 {
			t.Errorf("batch of %d (sizes %v)", n, sizes)
		}
		total += n
	}
	if total != 25 {
		t.Errorf("exported %d spans in %v", total, sizes)
	}
}

type exporterFunc func(context.Context, []sdktrace.ReadOnlySpan) error

func (f exporterFunc) ExportSpans(ctx context.Context, s []sdktrace.ReadOnlySpan) error {
	return f(ctx, s)
}
func (f exporterFunc) Shutdown(context.Context) error { return nil }

// BenchmarkQueueOnEnd ends spans from parallel goroutines into a queue
// whose exporter takes every batch, and reports the process's CPU time per
// span (getrusage: OnEnd's callers and the worker together, wakeups
// included), which wall time per span alone would hide.
func BenchmarkQueueOnEnd(b *testing.B) {
	exp := exporterFunc(func(context.Context, []sdktrace.ReadOnlySpan) error { return nil })
	q := newQueue(exp, queueConfig{size: DefaultQueueSize, batch: DefaultBatchSize, delay: DefaultScheduleDelay, timeout: time.Second}, quiet)
	s := spanSnapshots(1, "s")[0]
	before := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			q.OnEnd(s)
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(cpuTime()-before)/float64(b.N), "cpu-ns/span")
	if err := q.Shutdown(context.Background()); err != nil {
		b.Fatal(err)
	}
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
