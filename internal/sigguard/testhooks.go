//go:build clrprof_testhooks

package sigguard

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include "signals.h"
*/
import "C"

import "unsafe"

// Test builds (-tags clrprof_testhooks) compile this package's C with
// CLRPROF_TESTHOOKS: the diagnostic switches (CLRPROF_SIGNAL_GUARD=0,
// CLRPROF_SIGNAL_AUDIT=0, CLRPROF_SEGV_PRIVATE_STACK=0,
// CLRPROF_BINDM_HOOK=0), the guard's lapse check, and the helpers below,
// for the tests of this package and of profiler. None of it is in a
// user's library.

// SigFlags is the sa_flags of sig's current action (-1 if sigaction fails).
func SigFlags(sig int) int { return int(C.clrprof_sig_flags(C.int(sig))) }

// SigBlocked reports whether sig is blocked on the calling thread (1), not
// (0), or -1 if the mask cannot be read.
func SigBlocked(sig int) int { return int(C.clrprof_sig_blocked(C.int(sig))) }

// SwapHandler installs a C handler that does nothing on sig with flags (and
// SA_SIGINFO), keeping the action it replaces for RestoreHandler. It
// returns sigaction's result.
func SwapHandler(sig, flags int) int {
	return int(C.clrprof_test_swap_handler(C.int(sig), C.int(flags)))
}

// RestoreHandler puts back the action SwapHandler replaced.
func RestoreHandler(sig int) int { return int(C.clrprof_test_restore_handler(C.int(sig))) }

// SegvRoundTrip faults once under the SIGSEGV router with a stand-in host
// handler; see clrprof_test_segv_roundtrip in signals.c.
func SegvRoundTrip() (result int, rcx, xmm uint64) {
	var r, x C.uint64_t
	res := C.clrprof_test_segv_roundtrip(&r, &x)
	return int(res), uint64(r), uint64(x)
}

// Audit runs one audit of the current process (without the once-only
// guard and without skipping this binary's own handlers) and returns what
// it saw.
func Audit(activation int) []Record {
	recs := make([]C.clrprof_sigrec, C.NSIG)
	n := C.clrprof_audit_signals(C.int(activation), 0, &recs[0], C.int(len(recs)))
	return Records(unsafe.Pointer(&recs[0]), int(n))
}
