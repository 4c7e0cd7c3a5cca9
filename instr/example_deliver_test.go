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

type attachingTracer struct {
	profiler.Base
	in *instr.Instrumenter
}

// InitializeForAttach runs when the profiler is attached to a running
// application (diag.AttachProfiler, .NET Core 3.0 and later): the same
// Delivery and Config as at start-up.
func (p *attachingTracer) InitializeForAttach(info *profiler.Info, _ []byte) error {
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
	return info.SetAttachEventMask(p.in.EventMask(), 0)
}

// ProfilerAttachComplete instruments what is already loaded, on a
// goroutine (never from a callback). The application compiled its methods
// before the attach, so the Delivery hosts its loader in the targets
// through ReJIT: their next call loads the helper, the calls after it are
// wrapped. The other callbacks are forwarded as in sample/autotrace.
func (p *attachingTracer) ProfilerAttachComplete() error {
	go func() { _ = p.in.InstrumentLoaded() }()
	return nil
}

// An attached profiler delivers its helper assemblies too (see
// docs/instrumentation.md, "Delivery after an attach").
func ExampleInstrumenter_InstrumentLoaded() {
	profiler.Register("{6B5A4938-2716-4F5E-8D3C-2B1A0F9E8D7C}", &attachingTracer{})
}
