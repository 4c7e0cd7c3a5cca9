// Command profiler is the transitions scenarios' profiler: with code
// transition events on and inlining off, the P/Invoke (the method named by
// TRANSITIONS_PINVOKE) must leave managed code once with reason CALL and
// come back once with RETURN, and the reverse P/Invoke (the method named by
// TRANSITIONS_REVERSE: the UnmanagedCallersOnly method, or "Invoke" of the
// delegate type for a marshalled delegate) must enter managed code once with
// CALL and leave it once with RETURN.
package main

import (
	"fmt"
	"os"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

// A pair is what was seen for one method in each direction (nil: nothing).
type pair struct{ toNative, toManaged *profiler.TransitionReason }

type transitions struct {
	profiler.Base
	info             *profiler.Info
	pinvoke, reverse string

	mu   sync.Mutex
	seen map[string]*pair
}

func (p *transitions) Initialize(info *profiler.Info) error {
	p.info = info
	p.pinvoke, p.reverse = os.Getenv("TRANSITIONS_PINVOKE"), os.Getenv("TRANSITIONS_REVERSE")
	if p.pinvoke == "" || p.reverse == "" || p.pinvoke == p.reverse {
		check.Failf("TRANSITIONS_PINVOKE (%q) and TRANSITIONS_REVERSE (%q) must name two methods", p.pinvoke, p.reverse)
	}
	p.seen = map[string]*pair{p.pinvoke: {}, p.reverse: {}}
	if err := info.SetEventMask(profiler.MonitorCodeTransitions | profiler.DisableInlining); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *transitions) record(f profiler.FunctionID, reason profiler.TransitionReason, toNative bool) {
	parts, err := p.info.FunctionNameParts(f)
	if err != nil {
		check.Failf("FunctionNameParts(%#x): %v", f, err)
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.seen[parts.Method]
	if pr == nil {
		return
	}
	slot, dir := &pr.toManaged, "unmanaged-to-managed"
	if toNative {
		slot, dir = &pr.toNative, "managed-to-unmanaged"
	}
	if *slot != nil {
		check.Failf("%s.%s: a second %s transition (%v after %v)", parts.Class, parts.Method, dir, reason, **slot)
	}
	*slot = &reason
}

func (p *transitions) ManagedToUnmanagedTransition(f profiler.FunctionID, reason profiler.TransitionReason) error {
	p.record(f, reason, true)
	return nil
}

func (p *transitions) UnmanagedToManagedTransition(f profiler.FunctionID, reason profiler.TransitionReason) error {
	p.record(f, reason, false)
	return nil
}

func (p *transitions) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	expect := func(method string, toNative, toManaged profiler.TransitionReason) {
		got := p.seen[method]
		if got == nil {
			return // reported at Initialize
		}
		if got.toNative == nil || *got.toNative != toNative || got.toManaged == nil || *got.toManaged != toManaged {
			final = append(final, fmt.Sprintf("%s: transitions (to native, to managed) are %s, %s; want %v, %v",
				method, show(got.toNative), show(got.toManaged), toNative, toManaged))
		}
	}
	// A P/Invoke leaves managed code with CALL and comes back with RETURN;
	// a reverse P/Invoke enters managed code with CALL and leaves with RETURN.
	expect(p.pinvoke, profiler.TransitionCall, profiler.TransitionReturn)
	expect(p.reverse, profiler.TransitionReturn, profiler.TransitionCall)
	check.Done(final...)
	return nil
}

func show(r *profiler.TransitionReason) string {
	if r == nil {
		return "none"
	}
	return r.String()
}

func init() {
	profiler.Register("{8C3B6F0E-2D4A-4E59-B1C7-3A9E5D7F1B02}", &transitions{})
}

func main() {}
