package instr_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// fetchWant is what End (or Exit) must see of each call of the fetch app
// (internal/testapps/async/fetch.cs), per method, in the order of the calls: the
// return value and the exception, as instrprof's helper prints them
// (managed) or goprof (Go). As at a synchronous return, an exception
// comes with the result type's default (System.Int32:0, KindInt 0).
type fetchWant struct {
	managed, gohook []string
}

func fetchWants(roslyn, runtimeAsync bool) map[string]fetchWant {
	w := map[string]fetchWant{}
	add := func(m, managed, gohook string) {
		f := w[m]
		f.managed, f.gohook = append(f.managed, managed), append(f.gohook, gohook)
		w[m] = f
	}
	for i := 1; i <= 5; i++ {
		if i == 3 {
			add("FetchAsync", "ret=System.Int32:0 exc=System.InvalidOperationException:fetch 3 failed", "int:0 exc=true:System.InvalidOperationException")
			continue
		}
		add("FetchAsync", fmt.Sprintf("ret=System.Int32:%d exc=null", i), fmt.Sprintf("int:%d exc=false:", i))
	}
	// A cancelled task: a TaskCanceledException for it (classic); a
	// runtime-async body ends with the exception it threw.
	canceled, cancelType := "System.Threading.Tasks.TaskCanceledException:A task was canceled.", "System.Threading.Tasks.TaskCanceledException"
	if runtimeAsync {
		canceled, cancelType = "System.OperationCanceledException:The operation was canceled.", "System.OperationCanceledException"
	}
	for i := 1; i <= 3; i++ {
		add("Plain", "ret=null exc=null", "void:void exc=false:")
		add("Cancelled", "ret=System.Int32:0 exc="+canceled, "int:0 exc=true:"+cancelType)
		add("Ready", fmt.Sprintf("ret=System.Int32:%d exc=null", i+100), fmt.Sprintf("int:%d exc=false:", i+100))
		add("Text", fmt.Sprintf("ret=System.String:t%d exc=null", i), fmt.Sprintf("string:%q exc=false:", fmt.Sprintf("t%d", i)))
		if roslyn {
			add("ValueDelay", fmt.Sprintf("ret=System.Int32:%d exc=null", 3*i), fmt.Sprintf("int:%d exc=false:", 3*i))
			add("ValueReady", fmt.Sprintf("ret=System.Int32:%d exc=null", i+7), fmt.Sprintf("int:%d exc=false:", i+7))
			add("ValuePlain", "ret=null exc=null", "void:void exc=false:")
		}
	}
	return w
}

// appCalls reads the app's own measurements: per method, per call (in
// order), the microseconds around the await.
func appCalls(t *testing.T, stdout string) map[string][]int64 {
	out := map[string][]int64{}
	for _, m := range regexp.MustCompile(`(?m)^CALL (\S+) (\d+) us=(\d+) `).FindAllStringSubmatch(stdout, -1) {
		us, _ := strconv.ParseInt(m[3], 10, 64)
		out[m[1]] = append(out[m[1]], us)
	}
	return out
}

// checkDurations compares the hooks' durations of a method's calls with
// what the app measured around each await: End runs inside that window (it
// runs before the awaiting code resumes), so a hook's duration is at most
// the app's (1 ms more for the two clocks' reads), and it covers the await:
// at least half of the app's window (what the window holds besides the
// call is the app's own code and the hooks, µs; at the stub's return a
// hook saw µs of calls the app measures at 10 to 100 ms). Except for a
// method's first call: its window also holds the JIT compilation of the
// method, of the wrap's continuation and of the integration, before Begin
// (seen: Text's first call, 13.8 ms in End against 30.7 ms in the app on
// 2.0.0; Plain's, 62 ms against 127 ms on 10.0.15 runtime async; every
// later call within 0.1 ms of the app's).
func checkDurations(t *testing.T, m string, hook, app []int64, min int64) {
	t.Helper()
	if len(hook) != len(app) {
		t.Errorf("%s: %d durations from the hooks, %d from the app", m, len(hook), len(app))
		return
	}
	for i := range hook {
		if hook[i] > app[i]+1000 || (i > 0 && hook[i] < app[i]/2) || app[i] < min {
			t.Errorf("%s call %d: the hook measured %d µs, the app %d µs around the await: want the hook's within (app/2, app+1 ms]", m, i+1, hook[i], app[i])
		}
	}
}

