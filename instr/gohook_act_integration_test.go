//go:build cgo

package instr_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/tracecontext"
)

const actCLSID = "{8D2E3F40-5B6C-4D7E-9F0A-1B2C3D4E5F60}"

// The Acts app's output without a profiler (every request as built) and
// with actprof (what its hooks' actions did before each body ran).
var (
	wantActsBase = []string{
		"0: /r0 []", "after 0: 0", "1: /r1 []", "after 1: 0", "2: /r2 []", "after 2: 0",
		"3: /r3 []", "after 3: 0", "4: /r4 []", "after 4: 0", "5: /r5 nohdrs", "after 5: nohdrs",
		"6: null", "after 6: 0", "7: /r7 []", "after 7: 0",
		"c /g []", "c /g []", "3", "async 0: /a0 []", "async 1: /a1 []", "done",
	}
	wantActs = []string{
		"0: /r0 []", "after 0: 0",
		"1: /r1 [traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 x-custom=v1]", "after 1: 2",
		"2: /r2 [k=after-throw]", "after 2: 1",
		`3: /set-by-go [uni=\u00E9\u20AC\uD83D\uDE00 empty=]`, "after 3: 2",
		"4: /r4 [long=" + strings.Repeat("z", 3000) + "]", "after 4: 1",
		"5: /nohdrs nohdrs", "after 5: nohdrs",
		"6: null", "after 6: 0",
		"7: /r7 [ok~1]", "after 7: 1",
		"renamed /g []", "renamed /g []", "3", "async 0: /a0 [async=yes]",
		// SendAsync's body calls Send(r, 1), whose hook acts too.
		"async 1: /a1 [async=yes traceparent=00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 x-custom=v1]", "done",
	}
)

// TestGoHookActions: Go hooks act on the arguments of the methods they
// hook (GoHooks.Actions), on every runtime, in classic and (from .NET 10)
// runtime-async builds: headers added through a member (an inherited
// property), in the order asked, with strings of every kind (non-ASCII, a
// surrogate pair, empty, 3,000 units); a method of the argument itself and
// of this, methods returning a value (dropped); an action that throws
// (caught, counted, the actions after it run, the app goes on); null
// objects on the way (skipped); actions not asked for (not run: the
// object untouched); Act's refusals; a task-returning method (the action
// runs before its body); an action that does not resolve (the method left
// unwrapped, reported); a Deferred rule with actions refused by New.
func TestGoHookActions(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/actprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			t.Run(b.Name, func(t *testing.T) {
				app := harness.CompileCS(t, []string{"testdata/acts/app.cs"}, t.TempDir(), append(b.Options, harness.OutName("Acts.exe"))...)
				base := harness.Run(t, rt, app, harness.RunOptions{Env: b.Env})
				base.MustSucceed(t)
				if g, w := strings.TrimSpace(base.Stdout), strings.Join(wantActsBase, "\n"); g != w {
					t.Fatalf("without the profiler the app printed\n%s\nwant\n%s", g, w)
				}
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: actCLSID, Env: b.Env})
				res.MustSucceed(t)
				if g, w := strings.TrimSpace(res.Stdout), strings.Join(wantActs, "\n"); g != w {
					t.Errorf("the app printed\n%s\nwant\n%s", g, w)
				}
				checkActprof(t, res, []string{
					"ACTPROF refused instr: Act(9): the hooks have 4 actions\n",
					"ACTPROF refused instr: Act(0): 1 values for Add, which takes 2\n",
					"ACTPROF refused instr: Act(-1): the hooks have 4 actions\n",
					"actprof: deferred refused: instr: GoHooks.Actions need synchronous hooks",
					"actprof: failed Acts!Acts.Svc::Unresolved: instr: action 0 (Headers.Add of argument 0): Acts.Hdrs has no instance method Add(string) (nor its base types); methods of that name seen: 2 parameters\n",
					"actprof: action errors Acts!Acts.Svc::Send 1 1 System.InvalidOperationException\n",
					"actprof: summary instrumented=3 pending=0 failed=1\n",
				})
			})
		}
	})
}

// checkActprof checks actprof's stderr: every line of wants, exactly one
// method whose actions threw, no hook that panicked.
func checkActprof(t *testing.T, res harness.Result, wants []string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(res.Stderr, w) {
			t.Errorf("no %q in\n%s", w, res.Stderr)
		}
	}
	if n := strings.Count(res.Stderr, "actprof: action errors"); n != 1 {
		t.Errorf("%d action error lines, want 1:\n%s", n, res.Stderr)
	}
	if strings.Contains(res.Stderr, "actprof: panics") {
		t.Errorf("a hook panicked:\n%s", res.Stderr)
	}
	if t.Failed() {
		t.Log(res.Describe())
	}
}

