//go:build cgo

package instr_test

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// targetTracer wraps the methods of Shop.Orders and String.Join with the
// integration Tracing.Hooks of Tracing.dll, a helper assembly installed
// beside the app:
//
//	namespace Tracing {
//	    public static class Hooks {
//	        public static object Begin(int id, object instance, object[] args) { return Stopwatch.GetTimestamp(); }
//	        public static void End(int id, object state, object returnValue, object exception) { ... }
//	    }
//	}
type targetTracer struct {
	profiler.Base
	in *instr.Instrumenter
}

func (p *targetTracer) Initialize(info *profiler.Info) error {
	targets, err := target.ParseList("Shop!Shop.Orders::*, System.Private.CoreLib!System.String::Join(System.String, System.String[])")
	if err != nil {
		return err // names the target and the position
	}
	p.in, err = instr.New(info, instr.Config{
		Rules: []instr.Rule{{Targets: targets, Integration: instr.Integration{
			Assembly: metadata.AssemblyName{Name: "Tracing", Version: metadata.Version{Major: 1}},
			Type:     "Tracing.Hooks",
		}}},
		ReJIT: true, // String.Join is precompiled (ReadyToRun): instrumented through ReJIT
	})
	if err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *targetTracer) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
}

func (p *targetTracer) ModuleUnloadStarted(m profiler.ModuleID) error {
	return p.in.ModuleUnloadStarted(m)
}

func (p *targetTracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *targetTracer) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *targetTracer) GetReJITParameters(m profiler.ModuleID, method metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, method, fc)
}

func (p *targetTracer) ReJITError(m profiler.ModuleID, method metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, method, f, hr)
}

func (p *targetTracer) Shutdown() error {
	r := p.in.Report()
	fmt.Fprintf(os.Stderr, "targetTracer: %d methods instrumented\n", len(r.Instrumented))
	for _, f := range r.Failed {
		fmt.Fprintf(os.Stderr, "targetTracer: not instrumented: %s\n", f) // name: reason
	}
	for _, t := range r.Unmatched {
		fmt.Fprintf(os.Stderr, "targetTracer: no method matched %s\n", t)
	}
	return nil
}

// An Instrumenter wraps the methods its targets name with the Begin and
// End methods of a managed integration; the profiler forwards it the
// callbacks it needs.
func ExampleNew() {
	_ = profiler.Register("{8C1F4A2E-5B3D-4E6F-9A71-2D0C8B6E4F13}", &targetTracer{})
}
