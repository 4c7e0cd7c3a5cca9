//go:build cgo

package instr_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{3E6A1F20-9B4C-4D7E-8A15-6C2F0D9B7E41}"

// build compiles the test app with the helper beside it (the test's stand
// in for delivery) and the test profiler.
func build(t *testing.T) (app, lib string) {
	dir := t.TempDir()
	harness.CompileCS(t, []string{"testdata/apps/helper.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"))
	app = harness.CompileCS(t, []string{"testdata/apps/app.cs"}, dir, harness.OutName("ShopApp.exe"))
	lib = harness.BuildProfiler(t, "./instr/testdata/instrprof")
	return app, lib
}

// hooks parses the helper's lines and the profiler's id table.
type hooks struct {
	names  map[string]string   // id -> method name
	ids    map[string]string   // method name -> id
	begins map[string][]string // method name -> "this=... args=..." of each call
	ends   map[string][]string // method name -> "ret=... exc=..." of each call
	states map[string][]string // method name -> state pairs "begin-state/end-state"
}

var (
	methodLine = regexp.MustCompile(`^instrprof: method (\d+) (\S+) \(`)
	beginLine  = regexp.MustCompile(`^HOOK begin (\d+) depth=\d+ (this=.*) state=(\S+)$`)
	endLine    = regexp.MustCompile(`^HOOK end (\d+) depth=\d+ state=(\S+) (ret=.*)$`)
)

func parseHooks(lines []string) *hooks {
	h := &hooks{names: map[string]string{}, ids: map[string]string{}, begins: map[string][]string{},
		ends: map[string][]string{}, states: map[string][]string{}}
	for _, l := range lines {
		if m := methodLine.FindStringSubmatch(l); m != nil {
			h.names[m[1]], h.ids[m[2]] = m[2], m[1]
		}
	}
	pending := map[string][]string{}
	for _, l := range lines {
		if m := beginLine.FindStringSubmatch(l); m != nil {
			n := h.names[m[1]]
			h.begins[n] = append(h.begins[n], m[2])
			pending[n] = append(pending[n], m[3])
		} else if m := endLine.FindStringSubmatch(l); m != nil {
			n := h.names[m[1]]
			h.ends[n] = append(h.ends[n], m[3])
			st := "?"
			if p := pending[n]; len(p) > 0 {
				st, pending[n] = p[len(p)-1], p[:len(p)-1]
			}
			h.states[n] = append(h.states[n], st+"/"+m[2])
		}
	}
	return h
}

const allTargets = "ShopApp!Shop.Calc::*, ShopApp!Shop.Order::*, ShopApp!Shop.Point::*, ShopApp!Shop.Box`1::*," +
	"ShopApp!Shop.Box`1+Inner::F, ShopApp!Shop.Cache::Get(System.Int32), ShopApp!Shop.Nowhere::*, Missing!*::*"

