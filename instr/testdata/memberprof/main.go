// Command memberprof is the profiler of package instr's member tests
// (TestGoHookMembers): it hooks the methods of the Members app with Go
// hooks that read members of their arguments and results
// (GoHooks.Members) and prints each call's as
//
//	MEMBERS enter|exit METHOD [i=kind:type:value ...]
//
// (a member whose reading threw marked !threw). MEMBERPROF_DEFERRED=1
// makes the hooks deferred. At Shutdown it prints the methods that could
// not be wrapped, the members' errors and the counts ("memberprof: ").
// MEMBERPROF_HOT=http hooks HttpClient.SendAsync(HttpRequestMessage,
// HttpCompletionOption, CancellationToken), reading the request's method,
// URI and version and the response's status, reason, request method and
// version. MEMBERPROF_HOT=none|args|members hooks only Members.Svc::Hot, with
// empty hooks, without arguments, with its argument, or reading two
// members of it (the cost per call). MEMBERPROF_HOT=detach hooks
// Members.Svc::Slow and Never, whose tasks the app's "detach" mode leaves
// behind (the wait at Shutdown for task ends).
package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
	in   *instr.Instrumenter
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "memberprof: "+format+"\n", args...)
}

// show formats the members of ms that get(i) gives.
func show(ms []instr.Member, result bool, get func(i int) instr.Value) string {
	var sb strings.Builder
	for i, m := range ms {
		if (m.Arg == instr.Result) != result {
			continue
		}
		v := get(i)
		if sb.Len() > 0 {
			sb.WriteString(" ")
		}
		fmt.Fprintf(&sb, "%d=%s:%s:%s", i, v.Kind, v.Type, v.String())
		if v.Threw() {
			sb.WriteString("!threw")
		}
		if v.Truncated() {
			sb.WriteString("!trunc")
		}
	}
	return sb.String()
}

