// Command profiler is the elttransitions scenario's profiler: with both the
// WithInfo ELT hooks and code transition events on, the P/Invoke (named by
// TRANSITIONS_PINVOKE) must be reported by its transitions only (CALL to
// native code, RETURN back) and never through an ELT hook, while the
// managed target of the reverse P/Invoke (TRANSITIONS_REVERSE_TARGET) is
// ordinary JIT-compiled code and must be entered through ELT.
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

type elttransitions struct {
	profiler.Base
	info            *profiler.Info
	pinvoke, target string

	mu                   sync.Mutex
	pinvokeELT, targetIn int
	toNative, toManaged  []profiler.TransitionReason
}

func (p *elttransitions) Initialize(info *profiler.Info) error {
	p.info = info
	p.pinvoke, p.target = os.Getenv("TRANSITIONS_PINVOKE"), os.Getenv("TRANSITIONS_REVERSE_TARGET")
	if p.pinvoke == "" || p.target == "" {
		check.Failf("TRANSITIONS_PINVOKE and TRANSITIONS_REVERSE_TARGET must be set")
	}
	if err := info.SetEventMask(profiler.MonitorCodeTransitions | profiler.DisableInlining); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	// elt.EnableWithInfo adds the enter/leave and WithInfo flags to the mask.
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

// method is the bare name of f if it belongs to the app's class, else "".
func (p *elttransitions) method(f profiler.FunctionID) string {
	parts, err := p.info.FunctionNameParts(f)
	if err != nil || parts.Class != "TransitionsApp" {
		return ""
	}
	return parts.Method
}

func (p *elttransitions) hook(c *elt.Call) {
	m := p.method(c.Function)
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case m == p.pinvoke:
		p.pinvokeELT++
	case m == p.target && c.Kind == elt.Enter:
		p.targetIn++
	}
}

func (p *elttransitions) ManagedToUnmanagedTransition(f profiler.FunctionID, reason profiler.TransitionReason) error {
	if p.method(f) == p.pinvoke {
		p.mu.Lock()
		p.toNative = append(p.toNative, reason)
		p.mu.Unlock()
	}
	return nil
}

func (p *elttransitions) UnmanagedToManagedTransition(f profiler.FunctionID, reason profiler.TransitionReason) error {
	if p.method(f) == p.pinvoke {
		p.mu.Lock()
		p.toManaged = append(p.toManaged, reason)
		p.mu.Unlock()
	}
	return nil
}

func (p *elttransitions) Shutdown() error {
	elt.DisableWithInfo()
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	if len(p.toNative) != 1 || p.toNative[0] != profiler.TransitionCall || len(p.toManaged) != 1 || p.toManaged[0] != profiler.TransitionReturn {
		final = append(final, fmt.Sprintf("%s: transitions to native %v and back %v, want [TransitionCall] and [TransitionReturn]", p.pinvoke, p.toNative, p.toManaged))
	}
	if p.pinvokeELT != 0 {
		final = append(final, fmt.Sprintf("%s: the P/Invoke was reported through ELT %d times, want never", p.pinvoke, p.pinvokeELT))
	}
	if p.targetIn == 0 {
		final = append(final, fmt.Sprintf("%s: the reverse P/Invoke's managed target was never entered through ELT", p.target))
	}
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{B4E81D27-6C3A-4F90-8E15-9D2A7C6B3E05}", &elttransitions{})
}

func main() {}