// TestWrap instruments one method of each kind at first JIT and checks,
// on every runtime, what Begin and End receive and that the app prints
// exactly what it prints without a profiler.
func TestWrap(t *testing.T) {
	app, lib := build(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=" + allTargets, "INSTRPROF_TAIL=1"}})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("app output changed by the instrumentation:\n--- without\n%s\n--- with\n%s", base.Stdout, res.Stdout)
		}
		lines := res.StderrLines()
		h := parseHooks(lines)
		t.Logf("%d methods matched", len(h.names))
		if testing.Verbose() {
			t.Log(res.Stderr)
		}
		want := func(name string, begins, ends []string) {
			t.Helper()
			if fmt.Sprint(h.begins[name]) != fmt.Sprint(begins) {
				t.Errorf("%s: Begin saw\n  %q\nwant\n  %q", name, h.begins[name], begins)
			}
			if fmt.Sprint(h.ends[name]) != fmt.Sprint(ends) {
				t.Errorf("%s: End saw\n  %q\nwant\n  %q", name, h.ends[name], ends)
			}
			for _, s := range h.states[name] {
				if p := strings.SplitN(s, "/", 2); p[0] != p[1] {
					t.Errorf("%s: End got state %s, Begin returned %s", name, p[1], p[0])
				}
			}
		}
		i32 := func(v int) string { return fmt.Sprintf("System.Int32:%d", v) }
		str := func(s string) string { return "System.String:" + s }
		ok := func(ret string) string { return "ret=" + ret + " exc=null" }
		rep := func(s string, n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = s
			}
			return out
		}
		want("ShopApp!Shop.Calc::Add", []string{"this=null args=[" + i32(2) + "|" + i32(3) + "]"}, []string{ok(i32(5))})
		want("ShopApp!Shop.Order::.ctor", []string{"this=Shop.Order:Shop.Order args=[" + i32(7) + "]"}, []string{ok("null")})
		want("ShopApp!Shop.Order::Describe", []string{"this=Shop.Order:Shop.Order args=[" + str("order") + "]"}, []string{ok(str("order#7"))})
		want("ShopApp!Shop.Order::Nothing", []string{"this=Shop.Order:Shop.Order args=null"}, []string{ok("null")})
		// A value type's constructor sees its this before it runs: zeros.
		want("ShopApp!Shop.Point::.ctor", []string{"this=Shop.Point:(0,0) args=[" + i32(3) + "|" + i32(4) + "]"}, []string{ok("null")})
		want("ShopApp!Shop.Point::Sum", []string{"this=Shop.Point:(3,4) args=null"}, []string{ok(i32(7))})
		want("ShopApp!Shop.Point::ToString", rep("this=Shop.Point:(3,4) args=null", 2), rep(ok(str("(3,4)")), 2))
		// By-ref arguments: the values they point at on entry.
		want("ShopApp!Shop.Calc::Twice", []string{"this=null args=[" + i32(21) + "|null]"}, []string{ok("null")})
		// A generic method: value type, reference type, struct arguments.
		want("ShopApp!Shop.Calc::Echo", []string{"this=null args=[" + i32(5) + "]", "this=null args=[" + str("hi") + "]", "this=null args=[Shop.Point:(3,4)]"},
			[]string{ok(i32(5)), ok(str("hi")), ok("Shop.Point:(3,4)")})
		// A generic class, instantiated over int, string and List<int>
		// (the last two share canonical code).
		b := func(arg string) string { return "Shop.Box`1[" + arg + "]:Shop.Box`1[" + arg + "]" }
		want("ShopApp!Shop.Box`1::.ctor", []string{"this=" + b("System.Int32") + " args=[" + i32(9) + "]", "this=" + b("System.String") + " args=[" + str("s") + "]",
			"this=" + b("System.Collections.Generic.List`1[System.Int32]") + " args=[System.Collections.Generic.List`1[System.Int32]:System.Collections.Generic.List`1[System.Int32]]"},
			rep(ok("null"), 3))
		want("ShopApp!Shop.Box`1::Get", []string{"this=" + b("System.Int32") + " args=null", "this=" + b("System.String") + " args=null",
			"this=" + b("System.Collections.Generic.List`1[System.Int32]") + " args=null"},
			[]string{ok(i32(9)), ok(str("s")), ok("System.Collections.Generic.List`1[System.Int32]:System.Collections.Generic.List`1[System.Int32]")})
		want("ShopApp!Shop.Box`1+Inner::F", []string{"this=null args=[System.Int64:12]", "this=null args=[" + str("t") + "]"},
			[]string{ok(str("inner:12")), ok(str("inner:t"))})
		// The parameter list narrows the target to one overload.
		want("ShopApp!Shop.Cache::Get", []string{"this=Shop.Cache:Shop.Cache args=[" + i32(1) + "]"}, []string{ok(str("int:1"))})
		// An exception: End sees it (and the default return value), the
		// app catches the same exception, thrown where it was.
		want("ShopApp!Shop.Calc::Fail", []string{"this=null args=[" + i32(0) + "]", "this=null args=[" + i32(3) + "]"},
			[]string{ok(i32(0)), "ret=" + i32(0) + " exc=System.InvalidOperationException:fail 3"})
		res.MustStdoutContain(t, "caught fail 3 thrown in Fail: True\n")
		// The method's own try/catch/filter/finally keep working.
		want("ShopApp!Shop.Calc::Guarded", []string{"this=null args=[" + i32(0) + "]", "this=null args=[" + i32(1) + "]", "this=null args=[" + i32(2) + "]", "this=null args=[" + i32(3) + "]"},
			[]string{ok(i32(1000)), ok(i32(999)), ok(i32(998)), ok(i32(1030))})
		// tail. call (added by the test profiler): dropped by the wrap, the
		// callee runs inside the caller's wrap.
		res.MustStderrContain(t, "instrprof: prepare: tail. before the call of Shop.Calc::TailCaller")
		want("ShopApp!Shop.Calc::TailCaller", []string{"this=null args=[" + i32(41) + "]"}, []string{ok(i32(42))})
		want("ShopApp!Shop.Calc::Inner", []string{"this=null args=[" + i32(41) + "]"}, []string{ok(i32(42))})
		if !regexp.MustCompile(`(?m)^HOOK begin ` + h.ids["ShopApp!Shop.Calc::TailCaller"] + ` depth=0 .*\nHOOK begin ` + h.ids["ShopApp!Shop.Calc::Inner"] + ` depth=1 `).MatchString(res.Stderr) {
			t.Errorf("Inner did not run inside TailCaller's wrap")
		}
		// Big: short branches (made so by the test profiler) pushed out of
		// reach by the wrap.
		res.MustStderrContain(t, "instrprof: prepare: 33 short branches in Shop.Calc::Big")
		var bigBegins, bigEnds []string
		for i := 0; i < 34; i++ {
			bigBegins = append(bigBegins, "this=null args=["+i32(i)+"]")
			r := 100 + i
			if i == 33 {
				r = -1
			}
			bigEnds = append(bigEnds, ok(i32(r)))
		}
		want("ShopApp!Shop.Calc::Big", bigBegins, bigEnds)
		want("ShopApp!Shop.Calc::Late", []string{"this=null args=[" + i32(1) + "]", "this=null args=[" + i32(0) + "]", "this=null args=[" + i32(1) + "]", "this=null args=[" + i32(2) + "]"},
			[]string{ok(i32(3)), ok(i32(0)), ok(i32(3)), ok(i32(6))})
		res.MustStdoutContain(t, "reverse 321\nlate 3\n", "reverse 321\napp done\n")
		// The report: never-called Calc::.ctor pending, the two targets
		// that matched nothing named, Cache::Get(string) not matched.
		res.MustStderrContain(t, "instrprof: pending ShopApp!Shop.Calc::.ctor\n",
			"instrprof: unmatched ShopApp!Shop.Nowhere::*\n", "instrprof: unmatched Missing!*::*\n",
			"instrprof: summary instrumented=19 pending=1 failed=0 unmatched=2 without-body=0\n")
		if len(h.names) != 20 {
			t.Errorf("%d methods matched, want 20: %v", len(h.names), h.names)
		}
	})
}

