package main

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
)

// TestGotraceShop traces the shop's Store methods (async, Npgsql and
// Dapper underneath) with Go hooks in a real ASP.NET Core service, on
// every runtime that runs it: each span is the child of the request's
// activity, which ASP.NET Core makes from the request's traceparent, so a
// request sent with one gets its spans in that trace (GET /products/7 and
// a checkout, whose ProductAsync and PlaceOrderAsync run after awaits on
// pool threads); a request whose traceparent says not sampled gets none
// (the remote parent's decision); one without a traceparent gets spans
// under the request's own activity (not roots); Store.InitAsync, which
// runs at start-up outside any request, is a root.
func TestGotraceShop(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL, Redis and two .NET processes")
	}
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		c := exporttest.StartCollector(t)
		env := append(harness.ProfilerEnv(lib, clsid), "GOTRACE_TARGETS=Shop!Store::*",
			"OTEL_EXPORTER_OTLP_ENDPOINT="+c.TracesEndpoint(), "OTEL_SERVICE_NAME=shop")
		shop := harness.StartShop(t, rt, harness.ShopOptions{Env: env, PayEnv: []string{}})
		send := func(method, path, traceparent string) {
			t.Helper()
			req, err := http.NewRequest(method, shop.URL+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if traceparent != "" {
				req.Header.Set("traceparent", traceparent)
			}
			resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
			if err != nil {
				t.Fatalf("%s %s: %v\n%s", method, path, err, shop.Logs())
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("%s %s: %d\n%s", method, path, resp.StatusCode, shop.Logs())
			}
		}
		const (
			traceA = "4bf92f3577b34da6a3ce929d0e0e4736"
			traceB = "0af7651916cd43dd8448eb211c80319c"
			traceN = "11111111111111111111111111111111"
		)
		send("GET", "/products/7", "00-"+traceA+"-00f067aa0ba902b7-01")
		send("GET", "/products/8", "00-"+traceN+"-00f067aa0ba902b7-00") // not sampled upstream
		send("GET", "/products/9", "")
		if code, body := shop.Post("/cart/g1/items?product=5&qty=2"); code/100 != 2 {
			t.Fatalf("cart: %d %s", code, body)
		}
		send("POST", "/checkout/g1", "00-"+traceB+"-b7ad6b7169203331-01")
		shop.Stop() // gotrace flushes at Shutdown
		logs := shop.Logs()
		spans, _ := waitSpans(t, c, 5)
		byTrace := map[string][]string{}
		var init, others []span
		for _, s := range spans {
			switch {
			case s.name == "Store::InitAsync":
				init = append(init, s)
			case s.trace == traceA || s.trace == traceB || s.trace == traceN:
				byTrace[s.trace] = append(byTrace[s.trace], s.name)
				if s.parent == "" || s.parent == "00f067aa0ba902b7" || s.parent == "b7ad6b7169203331" {
					t.Errorf("%+v: want the request activity's span as its parent (not the caller's, not none)", s)
				}
			default:
				others = append(others, s)
			}
		}
		if len(init) != 1 || init[0].parent != "" {
			t.Errorf("InitAsync's spans %+v, want one root", init)
		}
		if g := strings.Join(byTrace[traceA], ","); g != "Store::ProductAsync" {
			t.Errorf("trace A (GET /products/7): spans %q, want Store::ProductAsync", g)
		}
		if g := byTrace[traceN]; len(g) != 0 {
			t.Errorf("the unsampled request's trace has spans %q", g)
		}
		// The checkout: the cart's one product read, then the order placed.
		if g := strings.Join(byTrace[traceB], ","); g != "Store::ProductAsync,Store::PlaceOrderAsync" {
			t.Errorf("trace B (checkout): spans %q, want Store::ProductAsync,Store::PlaceOrderAsync", g)
		}
		// GET /products/9 without a traceparent: under the request's own
		// activity (a trace of its own, not a root span).
		if len(others) != 1 || others[0].name != "Store::ProductAsync" || others[0].parent == "" {
			t.Errorf("the spans of the request without a traceparent: %+v, want one ProductAsync under the request's activity", others)
		}
		for _, w := range []string{"gotrace: spans: 5 ended, 5 exported", "gotrace: instrumented "} {
			if !strings.Contains(logs, w) {
				t.Errorf("no %q in the shop's log", w)
			}
		}
		t.Logf("spans: %+v", spans)
		if t.Failed() {
			t.Logf("logs:\n%s", logs)
		}
	})
}
