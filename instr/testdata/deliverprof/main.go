// Command deliverprof is the test profiler of instr's delivery: it delivers
// the helper assemblies named by DELIVER_HELPERS (a list of paths, separated
// by ':') and, once they are loaded, makes Program::Probe call
// DeliverHelper.Hooks::Hit at its entry. DELIVER_CORRUPT=1 delivers garbage
// instead of the first helper (the loader must fail without the app
// noticing). Test scaffolding only: it reads files, a real profiler embeds
// its helpers.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info    *profiler.Info
	d       *instr.Delivery
	rw      *ilrw.Rewriter
	probed  bool
	early   bool
	loadErr error
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
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
	d.OnLoaded(func() { fmt.Fprintln(os.Stderr, "deliverprof: OnLoaded ran") })
	p.rw = ilrw.NewRewriter(info, p.rewrite)
	return info.SetEventMask(profiler.MonitorJITCompilation | profiler.DisableInlining)
}

func (p *prof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	return p.rw.JITCompilationStarted(f)
}

func (p *prof) rewrite(m *ilrw.Method) (bool, error) {
	changed, err := p.d.Prepare(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "deliverprof: prepare:", err)
	}
	if changed {
		fmt.Fprintln(os.Stderr, "deliverprof: loader injected into", m.Name())
	}
	if m.Name() != "Program::Probe" {
		return changed, nil
	}
	if !p.d.Loaded() {
		p.early = true
		return changed, nil
	}
	hit, err := m.Module.ExternalMethod(metadata.AssemblyName{Name: "DeliverHelper"}, "DeliverHelper", "Hooks", "Hit",
		&metadata.MethodSig{Return: &metadata.Type{Kind: metadata.ElementTypeVoid}})
	if err != nil {
		return changed, err
	}
	p.probed = true
	return true, m.Body.InsertAtEntry(ilrw.IToken(ilrw.OpCall, hit))
}

func (p *prof) Shutdown() error {
	fmt.Fprintf(os.Stderr, "deliverprof: integration errors %v\n", p.d.IntegrationErrors())
	fmt.Fprintf(os.Stderr, "deliverprof: host=%s loaded=%v probed=%v early=%v err=%v\n", p.d.Host(), p.d.Loaded(), p.probed, p.early, p.d.Err())
	return nil
}

func init() { profiler.Register("{7A0C3D52-9B1E-4F6A-8C2D-5E4B3A291F07}", &prof{}) }

func main() {}
