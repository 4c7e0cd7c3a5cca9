//go:build cgo

package instr_test

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
)

// clientSpan is what the integration below makes of one HTTP call: the
// attributes of OpenTelemetry's HTTP client conventions.
type clientSpan struct {
	method, url string
	status      int // 0 when the call failed before a response
	errorType   string
	took        time.Duration
}

// httpClientSpans is an integration written in Go (docs/integrations.md):
// a client span per HTTP call made through HttpClient, from the overload
// every asynchronous call goes through. The members give the request's
// method and URI at entry and the response's status at the task's
// completion; done receives each span.
func httpClientSpans(done func(clientSpan)) (instr.Rule, error) {
	targets, err := target.ParseList("System.Net.Http!System.Net.Http.HttpMessageInvoker::SendAsync(" +
		"System.Net.Http.HttpRequestMessage,System.Threading.CancellationToken)")
	if err != nil {
		return instr.Rule{}, err
	}
	var mu sync.Mutex
	open := map[uint64]clientSpan{}
	start := map[uint64]time.Time{}
	var next uint64
	hooks := &instr.GoHooks{
		Deferred: true, Timestamps: true,
		Members: []instr.Member{
			{Arg: 0, Path: "Method.Method"},
			{Arg: 0, Path: "RequestUri"},
			{Arg: instr.Result, Path: "StatusCode"},
		},
		Enter: func(c *instr.Call) uint64 {
			mu.Lock()
			defer mu.Unlock()
			next++
			open[next] = clientSpan{method: c.Member(0).Str(), url: c.Member(1).Str()}
			start[next] = c.Time()
			return next
		},
		Exit: func(r *instr.Return) {
			mu.Lock()
			s, t0 := open[r.State()], start[r.State()]
			delete(open, r.State())
			delete(start, r.State())
			mu.Unlock()
			s.took = r.Time().Sub(t0)
			switch {
			case r.Exception():
				s.errorType = r.ExceptionType()
			case r.Canceled():
				s.errorType = "System.Threading.Tasks.TaskCanceledException"
			default:
				s.status = statusCode(r.Member(2))
				if s.status >= 400 {
					s.errorType = strconv.Itoa(s.status)
				}
			}
			done(s)
		},
	}
	return instr.Rule{Targets: targets, Go: hooks}, nil
}

// statusCode reads an HttpStatusCode. The enum is defined in another
// module than the request, so the member arrives as its ToString(): a name
// for a defined code, the number for another.
func statusCode(v instr.Value) int {
	if v.IsNull() {
		return 0
	}
	if n, err := strconv.Atoi(v.Str()); err == nil {
		return n
	}
	return map[string]int{"OK": 200, "Created": 201, "NoContent": 204, "MovedPermanently": 301, "Found": 302,
		"NotModified": 304, "BadRequest": 400, "Unauthorized": 401, "Forbidden": 403, "NotFound": 404,
		"Conflict": 409, "TooManyRequests": 429, "InternalServerError": 500, "BadGateway": 502,
		"ServiceUnavailable": 503, "GatewayTimeout": 504}[v.Str()]
}

// An integration's unit test: the hooks get what the SDK would hand them
// for two calls (NewCall, NewReturn, members included), one answered 404,
// one failed with an exception, and the spans come out as the conventions
// want them.
func Example_integration() {
	var spans []clientSpan
	rule, err := httpClientSpans(func(s clientSpan) { spans = append(spans, s) })
	if err != nil {
		panic(err)
	}
	h := rule.Go
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	// A member of another type than string arrives as a string with
	// that type; the other kind's members (here the result's, at entry)
	// are void.
	str := func(typ, s string) instr.Value {
		v := instr.StringValue(s)
		v.Type = typ
		return v
	}
	void := instr.VoidValue()
	req := func(method, url string) []instr.Value {
		return []instr.Value{str("System.String", method), str("System.Uri", url), void}
	}

	s := h.Enter(instr.NewCall(instr.CallFields{Method: 1, Thread: 7, Time: t0, Members: req("GET", "http://shop/products/7")}))
	h.Exit(instr.NewReturn(instr.ReturnFields{Method: 1, Thread: 9, State: s, Async: true, Time: t0.Add(12 * time.Millisecond),
		Members: []instr.Value{void, void, str("System.Net.HttpStatusCode", "NotFound")}}))

	s = h.Enter(instr.NewCall(instr.CallFields{Method: 1, Thread: 7, Time: t0, Members: req("POST", "http://payments/pay")}))
	h.Exit(instr.NewReturn(instr.ReturnFields{Method: 1, Thread: 8, State: s, Async: true, Time: t0.Add(3 * time.Millisecond),
		Exception: true, ExceptionType: "System.Net.Http.HttpRequestException",
		Members: []instr.Value{void, void, instr.NullMemberValue(instr.KindString, "System.Net.HttpStatusCode", false)}}))

	for _, s := range spans {
		fmt.Printf("%s %s status=%d error.type=%q after %v\n", s.method, s.url, s.status, s.errorType, s.took)
	}
	// Output:
	// GET http://shop/products/7 status=404 error.type="404" after 12ms
	// POST http://payments/pay status=0 error.type="System.Net.Http.HttpRequestException" after 3ms
}
