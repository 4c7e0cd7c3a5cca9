// Command profiler is the inlining scenario's profiler: with JIT events and
// the WithInfo ELT hooks on, it answers JITInlining for the callee Inlinee
// with yes when the caller is Inlining and with no when it is
// BlockInlining (and leaves NoResponse to the JIT). A call of Inlinee seen
// through ELT while Inlining or NoResponse runs means it was not inlined
// there (a failure); one while BlockInlining runs must be seen, since the
// profiler refused the inlining.
package main

import (
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

type inlining struct {
	profiler.Base
	info *profiler.Info

	mu             sync.Mutex
	inside         map[string]bool // the callers being run
	sawBlockedCall bool
	asked          map[string]bool // callers JITInlining was asked about for Inlinee
}

func (p *inlining) Initialize(info *profiler.Info) error {
	p.info = info
	p.inside, p.asked = map[string]bool{}, map[string]bool{}
	if err := info.SetEventMask(profiler.MonitorJITCompilation); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	err := elt.EnableWithInfo(info, elt.CallOptions{
		Call:   p.hook,
		Filter: func(f profiler.FunctionID) bool { return p.method(f) != "" },
		Args:   true, Return: true, Frame: true,
	})
	if err != nil {
		check.Failf("elt.EnableWithInfo: %v", err)
	}
	return err
}

// method is the bare name of f if it is the app's, else "".
func (p *inlining) method(f profiler.FunctionID) string {
	parts, err := p.info.FunctionNameParts(f)
	if err != nil || parts.Class != "InliningApp" {
		return ""
	}
	return parts.Method
}

func (p *inlining) hook(c *elt.Call) {
	m := p.method(c.Function)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch m {
	case "Inlining", "BlockInlining", "NoResponse":
		p.inside[m] = c.Kind == elt.Enter
	case "Inlinee":
		if c.Kind != elt.Enter {
			return
		}
		if p.inside["Inlining"] || p.inside["NoResponse"] {
			check.Failf("Inlinee was called, not inlined, from %v", p.inside)
		}
		if p.inside["BlockInlining"] {
			p.sawBlockedCall = true
		}
	}
}

func (p *inlining) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	if p.method(callee) != "Inlinee" {
		return true, nil
	}
	c := p.method(caller)
	p.mu.Lock()
	p.asked[c] = true
	p.mu.Unlock()
	return c != "BlockInlining", nil
}

func (p *inlining) Shutdown() error {
	elt.DisableWithInfo()
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	if !p.sawBlockedCall {
		final = append(final, "Inlinee was never called from BlockInlining: the refused inlining was not honoured")
	}
	if !p.asked["Inlining"] || !p.asked["BlockInlining"] {
		final = append(final, "JITInlining was not asked about Inlinee in both Inlining and BlockInlining")
	}
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{9A5C3E17-2B8D-4F61-B7A4-0E6D8C1F2B07}", &inlining{})
}

func main() {}