// BenchmarkGoHookActions measures, in the app, the cost per call of a
// synchronous Go hook with an action (Acts.Svc::Hot(Req, int): Enter asks
// for Headers.Set("traceparent", a 55-character traceparent) when the int
// is 1), 2,000,000 calls of each mode in 20 interleaved rounds after
// 200,000 of warm-up, timed by the app's Stopwatch, the median round of
// each: without the action asked (act=0) and with it (act=1), and the
// method unhooked; hooked-atexit is the same with Enter passing the int
// to Exit (Return.State) and Exit asking for the action (AtExit). Each iteration runs the app once (run with
// -benchtime=5x, say).
func BenchmarkGoHookActions(b *testing.B) {
	rts, err := harness.Runtimes()
	if err != nil || len(rts) == 0 {
		b.Skipf("no runtime: %v", err)
	}
	lib := harness.BuildProfiler(b, "./instr/testdata/actprof")
	line := regexp.MustCompile(`hot act=(\d): calls=\d+ ns/call=([0-9.]+) `)
	for _, rt := range rts {
		app := harness.CompileCS(b, []string{"testdata/acts/app.cs"}, b.TempDir(), harness.OutName("Acts.exe"), harness.For(rt))
		for _, mode := range []string{"unhooked", "hooked", "hooked-atexit"} {
			b.Run(rt.Name+"/"+mode, func(b *testing.B) {
				opts := harness.RunOptions{Args: []string{"hot", "2000000"}}
				switch mode {
				case "hooked":
					opts.ProfilerPath, opts.ProfilerCLSID, opts.Env = lib, actCLSID, []string{"ACTPROF_HOT=1"}
				case "hooked-atexit":
					opts.ProfilerPath, opts.ProfilerCLSID, opts.Env = lib, actCLSID, []string{"ACTPROF_HOT=1exit"}
				}
				var sum [2]float64
				for range b.N {
					res := harness.Run(b, rt, app, opts)
					res.MustSucceed(b)
					ms := line.FindAllStringSubmatch(res.Stdout, -1)
					if len(ms) != 2 {
						b.Fatalf("no hot lines:\n%s", res.Describe())
					}
					for _, m := range ms {
						a, _ := strconv.Atoi(m[1])
						ns, _ := strconv.ParseFloat(m[2], 64)
						sum[a] += ns
						b.Logf("act=%d %.1f ns/call", a, ns)
					}
				}
				b.ReportMetric(sum[0]/float64(b.N), "ns/call-noact")
				b.ReportMetric(sum[1]/float64(b.N), "ns/call-act")
			})
		}
	}
}