// TestAsyncEnd: the FetchAsync (await Task.Delay(100), call 3
// throws after the await), called 5 times, and Task, a cancelled task, a
// task complete at the return, Task<string>, and with Roslyn ValueTask<T>
// (awaiting and complete) and ValueTask, each wrapped with the managed
// integration (instrprof's helper) and with Go hooks (goprof, synchronous
// and Deferred with Timestamps), on the classic build and (10 and 11) the
// runtime-async one. End/Exit sees each call's result or exception (a
// cancelled task: TaskCanceledException) and its duration covers the
// await, compared with the app's own measurement around it.
func TestAsyncEnd(t *testing.T) {
	instrLib := harness.BuildProfiler(t, "./instr/testdata/instrprof")
	goLib := harness.BuildProfiler(t, "./instr/testdata/goprof")
	methods := []string{"FetchAsync", "Plain", "Cancelled", "Ready", "Text", "ValueDelay", "ValueReady", "ValuePlain"}
	var targets []string
	for _, m := range methods {
		targets = append(targets, "fetch!FetchApp.Api::"+m)
	}
	tookRe := regexp.MustCompile(`^HOOK took (\d+) state=\S+ us=(\d+) `)
	goExitRe := regexp.MustCompile(`^GOHOOK exit (\S+) state=\d+ ret=(.*)$`)
	goTookRe := regexp.MustCompile(`^GOHOOK took (\S+) state=\d+ async=(true|false) canceled=(true|false) us=(-?\d+)$`)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		roslyn := rt.Major >= 10
		for _, b := range harness.AsyncBuilds(rt) {
			for _, mode := range []string{"managed", "go", "go-deferred"} {
				t.Run(b.Name+"/"+mode, func(t *testing.T) {
					dir := t.TempDir()
					want := fetchWants(roslyn, b.RuntimeAsync)
					var res harness.Result
					if mode == "managed" {
						harness.CompileCS(t, []string{"testdata/apps/helper.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"), harness.For(rt))
						app := harness.CompileCS(t, []string{"../internal/testapps/async/fetch.cs"}, dir, b.Options...)
						env := append([]string{"INSTRPROF_TARGETS=" + strings.Join(targets, ",")}, b.Env...)
						res = harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: instrLib, ProfilerCLSID: clsid, Env: env})
					} else {
						app := harness.CompileCS(t, []string{"../internal/testapps/async/fetch.cs"}, dir, b.Options...)
						env := append([]string{"GOPROF_TARGETS=" + strings.Join(targets, ",")}, b.Env...)
						if mode == "go-deferred" {
							env = append(env, "GOPROF_DEFERRED=1", "GOPROF_TIMESTAMPS=1")
						}
						res = harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: goLib, ProfilerCLSID: clsid, Env: env})
					}
					res.MustSucceed(t)
					res.MustStdoutContain(t, "CALL FetchAsync 3 ", "done\n")
					app := appCalls(t, res.Stdout)
					got := map[string][]string{}
					took := map[string][]int64{}
					flags := map[string][]string{}
					if mode == "managed" {
						h := parseHooks(res.StderrLines())
						for _, m := range methods {
							got[m] = h.ends["fetch!FetchApp.Api::"+m]
						}
						for _, l := range res.StderrLines() {
							if m := tookRe.FindStringSubmatch(l); m != nil {
								n := strings.TrimPrefix(h.names[m[1]], "fetch!FetchApp.Api::")
								us, _ := strconv.ParseInt(m[2], 10, 64)
								took[n] = append(took[n], us)
							}
						}
					} else {
						for _, l := range res.StderrLines() {
							if m := goExitRe.FindStringSubmatch(l); m != nil {
								got[m[1]] = append(got[m[1]], m[2])
							} else if m := goTookRe.FindStringSubmatch(l); m != nil {
								us, _ := strconv.ParseInt(m[4], 10, 64)
								took[m[1]] = append(took[m[1]], us)
								flags[m[1]] = append(flags[m[1]], m[2]+"/"+m[3])
							}
						}
					}
					t.Logf("FetchAsync: End/Exit %q, hook µs %v, app µs %v", got["FetchAsync"], took["FetchAsync"], app["FetchAsync"])
					for _, m := range methods {
						wm := want[m].managed
						if mode != "managed" {
							wm = want[m].gohook
						}
						if strings.Join(got[m], "\n") != strings.Join(wm, "\n") {
							t.Errorf("%s: End/Exit saw\n\t%s\nwant\n\t%s", m, strings.Join(got[m], "\n\t"), strings.Join(wm, "\n\t"))
						}
						if len(wm) == 0 {
							continue
						}
						var min int64
						switch m {
						case "FetchAsync":
							min = 50000
						case "Plain", "Cancelled", "ValueDelay":
							min = 15000
						}
						if m != "Ready" && m != "ValueReady" {
							checkDurations(t, m, took[m], app[m], min)
						}
						if mode != "managed" {
							// Async: Exit at a task's completion (classic,
							// and methods returning a task without being
							// async); a runtime-async body ends in itself.
							wantAsync := !b.RuntimeAsync || m == "Ready" || m == "ValueReady"
							for i, f := range flags[m] {
								w := fmt.Sprintf("%v/%v", wantAsync, m == "Cancelled" && wantAsync)
								if f != w {
									t.Errorf("%s call %d: async/canceled %s, want %s", m, i+1, f, w)
								}
							}
						}
					}
					if t.Failed() {
						t.Logf("%s", res.Describe())
					}
				})
			}
		}
	})
}
