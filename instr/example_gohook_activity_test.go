//go:build cgo

package instr_test

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/tracecontext"
)

// ExampleCurrentActivity makes a Go hook's span a child of the caller's
// current activity (the ASP.NET Core request's, say), read at entry from
// Activity.Current: the activity follows the logical call across awaits,
// so the parent is right on whatever thread the call runs
// (TestGoHookForeignMembers runs such members on every runtime). The
// parent goes into the context a span starts from (spanexport's
// Pipeline.Tracer in a profiler).
func ExampleCurrentActivity() {
	hooks := &instr.GoHooks{
		Members: []instr.Member{
			instr.CurrentActivity("Id"),               // "00-{trace}-{span}-{flags}", or null
			instr.CurrentActivity("TraceStateString"), // its tracestate, or null
		},
		Enter: func(c *instr.Call) uint64 {
			ctx := context.Background()
			if id := c.Member(0); !id.IsNull() {
				if sc, err := tracecontext.Extract(id.Str(), c.Member(1).Str()); err == nil {
					ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
				}
			}
			// _, span := tracer.Start(ctx, "op"): a child of the activity.
			parent := trace.SpanContextFromContext(ctx)
			fmt.Println(parent.TraceID(), parent.SpanID(), parent.TraceState())
			return 0
		},
	}
	// What the wrap hands Enter in a request whose activity is current:
	hooks.Enter(instr.NewCall(instr.CallFields{Members: []instr.Value{
		instr.StringValue("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
		instr.StringValue("vendor=x"),
	}}))
	// Output:
	// 0af7651916cd43dd8448eb211c80319c b7ad6b7169203331 vendor=x
}
