//go:build cgo

package instr_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var (
	goEnterLine = regexp.MustCompile(`^GOHOOK enter (\S+) state=(\d+) args=\[(.*)\]$`)
	goExitLine  = regexp.MustCompile(`^GOHOOK exit (\S+) state=(\d+) (ret=.*)$`)
)

// TestGoHooks hooks every method of the test app's Hooked.Kinds with Go
// hooks (no managed helper) and checks, on every runtime, each argument
// and return kind as the hooks saw it, the state handed from Enter to
// Exit, exceptions and their types, hooks that panic (recovered and
// counted, the method unaffected), nesting, and 8 threads calling a hooked
// method 20,000 times each.
func TestGoHooks(t *testing.T) {
	lib := goprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := goHookApp(t, rt)
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"GOPROF_TARGETS=GoHookApp!Hooked.Kinds::*"}})
		res.MustSucceed(t)
		if res.Stdout != base.Stdout {
			t.Errorf("app output changed by the hooks:\n--- without\n%s\n--- with\n%s", base.Stdout, res.Stdout)
		}
		if testing.Verbose() {
			t.Log(res.Stderr)
		}
		checkGoHooks(t, res.StderrLines(), false)
	})
}

// checkGoHooks checks what goprof printed for the app's main run; deferred
// hooks get long strings cut at 1024 units.
func checkGoHooks(t *testing.T, lines []string, deferred bool) {
	t.Helper()
	enters := map[string][]string{}
	exits := map[string][]string{}
	var order []string
	stateOf := map[string]string{}
	for _, l := range lines {
		if m := goEnterLine.FindStringSubmatch(l); m != nil {
			enters[m[1]] = append(enters[m[1]], m[3])
			order = append(order, "enter "+m[1])
			stateOf[m[2]] = m[1]
		} else if m := goExitLine.FindStringSubmatch(l); m != nil {
			exits[m[1]] = append(exits[m[1]], m[3])
			order = append(order, "exit "+m[1])
			if stateOf[m[2]] != m[1] {
				t.Errorf("%s: Exit got state %s, which Enter returned for %q", m[1], m[2], stateOf[m[2]])
			}
		}
	}
	want := func(name string, args []string, rets []string) {
		t.Helper()
		if fmt.Sprint(enters[name]) != fmt.Sprint(args) {
			t.Errorf("%s: Enter saw\n  %q\nwant\n  %q", name, enters[name], args)
		}
		if fmt.Sprint(exits[name]) != fmt.Sprint(rets) {
			t.Errorf("%s: Exit saw\n  %q\nwant\n  %q", name, exits[name], rets)
		}
	}
	ok := func(s string) string { return "ret=" + s + " exc=false:" }
	want("Ints", []string{"int:System.SByte:-8 int:System.Int16:-1600 int:System.Int32:-320000 int:System.Int64:-64000000000 " +
		"uint:System.Byte:200 uint:System.UInt16:65000 uint:System.UInt32:4000000000 uint:System.UInt64:18000000000000000000"},
		[]string{ok("int:-446744133709808024")})
	want("Floats", []string{`float:System.Single:1.5 float:System.Double:-2.25 bool:System.Boolean:true char:System.Char:'A'`},
		[]string{ok("float:64.25")})
	want("Strings", []string{`string:System.String:"héllo wörld ☃" string:System.String:null string:System.String:""`},
		[]string{ok(`string:"héllo wörld ☃|null|"`)})
	want("Enums", []string{"enum:Hooked.Color:200 enum:Hooked.Big:-9223372036854775808"}, []string{ok("enum:2")})
	want("ByRef", []string{"int:System.Int32:21 int:System.Int32:0"}, []string{ok("int:42")})
	want(".ctor", []string{"int:System.Int32:5"}, []string{ok("void:void")})
	want("Instance", []string{"object:System.Object:<object> object:System.Int32[]:<object> int:System.Int32:7"}, []string{ok("int:15")})
	want("Nine", []string{"int:System.Int32:1 int:System.Int32:2 int:System.Int32:3 int:System.Int32:4 int:System.Int32:5 " +
		"int:System.Int32:6 int:System.Int32:7 int:System.Int32:8"}, []string{ok("uint:45")})
	want("Flag", []string{"bool:System.Boolean:false"}, []string{ok("bool:true")})
	want("Letter", []string{"char:System.Char:'y'"}, []string{ok("char:'z'")})
	want("Single", []string{"float:System.Single:0.75"}, []string{ok("float:1.5")})
	want("Nothing", []string{""}, []string{ok("void:void")})
	want("NullString", []string{""}, []string{ok("string:null")})
	want("Throws", []string{"int:System.Int32:0", "int:System.Int32:1", "int:System.Int32:2"}, []string{ok("int:0"),
		"ret=int:0 exc=true:System.InvalidOperationException", "ret=int:0 exc=true:Hooked.Oops"})
	want("Outer", []string{"int:System.Int32:4"}, []string{ok("int:41")})
	want("Inner", []string{"int:System.Int32:4"}, []string{ok("int:40")})
	if deferred {
		want("Long", []string{"string:System.String:<1024 units trunc=true>"}, []string{ok("string:<1024 units trunc=true>")})
	} else {
		want("Long", []string{"string:System.String:<3000 units trunc=false>"}, []string{ok("string:<3001 units trunc=false>")})
	}
	nest := strings.Join(order, ",")
	if !strings.Contains(nest, "enter Outer,enter Inner,exit Inner,exit Outer") {
		t.Errorf("nesting: calls in order %s", nest)
	}
	all := strings.Join(lines, "\n")
	for _, w := range []string{
		`goprof: panics GoHookApp!Hooked.Kinds::Panicky 2 "enter hook panicked"`,
		"goprof: hot enter=160000 exit=160000 sum=1599920000 badstate=0 threads=8",
		// every Call, Return and Value printed equals what instr's
		// constructors make of what its methods return
		"goprof: remade bad=0",
	} {
		if !strings.Contains(all, w) {
			t.Errorf("missing %q", w)
		}
	}
	if strings.Contains(all, "goprof: failed") {
		t.Errorf("methods failed:\n%s", all)
	}
}

// goprof builds the Go-hooks test profiler.
func goprof(t *testing.T) string {
	return harness.BuildProfiler(t, "./instr/testdata/goprof")
}

// goHookApp compiles the Go-hooks test app for rt.
func goHookApp(t *testing.T, rt harness.Runtime) string {
	return harness.CompileCS(t, []string{"testdata/gohook/app.cs"}, t.TempDir(), harness.OutName("GoHookApp.exe"), harness.For(rt))
}
