package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	tracev1 "go.opentelemetry.io/proto/otlp/trace/v1"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{8F2D4C61-7B3E-4A90-B5D2-1E6C9A3F7D08}"

const targets = "GOTRACE_TARGETS=traced!Traced.Orders::*,traced!Traced.Worker::*"

// The calls testdata/traced.cs makes (without an argument), by method.
var tracedCalls = map[string]int{
	"Traced.Orders::.ctor": 1, "Traced.Orders::Total": 1, "Traced.Orders::Price": 5,
	"Traced.Orders::Fail": 2, "Traced.Orders::Echo": 1, "Traced.Worker::Work": 200, "Traced.Worker::Step": 400,
}

// The parent of each method's calls (the enclosing instrumented call).
var tracedParent = map[string]string{"Traced.Orders::Price": "Traced.Orders::Total", "Traced.Worker::Step": "Traced.Worker::Work"}

type callLine struct {
	Method    string  `json:"method"`
	Thread    uint64  `json:"thread"`
	Depth     int     `json:"depth"`
	StartNs   int64   `json:"start_ns"`
	DurNs     int64   `json:"dur_ns"`
	Exception *string `json:"exception"`
	TraceID   string  `json:"trace_id"`
	SpanID    string  `json:"span_id"`
}

type span struct {
	name, id, parent, trace string
	state                   string // the W3C tracestate
	service, pid            string // the resource's service.name and process.pid: which process sent it
	attrs                   map[string]string
	status                  tracev1.Status_StatusCode
	message                 string
	events                  []string
}

func attrMap(kvs []*commonv1.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		switch v := kv.Value.GetValue().(type) {
		case *commonv1.AnyValue_StringValue:
			m[kv.Key] = v.StringValue
		case *commonv1.AnyValue_IntValue:
			m[kv.Key] = strconv.FormatInt(v.IntValue, 10)
		default:
			m[kv.Key] = kv.Value.String()
		}
	}
	return m
}

// received collects the spans and the resources of the requests the
// collector accepted.
func received(t *testing.T, c *exporttest.Collector) ([]span, []map[string]string) {
	t.Helper()
	reqs, err := c.TraceRequests()
	if err != nil {
		t.Fatal(err)
	}
	var spans []span
	var res []map[string]string
	for _, r := range reqs {
		for _, rs := range r.ResourceSpans {
			ra := attrMap(rs.Resource.GetAttributes())
			res = append(res, ra)
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					sp := span{name: s.Name, id: hex.EncodeToString(s.SpanId), parent: hex.EncodeToString(s.ParentSpanId),
						trace: hex.EncodeToString(s.TraceId), state: s.TraceState, service: ra["service.name"], pid: ra["process.pid"],
						attrs: attrMap(s.Attributes), status: s.Status.GetCode(), message: s.Status.GetMessage()}
					for _, e := range s.Events {
						sp.events = append(sp.events, e.Name+":"+attrMap(e.Attributes)["exception.type"])
					}
					spans = append(spans, sp)
				}
			}
		}
	}
	return spans, res
}

