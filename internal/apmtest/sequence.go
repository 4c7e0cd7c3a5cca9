package apmtest

import (
	"io"
	"net/http"
	"testing"
	"time"
)

// Step is one request of a sequence.
type Step struct {
	Method, Path string
	// Traceparent, when set, is sent as the request's traceparent header
	// (the server span must continue that trace).
	Traceparent string
	// Status is the status the shop answers with.
	Status int
}

// ShopSequence exercises every integration the shop has: ASP.NET Core
// (found, not found, a synchronous and an asynchronous exception, an
// incoming traceparent), Npgsql through Dapper, StackExchange.Redis, and
// HttpClient to the payment instance (checkout: one trace across both
// processes).
var ShopSequence = []Step{
	{Method: "GET", Path: "/products/7", Status: 200},
	{Method: "POST", Path: "/cart/t1/items?product=7&qty=2", Status: 200},
	{Method: "GET", Path: "/cart/t1", Status: 200},
	{Method: "POST", Path: "/checkout/t1", Status: 200},
	{Method: "GET", Path: "/products/999999", Status: 404},
	{Method: "GET", Path: "/boom", Status: 500},
	{Method: "GET", Path: "/boom-async", Status: 500},
	{Method: "GET", Path: "/products/3", Traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", Status: 200},
}

// Run sends the steps to base one at a time (each answered before the next
// is sent) and fails the test on a transport error or an unexpected
// status.
func Run(t testing.TB, base string, steps []Step) {
	t.Helper()
	c := http.Client{Timeout: 30 * time.Second}
	for _, s := range steps {
		req, err := http.NewRequest(s.Method, base+s.Path, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.Traceparent != "" {
			req.Header.Set("traceparent", s.Traceparent)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", s.Method, s.Path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != s.Status {
			t.Fatalf("%s %s: %d %s, want %d", s.Method, s.Path, resp.StatusCode, body, s.Status)
		}
	}
}
