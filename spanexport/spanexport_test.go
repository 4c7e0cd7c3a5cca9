package spanexport

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

func TestQueueConfigFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want queueConfig
		err  string
	}{
		{env: nil, want: queueConfig{8192, 512, time.Second, 10 * time.Second}},
		{env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "100", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "50",
			"OTEL_BSP_SCHEDULE_DELAY": "250", "OTEL_BSP_EXPORT_TIMEOUT": "3000"},
			want: queueConfig{100, 50, 250 * time.Millisecond, 3 * time.Second}},
		{env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "10"}, want: queueConfig{10, 10, time.Second, 10 * time.Second}},
		{env: map[string]string{"OTEL_BSP_MAX_QUEUE_SIZE": "0"}, err: "OTEL_BSP_MAX_QUEUE_SIZE"},
		{env: map[string]string{"OTEL_BSP_SCHEDULE_DELAY": "1s"}, err: "OTEL_BSP_SCHEDULE_DELAY"},
	} {
		for _, k := range []string{"OTEL_BSP_MAX_QUEUE_SIZE", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "OTEL_BSP_SCHEDULE_DELAY", "OTEL_BSP_EXPORT_TIMEOUT"} {
			t.Setenv(k, tc.env[k])
		}
		got, err := queueConfigFromEnv()
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one naming %s", tc.env, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%v: %+v, %v; want %+v", tc.env, got, err, tc.want)
		}
	}
}

func TestNoEndpoint(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	if _, err := New(context.Background(), Options{}); !errors.Is(err, ErrNoEndpoint) {
		t.Errorf("New without an endpoint: %v, want ErrNoEndpoint", err)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	if _, err := New(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), "http/json") {
		t.Errorf("New with protocol http/json: %v, want an error naming it", err)
	}
}

func TestDisabled(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "true")
	exp := tracetest.NewInMemoryExporter()
	p, err := New(context.Background(), Options{Exporter: exp, Logf: quiet})
	if err != nil {
		t.Fatal(err)
	}
	_, s := p.Tracer("t").Start(context.Background(), "x")
	s.End()
	if s.SpanContext().IsValid() {
		t.Error("a disabled pipeline made a recording span")
	}
	if st, err := p.Shutdown(context.Background()); err != nil || st != (Stats{}) || len(exp.GetSpans()) != 0 {
		t.Errorf("disabled: %+v %v, %d spans exported", st, err, len(exp.GetSpans()))
	}
}

// TestResourceAndSampler: the environment's service name and resource
// attributes reach the spans, and OTEL_TRACES_SAMPLER is honoured.
func TestResourceAndSampler(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "checkout")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=test")
	for _, tc := range []struct {
		sampler string
		want    int
	}{{"always_on", 10}, {"always_off", 0}, {"", 10}} {
		t.Setenv("OTEL_TRACES_SAMPLER", tc.sampler)
		exp := &recorder{}
		p, err := New(context.Background(), Options{Exporter: exp, Runtime: "10.0.15", Distro: "test", Logf: quiet})
		if err != nil {
			t.Fatal(err)
		}
		tr := p.Tracer("github.com/clrprof/clrprof/spanexport/test")
		for range 10 {
			_, s := tr.Start(context.Background(), "op")
			s.End()
		}
		st, err := p.Shutdown(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		got := exp.spans()
		if len(got) != tc.want || st.Exported != int64(tc.want) {
			t.Errorf("sampler %q: %d spans exported (stats %+v), want %d", tc.sampler, len(got), st, tc.want)
		}
		if len(got) == 0 {
			continue
		}
		attrs := map[string]string{}
		for _, kv := range got[0].Resource.Attributes() {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		for k, v := range map[string]string{"service.name": "checkout", "deployment.environment.name": "test",
			"telemetry.distro.name": "test", "telemetry.sdk.language": "go"} {
			if attrs[k] != v {
				t.Errorf("resource %s = %q, want %q (all: %v)", k, attrs[k], v, attrs)
			}
		}
		if got[0].InstrumentationScope.Name != "github.com/clrprof/clrprof/spanexport/test" {
			t.Errorf("scope %q", got[0].InstrumentationScope.Name)
		}
	}
}

// recorder keeps what it exported (tracetest's in-memory exporter forgets
// at Shutdown, which is when the pipeline's last batch leaves).
type recorder struct {
	mu  sync.Mutex
	got tracetest.SpanStubs
}

func (r *recorder) ExportSpans(_ context.Context, s []sdktrace.ReadOnlySpan) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, tracetest.SpanStubsFromReadOnlySpans(s)...)
	return nil
}

func (r *recorder) Shutdown(context.Context) error { return nil }

func (r *recorder) spans() tracetest.SpanStubs {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append(tracetest.SpanStubs(nil), r.got...)
}

// TestRecord: a span made elsewhere keeps its IDs, parent, times, kind,
// status and scope, and gets the pipeline's resource; an unsampled one is
// not recorded.
func TestRecord(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_SERVICE_NAME", "shop")
	exp := &recorder{}
	p, err := New(context.Background(), Options{Exporter: exp, Logf: quiet})
	if err != nil {
		t.Fatal(err)
	}
	tid, _ := trace.TraceIDFromHex("0af7651916cd43dd8448eb211c80319c")
	parent := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{0xb7, 0xad, 1}, TraceFlags: trace.FlagsSampled, Remote: true})
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8}, TraceFlags: trace.FlagsSampled})
	start := time.Unix(1700000000, 0)
	p.Record(SpanData{Scope: "Microsoft.AspNetCore", Context: sc, Parent: parent, Name: "GET /products/{id}",
		Kind: trace.SpanKindServer, Start: start, End: start.Add(42 * time.Millisecond),
		Attrs: []attribute.KeyValue{attribute.Int("http.response.status_code", 500)}, Status: codes.Error, StatusDescription: "boom"})
	unsampled := trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: trace.SpanID{9}})
	p.Record(SpanData{Context: unsampled, Name: "not sampled"})
	st, err := p.Shutdown(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := exp.spans()
	if len(got) != 1 || st.Exported != 1 || st.Ended != 1 {
		t.Fatalf("exported %d spans (%+v), want 1", len(got), st)
	}
	s := got[0]
	if s.SpanContext.SpanID() != sc.SpanID() || s.SpanContext.TraceID() != tid || s.Parent.SpanID() != parent.SpanID() ||
		s.SpanKind != trace.SpanKindServer || s.EndTime.Sub(s.StartTime) != 42*time.Millisecond ||
		s.Status.Code != codes.Error || s.Status.Description != "boom" || s.InstrumentationScope.Name != "Microsoft.AspNetCore" ||
		len(s.Attributes) != 1 {
		t.Errorf("recorded %+v", s)
	}
	if v, ok := s.Resource.Set().Value("service.name"); !ok || v.AsString() != "shop" {
		t.Errorf("resource %v", s.Resource)
	}
}
