package main_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/apmtest"
	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{7E4C2A91-5B3D-4F60-8A17-2C9E6D4B1F35}"

// TestShop loads sample/apm into the shop and its payment instance
// (PostgreSQL and Redis running), sends apmtest.ShopSequence and checks the
// spans the collector received: one trace per request with the shop's
// server span at its root, the conventions' HTTP attributes and status,
// the incoming traceparent continued, the checkout's trace reaching the
// payment instance through HttpClient, and the database spans under their
// requests.
func TestShop(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/apm")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		c := exporttest.StartCollector(t)
		otel := []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + c.TracesEndpoint(), "OTEL_BSP_SCHEDULE_DELAY=200"}
		env := append(append(harness.ProfilerEnv(lib, clsid), otel...), "OTEL_SERVICE_NAME=shop")
		pay := append(harness.ProfilerEnv(lib, clsid), otel...) // stack.sh names it payments
		shop := harness.StartShop(t, rt, harness.ShopOptions{Env: env, PayEnv: pay})
		got := apmtest.RunAndCollect(t, c, shop.URL, apmtest.ShopSequence)
		for i, tr := range got {
			t.Logf("trace %d:\n%s", i, tr.Render(apmtest.RenderKeys...))
		}
		apmtest.CheckShape(t, got)
		// The databases: every request that reads a product has a
		// PostgreSQL client span under its server span, every cart request
		// a Redis one.
		for _, i := range []int{0, 3, 4, 7} {
			var db bool
			for _, s := range got[i] {
				if s.Kind == "client" && s.Attrs["db.system.name"] == "postgresql" {
					db = true
				}
			}
			if !db {
				t.Errorf("request %d (%s): no PostgreSQL span", i, apmtest.ShopSequence[i].Path)
			}
		}
		for _, i := range []int{1, 2, 3} {
			var rd bool
			for _, s := range got[i] {
				if s.Kind == "client" && s.Attrs["db.system.name"] == "redis" && s.Attrs["server.port"] != "" {
					rd = true
				}
			}
			if !rd {
				t.Errorf("request %d (%s): no Redis span", i, apmtest.ShopSequence[i].Path)
			}
		}
		shop.Stop()
		logs := shop.Logs()
		t.Logf("%s", logs)
		if !strings.Contains(logs, "undecodable=0") || strings.Contains(logs, "the helper threw") {
			t.Errorf("apm's own report:\n%s", logs)
		}
		// Once the helper is loaded the library's start-up pages are
		// given back (profiler.ReleaseCodePages), in both processes.
		if n := len(regexp.MustCompile(`(?m)apm: released_code_kb=[1-9]\d* kept_kb=\d+$`).FindAllString(logs, -1)); n < 2 {
			t.Errorf("%d reports of code pages given back (released_code_kb= above 0), want one per process:\n%s", n, logs)
		}

		// The same sequence under OpenTelemetry .NET's own
		// instrumentation of the shop: the same spans, names, kinds,
		// parents, status and the conventions' attributes, except the
		// exception event, which OpenTelemetry .NET records only when
		// asked to (error.type is compared instead).
		theirs := apmtest.OTelShop(t, rt)
		keys := []string{"http.request.method", "http.route", "http.response.status_code", "url.path",
			"db.system.name", "db.system", "db.namespace", "db.redis.database_index", "error.type"}
		// OpenTelemetry .NET's Redis spans say db.system (the older
		// convention); apm's say both db.system.name and db.system.
		for i := range theirs {
			for j := range theirs[i] {
				if theirs[i][j].Attrs["db.system"] == "redis" {
					theirs[i][j].Attrs["db.system.name"] = "redis"
				}
			}
		}
		for _, d := range apmtest.Compare(noEvents(got), noEvents(theirs), keys...) {
			t.Error(d)
		}
	})
}

// noEvents drops the spans' events (the comparison leaves exception
// events out: see TestShop).
func noEvents(trs []apmtest.Trace) []apmtest.Trace {
	var out []apmtest.Trace
	for _, tr := range trs {
		var c apmtest.Trace
		for _, s := range tr {
			s.Events = nil
			c = append(c, s)
		}
		out = append(out, c)
	}
	return out
}

// TestCollectorDown: the collector is down while the shop serves the
// sequence and comes back before the shop stops: the requests are not
// slowed into failure, and every span reaches the collector once it is
// back (the queue holds them; none is dropped or lost).
func TestCollectorDown(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/apm")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		c := exporttest.StartCollector(t)
		c.Stop()
		env := append(harness.ProfilerEnv(lib, clsid), "OTEL_EXPORTER_OTLP_ENDPOINT="+c.TracesEndpoint(),
			"OTEL_BSP_SCHEDULE_DELAY=200", "OTEL_SERVICE_NAME=shop")
		shop := harness.StartShop(t, rt, harness.ShopOptions{Env: env, PayEnv: []string{}})
		apmtest.Run(t, shop.URL, apmtest.ShopSequence)
		c.Start()
		shop.Stop()
		logs := shop.Logs()
		m := regexp.MustCompile(`apm: Shutdown: received=(\d+) exported=(\d+) dropped=(\d+) lost=(\d+)`).FindStringSubmatch(logs)
		if m == nil || m[1] != m[2] || m[3] != "0" || m[4] != "0" {
			t.Fatalf("apm's report %v:\n%s", m, logs)
		}
		if !strings.Contains(logs, "export failed (retrying") {
			t.Errorf("no export failed while the collector was down: the test did not test that\n%s", logs)
		}
		reqs, err := c.TraceRequests()
		if err != nil {
			t.Fatal(err)
		}
		spans := apmtest.FromOTLP(reqs)
		n, _ := strconv.Atoi(m[2])
		ids := map[string]bool{}
		for _, s := range spans {
			ids[s.SpanID] = true
		}
		if len(ids) != n {
			t.Errorf("the collector got %d distinct spans (%d in all), apm exported %d", len(ids), len(spans), n)
		}
		t.Logf("%d spans exported after the collector came back", n)
	})
}
