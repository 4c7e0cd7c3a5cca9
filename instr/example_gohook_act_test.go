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

// ExampleReturn_Act acts when the method returns: a Go hook on an app's
// synchronous Orders.Place(Order) reads the receipt it returned (a result
// member) and tags the caller's current activity with it, through the
// action at exit Activity.Current.AddTag(string, string), so that the
// request's span (ASP.NET Core's, exported by any OpenTelemetry listener)
// carries the order's total. The unit test hands Exit a Return made by
// NewReturn (TestGoHookExitActions runs actions at exit in a real app).
func ExampleReturn_Act() {
	ts, err := target.ParseList("Shop!Shop.Orders::Place")
	if err != nil {
		panic(err)
	}
	hooks := &instr.GoHooks{
		Members: []instr.Member{{Arg: instr.Result, Path: "Total"}},
		Actions: []instr.Action{{Arg: instr.Static, Type: instr.ActivityType, Path: "Current",
			Method: "AddTag", Params: 2, AtExit: true}},
		Exit: func(r *instr.Return) {
			if r.Exception() || r.Member(0).IsNull() {
				return
			}
			if err := r.Act(0, "order.total", r.Member(0).Str()); err != nil {
				fmt.Println(err)
			}
		},
	}
	rule := instr.Rule{Targets: ts, Go: hooks}
	_ = rule

	r := instr.NewReturn(instr.ReturnFields{Actions: hooks.Actions,
		Members: []instr.Value{instr.StringValue("42.50")}})
	hooks.Exit(r)
	for _, a := range r.Actions() {
		fmt.Println(hooks.Actions[a.Action].Method, a.Args)
	}
	// Output:
	// AddTag [order.total 42.50]
}