// waitSpans polls until n spans arrived (the exporter's last batch may
// still be in flight when the app has exited... it is not: Shutdown
// flushes; the wait covers the receiver writing its file).
func waitSpans(t *testing.T, c *exporttest.Collector, n int) ([]span, []map[string]string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		spans, res := received(t, c)
		if len(spans) >= n || time.Now().After(deadline) {
			return spans, res
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// checkSpans checks every call of testdata/traced.cs arrived as a span
// with its parent, attributes and status.
func checkSpans(t *testing.T, spans []span, lines []callLine) {
	t.Helper()
	byID := map[string]span{}
	count := map[string]int{}
	for _, s := range spans {
		if _, dup := byID[s.id]; dup {
			t.Errorf("span %s (%s) received twice", s.id, s.name)
		}
		byID[s.id] = s
		count[s.name]++
	}
	for m, n := range tracedCalls {
		if count[m] != n {
			t.Errorf("%s: %d spans, want %d", m, count[m], n)
		}
	}
	for _, s := range spans {
		typ, fn, _ := strings.Cut(s.name, "::")
		if s.attrs["code.namespace"] != typ || s.attrs["code.function"] != fn || s.attrs["thread.id"] == "" {
			t.Errorf("%s: attributes %v", s.name, s.attrs)
		}
		want := tracedParent[s.name]
		if want == "" {
			if s.parent != "" {
				t.Errorf("%s: parent %s (%s), want a root span", s.name, s.parent, byID[s.parent].name)
			}
		} else {
			p, ok := byID[s.parent]
			if !ok || p.name != want || p.trace != s.trace || p.attrs["thread.id"] != s.attrs["thread.id"] {
				t.Errorf("%s: parent %q (%+v), want a %s span of the same trace and thread", s.name, s.parent, p, want)
			}
		}
		if s.name == "Traced.Orders::Fail" {
			if s.status != tracev1.Status_STATUS_CODE_ERROR || s.message != "System.InvalidOperationException" ||
				fmt.Sprint(s.events) != "[exception:System.InvalidOperationException]" {
				t.Errorf("Fail: status %v %q, events %v", s.status, s.message, s.events)
			}
		} else if s.status == tracev1.Status_STATUS_CODE_ERROR || len(s.events) > 0 {
			t.Errorf("%s: status %v, events %v", s.name, s.status, s.events)
		}
	}
	// The JSON lines say the same.
	lc := map[string]int{}
	for _, l := range lines {
		lc[l.Method]++
		wantDepth := 1
		if tracedParent[l.Method] != "" {
			wantDepth = 2
		}
		if l.Depth != wantDepth || l.Thread == 0 || l.DurNs <= 0 {
			t.Errorf("line %+v: want depth %d", l, wantDepth)
		}
		if (l.Method == "Traced.Orders::Fail") != (l.Exception != nil && *l.Exception == "System.InvalidOperationException") {
			t.Errorf("line %+v: exception", l)
		}
		if s, ok := byID[l.SpanID]; !ok || s.name != l.Method || s.trace != l.TraceID {
			t.Errorf("line %+v: its span_id and trace_id are not those of a %s span received", l, l.Method)
		}
	}
	if fmt.Sprint(lc) != fmt.Sprint(count) {
		t.Errorf("JSON lines by method %v, spans %v", lc, count)
	}
}

func readLines(t *testing.T, path string) []callLine {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var lines []callLine
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var c callLine
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		lines = append(lines, c)
	}
	return lines
}

// TestGotraceOTLP runs testdata/traced.cs under gotrace on every runtime
// with the OpenTelemetry Collector's OTLP receiver on loopback (OTLP/HTTP;
// gRPC as well on the newest runtime): every call arrived as a span with
// its parent, attributes, exception status and event; the resource
// carries OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, the process and the
// .NET runtime's version; the JSON lines match the spans; the app's output
// is unchanged; every request carried OTEL_EXPORTER_OTLP_HEADERS. On the
// newest runtime the same again with deferred hooks (GOTRACE_DEFERRED=1:
// spans built after the fact from the recorded times), every call
// delivered, none dropped.
func TestGotraceOTLP(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/traced.cs"}, "", harness.For(rt))
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		protos := []string{"http/protobuf"}
		if rt.Major >= 8 {
			protos = append(protos, "grpc", "http/protobuf+deferred")
		}
		for _, variant := range protos {
			proto, deferred := strings.CutSuffix(variant, "+deferred")
			t.Run(strings.ReplaceAll(variant, "/", "-"), func(t *testing.T) {
				c := exporttest.StartCollector(t)
				ep := c.TracesEndpoint()
				if proto == "grpc" {
					ep = c.GRPCEndpoint()
				}
				out := filepath.Join(t.TempDir(), "calls.jsonl")
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: []string{targets, "GOTRACE_OUTPUT=" + out, "OTEL_EXPORTER_OTLP_ENDPOINT=" + ep,
						"OTEL_EXPORTER_OTLP_PROTOCOL=" + proto, "OTEL_SERVICE_NAME=traced-test",
						"OTEL_RESOURCE_ATTRIBUTES=deployment.environment=test,team=a%20b",
						"OTEL_EXPORTER_OTLP_HEADERS=x-test=1", "GOTRACE_DEFERRED=" + map[bool]string{true: "1"}[deferred]}})
				res.MustSucceed(t)
				t.Logf("gotrace's stderr:\n%s", res.Stderr)
				if res.Stdout != base.Stdout {
					t.Errorf("output changed:\n%s\n--- without the profiler:\n%s", res.Stdout, base.Stdout)
				}
				total := 0
				for _, n := range tracedCalls {
					total += n
				}
				res.MustStderrContain(t, "gotrace: instrumented 7 methods\n",
					fmt.Sprintf("gotrace: spans: %d ended, %d exported, 0 dropped (queue full), 0 not delivered at shutdown; 0 export attempts failed", total, total))
				if deferred {
					res.MustStderrContain(t, fmt.Sprintf("gotrace: deferred hooks: %d calls delivered, 0 dropped", total))
				} else {
					res.MustStderrNotContain(t, "deferred hooks")
				}
				spans, resources := waitSpans(t, c, total)
				hdrs, err := c.TraceHeaders()
				if err != nil {
					t.Fatal(err)
				}
				if len(hdrs) == 0 {
					t.Error("no request headers recorded")
				}
				for _, h := range hdrs {
					if !strings.Contains(" "+h+" ", " x-test=1 ") {
						t.Errorf("a request without OTEL_EXPORTER_OTLP_HEADERS' x-test=1: %s", h)
					}
				}
				checkSpans(t, spans, readLines(t, out))
				if len(resources) == 0 {
					t.Fatal("no resource")
				}
				r := resources[0]
				for k, v := range map[string]string{"service.name": "traced-test", "deployment.environment": "test", "team": "a b",
					"process.runtime.version": rt.Version, "telemetry.sdk.language": "go"} {
					if r[k] != v {
						t.Errorf("resource %s = %q, want %q (%v)", k, r[k], v, r)
					}
				}
				if r["process.pid"] == "" || !strings.Contains(r["process.runtime.description"], rt.Version) ||
					!strings.HasPrefix(r["process.runtime.name"], ".NET") {
					t.Errorf("resource: %v", r)
				}
			})
		}
	})
}

