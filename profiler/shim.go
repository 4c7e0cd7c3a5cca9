package profiler

/*
// -z now: every symbol the library uses is bound when it is loaded, none
// lazily on its first call. The SIGSEGV router (signals.c) calls memcpy
// inside a signal handler, and a lazy binding there ran the dynamic
// linker's resolver in the handler: one storm run crashed in _dl_fixup
// that way (/work/evidence/issue28-storm-perf-crashes.md, crash 1).
#cgo LDFLAGS: -ldl -Wl,-z,now
*/
import "C"

import (
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/clrprof/clrprof/internal/comobj"
	"github.com/clrprof/clrprof/internal/sigguard"
	"github.com/google/uuid"
)

// This file holds the methods of objectHost that the hand-written C of the
// profiler object (internal/comobj's object.c) calls through comobj's
// exports (the generated callback methods live in callbacks_gen.go). Each
// one recovers panics: nothing may unwind into C.

func init() { comobj.SetHost(objectHost{}) }

// recoverExport is deferred by the exports below: it logs a panic and runs
// onPanic (which sets the export's failure result).
func recoverExport(where string, onPanic func()) {
	if r := recover(); r != nil {
		reportPanic(where, r, debug.Stack())
		if onPanic != nil {
			onPanic()
		}
	}
}

// MatchCLSID is called by DllGetClassObject (its first call into Go also
// waits for the Go runtime to finish initialising). It reports whether got,
// the class the runtime asks for (given is false if it passed none), is the
// CLSID given to Register, and logs why not.
func (objectHost) MatchCLSID(got uuid.UUID, given bool) (ok bool) {
	defer recoverExport("DllGetClassObject", func() { ok = false })
	logLoadOnce()
	r := registered.Load()
	if r == nil {
		logger().Error("DllGetClassObject: no profiler registered; call profiler.Register from an init function of the main package")
		return false
	}
	if !given {
		logger().Warn("DllGetClassObject: the runtime passed no CLSID")
		return false
	}
	if got != r.clsid {
		logger().Warn("DllGetClassObject: the runtime asked for a class this library does not provide; check CORECLR_PROFILER",
			"requested", guidString(got), "registered", guidString(r.clsid))
		return false
	}
	logger().Debug("DllGetClassObject", "clsid", guidString(got))
	return true
}

var loadLogged atomic.Bool

func logLoadOnce() {
	if loadLogged.CompareAndSwap(false, true) {
		info, _ := debug.ReadBuildInfo()
		mod := ""
		if info != nil {
			mod = info.Main.Path
		}
		logger().Debug("loaded", "go", runtime.Version(), "main", mod, "gomaxprocs", runtime.GOMAXPROCS(0))
	}
}

// NewObject is called by the class factory's CreateInstance: it makes a
// dispatcher for the registered profiler and returns its handle, or 0 if
// nothing is registered.
func (objectHost) NewObject() (h uintptr) {
	defer recoverExport("CreateInstance", func() { h = 0 })
	r := registered.Load()
	if r == nil {
		logger().Error("CreateInstance: no profiler registered")
		return 0
	}
	d, err := newDispatcher(r)
	if err != nil {
		logger().Error("CreateInstance: no profiler object", "err", err)
		return 0
	}
	h = uintptr(cgo.NewHandle(d))
	logger().Debug("profiler object created", "handle", h)
	return h
}

// ObjectReleased is called when the runtime releases the last reference to
// a profiler object: the handle is deleted.
func (objectHost) ObjectReleased(h uintptr) {
	defer recoverExport("Release", nil)
	d := lookupDispatcher(h)
	if d == nil {
		logger().Warn("Release: unknown profiler object handle", "handle", h)
		return
	}
	cgo.Handle(h).Delete()
	logger().Debug("profiler object released", "handle", h)
	notifyReleased(d)
}

// signalRecord is what the signal audit saw for one signal that had a
// handler other than SIG_DFL when the runtime first asked for the profiler.
type signalRecord = sigguard.Record

var lastAudit atomic.Pointer[[]signalRecord]

// SignalAudit receives the records of the signal audit (run once, from the
// first DllGetClassObject) and logs them: at INFO what was changed, at
// DEBUG every handler seen, at WARN anything unexpected.
func (objectHost) SignalAudit(recs unsafe.Pointer, n int, activation int) {
	defer recoverExport("signal audit", nil)
	out := sigguard.Records(recs, n)
	lastAudit.Store(&out)
	logSignalAudit(out, activation)
}

