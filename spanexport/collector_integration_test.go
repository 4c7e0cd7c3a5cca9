package spanexport

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
)

// receivedNames counts the spans the collector accepted, by name, and
// returns the service.name of their resources.
func receivedNames(t *testing.T, c *exporttest.Collector) (map[string]int, map[string]bool) {
	t.Helper()
	reqs, err := c.TraceRequests()
	if err != nil {
		t.Fatal(err)
	}
	names, services := map[string]int{}, map[string]bool{}
	for _, r := range reqs {
		for _, rs := range r.ResourceSpans {
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					services[a.GetValue().GetStringValue()] = true
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[s.Name]++
				}
			}
		}
	}
	return names, services
}

// TestCollector sends spans to the OpenTelemetry Collector's own OTLP
// receiver on loopback, over both protocols; then stops the receiver, ends
// more spans while it is down, starts it again on the same port, and
// checks at Shutdown that every span arrived exactly once.
func TestCollector(t *testing.T) {
	for _, proto := range []string{"http/protobuf", "grpc"} {
		t.Run(proto, func(t *testing.T) {
			c := exporttest.StartCollector(t)
			ep := c.TracesEndpoint()
			if proto == "grpc" {
				ep = c.GRPCEndpoint()
			}
			t.Setenv("OTEL_SDK_DISABLED", "")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", ep)
			t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
			t.Setenv("OTEL_EXPORTER_OTLP_INSECURE", "true")
			t.Setenv("OTEL_SERVICE_NAME", "spanexport-test")
			t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
			t.Setenv("OTEL_BSP_EXPORT_TIMEOUT", "2000")
			var logs []string
			p, err := New(context.Background(), Options{Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
			if err != nil {
				t.Fatal(err)
			}
			tr := p.Tracer("github.com/clrprof/clrprof/spanexport")
			end := func(prefix string, n int) {
				for i := range n {
					_, s := tr.Start(context.Background(), fmt.Sprintf("%s%d", prefix, i))
					s.End()
				}
			}
			end("up", 50)
			for p.Stats().Exported < 50 {
				time.Sleep(20 * time.Millisecond)
			}
			c.Stop()
			end("down", 50)
			for p.Stats().Failures == 0 {
				time.Sleep(20 * time.Millisecond) // a batch refused while it is down
			}
			c.Start()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			st, err := p.Shutdown(ctx)
			if err != nil {
				t.Errorf("Shutdown: %v", err)
			}
			names, services := receivedNames(t, c)
			if st.Ended != 100 || st.Exported != 100 || st.Dropped != 0 || st.Lost != 0 || st.Failures == 0 {
				t.Errorf("stats %+v: want 100 ended and exported after at least one failure", st)
			}
			if len(names) != 100 {
				t.Errorf("the collector got %d distinct spans, want 100", len(names))
			}
			for n, k := range names {
				if k != 1 {
					t.Errorf("span %s received %d times", n, k)
				}
			}
			if !services["spanexport-test"] || len(services) != 1 {
				t.Errorf("service names %v", services)
			}
			t.Logf("%s: %+v; logged %q", p, st, logs)
		})
	}
}
