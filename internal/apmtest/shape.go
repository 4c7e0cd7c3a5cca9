package apmtest

import (
	"strconv"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
)

// RenderKeys are the attributes a trace render shows: the semantic
// conventions' HTTP server and client, database and Redis attributes the
// integrations must give.
var RenderKeys = []string{"http.request.method", "http.route", "http.response.status_code", "url.path",
	"db.system.name", "db.system", "db.namespace", "db.operation.name", "db.redis.database_index", "error.type"}

// RunAndCollect runs steps against base and returns the traces that
// started after it began (not the stack's own start-up requests), once the
// collector holds one per step and their spans stopped growing.
func RunAndCollect(t testing.TB, c *exporttest.Collector, base string, steps []Step) []Trace {
	t.Helper()
	t0 := time.Now()
	Run(t, base, steps)
	last := -1
	var tr []Trace
	for range 300 {
		reqs, err := c.TraceRequests()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		tr = tr[:0]
		for _, x := range Traces(FromOTLP(reqs)) {
			if !x[0].Start.Before(t0) {
				tr = append(tr, x)
				n += len(x)
			}
		}
		if len(tr) >= len(steps) && n == last {
			return tr
		}
		last = n
		time.Sleep(200 * time.Millisecond)
	}
	t.Fatalf("%d traces received for %d requests", len(tr), len(steps))
	return nil
}

// CheckShape checks what any tracer of the shop must give for
// ShopSequence.
func CheckShape(t testing.TB, got []Trace) {
	t.Helper()
	if len(got) != len(ShopSequence) {
		t.Fatalf("%d traces for %d requests", len(got), len(ShopSequence))
	}
	for i, s := range ShopSequence {
		tr := got[i]
		roots := tr.Roots()
		if len(roots) != 1 || roots[0].Kind != "server" || roots[0].Service != "shop" {
			t.Errorf("%s %s: roots %v, want one server span of the shop", s.Method, s.Path, roots)
			continue
		}
		r := roots[0]
		if r.Attrs["http.request.method"] != s.Method {
			t.Errorf("%s %s: http.request.method %q", s.Method, s.Path, r.Attrs["http.request.method"])
		}
		if r.Attrs["http.response.status_code"] != strconv.Itoa(s.Status) {
			t.Errorf("%s %s: http.response.status_code %q, want %d", s.Method, s.Path, r.Attrs["http.response.status_code"], s.Status)
		}
		if (s.Status >= 500) != (r.Status == "error") {
			t.Errorf("%s %s: status %s for %d", s.Method, s.Path, r.Status, s.Status)
		}
		if s.Traceparent != "" && (r.TraceID != s.Traceparent[3:35] || r.ParentID != s.Traceparent[36:52]) {
			t.Errorf("%s %s: trace %s parent %s, want the incoming traceparent %s", s.Method, s.Path, r.TraceID, r.ParentID, s.Traceparent)
		}
	}
	// Durations: within a process, a child's interval lies within its
	// parent's (2 ms allowed for the clocks' granularity), so a server
	// span covers the work under it. Across processes it need not: the
	// payment instance's server span ends after its response is written,
	// which the client may have read (and ended its span) before then.
	const slack = 2 * time.Millisecond
	for i, tr := range got {
		byID := map[string]Span{}
		for _, sp := range tr {
			byID[sp.SpanID] = sp
		}
		for _, sp := range tr {
			p, ok := byID[sp.ParentID]
			if !ok || p.Service != sp.Service {
				continue
			}
			if sp.Start.Before(p.Start.Add(-slack)) || sp.End.After(p.End.Add(slack)) {
				t.Errorf("request %d: span %q (%v, %v) is not within its parent %q (%v, %v)", i, sp.Name,
					sp.Start.Format(time.StampMicro), sp.Duration(), p.Name, p.Start.Format(time.StampMicro), p.Duration())
			}
		}
	}
	// The checkout: shop server → client POST → payments server.
	co := got[3]
	var pay bool
	for _, sp := range co {
		if sp.Service == "payments" && sp.Kind == "server" {
			pay = true
		}
	}
	if !pay {
		t.Errorf("checkout: no server span of the payment instance in its trace:\n%s", co.Render(RenderKeys...))
	}
}

// OTelShop runs ShopSequence on the shop built with OpenTelemetry .NET's
// own instrumentation (apps/shop/otel: ASP.NET Core, HttpClient, Npgsql and
// StackExchange.Redis instrumentation, OTLP/HTTP to a Collector's receiver
// started here) and returns its traces: the reference the SDK's
// integrations are compared with.
func OTelShop(t testing.TB, rt harness.Runtime) []Trace {
	t.Helper()
	c := exporttest.StartCollector(t)
	env := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.TracesEndpoint(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_BSP_SCHEDULE_DELAY=200"}
	shop := harness.StartShop(t, rt, harness.ShopOptions{Variant: "otel", Env: append(env[:len(env):len(env)], "OTEL_SERVICE_NAME=shop"), PayEnv: env})
	got := RunAndCollect(t, c, shop.URL, ShopSequence)
	shop.Stop()
	return got
}
