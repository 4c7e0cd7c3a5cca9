// Command actprof is the profiler of package instr's action tests
// (TestGoHookActions, TestGoHookActionsHttpClient): Go hooks that act on
// the arguments of the methods they hook (GoHooks.Actions). The Acts
// app's Svc::Send(Req, int) gets, by its second argument, headers added
// (Headers.Add), an action that throws (Headers.TryAdd("bad", ...)), a
// method of the argument itself (SetUrl), strings of every kind, and Act's
// refusals (printed "ACTPROF refused ..."); Client::Get renames its
// instance; SendAsync (a task) gets a header; Unresolved's action does not
// resolve. ACTPROF_HOT=1 hooks only Svc::Hot(Req, int), whose Enter asks
// for Headers.Set("traceparent", a traceparent) when the int is 1 (the
// cost per call); ACTPROF_HOT=1exit asks for the same action from Exit
// (an action at exit) instead.
// ACTPROF_HOT=http hooks HttpMessageInvoker.SendAsync(HttpRequestMessage,
// CancellationToken) and adds a traceparent (package tracecontext) and an
// x-clrprof header to every request through
// Headers.TryAddWithoutValidation, printing "ACTPROF http URI TRACEPARENT
// N". ACTPROF_HOT=exit hooks the ExitActs app's methods with actions at
// exit (exitRules). At Shutdown it prints the methods that could not be wrapped, the
// actions' errors and the counts ("actprof: ").
package main

import (
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"sync/atomic"

	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/tracecontext"
)

type prof struct {
	profiler.Base
	in *instr.Instrumenter
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "actprof: "+format+"\n", args...)
}

// act asks for an action and prints a refusal.
func act(c *instr.Call, i int, args ...any) {
	if err := c.Act(i, args...); err != nil {
		fmt.Fprintf(os.Stderr, "ACTPROF refused %v\n", err)
	}
}

func rule(method string, h *instr.GoHooks) instr.Rule {
	return instr.Rule{Targets: mustTargets(method), Go: h}
}

func mustTargets(method string) []target.Target {
	ts, err := target.ParseList(method)
	if err != nil {
		panic(err)
	}
	return ts
}

// sendEnter is Svc::Send's Enter: what it asks for by the call's n.
func sendEnter(c *instr.Call) uint64 {
	switch c.Args()[1].Int() {
	case 1:
		act(c, 0, "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
		act(c, 0, "x-custom", "v1")
	case 2:
		act(c, 1, "bad", "x") // throws
		act(c, 0, "k", "after-throw")
	case 3:
		act(c, 2, "/set-by-go")
		act(c, 0, "uni", "é€😀")
		act(c, 0, "empty", "")
	case 4:
		act(c, 0, "long", strings.Repeat("z", 3000))
	case 5: // Headers is null: action 0 is skipped, 2 runs
		act(c, 0, "never", "seen")
		act(c, 2, "/nohdrs")
	case 6: // the request is null: both skipped
		act(c, 0, "never", "seen")
		act(c, 2, "/never")
	case 7:
		act(c, 1, "ok", "1") // returns a bool, dropped
		act(c, 9, "x")       // refused: no action 9
		act(c, 0, "one")     // refused: Add takes 2
		act(c, -1)           // refused
	}
	return 0
}

var httpCalls atomic.Int64

func newTraceparent() string {
	var tid trace.TraceID
	var sid trace.SpanID
	rand.Read(tid[:])
	rand.Read(sid[:])
	return tracecontext.Traceparent(trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
}

func (p *prof) Initialize(info *profiler.Info) error {
	var rules []instr.Rule
	reJIT := false
	switch os.Getenv("ACTPROF_HOT") {
	case "":
		rules = []instr.Rule{
			rule("Acts!Acts.Svc::Send", &instr.GoHooks{Args: true, Enter: sendEnter, Actions: []instr.Action{
				{Arg: 0, Path: "Headers", Method: "Add", Params: 2},
				{Arg: 0, Path: "Headers", Method: "TryAdd", Params: 2},
				{Arg: 0, Method: "SetUrl", Params: 1},
				{Arg: 0, Path: "Headers", Method: "Clear"}, // never asked for
			}}),
			rule("Acts!Acts.Client::Get", &instr.GoHooks{
				Enter:   func(c *instr.Call) uint64 { act(c, 0, "renamed"); return 0 },
				Actions: []instr.Action{{Arg: instr.This, Method: "Rename", Params: 1}},
			}),
			rule("Acts!Acts.Svc::SendAsync", &instr.GoHooks{
				Enter:   func(c *instr.Call) uint64 { act(c, 0, "async", "yes"); return 0 },
				Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "Add", Params: 2}},
			}),
			rule("Acts!Acts.Svc::Unresolved", &instr.GoHooks{
				Enter:   func(c *instr.Call) uint64 { return 0 },
				Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "Add", Params: 1}},
			}),
		}
	case "1":
		rules = []instr.Rule{rule("Acts!Acts.Svc::Hot", &instr.GoHooks{Args: true,
			Enter: func(c *instr.Call) uint64 {
				if c.Args()[1].Int() == 1 {
					c.Act(0, "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				}
				return 0
			},
			Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "Set", Params: 2}},
		})}
	case "1exit":
		// The same action asked for by Exit (AtExit), when the int was 1.
		rules = []instr.Rule{rule("Acts!Acts.Svc::Hot", &instr.GoHooks{Args: true,
			Enter: func(c *instr.Call) uint64 { return uint64(c.Args()[1].Int()) },
			Exit: func(r *instr.Return) {
				if r.State() == 1 {
					r.Act(0, "traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
				}
			},
			Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "Set", Params: 2, AtExit: true}},
		})}
	case "http":
		reJIT = true // the framework is precompiled (ReadyToRun)
		rules = []instr.Rule{rule("System.Net.Http!System.Net.Http.HttpMessageInvoker::SendAsync(System.Net.Http.HttpRequestMessage,System.Threading.CancellationToken)",
			&instr.GoHooks{
				Members: []instr.Member{{Arg: 0, Path: "RequestUri"}},
				Actions: []instr.Action{{Arg: 0, Path: "Headers", Method: "TryAddWithoutValidation", Params: 2}},
				Enter: func(c *instr.Call) uint64 {
					tp := newTraceparent()
					n := httpCalls.Add(1)
					act(c, 0, "traceparent", tp)
					act(c, 0, "x-clrprof", fmt.Sprint("call-", n))
					fmt.Fprintf(os.Stderr, "ACTPROF http %s %s %d\n", c.Member(0).Str(), tp, n)
					return 0
				},
			})}
	case "exit":
		rules = exitRules()
	default:
		return fmt.Errorf("ACTPROF_HOT=%s", os.Getenv("ACTPROF_HOT"))
	}
	// A Deferred rule with actions is refused.
	if _, err := instr.New(info, instr.Config{Rules: []instr.Rule{rule("Acts!Acts.Svc::Send", &instr.GoHooks{Deferred: true,
		Enter: func(*instr.Call) uint64 { return 0 }, Actions: []instr.Action{{Method: "Clear"}}})}}); err != nil {
		logf("deferred refused: %v", err)
	} else {
		logf("deferred accepted")
	}
	var err error
	if p.in, err = instr.New(info, instr.Config{Rules: rules, ReJIT: reJIT}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if err := p.in.ModuleLoadFinished(m, hr); err != nil {
		logf("ModuleLoadFinished: %v", err)
	}
	return nil
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *prof) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *prof) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *prof) Shutdown() error {
	r := p.in.Report()
	for _, f := range r.Failed {
		logf("failed %s", f)
	}
	for _, e := range instr.GoActionErrors() {
		logf("action errors %s %d %d %s", e.Method, e.Action, e.Count, e.First)
	}
	for _, hp := range instr.GoHookPanics() {
		logf("panics %s %d %q", hp.Method, hp.Count, hp.First)
	}
	logf("summary instrumented=%d pending=%d failed=%d", len(r.Instrumented), len(r.Pending), len(r.Failed))
	return nil
}

