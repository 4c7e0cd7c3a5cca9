// Package apmtest is the tests' view of traces: it flattens what an OTLP
// receiver accepted into spans, groups them into traces and renders each
// trace as an indented tree, so a test can compare the spans of two
// tracers (the SDK's integrations and OpenTelemetry .NET's own
// instrumentation) on the same requests, and it holds the request sequence
// the shop is traced with.
package apmtest

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	tracecollv1 "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"
)

// Span is one received span, its attributes as strings.
type Span struct {
	Service   string // the resource's service.name
	Scope     string // the instrumentation scope's name
	TraceID   string // hex
	SpanID    string
	ParentID  string // "" for a root
	Name      string
	Kind      string // server, client, internal, producer, consumer
	Status    string // unset, ok, error
	StatusMsg string
	Attrs     map[string]string
	Events    []Event
	Start     time.Time
	End       time.Time
}

// Event is a span event (an exception, say) with its attributes.
type Event struct {
	Name  string
	Attrs map[string]string
}

// Duration is End - Start.
func (s Span) Duration() time.Duration { return s.End.Sub(s.Start) }

// Exception returns the exception.type of the span's first exception event,
// or "".
func (s Span) Exception() string {
	for _, e := range s.Events {
		if e.Name == "exception" {
			return e.Attrs["exception.type"]
		}
	}
	return ""
}

// FromOTLP flattens export requests into spans, in the order received.
func FromOTLP(reqs []*tracecollv1.ExportTraceServiceRequest) []Span {
	var out []Span
	for _, r := range reqs {
		for _, rs := range r.GetResourceSpans() {
			service := attrs(rs.GetResource().GetAttributes())["service.name"]
			for _, ss := range rs.GetScopeSpans() {
				for _, s := range ss.GetSpans() {
					sp := Span{Service: service, Scope: ss.GetScope().GetName(),
						TraceID: hex.EncodeToString(s.TraceId), SpanID: hex.EncodeToString(s.SpanId),
						ParentID: hex.EncodeToString(s.ParentSpanId), Name: s.Name, Kind: kind(s.Kind),
						Status: status(s.GetStatus().GetCode()), StatusMsg: s.GetStatus().GetMessage(),
						Attrs: attrs(s.Attributes),
						Start: time.Unix(0, int64(s.StartTimeUnixNano)), End: time.Unix(0, int64(s.EndTimeUnixNano))}
					for _, e := range s.Events {
						sp.Events = append(sp.Events, Event{Name: e.Name, Attrs: attrs(e.Attributes)})
					}
					out = append(out, sp)
				}
			}
		}
	}
	return out
}

func kind(k tracev1.Span_SpanKind) string {
	switch k {
	case tracev1.Span_SPAN_KIND_SERVER:
		return "server"
	case tracev1.Span_SPAN_KIND_CLIENT:
		return "client"
	case tracev1.Span_SPAN_KIND_PRODUCER:
		return "producer"
	case tracev1.Span_SPAN_KIND_CONSUMER:
		return "consumer"
	default:
		return "internal"
	}
}

func status(c tracev1.Status_StatusCode) string {
	switch c {
	case tracev1.Status_STATUS_CODE_OK:
		return "ok"
	case tracev1.Status_STATUS_CODE_ERROR:
		return "error"
	default:
		return "unset"
	}
}

func attrs(kvs []*commonv1.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[kv.Key] = value(kv.Value)
	}
	return m
}

func value(v *commonv1.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonv1.AnyValue_StringValue:
		return x.StringValue
	case *commonv1.AnyValue_IntValue:
		return fmt.Sprint(x.IntValue)
	case *commonv1.AnyValue_BoolValue:
		return fmt.Sprint(x.BoolValue)
	case *commonv1.AnyValue_DoubleValue:
		return fmt.Sprint(x.DoubleValue)
	case *commonv1.AnyValue_ArrayValue:
		var parts []string
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, value(e))
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		return fmt.Sprint(v)
	}
}

// Trace is the spans of one trace.
type Trace []Span

// Traces groups spans by trace, each trace's spans in start order, the
// traces in the order of their first span's start.
func Traces(spans []Span) []Trace {
	by := map[string]Trace{}
	for _, s := range spans {
		by[s.TraceID] = append(by[s.TraceID], s)
	}
	var out []Trace
	for _, t := range by {
		slices.SortStableFunc(t, func(a, b Span) int { return a.Start.Compare(b.Start) })
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Trace) int { return a[0].Start.Compare(b[0].Start) })
	return out
}

// Roots returns the spans whose parent is not in the trace.
func (t Trace) Roots() []Span {
	ids := map[string]bool{}
	for _, s := range t {
		ids[s.SpanID] = true
	}
	var out []Span
	for _, s := range t {
		if !ids[s.ParentID] {
			out = append(out, s)
		}
	}
	return out
}

// Children returns the spans whose parent is id, in start order.
func (t Trace) Children(id string) []Span {
	var out []Span
	for _, s := range t {
		if s.ParentID == id {
			out = append(out, s)
		}
	}
	return out
}

// Render draws the trace as a tree, one span a line: service, kind, name,
// status (when set), the listed attributes that are present, and the
// exception type. Two tracers agree on a trace's shape when their renders
// with the same keys are equal.
func (t Trace) Render(keys ...string) string {
	var b strings.Builder
	var walk func(s Span, depth int)
	walk = func(s Span, depth int) {
		fmt.Fprintf(&b, "%s%s %s %q", strings.Repeat("  ", depth), s.Service, s.Kind, s.Name)
		if s.Status != "unset" {
			fmt.Fprintf(&b, " status=%s", s.Status)
		}
		for _, k := range keys {
			if v, ok := s.Attrs[k]; ok {
				fmt.Fprintf(&b, " %s=%s", k, v)
			}
		}
		if e := s.Exception(); e != "" {
			fmt.Fprintf(&b, " exception=%s", e)
		}
		b.WriteByte('\n')
		for _, c := range t.Children(s.SpanID) {
			walk(c, depth+1)
		}
	}
	for _, r := range t.Roots() {
		walk(r, 0)
	}
	return b.String()
}

// Without returns the trace without the spans drop selects (their
// children, if any, become roots).
func (t Trace) Without(drop func(Span) bool) Trace {
	var out Trace
	for _, s := range t {
		if !drop(s) {
			out = append(out, s)
		}
	}
	return out
}

// Compare renders each pair of traces with keys and returns one line per
// request whose renders differ, with both renders.
func Compare(ours, theirs []Trace, keys ...string) []string {
	var diffs []string
	for i := 0; i < max(len(ours), len(theirs)); i++ {
		var a, b string
		if i < len(ours) {
			a = ours[i].Render(keys...)
		}
		if i < len(theirs) {
			b = theirs[i].Render(keys...)
		}
		if a != b {
			diffs = append(diffs, fmt.Sprintf("trace %d differs:\n--- ours\n%s--- theirs\n%s", i, a, b))
		}
	}
	return diffs
}
