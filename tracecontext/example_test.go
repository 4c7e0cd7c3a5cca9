package tracecontext_test

import (
	"fmt"

	"github.com/clrprof/clrprof/tracecontext"
	"go.opentelemetry.io/otel/trace"
)

// An incoming request's headers give the parent of the server span; the
// client span of an outgoing call is propagated with Inject.
func Example() {
	parent, err := tracecontext.Extract("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "rojo=00f067aa0ba902b7")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("trace", parent.TraceID(), "parent", parent.SpanID(), "sampled", parent.IsSampled())

	// a child span of the same trace (span IDs come from the tracer)
	child := parent.WithSpanID(trace.SpanID{0x53, 0x99, 0x5c, 0x3f, 0x42, 0xcd, 0x8a, 0xd8})
	tp, ts := tracecontext.Inject(child)
	fmt.Println(tp)
	fmt.Println(ts)

	_, err = tracecontext.Extract("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "")
	fmt.Println(err)
	// Output:
	// trace 4bf92f3577b34da6a3ce929d0e0e4736 parent 00f067aa0ba902b7 sampled true
	// 00-4bf92f3577b34da6a3ce929d0e0e4736-53995c3f42cd8ad8-01
	// rojo=00f067aa0ba902b7
	// tracecontext: invalid traceparent: trace-id "4BF92F3577B34DA6A3CE929D0E0E4736" is not 32 lower-case hex digits
}
