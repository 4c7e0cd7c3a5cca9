package spanexport_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/spanexport"
)

// printer is an exporter that prints each span: in a profiler, leave
// Options.Exporter nil and set OTEL_EXPORTER_OTLP_ENDPOINT instead.
type printer struct{}

func (printer) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	for _, s := range spans {
		fmt.Println(s.Name(), s.SpanKind(), s.Parent().IsValid())
	}
	return nil
}

func (printer) Shutdown(context.Context) error { return nil }

// A Go hook starts a server span when a request arrives and a client span
// under it for the call it makes; Shutdown (in the profiler's Shutdown
// callback) sends what is queued.
func Example() {
	p, err := spanexport.New(context.Background(), spanexport.Options{
		Exporter: printer{},
		Logf:     func(string, ...any) {}, // the totals are logged at Shutdown
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tr := p.Tracer("example.com/myintegration")
	ctx, server := tr.Start(context.Background(), "GET /products/{id}", trace.WithSpanKind(trace.SpanKindServer))
	_, client := tr.Start(ctx, "GET", trace.WithSpanKind(trace.SpanKindClient))
	client.End()
	server.End()
	st, _ := p.Shutdown(context.Background())
	fmt.Println(st.Exported, "exported")
	// Output:
	// GET client true
	// GET /products/{id} server false
	// 2 exported
}
