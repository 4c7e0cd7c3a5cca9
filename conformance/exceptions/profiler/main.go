// Command profiler is the exceptions scenario's profiler: with exception
// events on and inlining off, it writes down every exception callback, with
// the bare name of the method it is about, and at shutdown compares that
// sequence with the one the test expects (environment variable
// EXCEPTIONS_EXPECTED, one callback a line).
package main

import (
	"os"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type exceptions struct {
	profiler.Base
	info *profiler.Info

	mu  sync.Mutex
	seq []string
}

func (p *exceptions) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask(profiler.MonitorExceptions | profiler.DisableInlining); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *exceptions) note(event string, f profiler.FunctionID) {
	if f != 0 {
		parts, err := p.info.FunctionNameParts(f)
		if err != nil {
			check.Failf("%s: FunctionNameParts(%#x): %v", event, f, err)
		}
		event += ": " + parts.Method
	}
	p.mu.Lock()
	p.seq = append(p.seq, event)
	p.mu.Unlock()
}

func (p *exceptions) ExceptionThrown(profiler.ObjectID) error {
	p.note("ExceptionThrown", 0)
	return nil
}

func (p *exceptions) ExceptionSearchFunctionEnter(f profiler.FunctionID) error {
	p.note("ExceptionSearchFunctionEnter", f)
	return nil
}

func (p *exceptions) ExceptionSearchFunctionLeave() error {
	p.note("ExceptionSearchFunctionLeave", 0)
	return nil
}

func (p *exceptions) ExceptionSearchFilterEnter(f profiler.FunctionID) error {
	p.note("ExceptionSearchFilterEnter", f)
	return nil
}

func (p *exceptions) ExceptionSearchFilterLeave() error {
	p.note("ExceptionSearchFilterLeave", 0)
	return nil
}

func (p *exceptions) ExceptionSearchCatcherFound(f profiler.FunctionID) error {
	p.note("ExceptionSearchCatcherFound", f)
	return nil
}

func (p *exceptions) ExceptionUnwindFunctionEnter(f profiler.FunctionID) error {
	p.note("ExceptionUnwindFunctionEnter", f)
	return nil
}

func (p *exceptions) ExceptionUnwindFunctionLeave() error {
	p.note("ExceptionUnwindFunctionLeave", 0)
	return nil
}

func (p *exceptions) ExceptionUnwindFinallyEnter(f profiler.FunctionID) error {
	p.note("ExceptionUnwindFinallyEnter", f)
	return nil
}

func (p *exceptions) ExceptionUnwindFinallyLeave() error {
	p.note("ExceptionUnwindFinallyLeave", 0)
	return nil
}

func (p *exceptions) ExceptionCatcherEnter(f profiler.FunctionID, _ profiler.ObjectID) error {
	p.note("ExceptionCatcherEnter", f)
	return nil
}

func (p *exceptions) ExceptionCatcherLeave() error {
	p.note("ExceptionCatcherLeave", 0)
	return nil
}

func (p *exceptions) Shutdown() error {
	want := strings.TrimSpace(os.Getenv("EXCEPTIONS_EXPECTED"))
	p.mu.Lock()
	got := strings.Join(p.seq, "\n")
	p.mu.Unlock()
	final := ""
	switch {
	case want == "":
		final = "EXCEPTIONS_EXPECTED is not set"
	case got != want:
		final = "the exception callbacks came in another sequence\nwant:\n" + want + "\ngot:\n" + got
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{5E0E5A51-3C1B-4A7E-9D0B-1F6A8C2E4B01}", &exceptions{})
}

func main() {}
