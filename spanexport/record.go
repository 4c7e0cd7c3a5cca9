package spanexport

import (
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/instrumentation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// SpanData is a span that was made elsewhere (a managed integration, an
// ActivityListener in the application) with its own IDs and times, handed
// to the pipeline when it ended.
type SpanData struct {
	// Scope is the instrumentation scope: the library whose code made the
	// span (e.g. an ActivitySource's name, "Microsoft.AspNetCore").
	Scope   string
	Version string // the scope's version, if known

	Context trace.SpanContext // the span's trace and span IDs, flags, state
	Parent  trace.SpanContext // invalid for a root; Remote when it came from a traceparent
	Name    string
	Kind    trace.SpanKind
	Start   time.Time
	End     time.Time
	Attrs   []attribute.KeyValue
	Status  codes.Code
	// StatusDescription is kept only with codes.Error, as the
	// specification says.
	StatusDescription string
	Events            []sdktrace.Event
	Links             []sdktrace.Link
}

// Record queues a span made elsewhere, as ending a span of Tracer does: it
// never waits, and a full queue drops it (counted in Stats.Dropped). The
// pipeline's resource is the span's; sampling was the maker's decision (a
// span whose context is not sampled is not recorded). Record after
// Shutdown drops the span.
func (p *Pipeline) Record(s SpanData) {
	if p.disabled || !s.Context.IsSampled() {
		return
	}
	desc := ""
	if s.Status == codes.Error {
		desc = s.StatusDescription
	}
	stub := tracetest.SpanStub{
		Name: s.Name, SpanContext: s.Context, Parent: s.Parent, SpanKind: s.Kind,
		StartTime: s.Start, EndTime: s.End, Attributes: s.Attrs, Events: s.Events, Links: s.Links,
		Status:               sdktrace.Status{Code: s.Status, Description: desc},
		Resource:             p.res,
		InstrumentationScope: instrumentation.Scope{Name: s.Scope, Version: s.Version},
	}
	p.q.OnEnd(stub.Snapshot())
}
