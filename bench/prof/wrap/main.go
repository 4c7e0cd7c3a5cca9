// Command wrap is the benchmark profiler of package instr: it wraps the
// methods BENCH_WRAP_TARGETS names (default wrap!Program::Add, the hot
// method of bench/workloads/wrap.cs) with an empty integration
// (Hooks.cs, compiled by go generate into the committed BenchWrap.dll and
// delivered by instr), or with the integration type BENCH_WRAP_TYPE names
// (BenchWrap.CountingHooks for bench/workloads/async.cs), and prints at
// Shutdown how many methods it wrapped.
package main

//go:generate go run github.com/clrprof/clrprof/internal/cmd/csgen -out BenchWrap.dll Hooks.cs

import (
	_ "embed"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

//go:embed BenchWrap.dll
var helper []byte

type prof struct {
	profiler.Base
	in *instr.Instrumenter
	d  *instr.Delivery
}

func (p *prof) Initialize(info *profiler.Info) error {
	spec := os.Getenv("BENCH_WRAP_TARGETS")
	if spec == "" {
		spec = "wrap!Program::Add"
	}
	targets, err := target.ParseList(spec)
	if err != nil {
		return err
	}
	typ := os.Getenv("BENCH_WRAP_TYPE")
	if typ == "" {
		typ = "BenchWrap.Hooks"
	}
	if p.d, err = instr.NewDelivery(info, helper); err != nil {
		return err
	}
	cfg := instr.Config{Rules: []instr.Rule{{Targets: targets, Integration: instr.Integration{
		Assembly: metadata.AssemblyName{Name: "BenchWrap", Version: metadata.Version{Major: 1}},
		Type:     typ}}}}
	p.d.Configure(&cfg)
	if p.in, err = instr.New(info, cfg); err != nil {
		return err
	}
	p.d.OnLoaded(p.in.HelperReady)
	return info.SetEventMask(p.in.EventMask())
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
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

func (p *prof) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, tok, f, hr)
}

func (p *prof) Shutdown() error {
	r := p.in.Report()
	fmt.Fprintf(os.Stderr, "gowrap: Shutdown instrumented=%d failed=%d delivered=%v\n", len(r.Instrumented), len(r.Failed), p.d.Loaded())
	return nil
}

func init() { profiler.Register("{6E2B8D41-9C3A-4F57-8B16-3D5A7C9E2F48}", &prof{}) }

func main() {}
