//go:build cgo

package instr_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
)

const clsid = "{3E6A1F20-9B4C-4D7E-8A15-6C2F0D9B7E41}"

// instrprof builds the test profiler.
func instrprof(t *testing.T) string {
	return harness.BuildProfiler(t, "./instr/testdata/instrprof")
}

// shopApp compiles the test app for rt with the helper beside it (the
// test's stand-in for delivery).
func shopApp(t *testing.T, rt harness.Runtime) string {
	dir := t.TempDir()
	harness.CompileCS(t, []string{"testdata/apps/helper.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"), harness.For(rt))
	return harness.CompileCS(t, []string{"testdata/apps/app.cs"}, dir, harness.OutName("ShopApp.exe"), harness.Unsafe(), harness.Reference("System.Core.dll"), harness.For(rt))
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
	beginLine  = regexp.MustCompile(`^HOOK begin (\d+) depth=-?\d+ (this=.*) state=(\S+)$`)
	endLine    = regexp.MustCompile(`^HOOK end (\d+) depth=-?\d+ state=(\S+) (ret=.*)$`)
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

const allTargets = "ShopApp!Shop.Calc::*, ShopApp!Shop.Order::*, ShopApp!Shop.Point::*, ShopApp!Shop.Box`1::*, ShopApp!Shop.Pair`1::*, ShopApp!Shop.Settings::*," +
	"ShopApp!Shop.Box`1+Inner::F, ShopApp!Shop.Cache::Get(System.Int32), ShopApp!Shop.Nowhere::*, Missing!*::*," +
	"ShopApp!Shop.Shape::Area, ShopApp!Shop.Square::Area, InstrHelper!*::*"

// TestWrap instruments one method of each kind at first JIT and checks,
// on every runtime, what Begin and End receive and that the app prints
// exactly what it prints without a profiler.
func TestWrap(t *testing.T) {
	lib := instrprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=" + allTargets, "INSTRPROF_TAIL=1", "INSTRPROF_NAMES=1"}})
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
		// Big: short branches pushed out of reach by the wrap. mcs emits
		// long branches only: the test profiler shortens the 33 of the ifs.
		// Roslyn (.NET 10+) emits the short forms itself: the 33 ifs'
		// brfalse.s and 8 of the br.s from a return to the shared ret (its
		// debug build returns through a local), none left to shorten.
		if rt.Major >= 10 {
			res.MustStderrContain(t, "instrprof: prepare: 41 short branches in Shop.Calc::Big, 0 made short here\n")
		} else {
			res.MustStderrContain(t, "instrprof: prepare: 33 short branches in Shop.Calc::Big, 33 made short here\n")
		}
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
		res.MustStdoutContain(t, "reverse 321\npair 1 x <2,1> <y,x>\nsettings 42\n", "late 3\n", "reverse 321\napp done\n")
		// A generic value type: its this boxed through the instantiation
		// (int, and string: shared canonical code), static and instance.
		pr := func(arg, v string) string { return "Shop.Pair`1[" + arg + "]:" + v }
		want("ShopApp!Shop.Pair`1::First", []string{"this=" + pr("System.Int32", "<1,2>") + " args=null", "this=" + pr("System.String", "<x,y>") + " args=null"},
			[]string{ok(i32(1)), ok(str("x"))})
		want("ShopApp!Shop.Pair`1::Swap", []string{"this=null args=[" + pr("System.Int32", "<1,2>") + "]", "this=null args=[" + pr("System.String", "<x,y>") + "]"},
			[]string{ok(pr("System.Int32", "<2,1>")), ok(pr("System.String", "<y,x>"))})
		// A static constructor and the method it calls.
		want("ShopApp!Shop.Settings::.cctor", []string{"this=null args=null"}, []string{ok("null")})
		want("ShopApp!Shop.Settings::Compute", []string{"this=null args=null"}, []string{ok(i32(42))})
		// catch { throw; } and finally inside: End sees the rethrown
		// exception, the caller catches it with its stack trace.
		want("ShopApp!Shop.Calc::Rethrows", []string{"this=null args=[" + i32(5) + "]", "this=null args=[" + i32(0) + "]"},
			[]string{ok(i32(3)), "ret=" + i32(0) + " exc=System.DivideByZeroException:Attempted to divide by zero."})
		res.MustStdoutContain(t, "rethrows 3\ncaught DivideByZeroException from Rethrows: True\n")
		// stackalloc (localloc) inside the wrapped body.
		want("ShopApp!Shop.Calc::Stack", []string{"this=null args=[" + i32(10) + "]"}, []string{ok(i32(45))})
		// The report: never-called Calc::.ctor pending, the two targets
		// that matched nothing named, Cache::Get(string) not matched.
		res.MustStderrContain(t, "instrprof: pending ShopApp!Shop.Calc::.ctor\n",
			"instrprof: unmatched ShopApp!Shop.Nowhere::*\n", "instrprof: unmatched Missing!*::*\n",
			"instrprof: failed InstrHelper!*::*: the target is in the integration's own assembly, which is never instrumented\n",
			"instrprof: failed ShopApp!Shop.Shape::Area: no IL body (abstract, extern, P/Invoke or runtime-implemented)\n",
			"instrprof: summary instrumented=28 pending=1 failed=2 unmatched=2 without-body=0\n")
		// The override is instrumented, called through the abstract method.
		want("ShopApp!Shop.Square::Area", []string{"this=Shop.Square:Shop.Square args=null"}, []string{ok("System.Double:2.25")})
		// One spelling: for every method instrumented, instr's name equals
		// ilrw's and profiler's, converted by instr/target.
		res.MustStderrNotContain(t, "name mismatch")
		res.MustStderrContain(t, "instrprof: names agree for 28 methods\n")
		if len(h.names) != 29 {
			t.Errorf("%d methods matched, want 29: %v", len(h.names), h.names)
		}
	})
}

