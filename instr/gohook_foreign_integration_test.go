//go:build cgo

package instr_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/tracecontext"
)

// TestGoHookForeignMembers: Go hooks read members through types of other
// assemblies, on every runtime: System.Uri's AbsoluteUri and Port (the
// app references Uri through a facade that forwards it), an exception's
// Message inherited from System.Exception in CoreLib, the InnerException's
// Message (a CoreLib type reached through CoreLib's own signature) and the
// object itself as its ToString(); the caller's current Activity
// (instr.CurrentActivity, a static member of a type of
// System.Diagnostics.DiagnosticSource) read before any activity exists
// (null), after an await moved the call to a pool thread (the outer
// activity's Id), inside a nested activity (the inner one's, same trace)
// and after both stopped (null); its tracestate, trace ID and parent span
// ID (structs of another assembly, as their ToString(); from .NET Core 3.0
// on: before, Activity has no TraceStateString and the rule is reported);
// an action through another assembly's type (NameValueCollection.Add) that
// writes the current activity's Id as a traceparent header; actions with
// values other than strings (a string, a bool, an int, a long and a
// CoreLib enum set on the app's object; the current activity's trace
// flags set to recorded from .NET Core 3.0 on, an Optional action absent
// before); an action whose enum parameter is not the kind asked for
// (refused); the errors: a
// member no type on the way has, an internal member of another assembly;
// and an Optional member that does not resolve (null, Report.Absent).
func TestGoHookForeignMembers(t *testing.T) {
	lib := harness.BuildProfiler(t, "./instr/testdata/memberprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/foreign/app.cs"}, t.TempDir(), harness.OutName("Foreign.exe"), harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: memberCLSID,
			Env: []string{"MEMBERPROF_HOT=foreign"}})
		res.MustSucceed(t)
		ids := map[string]string{}
		for _, m := range regexp.MustCompile(`(?m)^(outer|inner) (\S+)$`).FindAllStringSubmatch(res.Stdout, -1) {
			ids[m[1]] = m[2]
		}
		outer, inner := ids["outer"], ids["inner"]
		if outer == "" || inner == "" {
			t.Fatalf("no activity IDs:\n%s", res.Describe())
		}
		w3c := rt.Major >= 3 // Activity.SetIdFormat exists from .NET Core 3.0 on
		if w3c {
			po, err := tracecontext.ParseTraceparent(outer)
			if err != nil {
				t.Fatalf("outer %q: %v", outer, err)
			}
			pi, err := tracecontext.ParseTraceparent(inner)
			if err != nil {
				t.Fatalf("inner %q: %v", inner, err)
			}
			if pi.TraceID() != po.TraceID() {
				t.Errorf("inner activity %s not in the outer's trace %s", inner, outer)
			}
		}
		q := func(s string) string { return `"` + s + `"` }
		visit := func(tag, id string) string {
			return `MEMBERS enter Visit args=[] [0=string:System.String:"http://h.example:8081/p?q=` + tag + `" 1=int:System.Int32:8081 2=string:System.String:` + id +
				` 3=string:System.String:"bad ` + tag + `" 4=string:System.String:"inner ` + tag + `" 5=string:System.Exception:"System.ArgumentException: inner ` + tag + `"]`
		}
		var want []string
		for _, c := range []struct{ tag, id string }{{"none", "null"}, {"outer", q(outer)}, {"inner", q(inner)}, {"after", "null"}} {
			want = append(want, visit(c.tag, c.id), `MEMBERS exit Visit exc=false []`)
			if w3c {
				state := `MEMBERS enter State args=[] [0=string:System.String:null 1=string:System.Diagnostics.ActivityTraceId:null 2=string:System.Diagnostics.ActivitySpanId:null]`
				if c.id != "null" {
					p, _ := tracecontext.ParseTraceparent(strings.Trim(c.id, `"`))
					parent := "0000000000000000"
					if c.tag == "inner" {
						op, _ := tracecontext.ParseTraceparent(outer)
						parent = op.SpanID().String()
					}
					state = `MEMBERS enter State args=[] [0=string:System.String:"k1=v1" 1=string:System.Diagnostics.ActivityTraceId:"` + p.TraceID().String() +
						`" 2=string:System.Diagnostics.ActivitySpanId:"` + parent + `"]`
				}
				want = append(want, state, `MEMBERS exit State exc=false []`)
			}
			want = append(want, `MEMBERS enter Stamp args=[] [0=string:System.String:`+c.id+`]`, `MEMBERS exit Stamp exc=false []`)
			stamped := "(none)"
			if c.id != "null" {
				stamped = strings.Trim(c.id, `"`)
			}
			res.MustStdoutContain(t, c.tag+" stamped "+stamped+"\n")
			// Mark's actions: the Note's values, and the current
			// activity marked recorded (the inner one was started
			// under the outer, already marked, and took its flags).
			recorded := map[string]string{"none": "none->none", "outer": "False->True", "inner": "True->True", "after": "none->none"}[c.tag]
			if !w3c && c.id != "null" {
				recorded = "n/a->n/a"
			}
			res.MustStdoutContain(t, c.tag+" recorded "+recorded+" note go|True|-7|1099511627776|Wednesday\n")
		}
		// An Optional member that does not resolve reads null; its method
		// is wrapped, and Report.Absent says why.
		res.MustStderrContain(t, `MEMBERS enter Maybe args=[] [0=string:System.String:"maybe.example" 1=string::null]`+"\n")
		res.MustStderrContain(t, "memberprof: absent Foreign!Foreign.Svc::Maybe: instr: member 1 (Nope of argument 0): System.Uri has no instance property or field Nope (nor its base types)\n")
		var got []string
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "MEMBERS ") && !strings.Contains(l, " Maybe ") {
				got = append(got, l)
			}
		}
		if g, w := strings.Join(got, "\n"), strings.Join(want, "\n"); g != w {
			t.Errorf("hooks saw\n%s\nwant\n%s", g, w)
		}
		res.MustStdoutContain(t, "moved True\n")
		for _, w := range []string{
			"memberprof: failed Foreign!Foreign.Svc::Unresolved: instr: member 0 (Nope of argument 0): System.Uri has no instance property or field Nope (nor its base types)\n",
			"memberprof: failed Foreign!Foreign.Svc::Internal: instr: member 0 (UserDrivenParsing of argument 0): the getter of UserDrivenParsing is not public (a member of System.Private.Uri.dll, another assembly)\n",
		} {
			res.MustStderrContain(t, w)
		}
		res.MustStderrContain(t, "memberprof: failed Foreign!Foreign.Svc::MarkWrong: instr: action 0 (.Day of argument 0): "+
			"Foreign.Note has no instance method Day(int64) (nor its base types); methods of that name seen: parameter 0 not a int64\n")
		wantSummary := "memberprof: summary instrumented=5 pending=0 failed=3"
		if !w3c {
			wantSummary = "memberprof: summary instrumented=4 pending=0 failed=4"
			res.MustStderrContain(t, "memberprof: absent Foreign!Foreign.Svc::Mark: instr: action 2 (Current.set_ActivityTraceFlags of "+
				"System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource): System.Diagnostics.Activity has no instance method set_ActivityTraceFlags(int32)")
			res.MustStderrContain(t, "memberprof: failed Foreign!Foreign.Svc::State: instr: member 0 (Current.TraceStateString of "+
				"System.Diagnostics.Activity, System.Diagnostics.DiagnosticSource): System.Diagnostics.Activity has no instance property or field TraceStateString")
		}
		res.MustStderrContain(t, wantSummary)
		// Visit was wrapped when DiagnosticSource was not loaded yet (the
		// JIT loads it for the wrap's reference to Activity): Activity was
		// found in the framework's file.
		if v, l := strings.Index(res.Stderr, "memberprof: wrapping Visit"), strings.Index(res.Stderr, "memberprof: loaded System.Diagnostics.DiagnosticSource.dll"); v < 0 || l < v {
			t.Errorf("DiagnosticSource loaded (at %d) before Visit was wrapped (at %d): the framework file was not used", l, v)
		}
		if t.Failed() {
			t.Log(res.Describe())
		}
	})
}
