//go:build cgo

package instr_test

import (
	"fmt"
	"os"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// goTracer times the calls of Shop.Orders::Price with hooks written in Go:
// no helper assembly, nothing to deliver.
type goTracer struct {
	profiler.Base
	in *instr.Instrumenter
}

func (p *goTracer) Initialize(info *profiler.Info) error {
	targets, err := target.ParseList("Shop!Shop.Orders::Price(System.Int32)")
	if err != nil {
		return err
	}
	hooks := &instr.GoHooks{
		Args: true, // Enter receives the int argument
		Enter: func(c *instr.Call) uint64 {
			return uint64(time.Now().UnixNano()) // handed to Exit as State
		},
		Exit: func(r *instr.Return) {
			d := time.Duration(time.Now().UnixNano() - int64(r.State()))
			if r.Exception() {
				fmt.Fprintf(os.Stderr, "Price threw %s after %v\n", r.ExceptionType(), d)
				return
			}
			fmt.Fprintf(os.Stderr, "Price returned %s in %v (thread %d)\n", r.Value(), d, r.Thread())
		},
	}
	if p.in, err = instr.New(info, instr.Config{Rules: []instr.Rule{{Targets: targets, Go: hooks}}}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

func (p *goTracer) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
}

func (p *goTracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *goTracer) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *goTracer) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

// Rule.Go makes a target's wrap call Go functions of the profiler library
// (through a P/Invoke the SDK defines in the target's module) instead of
// a managed integration.
func ExampleGoHooks() {
	_ = profiler.Register("{2A6D9C13-7E4F-4B58-91C2-6F3E8D5A7B04}", &goTracer{})
}
