package instr_test

import (
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/tracecontext"
)

// ExampleAction propagates a trace context: a Go hook on
// HttpMessageInvoker.SendAsync, the overload every asynchronous HttpClient
// call reaches, adds a traceparent header to each request before it is
// sent, through the action Headers.TryAddWithoutValidation(string,
// string). Its unit test, without a runtime, hands the hook a Call made by
// NewCall and reads what it asked for (TestGoHookActionsHttpClient runs
// the same in a real app on .NET 10 and 11).
func ExampleAction() {
	ts, err := target.ParseList("System.Net.Http!System.Net.Http.HttpMessageInvoker::SendAsync(System.Net.Http.HttpRequestMessage,System.Threading.CancellationToken)")
	if err != nil {
		panic(err)
	}
	// The span of the call: in a real integration, a new span id under
	// the current trace.
	span := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	hooks := &instr.GoHooks{
		Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "TryAddWithoutValidation", Params: 2}},
		Enter: func(c *instr.Call) uint64 {
			if err := c.Act(0, "traceparent", tracecontext.Traceparent(span)); err != nil {
				fmt.Println(err)
			}
			return 0
		},
	}
	rule := instr.Rule{Targets: ts, Go: hooks} // instr.Config{Rules: ..., ReJIT: true}
	_ = rule

	// The unit test: what Enter asked the wrap to do.
	c := instr.NewCall(instr.CallFields{Actions: hooks.Actions})
	hooks.Enter(c)
	for _, a := range c.Actions() {
		fmt.Println(hooks.Actions[a.Action].Method, a.Args)
	}
	// Output:
	// TryAddWithoutValidation [traceparent 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01]
}
