package sigguard

/*
#include <stdint.h>
void *clrprof_bindm_hook(void *orig);
void clrprof_bindm_ready(void *installed);
int clrprof_bindm_missing(void);
uint64_t clrprof_bindm_reblocks(void);
uint64_t clrprof_guard_lapses(void);
*/
import "C"

import "unsafe"

// cgoBindm is the Go runtime's _cgo_bindm: the C function (runtime/cgo's
// x_cgo_bindm) that needAndBindM calls, on the thread's own stack, right
// after binding an M to a thread that calls into Go for the first time.
// Go has called it since 1.21 (this module requires 1.26); were it gone
// from a later Go, this variable would be the package's own, nil, and the
// hook not installed (BindmMissing true, which profiler warns of at
// Initialize); were the linker to refuse the name, the build would fail.
//
//go:linkname cgoBindm _cgo_bindm
var cgoBindm unsafe.Pointer

// The guard's repair after needm: see "a thread's first call into Go" in
// guard.c. Installed by this package's init, before any guarded call
// enters Go (those wait for it).
func init() {
	cgoBindm = C.clrprof_bindm_hook(cgoBindm)
	C.clrprof_bindm_ready(cgoBindm)
}

// BindmMissing reports whether the Go runtime had no _cgo_bindm hook to
// replace (a thread's first callback then runs Go with SIGRTMIN unblocked).
func BindmMissing() bool { return C.clrprof_bindm_missing() != 0 }

// BindmReblocks is how many threads' first guarded calls into Go had
// SIGRTMIN blocked again after the Go runtime unblocked it.
func BindmReblocks() uint64 { return uint64(C.clrprof_bindm_reblocks()) }

// GuardLapses is, in test builds, how many guards ended with SIGRTMIN
// deliverable (always 0 in other builds, which do not check).
func GuardLapses() uint64 { return uint64(C.clrprof_guard_lapses()) }