func logSignalAudit(recs []signalRecord, activation int) {
	log := logger()
	sawActivation := false
	var onstack []string
	for _, r := range recs {
		attrs := []any{"signal", signalName(r.Sig, activation), "handler", handlerString(r), "flags", saFlagsString(r.Flags)}
		if r.Sig == activation && !r.Ignored {
			sawActivation = true
		}
		switch r.Action {
		case sigguard.Restored:
			log.Info("signal audit: gave a handler its flags back (cleared the SA_ONSTACK the Go runtime added)",
				append(attrs, "newFlags", saFlagsString(r.NewFlags))...)
			continue
		case sigguard.Reclaimed:
			log.Info("signal audit: gave the signal back to the runtime's handler (Go forwards it from its alternate signal stack with most signals blocked)",
				append(attrs, "newFlags", saFlagsString(r.NewFlags))...)
			continue
		case sigguard.Routed:
			log.Info("signal audit: routed the signal: faults in this library to Go's handler, all others straight to the runtime's with its own mask",
				append(attrs, "newFlags", saFlagsString(r.NewFlags))...)
			continue
		case sigguard.Failed:
			log.Error("signal audit: could not give a handler its flags back; it may run on the small alternate signal stack",
				append(attrs, "errno", r.Errno)...)
			continue
		case sigguard.Skipped:
			log.Warn("signal audit: the activation signal is handled by this library itself; left alone", attrs...)
			continue
		}
		if !r.Ignored && !r.Own && r.Flags&sigguard.SAOnStack() != 0 {
			onstack = append(onstack, signalName(r.Sig, activation))
		}
		log.Debug("signal audit: seen", attrs...)
	}
	if !sawActivation {
		log.Info("signal audit: no handler for the activation signal", "signal", signalName(activation, activation))
	}
	log.Debug("signal audit: done", "handlers", len(recs), "foreignWithSA_ONSTACK", strings.Join(onstack, ","))
}

func handlerString(r signalRecord) string {
	if r.Ignored {
		return "SIG_IGN"
	}
	s := fmt.Sprintf("%#x", r.Handler)
	if r.Symbol != "" {
		s += " " + r.Symbol
	}
	if r.Owner != "" {
		s += " in " + r.Owner
	}
	if r.Own {
		s += " (this library)"
	}
	return s
}

// saFlagsString renders sa_flags symbolically (Linux values).
func saFlagsString(f int) string {
	names := []struct {
		bit  int
		name string
	}{
		{0x00000001, "SA_NOCLDSTOP"},
		{0x00000002, "SA_NOCLDWAIT"},
		{0x00000004, "SA_SIGINFO"},
		{0x04000000, "SA_RESTORER"},
		{0x08000000, "SA_ONSTACK"},
		{0x10000000, "SA_RESTART"},
		{0x40000000, "SA_NODEFER"},
		{-0x80000000, "SA_RESETHAND"},
	}
	var parts []string
	rest := f
	for _, n := range names {
		if f&n.bit != 0 {
			parts = append(parts, n.name)
			rest &^= n.bit
		}
	}
	if rest != 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%#x", uint32(rest)))
	}
	return strings.Join(parts, "|")
}

var signalNames = [...]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS",
	8: "SIGFPE", 9: "SIGKILL", 10: "SIGUSR1", 11: "SIGSEGV", 12: "SIGUSR2", 13: "SIGPIPE",
	14: "SIGALRM", 15: "SIGTERM", 16: "SIGSTKFLT", 17: "SIGCHLD", 18: "SIGCONT", 19: "SIGSTOP",
	20: "SIGTSTP", 21: "SIGTTIN", 22: "SIGTTOU", 23: "SIGURG", 24: "SIGXCPU", 25: "SIGXFSZ",
	26: "SIGVTALRM", 27: "SIGPROF", 28: "SIGWINCH", 29: "SIGIO", 30: "SIGPWR", 31: "SIGSYS",
}

// signalName names sig; real-time signals are named relative to rtmin
// (SIGRTMIN as the C library defines it).
func signalName(sig, rtmin int) string {
	if sig > 0 && sig < len(signalNames) && signalNames[sig] != "" {
		return signalNames[sig]
	}
	if sig == rtmin {
		return fmt.Sprintf("SIGRTMIN(%d)", sig)
	}
	if sig > rtmin {
		return fmt.Sprintf("SIGRTMIN+%d(%d)", sig-rtmin, sig)
	}
	return fmt.Sprintf("signal %d", sig)
}

// setImpl tells the C thunk of slot whether to call into Go.
func setImpl(slot int, on bool) { comobj.SetImpl(slot, on) }

func getImpl(slot int) bool { return comobj.Impl(slot) }

func guidString(u uuid.UUID) string { return "{" + strings.ToUpper(u.String()) + "}" }