// TestIntegrationThrows makes Begin and End throw at every call: the app
// runs and prints as without a profiler; with an error sink configured,
// every exception reaches it (two per call), without one they are dropped.
func TestIntegrationThrows(t *testing.T) {
	lib := instrprof(t)
	targets := "ShopApp!Shop.Calc::*, ShopApp!Shop.Point::*, ShopApp!Shop.Box`1::*"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
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
	lib := instrprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=System.Private.CoreLib!System.Array::Reverse(System.Array), System.Linq!System.Linq.Enumerable::Sum(System.Collections.Generic.IEnumerable`1[System.Int32])", "INSTRPROF_REJIT=1",
				"INSTR_START_FILE=" + filepath.Join(t.TempDir(), "started")}})
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
		// A method of System.Linq (precompiled on .NET Core 3 and later).
		linq := "System.Linq!System.Linq.Enumerable::Sum"
		t.Logf("%s: %q %q", linq, h.begins[linq], h.ends[linq])
		// The argument is Range's iterator, whose type differs by version.
		if b := h.begins[linq]; len(b) != 1 || !strings.HasPrefix(b[0], "this=null args=[System.Linq.Enumerable+") || fmt.Sprint(h.ends[linq]) != "[ret=System.Int32:10 exc=null]" {
			t.Errorf("Enumerable.Sum: Begin saw %q, End %q; want one call returning 10", h.begins[linq], h.ends[linq])
		}
		res.MustStderrContain(t, "instrprof: method 1 "+linq+" (System.Collections.Generic.IEnumerable`1[System.Int32]) rejit=true\n")

		// Without ReJIT: the precompiled code runs unwrapped, and the
		// report says why.
		res = harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=System.Private.CoreLib!System.Array::Reverse(System.Array)"}})
		res.MustSucceed(t)
		h = parseHooks(res.StderrLines())
		if len(h.begins[name]) != 0 {
			t.Errorf("without ReJIT, %d calls reached the integration", len(h.begins[name]))
		}
		res.MustStderrContain(t, "instrprof: failed "+name+": in a precompiled (ReadyToRun) module, which is instrumented through ReJIT only: set Config.ReJIT\n")
	})
}

