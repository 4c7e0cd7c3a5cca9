// Command deliverprof is the test profiler of instr's delivery: it delivers
// the helper assemblies named by DELIVER_HELPERS (a list of paths, separated
// by ':'), and once they are loaded makes Program::Probe call
// DeliverHelper.Hooks::Hit at its entry; through an Instrumenter it wraps
// Program::Main (the loader's host: instrumented later, by ReJIT) and
// Program::Thrower with DeliverHelper.Throwing, whose Begin and End throw.
// DELIVER_CORRUPT=1 delivers garbage instead of the first helper (the
// loader must fail without the app noticing). Test scaffolding only: it
// reads files, a real profiler embeds its helpers.
package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	d      *instr.Delivery
	in     *instr.Instrumenter
	probed bool
	early  bool
	// onLoaded is closed when the OnLoaded callback has run: it runs on
	// its own goroutine, which a short app can outpace to Shutdown.
	onLoaded chan struct{}
}

var helperAsm = metadata.AssemblyName{Name: "DeliverHelper", Version: metadata.Version{Major: 3, Minor: 1}}

func (p *prof) Initialize(info *profiler.Info) error {
	var blobs [][]byte
	for _, f := range strings.Split(os.Getenv("DELIVER_HELPERS"), ":") {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		blobs = append(blobs, b)
	}
	if os.Getenv("DELIVER_CORRUPT") == "1" && len(blobs) > 0 {
		blobs[0] = []byte("MZ not an assembly")
	}
	d, err := instr.NewDelivery(info, blobs...)
	if err != nil {
		return err
	}
	p.d = d
	targets, err := target.ParseList("app!Program::Main,app!Program::Thrower")
	if err != nil {
		return err
	}
	cfg := instr.Config{
		Rules:   []instr.Rule{{Targets: targets, Integration: instr.Integration{Assembly: helperAsm, Type: "DeliverHelper.Throwing"}}},
		Prepare: p.probe,
	}
	d.Configure(&cfg)
	if p.in, err = instr.New(info, cfg); err != nil {
		return err
	}
	p.onLoaded = make(chan struct{})
	d.OnLoaded(func() {
		fmt.Fprintln(os.Stderr, "deliverprof: OnLoaded ran")
		p.in.HelperReady()
		close(p.onLoaded)
	})
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

// probe runs after the delivery's Prepare (Configure chains them).
func (p *prof) probe(m *ilrw.Method) (bool, error) {
	if p.d.Host() != "" && m.Name() == "Program::Main" {
		fmt.Fprintln(os.Stderr, "deliverprof: loader injected into", p.d.Host())
	}
	if m.Name() != "Program::Probe" {
		return false, nil
	}
	if !p.d.Loaded() {
		p.early = true
		return false, nil
	}
	hit, err := m.Module.ExternalMethod(helperAsm, "DeliverHelper", "Hooks", "Hit",
		&metadata.MethodSig{Return: &metadata.Type{Kind: metadata.ElementTypeVoid}})
	if err != nil {
		return false, err
	}
	p.probed = true
	return true, m.Body.InsertAtEntry(ilrw.IToken(ilrw.OpCall, hit))
}

func (p *prof) Shutdown() error {
	if p.d.Loaded() {
		select {
		case <-p.onLoaded:
		case <-time.After(10 * time.Second):
			fmt.Fprintln(os.Stderr, "deliverprof: the helpers loaded but OnLoaded did not run within 10 s")
		}
	}
	for _, e := range p.d.IntegrationErrors() {
		name := fmt.Sprintf("id %d", e.ID)
		if m, ok := p.in.Method(e.ID); ok {
			name = m.Name
		}
		fmt.Fprintf(os.Stderr, "deliverprof: integration error %s count=%d type=%s\n", name, e.Count, e.Type)
	}
	r := p.in.Report()
	var inst, pend []string
	for _, m := range r.Instrumented {
		inst = append(inst, m.Name)
	}
	for _, m := range r.Pending {
		pend = append(pend, m.Name)
	}
	fmt.Fprintf(os.Stderr, "deliverprof: instrumented=%v pending=%v failed=%v\n", inst, pend, r.Failed)
	fmt.Fprintf(os.Stderr, "deliverprof: host=%s loaded=%v probed=%v early=%v err=%v\n", p.d.Host(), p.d.Loaded(), p.probed, p.early, p.d.Err())
	return nil
}

func init() { profiler.Register("{7A0C3D52-9B1E-4F6A-8C2D-5E4B3A291F07}", &prof{}) }

func main() {}