var ticksLine = regexp.MustCompile(`ticks (\d+) in (\d+) ms`)

// TestGotraceCollectorRestart stops the receiver while the app produces
// spans and starts it again 1.5 s later: every span arrives (none dropped:
// the queue holds them), and the app's paced loop takes as long as with
// the receiver up all along. Then with no receiver at all for the whole
// run and a queue of 100 spans: the drops are counted and reported, the
// loop is not slowed, and the process exits after at most the flush
// timeout.
func TestGotraceCollectorRestart(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	rts, err := harness.Runtimes()
	if err != nil || len(rts) == 0 {
		t.Fatalf("runtimes: %v", err)
	}
	rt := rts[len(rts)-1]
	app := harness.CompileCS(t, []string{"testdata/traced.cs"}, "", harness.For(rt))
	c := exporttest.StartCollector(t)
	env := []string{targets, "OTEL_EXPORTER_OTLP_ENDPOINT=" + c.TracesEndpoint()}
	const ticks = 2500
	loop := func(stderr string) int {
		m := ticksLine.FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("no ticks line in\n%s", stderr)
		}
		ms, _ := strconv.Atoi(m[2])
		return ms
	}
	// Up all along: the reference.
	ref := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: env, Args: []string{strconv.Itoa(ticks)}})
	ref.MustSucceed(t)
	refMs := loop(ref.Stderr)
	total := ticks
	for _, n := range tracedCalls {
		total += n
	}
	before, _ := waitSpans(t, c, total)
	if len(before) != total {
		t.Fatalf("reference run: %d spans, want %d", len(before), total)
	}

	p := harness.Start(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid, Env: env, Args: []string{strconv.Itoa(ticks)}})
	if err := p.WaitStdout("work ", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	c.Stop()
	time.Sleep(1500 * time.Millisecond)
	c.Start()
	res := p.Wait()
	res.MustSucceed(t)
	t.Logf("stderr:\n%s", res.Stderr)
	res.MustStderrContain(t, fmt.Sprintf("gotrace: spans: %d ended, %d exported, 0 dropped (queue full), 0 not delivered at shutdown;", total, total))
	if m := regexp.MustCompile(`; (\d+) export attempts failed`).FindStringSubmatch(res.Stderr); m == nil || m[1] == "0" {
		t.Errorf("no export failed while the receiver was down: the test did not test the restart")
	}
	all, _ := waitSpans(t, c, 2*total)
	ids := map[string]bool{}
	for _, s := range all {
		ids[s.id] = true
	}
	// Every span must arrive. A batch whose request the receiver read
	// just before it stopped, without answering, is sent again (the
	// exporter cannot tell it arrived: "Post ...: EOF" above), so a span
	// may arrive twice: OTLP delivery is at least once. A CI run on
	// 2026-11-27 received 6732 spans, 6220 distinct, all of them.
	if len(ids) != 2*total || len(all) < 2*total {
		t.Errorf("after the restart: %d spans (%d distinct) in all, want %d distinct", len(all), len(ids), 2*total)
	} else if len(all) > len(ids) {
		t.Logf("after the restart: %d spans arrived twice (a batch sent again after the receiver stopped without answering it)", len(all)-len(ids))
	}
	ms := loop(res.Stderr)
	t.Logf("paced loop of %d calls: %d ms with the receiver up, %d ms with it down for 1.5 s", ticks, refMs, ms)
	if ms > refMs+1000 {
		t.Errorf("the loop took %d ms with the receiver down for a while, %d ms with it up", ms, refMs)
	}

	// No receiver at all, a small queue.
	c.Stop()
	start := time.Now()
	res = harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
		Env: append(env, "GOTRACE_QUEUE=100"), Args: []string{strconv.Itoa(ticks)}})
	wall := time.Since(start)
	res.MustSucceed(t)
	t.Logf("stderr:\n%s", res.Stderr)
	res.MustStderrContain(t, "gotrace: the span queue is full (100 spans; the collector is unreachable or slow): dropping spans")
	m := regexp.MustCompile(`spans: (\d+) ended, 0 exported, (\d+) dropped \(queue full\), (\d+) not delivered`).FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no spans line")
	}
	ended, _ := strconv.Atoi(m[1])
	dropped, _ := strconv.Atoi(m[2])
	lost, _ := strconv.Atoi(m[3])
	if ended != total || dropped+lost != total || lost > 100+512 { // 512: one batch
		t.Errorf("ended %d dropped %d not delivered %d: want %d ended, all of them dropped or not delivered, at most queue+batch undelivered", ended, dropped, lost, total)
	}
	ms = loop(res.Stderr)
	t.Logf("no receiver: loop %d ms (reference %d ms), process %v", ms, refMs, wall)
	if ms > refMs+1000 {
		t.Errorf("the loop took %d ms without a receiver, %d ms with one", ms, refMs)
	}
}

