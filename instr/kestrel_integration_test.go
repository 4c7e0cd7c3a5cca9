package instr_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// Kestrel's methods TestKestrel instruments, in target syntax.
const (
	kestrelCore            = "Microsoft.AspNetCore.Server.Kestrel.Core!Microsoft.AspNetCore.Server.Kestrel.Core.Internal.Http.HttpProtocol::"
	kProcessRequests       = kestrelCore + "ProcessRequests"
	kProcessRequestsAsync  = kestrelCore + "ProcessRequestsAsync"
	endpointMiddlewareType = "Microsoft.AspNetCore.Routing!Microsoft.AspNetCore.Routing.EndpointMiddleware::"
)

// awaitRequestTask is EndpointMiddleware.Invoke's local function that
// awaits an endpoint's Task when it did not complete at once (every
// request of the test app: both endpoints await Task.Delay). Its
// compiler-generated name differs between the two versions.
func awaitRequestTask(rt harness.Runtime) string {
	if rt.Major == 10 {
		return endpointMiddlewareType + "<Invoke>g__AwaitRequestTask|7_0"
	}
	return endpointMiddlewareType + "<Invoke>g__AwaitRequestTask|6_0"
}

// khook is one line of kestrelprof's hooks.
type khook struct {
	exit       bool
	method     string
	state, seq uint64
	thread     uint64
	ret, exc   string // exit only: KIND:TYPE, and the exception's type or ""
	excBool    bool
}

var khookRe = regexp.MustCompile(`^KHOOK (enter|exit) (\S+) state=(\d+) seq=(\d+) thread=(\d+)(?: ret=(\S*) exc=(true|false):(\S*))?$`)

func parseKHooks(lines []string) []khook {
	var hs []khook
	for _, l := range lines {
		m := khookRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		h := khook{exit: m[1] == "exit", method: m[2], ret: m[6], excBool: m[7] == "true", exc: m[8]}
		h.state, _ = strconv.ParseUint(m[3], 10, 64)
		h.seq, _ = strconv.ParseUint(m[4], 10, 64)
		h.thread, _ = strconv.ParseUint(m[5], 10, 64)
		hs = append(hs, h)
	}
	return hs
}