// exitRules are ACTPROF_HOT=exit's: actions at exit (Action.AtExit) on the
// ExitActs app's Svc methods. Exit also asks for an action at entry and
// for one that does not exist, which Return.Act refuses ("ACTPROF
// refused").
func exitRules() []instr.Rule {
	appendAt := func(arg int) instr.Action {
		return instr.Action{Arg: arg, Method: "Append", Kinds: []instr.ParamKind{instr.ParamString}, AtExit: true}
	}
	ract := func(r *instr.Return, i int, args ...any) {
		if err := r.Act(i, args...); err != nil {
			fmt.Fprintf(os.Stderr, "ACTPROF refused %v\n", err)
		}
	}
	return []instr.Rule{
		rule("ExitActs!ExitActs.Svc::Make", &instr.GoHooks{
			Exit: func(r *instr.Return) { ract(r, 0, "-exit"); ract(r, 1, 0.25); ract(r, 2, float32(-1.5)) },
			Actions: []instr.Action{appendAt(instr.Result),
				// Append(double), Append(float): overloads picked by the kinds.
				{Arg: instr.Result, Method: "Append", Kinds: []instr.ParamKind{instr.ParamFloat64}, AtExit: true},
				{Arg: instr.Result, Method: "Append", Kinds: []instr.ParamKind{instr.ParamFloat32}, AtExit: true}},
		}),
		rule("ExitActs!ExitActs.Svc::Fill", &instr.GoHooks{
			Enter: func(c *instr.Call) uint64 { act(c, 0, "enter-"); return 7 },
			Exit: func(r *instr.Return) {
				ract(r, 1, fmt.Sprintf("-exit%d", r.State()))
				ract(r, 0, "refused") // an action at entry
				ract(r, 5, "refused") // no such action
			},
			Actions: []instr.Action{{Arg: 0, Method: "Append", Params: 1}, appendAt(0)},
		}),
		rule("ExitActs!ExitActs.Svc::Fail", &instr.GoHooks{
			Exit: func(r *instr.Return) {
				if r.Exception() {
					ract(r, 0, "-exit:"+r.ExceptionType())
					ract(r, 1, "-never") // the result is null
				}
			},
			Actions: []instr.Action{appendAt(0), appendAt(instr.Result)},
		}),
		rule("ExitActs!ExitActs.Svc::Tight", &instr.GoHooks{
			Exit:    func(r *instr.Return) { ract(r, 0, "xyz"); ract(r, 0, "ab") },
			Actions: []instr.Action{appendAt(instr.Result)},
		}),
		{Targets: mustTargets("ExitActs!ExitActs.Svc::Start"), EndAtReturn: true, Go: &instr.GoHooks{
			Exit: func(r *instr.Return) { ract(r, 0, "-ret"); ract(r, 1) },
			// On the argument, and on the task returned (Wait: it has
			// completed).
			Actions: []instr.Action{appendAt(0), {Arg: instr.Result, Method: "Wait", AtExit: true}},
		}},
		rule("ExitActs!ExitActs.Svc::MakeAsync", &instr.GoHooks{
			Exit:    func(r *instr.Return) { ract(r, 0, "-exit") },
			Actions: []instr.Action{appendAt(instr.Result)},
		}),
	}
}

func init() {
	profiler.Register("{8D2E3F40-5B6C-4D7E-9F0A-1B2C3D4E5F60}", &prof{})
}

func main() {}