// TestGotraceActivity: a root span is the child of the caller's current
// activity (instr.CurrentActivity), read at the call's entry after an
// await moved the work to a pool thread, with the activity's tracestate;
// the call inside it is the root span's child; a call with no activity is
// a root. The app's activities are not sampled by any listener (flags 00):
// such an activity is taken as undecided and the spans are recorded, but
// not one whose remote parent (its ParentId set, no Parent in the process)
// was not sampled: that decision is honoured (no spans). A synchronous
// hook marks the undecided activity recorded (the app sees Recorded true
// after the call), not the other; a deferred one cannot, and
// GOTRACE_MARK=0 leaves it alone. Before .NET Core
// 3.0 Activity has no trace IDs (its Id is hierarchical): the spans are
// roots and gotrace says which members are absent. Synchronous on every
// runtime, deferred too from .NET 8 on.
func TestGotraceActivity(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/gotrace")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/activity.cs"}, "", harness.For(rt))
		modes := []string{"sync"}
		if rt.Major >= 3 {
			modes = append(modes, "sync-nomark") // GOTRACE_MARK=0
		}
		if rt.Major >= 8 {
			modes = append(modes, "deferred")
		}
		for _, mode := range modes {
			t.Run(mode, func(t *testing.T) {
				c := exporttest.StartCollector(t)
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
					Env: []string{"GOTRACE_TARGETS=activity!Act.Api::*", "OTEL_EXPORTER_OTLP_ENDPOINT=" + c.TracesEndpoint(),
						"GOTRACE_DEFERRED=" + map[bool]string{true: "1"}[mode == "deferred"],
						"GOTRACE_MARK=" + map[bool]string{true: "0"}[mode == "sync-nomark"]}})
				res.MustSucceed(t)
				res.MustStdoutContain(t, "plain 3\n", "in activity 5\n")
				ids := map[string]string{}
				for _, m := range regexp.MustCompile(`(?m)^(local|remote) (\S+)$`).FindAllStringSubmatch(res.Stdout, -1) {
					ids[m[1]] = m[2]
				}
				if ids["local"] == "" || ids["remote"] == "" {
					t.Fatalf("no activity Ids:\n%s", res.Describe())
				}
				want := 6 // Get and Inner, three times
				if rt.Major >= 3 {
					want = 4 // not the remote parent's unsampled trace
				}
				spans, _ := waitSpans(t, c, want)
				res.MustStderrContain(t, fmt.Sprintf("gotrace: spans: %d ended, %d exported", want, want))
				if len(spans) != want {
					t.Fatalf("%d spans, want %d: %+v\n%s", len(spans), want, spans, res.Describe())
				}
				// Exported in the order they ended: Inner then Get, a call
				// after the other.
				for i := 0; i < len(spans); i += 2 {
					inner, get := spans[i], spans[i+1]
					if inner.name != "Act.Api::Inner" || get.name != "Act.Api::Get" || inner.parent != get.id || inner.trace != get.trace {
						t.Errorf("call %d: %+v is not the child of %+v", i/2, inner, get)
					}
				}
				if spans[1].parent != "" {
					t.Errorf("the call without an activity: %+v, want a root", spans[1])
				}
				check := func(get span, id, state string) {
					t.Helper()
					parts := strings.Split(id, "-")
					if len(parts) != 4 {
						t.Fatalf("activity Id %q is not a traceparent", id)
					}
					if get.trace != parts[1] || get.parent != parts[2] || get.state != state {
						t.Errorf("Get's span %+v, want a child of the activity %s with the tracestate %q", get, id, state)
					}
				}
				switch {
				case rt.Major >= 3:
					check(spans[3], ids["local"], "k1=v1")
					res.MustStderrNotContain(t, "not a W3C traceparent", "without the current activity's")
					// The undecided local activity is marked recorded by
					// a synchronous hook (a deferred one cannot act); the
					// one whose remote parent said no is left alone.
					local := map[string]string{"sync": "True", "sync-nomark": "False", "deferred": "False"}[mode]
					res.MustStdoutContain(t, "local recorded "+local+"\n", "remote recorded False\n")
					marked := map[string]string{"sync": "gotrace: 1 undecided activities marked recorded"}[mode]
					if marked != "" {
						res.MustStderrContain(t, marked)
					} else {
						res.MustStderrNotContain(t, "marked recorded")
					}
				default:
					for i := 1; i < len(spans); i += 2 {
						if spans[i].parent != "" {
							t.Errorf("Get's span %+v has a parent: the activity's Id is hierarchical", spans[i])
						}
					}
					// Activity has no trace IDs before .NET Core 3.0: every
					// member is absent, said once a reason.
					res.MustStderrContain(t, "gotrace: 2 methods without the current activity's member or action: instr: member 0 (Current.TraceId of "+
						ActivityTypeForTest+"): System.Diagnostics.Activity has no instance property or field TraceId (nor its base types)\n")
					res.MustStdoutContain(t, "local recorded n/a\n")
				}
				if t.Failed() {
					t.Log(res.Describe())
				}
			})
		}
	})
}

// ActivityTypeForTest is instr.ActivityType, as the reasons name it.
const ActivityTypeForTest = "System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource"