// TestAddRule adds a target at run time for a method that already ran
// (and that a caller compiled before may have inlined): the calls after
// AddRule returned run the wrapped code, the one before did not.
func TestAddRule(t *testing.T) {
	lib := instrprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
		wait := t.TempDir() + "/added"
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=ShopApp!Shop.Order::Describe, ShopApp!Shop.Program::CallLate", "INSTRPROF_ADD=ShopApp!Shop.Calc::Late",
				"INSTRPROF_REJIT=1", "INSTR_WAIT_FILE=" + wait}})
		res.MustSucceed(t)
		res.MustStderrContain(t, "instrprof: added targets at run time: <nil>\n")
		res.MustStdoutContain(t, "late 3\n", "late 0\nlate 3\nlate 6\n")
		h := parseHooks(res.StderrLines())
		name := "ShopApp!Shop.Calc::Late"
		want := "[this=null args=[System.Int32:0] this=null args=[System.Int32:1] this=null args=[System.Int32:2]]"
		if got := fmt.Sprint(h.begins[name]); got != want {
			t.Errorf("Late after AddRule: Begin saw %s, want %s\n%s", got, want, res.Describe())
		}
		if got := fmt.Sprint(h.ends[name]); got != "[ret=System.Int32:0 exc=null ret=System.Int32:3 exc=null ret=System.Int32:6 exc=null]" {
			t.Errorf("Late after AddRule: End saw %s", got)
		}
		res.MustStderrContain(t, "instrprof: method 2 "+name+" (System.Int32) rejit=true\n", "instrprof: instrumented "+name+"\n")
		// CallLate, wrapped at its first JIT, may have inlined Late: it is
		// recompiled (ReJIT with inliners, or the inliners JITInlining saw)
		// and stays wrapped.
		caller := "ShopApp!Shop.Program::CallLate"
		want = "[this=null args=[System.Int32:1] this=null args=[System.Int32:0] this=null args=[System.Int32:1] this=null args=[System.Int32:2]]"
		if got := fmt.Sprint(h.begins[caller]); got != want {
			t.Errorf("CallLate: Begin saw %s, want %s", got, want)
		}
	})
}

// TestMCS wraps every method of mcs.exe (a real compiler: big methods,
// generics, iterators, exception handling everywhere) with an integration
// that does nothing but count, compiles the test app with it on .NET 8,
// and compares the assembly and the output with a run without profiler.
// (The full-size mcs test with sample/autotrace's tracer, checked against
// jitlog and ilcount, belongs to sample/autotrace.)
func TestMCS(t *testing.T) {
	harness.Integration(t)
	const mcsExe = "/usr/lib/mono/4.5/mcs.exe"
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	exe, err := os.ReadFile(mcsExe)
	if err != nil {
		t.Fatalf("%v (scripts/setup.sh installs mcs)", err)
	}
	// mcs beside the helper (the stand-in for delivery).
	if err := os.WriteFile(filepath.Join(dir, "mcs.exe"), exe, 0o644); err != nil {
		t.Fatal(err)
	}
	harness.CompileCS(t, []string{"testdata/apps/counter.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"))
	lib := harness.BuildProfiler(t, "./instr/testdata/instrprof")
	src, err := filepath.Abs("testdata/apps/app.cs")
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range rts {
		if !strings.HasPrefix(rt.Name, "net8") {
			continue
		}
		t.Run(rt.Name, func(t *testing.T) {
			compile := func(opts harness.RunOptions) (harness.Result, []byte) {
				opts.Dir = t.TempDir()
				const mono = "/usr/lib/mono/4.5/"
				opts.Args = []string{"-unsafe", "-nostdlib", "-r:" + mono + "mscorlib.dll", "-r:" + mono + "System.dll", "-r:" + mono + "System.Core.dll",
					"-out:" + filepath.Join(opts.Dir, "out.exe"), src}
				res := harness.Run(t, rt, filepath.Join(dir, "mcs.exe"), opts)
				res.MustSucceed(t)
				out, err := os.ReadFile(filepath.Join(opts.Dir, "out.exe"))
				if err != nil {
					t.Fatalf("no assembly: %v\n%s", err, res.Describe())
				}
				return res, out
			}
			base, want := compile(harness.RunOptions{})
			res, got := compile(harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"INSTRPROF_TARGETS=mcs!*::*"}})
			if !bytes.Equal(got, want) {
				t.Errorf("the assembly differs from the one compiled without profiler (%d vs %d bytes)", len(got), len(want))
			}
			if res.Stdout != base.Stdout {
				t.Errorf("mcs printed %q, without profiler %q", res.Stdout, base.Stdout)
			}
			res.MustStderrNotContain(t, "InvalidProgramException", "instrprof: failed ")
			var summary string
			for _, l := range res.StderrLines() {
				if strings.HasPrefix(l, "instrprof: summary ") {
					summary = l
				}
			}
			m := regexp.MustCompile(`instrumented=(\d+) `).FindStringSubmatch(summary)
			calls := regexp.MustCompile(`(?m)^COUNTER calls=(\d+) ends=(\d+)$`).FindStringSubmatch(res.Stderr)
			t.Logf("%s; %v", summary, calls)
			if m == nil || calls == nil {
				t.Fatalf("no summary or counter line:\n%s", res.Describe())
			}
			if n, _ := strconv.Atoi(m[1]); n < 1000 {
				t.Errorf("only %d methods of mcs instrumented", n)
			}
			// The totals are printed at ProcessExit, when the method that
			// ends the process (mcs's Main, or the one calling
			// Environment.Exit) may still be running: one call in flight.
			b, _ := strconv.Atoi(calls[1])
			e, _ := strconv.Atoi(calls[2])
			if b < 100000 || b-e < 0 || b-e > 1 {
				t.Errorf("Begin ran %d times, End %d", b, e)
			}
		})
	}
}

