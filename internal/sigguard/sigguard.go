// Package sigguard owns the C that keeps a Go runtime and CoreCLR's signal
// handling apart in one process (docs/internals.md, "Signals"): the
// snapshot of the host's handlers taken before the Go runtime starts and
// the environment checks made then, the signal audit, the SIGSEGV router
// with each thread's private stack (signals.c, signals_linux_amd64.S), and
// the guard around every call from C into Go on a runtime thread with its
// _cgo_bindm hook (guard.c).
//
// Its C calls no Go. The C of other packages reaches it through
// internal/include/guard.h and internal/include/signals.h (hidden symbols,
// resolved inside the one shared library); their Go reaches it through
// the functions here: what the audit recorded, what the router and the
// guard counted, what the environment checks found.
package sigguard

/*
#cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
// -ldl: dladdr, dlsym and dlopen (signals.c). -z now: every symbol the
// library uses is bound when it is loaded, none lazily on its first call.
// The SIGSEGV router calls memcpy inside a signal handler, and a lazy
// binding there ran the dynamic linker's resolver in the handler: one storm
// run crashed in _dl_fixup that way
// (/work/evidence/issue28-storm-perf-crashes.md, crash 1).
#cgo LDFLAGS: -ldl -Wl,-z,now
#include "signals.h"
#include "guard.h"
*/
import "C"

import "unsafe"

// What the audit did with one signal (Record.Action).
const (
	Seen      = int(C.CLRPROF_SIG_SEEN)      // recorded, left alone
	Restored  = int(C.CLRPROF_SIG_RESTORED)  // SA_ONSTACK cleared (activation signal)
	Failed    = int(C.CLRPROF_SIG_FAILED)    // wanted to clear SA_ONSTACK, sigaction failed
	Skipped   = int(C.CLRPROF_SIG_SKIPPED)   // activation handler lies in this library (Go's); left alone
	Reclaimed = int(C.CLRPROF_SIG_RECLAIMED) // SIGFPE/SIGBUS given back to the runtime's handler
	Routed    = int(C.CLRPROF_SIG_ROUTED)    // SIGSEGV: the router put on top
)

// Record is what the signal audit saw for one signal that had a handler
// other than SIG_DFL.
type Record struct {
	Sig      int
	Ignored  bool    // SIG_IGN
	Flags    int     // sa_flags as found
	NewFlags int     // sa_flags after the audit (== Flags if unchanged)
	Action   int     // Seen, Restored, ...
	Errno    int     // of a failed sigaction
	Own      bool    // the handler lies in this library (the Go runtime's)
	Handler  uintptr // handler address
	Owner    string  // file of the handler (dladdr)
	Symbol   string  // nearest symbol (dladdr)
}

// Records copies n audit records (clrprof_sigrec of signals.h) from C
// memory at recs, as clrprof_audit_signals wrote them. A package whose C
// hands the records to its Go passes them on here: cgo's types of one
// package are not another's.
func Records(recs unsafe.Pointer, n int) []Record {
	if recs == nil || n <= 0 {
		return nil
	}
	out := make([]Record, 0, n)
	for _, r := range unsafe.Slice((*C.clrprof_sigrec)(recs), n) {
		out = append(out, Record{
			Sig:      int(r.sig),
			Ignored:  r.kind == 1,
			Flags:    int(r.flags),
			NewFlags: int(r.new_flags),
			Action:   int(r.action),
			Errno:    int(r.err),
			Own:      r.own != 0,
			Handler:  uintptr(r.handler),
			Owner:    C.GoString(&r.owner[0]),
			Symbol:   C.GoString(&r.symbol[0]),
		})
	}
	return out
}

// SAOnStack is the C library's SA_ONSTACK.
func SAOnStack() int { return int(C.clrprof_sa_onstack()) }

// SigRTMin is the C library's SIGRTMIN (CoreCLR's activation signal).
func SigRTMin() int { return int(C.clrprof_sigrtmin()) }

// SegvStats is what the SIGSEGV router did (with managed
// NullReferenceExceptions, mostly). See "the host's SIGSEGV handler on a
// stack of its own" in signals.c.
type SegvStats struct {
	Private   uint64 // handed to the runtime's handler on the thread's private stack
	Returned  uint64 // of those, how many the handler returned from (the rest ended in the managed exception dispatch)
	Alt       uint64 // run on the alternate signal stack (threads that never called into Go, or a frame it could not copy)
	Reasserts uint64 // how often the router put itself back on top of a handler installed over it
}

// SegvCounts reports the router's counters.
func SegvCounts() SegvStats {
	var p, r, a, re C.uint64_t
	C.clrprof_segv_counts(&p, &r, &a, &re)
	return SegvStats{Private: uint64(p), Returned: uint64(r), Alt: uint64(a), Reasserts: uint64(re)}
}

// Glibc reports whether the process's C library is glibc, as found when
// the library was loaded, before its Go runtime started.
func Glibc() bool { return C.clrprof_env_glibc() != 0 }

// OtherGoRuntime is the path of another shared object in the process that
// carries a Go runtime, found when the library was loaded ("" if none).
func OtherGoRuntime() string { return C.GoString(C.clrprof_env_other_go()) }