// TestGoHookActionsHttpClient: a Go hook on
// HttpMessageInvoker.SendAsync(HttpRequestMessage, CancellationToken), the
// overload every asynchronous HttpClient call reaches (docs/integrations.md),
// adds a traceparent (made with package tracecontext, new ids per call)
// and an x-clrprof header to each request through the action
// Headers.TryAddWithoutValidation(string, string); the app's loopback
// HttpListener prints the headers each request arrived with. On .NET 10
// and 11 (the app is compiled with Roslyn; mcs has no System.Net.Http
// here), with ReJIT (the framework is precompiled).
func TestGoHookActionsHttpClient(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/actprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skipf("%s: the app needs Roslyn (.NET 10 and later here): mcs has no System.Net.Http", rt.Name)
		}
		app := harness.CompileCS(t, []string{"testdata/httpacts/app.cs"}, t.TempDir(), harness.OutName("HttpActs.exe"), harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: actCLSID, Env: []string{"ACTPROF_HOT=http"}})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "get 200\n")
		res.MustStdoutContain(t, "post 200\n")
		res.MustStdoutContain(t, "send 200\n")
		res.MustStdoutContain(t, "string ok\n")
		res.MustStderrContain(t, "actprof: summary instrumented=1 pending=0 failed=0\n")
		// What each Enter asked for, by path: the traceparent and the call's number.
		sent := map[string][2]string{}
		hook := regexp.MustCompile(`(?m)^ACTPROF http http://127\.0\.0\.1:\d+/(\w+) (\S+) (\d+)$`)
		for _, m := range hook.FindAllStringSubmatch(res.Stderr, -1) {
			if _, dup := sent[m[1]]; dup {
				t.Errorf("the hook saw /%s twice", m[1])
			}
			sent[m[1]] = [2]string{m[2], "call-" + m[3]}
		}
		got := regexp.MustCompile(`(?m)^GOT /(\w+) traceparent=(\S+) x-clrprof=(\S+)$`)
		ms := got.FindAllStringSubmatch(res.Stdout, -1)
		if len(ms) != 4 || len(sent) != 4 {
			t.Fatalf("%d requests received, %d seen by the hook, want 4 and 4:\n%s", len(ms), len(sent), res.Describe())
		}
		tps := map[string]bool{}
		for _, m := range ms {
			path, tp, custom := m[1], m[2], m[3]
			want, ok := sent[path]
			if !ok {
				t.Errorf("/%s: received, not seen by the hook", path)
				continue
			}
			if tp != want[0] || custom != want[1] {
				t.Errorf("/%s: received traceparent=%s x-clrprof=%s, the hook set %s and %s", path, tp, custom, want[0], want[1])
			}
			if _, err := tracecontext.ParseTraceparent(tp); err != nil {
				t.Errorf("/%s: %v", path, err)
			}
			tps[tp] = true
			t.Logf("%s: /%s arrived with traceparent=%s x-clrprof=%s", rt.Name, path, tp, custom)
		}
		if len(tps) != 4 {
			t.Errorf("%d distinct traceparents for 4 requests", len(tps))
		}
		if t.Failed() {
			t.Log(res.Describe())
		}
	})
}

// TestGoHookExitActions: Go Exit hooks act when the methods they hook
// return (Action.AtExit, Return.Act), on every runtime, in classic and
// (from .NET 10) runtime-async builds: on the value returned, on an
// argument after the body ran (with an action at entry before it), as an
// exception leaves (the argument's action runs, the null result's is
// skipped), an action that throws (counted, the next one runs), Return.Act's
// refusals, a method returning a task with Rule.EndAtReturn (on its
// argument and on the task, as it is returned), and an async method: refused in a classic build (its
// Exit runs at the task's completion, without its arguments), acting on
// the task's result in a runtime-async one (the exit is the method's own).
func TestGoHookExitActions(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/actprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		for _, b := range harness.AsyncBuilds(rt) {
			t.Run(b.Name, func(t *testing.T) {
				app := harness.CompileCS(t, []string{"testdata/exitacts/app.cs"}, t.TempDir(), append(b.Options, harness.OutName("ExitActs.exe"))...)
				base := harness.Run(t, rt, app, harness.RunOptions{Env: b.Env})
				base.MustSucceed(t)
				want := "make a\nfill 1 body1\nfail no body\ntight 0\nstart started\nasync t\ndone"
				if g := strings.TrimSpace(base.Stdout); g != want {
					t.Fatalf("without the profiler the app printed\n%s\nwant\n%s", g, want)
				}
				res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: actCLSID,
					Env: append([]string{"ACTPROF_HOT=exit"}, b.Env...)})
				res.MustSucceed(t)
				async, summary := "async t", "actprof: summary instrumented=5 pending=0 failed=1\n"
				if b.RuntimeAsync {
					async, summary = "async t-exit", "actprof: summary instrumented=6 pending=0 failed=0\n"
				}
				want = "make a-exit0.25-1.5\nfill 1 enter-body1-exit7\nfail no body-exit:System.InvalidOperationException\ntight 2\nstart started-ret\n" + async + "\ndone"
				if g := strings.TrimSpace(res.Stdout); g != want {
					t.Errorf("the app printed\n%s\nwant\n%s", g, want)
				}
				wants := []string{
					"ACTPROF refused instr: Return.Act(0): Append runs at entry: Enter asks for it, with Call.Act\n",
					"ACTPROF refused instr: Return.Act(5): the hooks have 2 actions\n",
					"actprof: action errors ExitActs!ExitActs.Svc::Tight 0 1 System.ArgumentOutOfRangeException\n",
					summary,
				}
				if !b.RuntimeAsync {
					wants = append(wants, "actprof: failed ExitActs!ExitActs.Svc::MakeAsync: instr: action 0 runs at exit, and this method's Exit runs when the task it returns completes")
				}
				checkActprof(t, res, wants)
			})
		}
	})
}