// TestAttach attaches the profiler to a running app (.NET Core 3.0 and
// later have the diagnostics server) and instruments a method that ran
// 200 times before (compiled, and never recompiled: the app's methods are
// NoOptimization, out of tiered compilation's reach, see attach.cs) through ReJIT,
// with the helper NOT beside the app: the app compiles no suitable method
// for the first time after the attach, so the Delivery hosts the loader in
// the target itself (a first ReJIT: the original body plus the loader's
// call); its next call ("call 1") loads the helper from the profiler's
// bytes, a second ReJIT brings the wrap, and the calls after that reach
// the integration. The app prints what it prints without the profiler.
func TestAttach(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/instrprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir, helperDir := t.TempDir(), t.TempDir()
		helper := harness.CompileCS(t, []string{"testdata/apps/helper.cs"}, helperDir, harness.Library(), harness.OutName("InstrHelper.dll"), harness.For(rt))
		app := harness.CompileCS(t, []string{"testdata/apps/attach.cs"}, dir, harness.OutName("AttachApp.exe"), harness.For(rt))
		if _, err := os.Stat(filepath.Join(dir, "InstrHelper.dll")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("the helper is beside the app: %v", err)
		}
		corrupt := filepath.Join(helperDir, "Corrupt.dll")
		if err := os.WriteFile(corrupt, []byte("MZ not an assembly"), 0o644); err != nil {
			t.Fatal(err)
		}
		p := harness.Start(t, rt, app, harness.RunOptions{Timeout: 2 * time.Minute})
		if err := p.WaitStdout("ready ", time.Minute); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err := diag.AttachProfiler(ctx, p.Pid, clsid, lib, []byte("deliver="+helper+";AttachApp!Shop.Worker::Work"))
		if !rt.AtLeast(3, 0) {
			// No diagnostics server before .NET Core 3.0: nothing to attach through.
			if !errors.Is(err, diag.ErrNotSupported) {
				t.Fatalf("attach on %s: %v, want diag.ErrNotSupported", rt.Name, err)
			}
			p.Wait().MustSucceed(t)
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := p.WaitStderr("instrprof: instrumented loaded modules: <nil>", time.Minute); err != nil {
			t.Fatalf("%v\n%s", err, p.Stderr())
		}
		// Work's next call runs the loader (Work itself is not wrapped yet).
		if err := p.WriteLine("call 1"); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitStderr("instrprof: helper delivered; host Shop.Worker::Work; wrap requested", time.Minute); err != nil {
			t.Fatalf("%v\n%s", err, p.Stderr())
		}
		for _, n := range []string{"5", "6"} {
			if err := p.WriteLine("call " + n); err != nil {
				t.Fatal(err)
			}
		}
		res := p.Wait()
		res.MustSucceed(t)
		if want := "ready 40000\nwork 1 -> 3\nwork 5 -> 11\nwork 6 -> 13\napp done\n"; res.Stdout != want {
			t.Errorf("the app printed\n%s\nwant (what it prints without a profiler)\n%s", res.Stdout, want)
		}
		t.Logf("stderr:\n%s", res.Stderr)
		res.MustStderrContain(t, "instrprof: pending AttachApp!Shop.Worker::Work rejit=true\n",
			"HOOK begin 0 depth=0 this=null args=[System.Int32:5] state=s0-1\nHOOK end 0 depth=0 state=s0-1 ret=System.Int32:11 exc=null\n",
			"HOOK begin 0 depth=0 this=null args=[System.Int32:6] state=s0-2\nHOOK end 0 depth=0 state=s0-2 ret=System.Int32:13 exc=null\n")
		res.MustStderrNotContain(t, "System.Int32:1]")
		// Before the loader ran: not loaded (the host is known once the
		// runtime asked for the first ReJIT's body: at the request on
		// 3.1, at the next call on 8).
		if !regexp.MustCompile(`(?m)^instrprof: delivery: host (|Shop\.Worker::Work), loaded false, err `).MatchString(res.Stderr) {
			t.Errorf("no delivery line of the attach, or a wrong one")
		}
		// No method of the app compiled for the first time after the
		// attach but the loader's: the host can only be the ReJIT one.
		// (.NET 11 also reports the compilation of the loader's P/Invoke
		// Op, its marshalling stub, as JITCompilationStarted of Op.)
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "instrprof: jit ") && l != "instrprof: jit <clrprof>Loader::Run" && l != "instrprof: jit <clrprof>Loader::Op" {
				t.Errorf("a method of the app was JIT-compiled after the attach: %s", l)
			}
		}
		res.MustStderrContain(t, "instrprof: delivery at shutdown: host Shop.Worker::Work, loaded true, err <nil>\n")

		// A helper that is no assembly: the loader fails inside Work's
		// call (Assembly.Load throws BadImageFormatException), its own
		// catch reports it, the app sees nothing, Work stays unwrapped.
		p = harness.Start(t, rt, app, harness.RunOptions{Timeout: 2 * time.Minute})
		if err := p.WaitStdout("ready ", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := diag.AttachProfiler(ctx, p.Pid, clsid, lib, []byte("deliver="+corrupt+";AttachApp!Shop.Worker::Work")); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitStderr("instrprof: instrumented loaded modules: <nil>", time.Minute); err != nil {
			t.Fatalf("%v\n%s", err, p.Stderr())
		}
		for _, n := range []string{"1", "5", "6"} {
			if err := p.WriteLine("call " + n); err != nil {
				t.Fatal(err)
			}
		}
		res = p.Wait()
		res.MustSucceed(t)
		if want := "ready 40000\nwork 1 -> 3\nwork 5 -> 11\nwork 6 -> 13\napp done\n"; res.Stdout != want {
			t.Errorf("the app printed\n%s\nwant (what it prints without a profiler)\n%s", res.Stdout, want)
		}
		// The host is Work's ReJIT: no method of the app is compiled after
		// the attach (before the app's methods were NoOptimization, a
		// tiering promotion of Step compiled after the attach hosted it,
		// once on .NET 10).
		if !regexp.MustCompile(`(?m)^instrprof: delivery at shutdown: host Shop\.Worker::Work, loaded false, err instr: the helper loader failed in the application: System\.BadImageFormatException`).MatchString(res.Stderr) {
			t.Errorf("no delivery line saying the loader failed with BadImageFormatException:\n%s", res.Stderr)
		}
		res.MustStderrContain(t, "instrprof: pending AttachApp!Shop.Worker::Work\n")
		res.MustStderrNotContain(t, "HOOK ", "instrprof: jit Shop.")
	})
}