// TestIntegrationThrows makes Begin and End throw at every call: the app
// runs and prints as without a profiler; with an error sink configured,
// every exception reaches it (two per call), without one they are dropped.
func TestIntegrationThrows(t *testing.T) {
	app, lib := build(t)
	targets := "ShopApp!Shop.Calc::*, ShopApp!Shop.Point::*, ShopApp!Shop.Box`1::*"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		for _, sink := range []string{"0", "1"} {
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"INSTRPROF_TARGETS=" + targets, "INSTR_THROW=both", "INSTRPROF_SINK=" + sink}})
			res.MustSucceed(t)
			if res.Stdout != base.Stdout {
				t.Errorf("sink=%s: app output changed:\n--- without\n%s\n--- with\n%s", sink, base.Stdout, res.Stdout)
			}
			begins := strings.Count(res.Stderr, "HOOK begin ")
			ends := strings.Count(res.Stderr, "HOOK end ")
			fb := strings.Count(res.Stderr, ":integration failure in Begin\n")
			fe := strings.Count(res.Stderr, ":integration failure in End\n")
			t.Logf("sink=%s: %d calls, %d+%d failures reported", sink, begins, fb, fe)
			if begins < 50 || ends != begins {
				t.Errorf("sink=%s: %d begins, %d ends", sink, begins, ends)
			}
			if sink == "1" && (fb != begins || fe != ends) {
				t.Errorf("sink=%s: %d Begin and %d End failures reached the sink, want %d each", sink, fb, fe, begins)
			}
			if sink == "0" && fb+fe != 0 {
				t.Errorf("sink=%s: failures reported without a sink", sink)
			}
		}
	})
}

// TestFramework instruments a method of System.Private.CoreLib, whose
// code is precompiled (ReadyToRun on .NET Core 3 and later, a native
// image before), with tiered compilation on (the default): the
// Instrumenter requests a ReJIT of it when CoreLib loads.
func TestFramework(t *testing.T) {
	app, lib := build(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=System.Private.CoreLib!System.Array::Reverse(System.Array)", "INSTRPROF_REJIT=1"}})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "reverse 321\n", "reverse 321\napp done\n")
		if testing.Verbose() {
			t.Log(res.Stderr)
		}
		h := parseHooks(res.StderrLines())
		name := "System.Private.CoreLib!System.Array::Reverse"
		b, e := h.begins[name], h.ends[name]
		t.Logf("%d calls seen", len(b))
		if len(b) != 201 || len(e) != 201 || b[0] != "this=null args=[System.Int32[]:System.Int32[]]" || b[200] != b[0] || e[0] != "ret=null exc=null" || e[200] != e[0] {
			t.Errorf("Array.Reverse(Array): Begin saw %d calls (first %q), End %d; want 201 each", len(b), b[:min(len(b), 1)], len(e))
		}
		res.MustStderrContain(t, "instrprof: method 0 "+name+" (System.Array) rejit=true\n")
		res.MustStderrContain(t, "instrprof: instrumented "+name+"\n")
	})
}