// TestKestrel runs an ASP.NET Core app (instr/testdata/kestrel/app.cs,
// built with Roslyn against the runtime's ASP.NET Core assemblies) under
// kestrelprof, which wraps with synchronous Go hooks, through ReJIT (the
// framework is precompiled), Kestrel's HttpProtocol.ProcessRequests<TContext>
// (one call per connection: it loops over the connection's requests), its
// caller HttpProtocol.ProcessRequestsAsync<TContext>, and under them, on the
// request path, the routing EndpointMiddleware's AwaitRequestTask (one call
// per request whose endpoint did not complete at once: all of them here).
// On .NET 11 all three are runtime async in the framework as shipped
// (MethodImplAttributes.Async): the test checks the metadata of every
// body kestrelprof handed the runtime; on .NET 10 none is.
//
// The Go test sends kestrelRequests requests, each on a connection of its
// own (Connection: close), half /delay, half /throw (the endpoint throws
// after an await: Kestrel answers 500), then kestrelKeepAlive /delay
// requests on one kept-alive connection. Every answer is checked, and the
// hooks: one Begin and one End per call of each method, End paired with
// its Begin's state. End runs when the call completes: on .NET 11
// (runtime async) at the body's end, on .NET 10 (classic state machines)
// at the completion of the Task the stub returned. For ProcessRequests,
// when the connection is done: the kept-alive connection's call spans all
// its requests (their AwaitRequestTask calls come between its Begin and
// its End); its return value is void (Task). AwaitRequestTask's End sees
// the endpoint's InvalidOperationException for each /throw request.
// (Before End ran at a task's completion, .NET 10's End came when the stub
// returned the Task: before the connection's second request, with the
// Task as an object and no exception.)
//
// Runtimes before .NET 10 are skipped: the setup installs no ASP.NET Core
// for them.
func TestKestrel(t *testing.T) {
	const kestrelRequests, kestrelKeepAlive = 20, 10
	lib := harness.BuildProfiler(t, "./instr/testdata/kestrelprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if _, _, ok := harness.AspNetCoreDir(rt); !ok {
			t.Skipf("no ASP.NET Core (Microsoft.AspNetCore.App) installed beside %s: the setup lays it out with .NET 10 and 11 only", rt.Name)
		}
		app := harness.CompileCS(t, []string{"testdata/kestrel/app.cs"}, "", harness.For(rt), harness.AspNetCore(rt))
		art := awaitRequestTask(rt)
		targets := []string{kProcessRequests, kProcessRequestsAsync, art}
		p := harness.Start(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, AspNetCore: true,
			Env: []string{"KESTRELPROF_TARGETS=" + strings.Join(targets, ",")}})
		if err := p.WaitStdout("\n", 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		first, _, _ := strings.Cut(p.Stdout(), "\n")
		base, ok := strings.CutPrefix(first, "listening ")
		if !ok {
			t.Fatalf("the app's first line: %q", first)
		}

		// ask sends a request, checks the answer and counts the new
		// connections it took.
		ask := func(c *http.Client, path string, i int, conns *int) {
			t.Helper()
			ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
				GotConn: func(ci httptrace.GotConnInfo) {
					if !ci.Reused {
						*conns++
					}
				},
			})
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/%s?i=%d", base, path, i), nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatalf("GET /%s?i=%d: %v\n%s", path, i, err, p.Stderr())
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("GET /%s?i=%d: body: %v", path, i, err)
			}
			switch path {
			case "delay":
				if want := fmt.Sprintf("delayed %d", 2*i); resp.StatusCode != 200 || string(body) != want {
					t.Fatalf("GET /delay?i=%d: %s %q, want 200 %q", i, resp.Status, body, want)
				}
			case "throw":
				if resp.StatusCode != 500 || len(body) != 0 {
					t.Fatalf("GET /throw?i=%d: %s %q, want 500 and no body", i, resp.Status, body)
				}
			}
		}
		// A bound against a hang, not a measurement.
		closing := &http.Client{Timeout: time.Minute, Transport: &http.Transport{DisableKeepAlives: true}}
		conns := 0
		for i := range kestrelRequests {
			ask(closing, []string{"delay", "throw"}[i%2], i, &conns)
		}
		if conns != kestrelRequests {
			t.Fatalf("%d connections for %d requests with Connection: close", conns, kestrelRequests)
		}
		kept := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxConnsPerHost: 1}}
		keptConns := 0
		for i := range kestrelKeepAlive {
			ask(kept, "delay", 100+i, &keptConns)
		}
		kept.CloseIdleConnections()
		if keptConns != 1 {
			t.Fatalf("%d connections for the kept-alive requests, want 1", keptConns)
		}
		if err := p.WriteLine("quit"); err != nil {
			t.Fatal(err)
		}
		res := p.Wait()
		res.MustSucceed(t)
		delays, throws := kestrelRequests/2+kestrelKeepAlive, kestrelRequests/2
		res.MustStdoutContain(t, fmt.Sprintf("served delay=%d throw=%d\nlogged errors=%d\ndone\n", delays, throws, throws))
		res.MustStderrNotContain(t, "InvalidProgramException", "kestrelprof: failed", "kestrelprof: panics", "kestrelprof: pending")

		// What was rewritten: each target once, all runtime async on 11,
		// none on 10.
		wantAsync := rt.Major >= 11
		rewritten := map[string]bool{}
		rwRe := regexp.MustCompile(`^kestrelprof: rewritten (\S+) implflags=(\S+) async=(true|false) ilrw=(true|false) err=(.*)$`)
		for _, l := range res.StderrLines() {
			m := rwRe.FindStringSubmatch(l)
			if m == nil {
				continue
			}
			t.Log(l)
			if m[5] != "<nil>" || (m[3] == "true") != wantAsync || (m[4] == "true") != wantAsync {
				t.Errorf("%s: %s", rt.Name, l)
			}
			rewritten[m[1]] = true
		}
		for _, tg := range targets {
			if !rewritten[tg] {
				t.Errorf("%s was not rewritten\n%s", tg, res.Describe())
			}
			res.MustStderrContain(t, "kestrelprof: instrumented "+tg+" rejit=true\n")
		}

		// The hooks: Begin and End per call, paired by state.
		hs := parseKHooks(res.StderrLines())
		type call struct {
			enter, exit khook
			done        bool
		}
		calls := map[string][]*call{}
		byState := map[uint64]*call{}
		for _, h := range hs {
			if !h.exit {
				c := &call{enter: h}
				calls[h.method] = append(calls[h.method], c)
				byState[h.state] = c
				continue
			}
			c := byState[h.state]
			if c == nil || c.done || c.enter.method != h.method {
				t.Fatalf("exit of %s with state %d pairs with no open Begin of it", h.method, h.state)
			}
			c.exit, c.done = h, true
		}
		nconns := kestrelRequests + 1
		want := map[string]int{kProcessRequests: nconns, kProcessRequestsAsync: nconns, art: delays + throws}
		otherThread := map[string]int{}
		for m, n := range want {
			cs := calls[m]
			ended := 0
			for _, c := range cs {
				if c.done {
					ended++
					if c.exit.thread != c.enter.thread {
						otherThread[m]++
					}
				}
			}
			if len(cs) != n || ended != n {
				t.Errorf("%s: %d Begins, %d Ends, want %d each", m, len(cs), ended, n)
			}
		}
		// ProcessRequests' End: after the connection (11), at its first
		// suspension (10). The most AwaitRequestTask Begins between a
		// ProcessRequests call's Begin and End:
		most := 0
		for _, c := range calls[kProcessRequests] {
			n := 0
			for _, a := range calls[art] {
				if a.enter.seq > c.enter.seq && a.enter.seq < c.exit.seq {
					n++
				}
			}
			most = max(most, n)
			wantRet := "void:"
			if !strings.HasPrefix(c.exit.ret, wantRet) || c.exit.excBool {
				t.Errorf("ProcessRequests End: ret %s exc %v:%s, want %s and no exception", c.exit.ret, c.exit.excBool, c.exit.exc, wantRet)
			}
		}
		excs := 0
		for _, a := range calls[art] {
			if a.exit.excBool && a.exit.exc == "System.InvalidOperationException" {
				excs++
			}
		}
		t.Logf("%s: %d requests on %d connections answered; hooks: %v Ends on another thread than their Begin; ProcessRequests: at most %d requests between a call's Begin and End; AwaitRequestTask: %d Ends with the endpoint's exception",
			rt.Name, delays+throws, nconns, otherThread, most, excs)
		if most < kestrelKeepAlive {
			t.Errorf("no ProcessRequests call spans the %d requests of the kept-alive connection (at most %d)", kestrelKeepAlive, most)
		}
		if excs != throws {
			t.Errorf("AwaitRequestTask: %d Ends with InvalidOperationException, want %d (one per /throw)", excs, throws)
		}
	})
}
