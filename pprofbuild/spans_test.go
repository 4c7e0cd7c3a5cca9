package pprofbuild

import (
	"fmt"
	"sync"
	"testing"

	"github.com/clrprof/clrprof/profiler"
)

func TestThreadSpans(t *testing.T) {
	var ts ThreadSpans
	if ts.Labels(1) != nil {
		t.Fatal("labels before any span")
	}
	a := Span{TraceID: [16]byte{0x0a, 15: 1}, SpanID: [8]byte{0xb7, 7: 2}}
	b := Span{TraceID: a.TraceID, SpanID: [8]byte{0xc1, 7: 3}}
	ts.Enter(1, a)
	ts.Enter(1, b)
	ts.Enter(2, Span{}) // invalid: ignored
	if l := ts.Labels(1); len(l) != 2 || l[0] != (Label{"span_id", "c100000000000003"}) || l[1] != (Label{"trace_id", "0a000000000000000000000000000001"}) {
		t.Errorf("labels %v", l)
	}
	if ts.Labels(2) != nil {
		t.Error("thread 2 in a span")
	}
	ts.Exit(1, b)
	if s, ok := ts.Current(1); !ok || s != a {
		t.Errorf("after exiting b: %v %v", s, ok)
	}
	ts.Enter(1, b)
	ts.Exit(1, a) // exits b too
	if ts.Labels(1) != nil {
		t.Error("still in a span after exiting the outer one")
	}
	ts.Exit(1, a) // not in it: nothing
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 1000 {
				ts.Enter(profiler.ThreadID(i), a)
				_ = ts.Labels(profiler.ThreadID(i))
				ts.Exit(profiler.ThreadID(i), a)
			}
		}()
	}
	wg.Wait()
}

// A tracer in the same library says which span a thread is in; a sampler
// labels that thread's samples with it.
func ExampleThreadSpans() {
	span := Span{TraceID: [16]byte{0x0a, 15: 0x9c}, SpanID: [8]byte{0xb7, 7: 0x31}}
	var thread profiler.ThreadID = 0x1234 // info.GetCurrentThreadID() in a callback

	Spans.Enter(thread, span)
	fmt.Println(Spans.Labels(thread)) // the sampler: builder.Add(stack, Spans.Labels(ts.Thread), ...)
	Spans.Exit(thread, span)
	fmt.Println(Spans.Labels(thread))
	// Output:
	// [{span_id b700000000000031} {trace_id 0a00000000000000000000000000009c}]
	// []
}

// BenchmarkSpansEnterExit: what a tracer pays per span to record it
// (sample/gotrace's Options.Spans), 8 threads' worth of map entries.
func BenchmarkSpansEnterExit(b *testing.B) {
	var t ThreadSpans
	s := Span{TraceID: [16]byte{1, 2, 3}, SpanID: [8]byte{4, 5, 6}}
	for i := range 8 {
		t.Enter(profiler.ThreadID(1000+i), s)
	}
	b.ReportAllocs()
	for b.Loop() {
		t.Enter(42, s)
		t.Exit(42, s)
	}
}