func (p *prof) rule(method string, args bool, ms ...instr.Member) instr.Rule {
	name := method
	if strings.HasPrefix(method, "Client::") {
		method, name = "Members!Members."+method, method[len("Client::"):]
	} else if !strings.Contains(method, "!") {
		method = "Members!Members.Svc::" + method
	} else {
		name = method[strings.Index(method, "::")+2:]
		if i := strings.Index(name, "("); i >= 0 {
			name = name[:i]
		}
	}
	ts, err := target.ParseList(method)
	if err != nil {
		panic(err)
	}
	h := &instr.GoHooks{Args: args, Members: ms, Deferred: os.Getenv("MEMBERPROF_DEFERRED") == "1"}
	h.Enter = func(c *instr.Call) uint64 {
		var as []string
		for _, a := range c.Args() {
			as = append(as, a.String())
		}
		fmt.Fprintf(os.Stderr, "MEMBERS enter %s args=[%s] [%s]\n", name, strings.Join(as, " "), show(ms, false, c.Member))
		return 0
	}
	h.Exit = func(r *instr.Return) {
		fmt.Fprintf(os.Stderr, "MEMBERS exit %s exc=%v [%s]\n", name, r.Exception(), show(ms, true, r.Member))
	}
	return instr.Rule{Targets: ts, Go: h}
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	m := func(arg int, path string) instr.Member { return instr.Member{Arg: arg, Path: path} }
	var rules []instr.Rule
	switch hot := os.Getenv("MEMBERPROF_HOT"); hot {
	case "http":
		rules = []instr.Rule{p.rule("System.Net.Http!System.Net.Http.HttpClient::SendAsync(System.Net.Http.HttpRequestMessage,System.Net.Http.HttpCompletionOption,System.Threading.CancellationToken)",
			false, m(0, "Method.Method"), m(0, "RequestUri"), m(0, "Version"),
			m(instr.Result, "StatusCode"), m(instr.Result, "ReasonPhrase"), m(instr.Result, "RequestMessage.Method.Method"), m(instr.Result, "Version"))}
	case "foreign":
		// Members and an action through other assemblies' types: System.Uri
		// (forwarded from the app's reference), an exception's inherited
		// Message, the current Activity (static, in DiagnosticSource).
		svc := "Foreign!Foreign.Svc::"
		stamp := p.rule(svc+"Stamp", false, instr.CurrentActivity("Id"))
		stamp.Go.Actions = []instr.Action{{Arg: 0, Method: "Add", Params: 2}}
		enter := stamp.Go.Enter
		stamp.Go.Enter = func(c *instr.Call) uint64 {
			if id := c.Member(0); !id.IsNull() {
				if err := c.Act(0, "traceparent", id.Str()); err != nil {
					logf("act: %v", err)
				}
			}
			return enter(c)
		}
		// Actions with values other than strings: Mark's Note gets a
		// string, a bool, an int, a long and a DayOfWeek (from a Go named
		// integer), and the current activity is marked recorded
		// (Optional: .NET Core 2.x's Activity has no trace flags).
		// MarkWrong's action takes an int64 where Day's enum is an int32:
		// refused.
		mark, wrong := p.rule(svc+"Mark", false), p.rule(svc+"MarkWrong", false)
		mark.Go = &instr.GoHooks{
			Enter: func(c *instr.Call) uint64 {
				for i, args := range [][]any{{"go", true, -7, int64(1) << 40}, {time.Wednesday}, {1}} {
					if err := c.Act(i, args...); err != nil {
						logf("act: %v", err)
					}
				}
				return 0
			},
			Actions: []instr.Action{
				{Arg: 0, Method: "Set", Kinds: []instr.ParamKind{instr.ParamString, instr.ParamBool, instr.ParamInt32, instr.ParamInt64}},
				{Arg: 0, Method: "Day", Kinds: []instr.ParamKind{instr.ParamInt32}},
				{Arg: instr.Static, Type: instr.ActivityType, Path: "Current", Method: "set_ActivityTraceFlags",
					Kinds: []instr.ParamKind{instr.ParamInt32}, Optional: true},
			},
		}
		wrong.Go = &instr.GoHooks{
			Enter:   func(c *instr.Call) uint64 { return 0 },
			Actions: []instr.Action{{Arg: 0, Method: "Day", Kinds: []instr.ParamKind{instr.ParamInt64}}},
		}
		rules = []instr.Rule{
			mark, wrong,
			p.rule(svc+"Visit", false, m(0, "AbsoluteUri"), m(0, "Port"), instr.CurrentActivity("Id"),
				m(1, "Message"), m(1, "InnerException.Message"), m(1, "InnerException")),
			p.rule(svc+"State", false, instr.CurrentActivity("TraceStateString"), instr.CurrentActivity("TraceId"),
				instr.CurrentActivity("ParentSpanId")),
			p.rule(svc+"Unresolved", false, m(0, "Nope")),
			p.rule(svc+"Internal", false, m(0, "UserDrivenParsing")),
			p.rule(svc+"Maybe", false, m(0, "Host"), instr.Member{Arg: 0, Path: "Nope", Optional: true}),
			stamp,
		}
	case "detach":
		rules = []instr.Rule{
			p.rule("Slow", false, m(instr.Result, "Status"), m(instr.Result, "Body")),
			p.rule("Never", false, m(instr.Result, "Status")),
		}
	case "":
		rules = []instr.Rule{
			p.rule("Send", true, m(0, "Url"), m(0, "Port"), m(0, "Child.Name"), m(0, "Bad"), m(0, "Id")),
			p.rule("Send2", false, m(0, "Verb"), m(0, "Ver"), m(0, "Child"), m(0, "Weight"), m(0, "Url")),
			p.rule("Unresolved", false, m(0, "Child.Nope")),
			p.rule("Client::Get", false, m(instr.This, "Base"), m(instr.This, "Last.Url"), m(0, "Port")),
			p.rule("Make", true, m(instr.Result, "Status"), m(instr.Result, "Body"), m(instr.Result, "Child.Name"), m(instr.Result, "Bad")),
			p.rule("MakeAsync", false, m(instr.Result, "Status"), m(instr.Result, "Body"), m(instr.Result, "Child.Name"), m(instr.Result, "Bad")),
		}
	default:
		ts, _ := target.ParseList("Members!Members.Svc::Hot")
		h := &instr.GoHooks{Enter: func(*instr.Call) uint64 { return 0 }, Exit: func(*instr.Return) {},
			Deferred: os.Getenv("MEMBERPROF_DEFERRED") == "1"}
		switch hot {
		case "args":
			h.Args = true
		case "members":
			h.Members = []instr.Member{m(0, "Url"), m(0, "Port")}
		case "activity":
			// What sample/gotrace reads of the current activity per call.
			h.Members = []instr.Member{instr.CurrentActivity("TraceId"), instr.CurrentActivity("TraceStateString"),
				instr.CurrentActivity("SpanId"), instr.CurrentActivity("Recorded"),
				instr.CurrentActivity("ParentSpanId"), instr.CurrentActivity("Parent.SpanId")}
		case "none":
		default:
			return fmt.Errorf("MEMBERPROF_HOT=%s", hot)
		}
		rules = []instr.Rule{{Targets: ts, Go: h}}
	}
	var err error
	// The framework's methods are precompiled (ReadyToRun): ReJIT.
	if p.in, err = instr.New(info, instr.Config{Rules: rules, ReJIT: os.Getenv("MEMBERPROF_HOT") == "http"}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if os.Getenv("MEMBERPROF_HOT") == "foreign" {
		if mi, err := p.info.GetModuleInfo(m); err == nil && strings.HasSuffix(mi.Name, "/System.Diagnostics.DiagnosticSource.dll") {
			logf("loaded System.Diagnostics.DiagnosticSource.dll")
		}
	}
	if err := p.in.ModuleLoadFinished(m, hr); err != nil {
		logf("ModuleLoadFinished: %v", err)
	}
	return nil
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	if os.Getenv("MEMBERPROF_HOT") == "foreign" {
		if fi, err := p.info.GetFunctionInfo(f); err == nil {
			if m, ok := p.in.Lookup(fi.ModuleID, fi.Token); ok && strings.HasSuffix(m.Name, "::Visit") {
				logf("wrapping Visit")
			}
		}
	}
	return p.in.JITCompilationStarted(f, safe)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *prof) Shutdown() error {
	// MakeAsync's Exit runs on the thread that completed its task, and Main
	// may have gone on (and returned) before it ran: wait for it.
	// (MEMBERPROF_HOT=detach leaves a task that never completes: the wait
	// ends at its bound, with that task's end pending.)
	bound := 10 * time.Second
	if os.Getenv("MEMBERPROF_HOT") == "detach" {
		bound = 2 * time.Second
	}
	before := instr.PendingTaskEnds()
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	n, err := instr.WaitTaskEnds(ctx)
	cancel()
	logf("task ends before=%d", before)
	logf("task ends pending=%d wait=%v", n, err)
	if os.Getenv("MEMBERPROF_DEFERRED") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := instr.FlushDeferred(ctx)
		cancel()
		st := instr.DeferredStats()
		logf("deferred delivered=%d dropped=%d flush=%v", st.Delivered, st.Dropped, err)
	}
	r := p.in.Report()
	for _, f := range r.Failed {
		logf("failed %s", f)
	}
	for _, a := range r.Absent {
		logf("absent %s", a)
	}
	for _, e := range instr.GoMemberErrors() {
		logf("member errors %s %d", e.Method, e.Count)
	}
	for _, hp := range instr.GoHookPanics() {
		logf("panics %s %d %q", hp.Method, hp.Count, hp.First)
	}
	logf("summary instrumented=%d pending=%d failed=%d", len(r.Instrumented), len(r.Pending), len(r.Failed))
	return nil
}

func init() {
	profiler.Register("{7C1D2E3F-4A5B-4C6D-8E9F-0A1B2C3D4E5F}", &prof{})
}

func main() {}
