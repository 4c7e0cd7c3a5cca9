package instr_test

import (
	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// helperDLL stands for the helper assembly's bytes, which a profiler
// embeds: //go:embed MyTracer.dll
var helperDLL []byte

type deliveringTracer struct {
	profiler.Base
	in *instr.Instrumenter
}

// Initialize delivers the helper assembly MyTracer (its Hooks.Begin and
// Hooks.End wrap every method of Shop.Orders) into the application, which
// neither references it nor has it on disk. The other callbacks are
// forwarded to the Instrumenter as in sample/autotrace.
func (p *deliveringTracer) Initialize(info *profiler.Info) error {
	targets, err := target.ParseList("Shop!Shop.Orders::*")
	if err != nil {
		return err
	}
	d, err := instr.NewDelivery(info, helperDLL)
	if err != nil {
		return err
	}
	cfg := instr.Config{Rules: []instr.Rule{{Targets: targets, Integration: instr.Integration{
		Assembly: metadata.AssemblyName{Name: "MyTracer", Version: metadata.Version{Major: 1}},
		Type:     "MyTracer.Hooks",
	}}}}
	d.Configure(&cfg)
	if p.in, err = instr.New(info, cfg); err != nil {
		return err
	}
	d.OnLoaded(p.in.HelperReady)
	return info.SetEventMask(p.in.EventMask())
}

// A profiler delivers its helper assemblies with a Delivery configured into
// the Instrumenter's Config (see docs/instrumentation.md).
func ExampleDelivery_Configure() {
	profiler.Register("{0F1E2D3C-4B5A-6978-8796-A5B4C3D2E1F0}", &deliveringTracer{})
}
