package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{5C1F0B7E-3A64-4D28-9E51-8B7A2D6C4F13}"

type callLine struct {
	Method    string  `json:"method"`
	Thread    int     `json:"thread"`
	Depth     int     `json:"depth"`
	StartNs   int64   `json:"start_ns"`
	DurNs     int64   `json:"dur_ns"`
	Exception *string `json:"exception"`
}

type summaryLine struct {
	Method     string `json:"method"`
	Calls      int64  `json:"calls"`
	TotalNs    int64  `json:"total_ns"`
	Exceptions int64  `json:"exceptions"`
}

// The calls testdata/shop.cs makes, by method.
var shopCalls = map[string]int{
	"Shop.Orders::.ctor": 1, "Shop.Orders::Total": 1, "Shop.Orders::Price": 5 + 4*500,
	"Shop.Orders::Fail": 2, "Shop.Orders::Echo": 2,
}

// TestAutotrace traces the methods of Shop.Orders in a small app on every
// runtime: one line per call with the right depth, nesting, thread and
// exception; the summary's counts; the targets that match nothing reported
// at start and at Shutdown; the app's output unchanged. Then a malformed
// target: a clear error, and the app runs as without the tracer.
func TestAutotrace(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/autotrace")
	targets := "AUTOTRACE_TARGETS=shop!Shop.Orders::*, shop!Shop.Nothing::X ,NoSuchAssembly!*::*"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/shop.cs"}, "", harness.For(rt))
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)

		out := filepath.Join(t.TempDir(), "calls.jsonl")
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{targets, "AUTOTRACE_OUTPUT=" + out}})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("output changed:\n%s\n--- without the profiler:\n%s", res.Stdout, base.Stdout)
		}
		res.MustStderrContain(t,
			"targets that matched nothing yet: shop!Shop.Nothing::X, NoSuchAssembly!*::*\n",
			"autotrace: instrumented 5 methods\n",
			"autotrace: target shop!Shop.Nothing::X matched nothing",
			"autotrace: target NoSuchAssembly!*::* matched nothing")
		res.MustStderrNotContain(t, "could not instrument", "not delivered", "integration threw")
		t.Logf("autotrace's stderr:\n%s", res.Stderr)
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		calls := map[string]int{}
		var lines []callLine
		threads := map[int]int{}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var c callLine
			if err := json.Unmarshal([]byte(l), &c); err != nil {
				t.Fatalf("line %q: %v", l, err)
			}
			lines = append(lines, c)
			calls[c.Method]++
			threads[c.Thread]++
			if c.DurNs < 0 || c.StartNs < 0 || c.Thread <= 0 {
				t.Errorf("line %q: negative time or no thread", l)
			}
			// start_ns counts from the profiler's start (CLOCK_MONOTONIC on
			// both sides): within the process's lifetime.
			if c.StartNs+c.DurNs > res.Duration.Nanoseconds() {
				t.Errorf("line %q: ends after the process did (%v)", l, res.Duration)
			}
		}
		// The main thread's calls come first (.ctor); the four workers call
		// Price 500 times each at depth 1.
		main := lines[0].Thread
		for _, c := range lines {
			l, _ := json.Marshal(c)
			if c.Thread != main && c.Method != "Shop.Orders::Price" {
				t.Errorf("line %s: on another thread than the main one (%d)", l, main)
			}
			wantDepth, wantExc := 1, ""
			if c.Method == "Shop.Orders::Price" && c.Thread == main {
				wantDepth = 2
			}
			if c.Method == "Shop.Orders::Fail" {
				wantExc = "System.InvalidOperationException"
			}
			if c.Depth != wantDepth || (c.Exception == nil) != (wantExc == "") || (c.Exception != nil && *c.Exception != wantExc) {
				t.Errorf("line %s: want depth %d, exception %q", l, wantDepth, wantExc)
			}
		}
		if len(threads) != 5 {
			t.Errorf("calls on %d threads, want 5 (main and four workers): %v", len(threads), threads)
		}
		for th, n := range threads {
			if th != main && n != 500 {
				t.Errorf("thread %d: %d calls, want 500", th, n)
			}
		}
		for m, n := range shopCalls {
			if calls[m] != n {
				t.Errorf("%s: %d lines, want %d", m, calls[m], n)
			}
		}
		if len(calls) != len(shopCalls) {
			t.Errorf("lines for %d methods, want %d: %v", len(calls), len(shopCalls), calls)
		}
		// Price's five calls lie inside Total's.
		var total callLine
		for _, c := range lines {
			if c.Method == "Shop.Orders::Total" {
				total = c
			}
		}
		for _, c := range lines {
			if c.Method == "Shop.Orders::Price" && c.Thread == main && (c.StartNs < total.StartNs || c.StartNs+c.DurNs > total.StartNs+total.DurNs) {
				t.Errorf("Price at [%d, +%d] outside Total at [%d, +%d]", c.StartNs, c.DurNs, total.StartNs, total.DurNs)
			}
		}

		sum := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{targets, "AUTOTRACE_SUMMARY=1"}})
		t.Logf("summary:\n%s", sum.Stderr)
		sum.MustSucceed(t)
		if sum.Stdout != base.Stdout {
			t.Errorf("summary: output changed:\n%s", sum.Stdout)
		}
		got := map[string]summaryLine{}
		for _, l := range sum.StderrLines() {
			if !strings.HasPrefix(l, "{") {
				continue
			}
			var s summaryLine
			if err := json.Unmarshal([]byte(l), &s); err != nil {
				t.Fatalf("summary line %q: %v", l, err)
			}
			got[s.Method] = s
		}
		for m, n := range shopCalls {
			s := got[m]
			wantExc := int64(0)
			if m == "Shop.Orders::Fail" {
				wantExc = 2
			}
			if s.Calls != int64(n) || s.Exceptions != wantExc || s.TotalNs <= 0 {
				t.Errorf("summary %s: %+v, want %d calls, %d exceptions, a positive total", m, s, n, wantExc)
			}
		}
		if len(got) != len(shopCalls) {
			t.Errorf("summary has %d methods, want %d", len(got), len(shopCalls))
		}

		// A target the integration itself calls (Stopwatch.GetTimestamp,
		// precompiled CoreLib code): its calls from inside Begin and End are
		// not traced instead of recursing; the app's own calls are. Its
		// module is precompiled, so it is wrapped by a ReJIT requested on
		// a goroutine when the module loads (the integration's first
		// GetTimestamp loads it, inside Total's Begin), and the wrapped code
		// runs from the next call after the runtime accepts the request.
		// Price is traced too: its 2,000 calls on four threads, after the
		// first exceptions, call GetTimestamp long after that request. With
		// Total alone (0.35 ms of calls) a loaded machine once accepted the
		// request after the last call (CI, 2026-11-27: "instrumented 1
		// methods", GetTimestamp pending).
		rec := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"AUTOTRACE_TARGETS=shop!Shop.Orders::Total,shop!Shop.Orders::Price,System.Private.CoreLib!System.Diagnostics.Stopwatch::GetTimestamp,System.Runtime.Extensions!System.Diagnostics.Stopwatch::GetTimestamp", "AUTOTRACE_SUMMARY=1"}})
		rec.MustSucceed(t)
		if rec.Stdout != base.Stdout {
			t.Errorf("GetTimestamp traced: output changed:\n%s", rec.Stdout)
		}
		// Stopwatch lives in System.Runtime.Extensions before .NET 5, in CoreLib since.
		rec.MustStderrContain(t, `{"method":"Shop.Orders::Total","calls":1,`, `{"method":"Shop.Orders::Price","calls":2005,`,
			`{"method":"System.Diagnostics.Stopwatch::GetTimestamp","calls":0,"total_ns":0,"exceptions":0}`, "autotrace: instrumented 3 methods\n")
		t.Logf("GetTimestamp traced:\n%s", rec.Stderr)

		bad := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"AUTOTRACE_TARGETS=shop!Shop.Orders::Total,shop!Shop.Orders"}})
		bad.MustSucceed(t)
		if bad.Stdout != base.Stdout {
			t.Errorf("malformed target: output changed:\n%s", bad.Stdout)
		}
		if !regexp.MustCompile(`autotrace: .*"shop!Shop.Orders": position \d+`).MatchString(bad.Stderr) {
			t.Errorf("malformed target: no error naming the target and position:\n%s", bad.Stderr)
		}
		t.Logf("the calls on the main thread:\n%s\nmalformed target:\n%s", mainLines(data, main), bad.Stderr)
		t.Logf("%s: %d call lines, summary of %d methods; malformed target reported", rt.Name, len(lines), len(got))
	})
}

// mainLines returns the lines of thread main.
func mainLines(data []byte, main int) string {
	var b strings.Builder
	for _, l := range strings.Split(string(data), "\n") {
		var c callLine
		if json.Unmarshal([]byte(l), &c) == nil && c.Thread == main {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}
