// Command attachprof is the profiler of package diag's integration tests: a
// profiler meant to be attached to a running process. Everything it does
// is printed to the target's stderr as "attachprof: ..." lines.
//
// The client data is a list of words separated by spaces (anything after a
// NUL byte is ignored, but printed):
//
//	jit       watch JIT compilations (the default); when a method named
//	          DetachMarker* is compiled, ask to be detached
//	probe     try every event mask flag alone with SetEventMask and compare
//	          the runtime's verdict with profiler.CheckAttachMask
//	badmask   ask for MonitorEnterLeave with SetAttachEventMask, report the
//	          errors, and refuse to attach with that error
//	fail      refuse to attach (InitializeForAttach returns E_ACCESSDENIED)
//	after=D   also ask to be detached D (a Go duration) after
//	          ProfilerAttachComplete
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type attachprof struct {
	profiler.Base
	attaches atomic.Int64
	mu       sync.Mutex
	cur      *session
}

// session is the state of one attach.
type session struct {
	n        int64
	info     *profiler.Info
	jits     atomic.Int64
	detached atomic.Bool
	after    time.Duration // detach this long after ProfilerAttachComplete
	mu       sync.Mutex
	seen     []string // Phase*/DetachMarker* methods compiled
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "attachprof: "+format+"\n", args...)
}

func (p *attachprof) Initialize(info *profiler.Info) error {
	logf("Initialize: loaded at startup; this profiler is for attaching")
	return profiler.CORPROF_E_PROFILER_CANCEL_ACTIVATION
}

func (p *attachprof) InitializeForAttach(info *profiler.Info, clientData []byte) error {
	n := p.attaches.Add(1)
	words, _, _ := strings.Cut(string(clientData), "\x00")
	ri, err := info.GetRuntimeInformation()
	if err != nil {
		logf("GetRuntimeInformation: %v", err)
	}
	major, _ := info.RuntimeMajor()
	logf("InitializeForAttach n=%d info=%d data=%q runtime=%d.%d.%d.%d %q major=%d", n, info.Version(), clientData,
		ri.MajorVersion, ri.MinorVersion, ri.BuildNumber, ri.QfeVersion, ri.VersionString, major)
	mode := strings.Fields(words)
	has := func(w string) bool {
		for _, m := range mode {
			if m == w {
				return true
			}
		}
		return false
	}
	switch {
	case has("fail"):
		logf("refusing to attach")
		return profiler.E_ACCESSDENIED
	case has("badmask"):
		err := info.SetAttachEventMask(profiler.MonitorJITCompilation|profiler.MonitorEnterLeave, 0)
		var me *profiler.AttachMaskError
		logf("badmask: SetAttachEventMask: %v", err)
		logf("badmask: is=%v as=%v low=%v", errors.Is(err, profiler.CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER), errors.As(err, &me), me.Low)
		logf("badmask: SetEventMask: %v", info.SetEventMask(profiler.MonitorJITCompilation|profiler.MonitorEnterLeave))
		return err
	case has("probe"):
		probe(info, major)
	}
	s := &session{n: n, info: info}
	p.mu.Lock()
	p.cur = s
	p.mu.Unlock()
	if err := info.SetAttachEventMask(profiler.MonitorJITCompilation, 0); err != nil {
		logf("SetAttachEventMask: %v", err)
		return err
	}
	for _, m := range mode {
		if v, ok := strings.CutPrefix(m, "after="); ok {
			d, err := time.ParseDuration(v)
			if err != nil {
				return err
			}
			s.after = d
		}
	}
	return nil
}