// TestHelperReady: targets compiled while Config.Ready says no are left
// alone; HelperReady then instruments them through ReJIT, or, without
// ReJIT, reports them as failed.
func TestHelperReady(t *testing.T) {
	lib := instrprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
		for _, rejit := range []string{"1", "0"} {
			// The app waits for the profiler's file, written once the
			// ReJIT requests made at HelperReady were accepted.
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"INSTRPROF_TARGETS=ShopApp!Shop.Calc::Late, ShopApp!Shop.Calc::Big", "INSTRPROF_READY_AT=1", "INSTRPROF_REJIT=" + rejit,
					"INSTR_WAIT_FILE=" + filepath.Join(t.TempDir(), "ready")}})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "late 3\nlate 0\nlate 3\nlate 6\n")
			h := parseHooks(res.StderrLines())
			late, big := "ShopApp!Shop.Calc::Late", "ShopApp!Shop.Calc::Big"
			if len(h.begins[big]) != 0 {
				t.Errorf("rejit=%s: Big, compiled and run before the helper was ready, reached the integration", rejit)
			}
			if rejit == "1" {
				want := "[this=null args=[System.Int32:0] this=null args=[System.Int32:1] this=null args=[System.Int32:2]]"
				if got := fmt.Sprint(h.begins[late]); got != want {
					t.Errorf("rejit=1: Late: Begin saw %s, want %s", got, want)
				}
				// Big, not called again, still waits for its ReJIT.
				res.MustStderrContain(t, "instrprof: instrumented "+late+"\n", "instrprof: pending "+big+"\n")
			} else {
				if len(h.begins[late]) != 0 {
					t.Errorf("rejit=0: Late reached the integration")
				}
				res.MustStderrContain(t, "instrprof: failed "+late+": compiled before the helper assembly was loaded",
					"instrprof: failed "+big+": compiled before the helper assembly was loaded")
			}
		}
	})
}

// TestFrameworkWide wraps every method of List<T> and StringBuilder in
// System.Private.CoreLib, which the runtime itself uses while it starts,
// with a counting integration: the app runs and prints as without a
// profiler, every call that began ended. (Before the helper counted as
// resolvable only once the app's module loaded, .NET Core 2.1 failed to
// start, or crashed unwinding an exception, when the ReJIT came early.)
func TestFrameworkWide(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/instrprof")
	targets := "System.Private.CoreLib!System.Collections.Generic.List`1::*, System.Private.CoreLib!System.Text.StringBuilder::*"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir := t.TempDir()
		harness.CompileCS(t, []string{"testdata/apps/counter.cs"}, dir, harness.Library(), harness.OutName("InstrHelper.dll"), harness.For(rt))
		app := harness.CompileCS(t, []string{"testdata/apps/app.cs"}, dir, harness.OutName("ShopApp.exe"), harness.Unsafe(), harness.Reference("System.Core.dll"), harness.For(rt))
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"INSTRPROF_TARGETS=" + targets, "INSTRPROF_REJIT=1"}})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("app output changed:\n%s", res.Describe())
		}
		res.MustStderrNotContain(t, "instrprof: failed ")
		calls := regexp.MustCompile(`(?m)^COUNTER calls=(\d+) ends=(\d+)$`).FindStringSubmatch(res.Stderr)
		summary := regexp.MustCompile(`(?m)^instrprof: summary instrumented=(\d+) .*$`).FindStringSubmatch(res.Stderr)
		if calls == nil || summary == nil {
			t.Fatalf("no counter or summary:\n%s", res.Describe())
		}
		t.Logf("%s; %s", summary[0], calls[0])
		if n, _ := strconv.Atoi(summary[1]); n < 5 || calls[1] != calls[2] || calls[1] == "0" {
			t.Errorf("want several methods instrumented and every call ended: %s; %s", summary[0], calls[0])
		}
	})
}

// TestPreparing: Config.Prepare is offered every method compiled, until
// Config.Preparing says no more; targets are wrapped either way.
func TestPreparing(t *testing.T) {
	lib := instrprof(t)
	re := regexp.MustCompile(`(?m)^instrprof: prepare saw (\d+) methods that are no targets$`)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := shopApp(t, rt)
		for _, mode := range []string{"all", "quiet"} {
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"INSTRPROF_TARGETS=ShopApp!Shop.Calc::Add", "INSTRPROF_COUNT_PREPARE=" + mode}})
			res.MustSucceed(t)
			m := re.FindStringSubmatch(res.Stderr)
			if m == nil {
				t.Fatalf("no prepare count:\n%s", res.Describe())
			}
			n, _ := strconv.Atoi(m[1])
			t.Logf("%s: %s", mode, m[0])
			if (mode == "all") != (n > 10) || (mode == "quiet" && n != 0) {
				t.Errorf("%s: Prepare saw %d methods that are no targets", mode, n)
			}
			if len(parseHooks(res.StderrLines()).begins["ShopApp!Shop.Calc::Add"]) != 1 {
				t.Errorf("%s: Add not wrapped", mode)
			}
		}
	})
}