// probe sets each flag alone and compares the runtime's verdict with
// CheckAttachMask; it leaves the mask empty. The runtime refuses a flag an
// attached profiler may not set with CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER,
// or with E_FAIL for the immutable ones (checked first).
func probe(info *profiler.Info, major int) {
	var mismatches, refusedLow, refusedHigh, acceptedLow, acceptedHigh uint64
	for bit := 0; bit < 32; bit++ {
		m := profiler.Monitor(1) << bit
		err := info.SetEventMask(m)
		runtimeSays := err != nil
		helperSays := profiler.CheckAttachMask(major, m, 0) != nil
		if runtimeSays {
			refusedLow |= uint64(m)
		} else {
			acceptedLow |= uint64(m)
		}
		if runtimeSays != helperSays {
			mismatches++
			logf("probe: MISMATCH low %v: runtime %v, CheckAttachMask refuses=%v", m, err, helperSays)
		}
		_ = info.SetEventMask(0)
	}
	if info.Version() >= 5 {
		for bit := 0; bit < 32; bit++ {
			h := profiler.HighMonitor(1) << bit
			err := info.SetEventMask2(0, h)
			runtimeSays := err != nil
			helperSays := profiler.CheckAttachMask(major, 0, h) != nil
			if runtimeSays {
				refusedHigh |= uint64(h)
			} else {
				acceptedHigh |= uint64(h)
			}
			if runtimeSays != helperSays {
				mismatches++
				logf("probe: MISMATCH high %v: runtime %v, CheckAttachMask refuses=%v", h, err, helperSays)
			}
			_ = info.SetEventMask2(0, 0)
		}
	}
	logf("probe: acceptedLow=%#x refusedLow=%#x acceptedHigh=%#x refusedHigh=%#x mismatches=%d", acceptedLow, refusedLow, acceptedHigh, refusedHigh, mismatches)
}

func (p *attachprof) session() *session {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cur
}

func (p *attachprof) ProfilerAttachComplete() error {
	s := p.session()
	if s == nil {
		return nil
	}
	logf("ProfilerAttachComplete n=%d", s.n)
	if s.after > 0 {
		time.AfterFunc(s.after, func() {
			if s.detached.CompareAndSwap(false, true) {
				logf("RequestDetach n=%d: %v", s.n, <-s.info.RequestDetach(10*time.Millisecond))
			}
		})
	}
	return nil
}

func (p *attachprof) JITCompilationStarted(id profiler.FunctionID, _ bool) error {
	s := p.session()
	if s == nil {
		return nil
	}
	s.jits.Add(1)
	name := methodName(s.info, id)
	if strings.HasPrefix(name, "Phase") || strings.HasPrefix(name, "DetachMarker") {
		s.mu.Lock()
		s.seen = append(s.seen, name)
		s.mu.Unlock()
		logf("JITCompilationStarted n=%d %s", s.n, name)
	}
	if strings.HasPrefix(name, "DetachMarker") && s.detached.CompareAndSwap(false, true) {
		// From inside a callback: RequestDetach makes the call on a
		// goroutine, where the runtime allows it.
		ch := s.info.RequestDetach(50 * time.Millisecond)
		go func() {
			err := <-ch
			logf("RequestDetach n=%d: %v", s.n, err)
		}()
	}
	return nil
}

func methodName(info *profiler.Info, id profiler.FunctionID) string {
	imp, tok, err := info.FunctionImport(id)
	if err != nil {
		return ""
	}
	defer imp.Release()
	props, err := imp.GetMethodProps(tok)
	if err != nil {
		return ""
	}
	return props.Method
}

func (p *attachprof) ProfilerDetachSucceeded() error {
	s := p.session()
	if s == nil {
		logf("ProfilerDetachSucceeded without a session")
		return nil
	}
	s.mu.Lock()
	seen := strings.Join(s.seen, ",")
	s.mu.Unlock()
	logf("ProfilerDetachSucceeded n=%d jits=%d seen=%s", s.n, s.jits.Load(), seen)
	p.mu.Lock()
	p.cur = nil
	p.mu.Unlock()
	return nil
}

func (p *attachprof) Shutdown() error {
	if s := p.session(); s != nil {
		logf("Shutdown n=%d jits=%d", s.n, s.jits.Load())
	}
	return nil
}

func init() {
	profiler.Register("{9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D}", &attachprof{})
}

func main() {}
