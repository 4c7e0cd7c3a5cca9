//go:build clrprof_testhooks

package profiler

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include <stdlib.h>
#include "object.h"
#include "signals.h"
#include "guard.h"
#include "object_testhooks.h"
*/
import "C"

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/chain"
	"github.com/google/uuid"
)

// Go wrappers of the C test hooks in object_testhooks.c and signals.c,
// for this package's tests (test files cannot use cgo). They drive the shim the way the runtime does:
// through DllGetClassObject, the class factory and the vtable.

// comObject is a COM object in C memory (never a Go pointer).
type comObject unsafe.Pointer

func testCreate(clsid uuid.UUID, iidIndex int, aggregate bool) (comObject, HRESULT) {
	g := uuidToGUID(clsid)
	var iid *C.GUID
	if iidIndex < 0 {
		iid = C.clrprof_test_iid_iunknown()
	} else {
		iid = C.clrprof_test_callback_iid(C.int(iidIndex))
	}
	agg := C.int(0)
	if aggregate {
		agg = 1
	}
	var obj unsafe.Pointer
	hr := C.clrprof_test_create(&g, iid, agg, &obj)
	return comObject(obj), HRESULT(hr)
}

func testQI(obj comObject, iid uuid.UUID) (comObject, HRESULT) {
	g := uuidToGUID(iid)
	var out unsafe.Pointer
	hr := C.clrprof_test_qi(unsafe.Pointer(obj), &g, &out)
	return comObject(out), HRESULT(hr)
}

func testCallbackIID(i int) (uuid.UUID, bool) {
	p := C.clrprof_test_callback_iid(C.int(i))
	if p == nil {
		return uuid.UUID{}, false
	}
	return guidToUUID(p), true
}

func testAddRef(obj comObject) uint32  { return uint32(C.clrprof_test_addref(unsafe.Pointer(obj))) }
func testRelease(obj comObject) uint32 { return uint32(C.clrprof_test_release(unsafe.Pointer(obj))) }

// testHandle reads the cgo.Handle stored in a profiler object.
func testHandle(obj comObject) uintptr { return uintptr((*C.clrprof_object)(obj).handle) }

func testFakeInfo(versions int) comObject {
	return comObject(C.clrprof_test_fake_info(C.int(versions)))
}
func testFakeRefs(info comObject) int { return int(C.clrprof_test_fake_refs(unsafe.Pointer(info))) }
func testFree(p comObject)            { C.clrprof_test_free(unsafe.Pointer(p)) }

func testInitialize(obj, info comObject) HRESULT {
	return HRESULT(C.clrprof_test_initialize(unsafe.Pointer(obj), unsafe.Pointer(info)))
}

func testInitializeForAttach(obj, info comObject, data []byte) HRESULT {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = C.CBytes(data)
		defer C.free(p)
	}
	return HRESULT(C.clrprof_test_initialize_for_attach(unsafe.Pointer(obj), unsafe.Pointer(info), p, C.unsigned(len(data))))
}

func testShutdown(obj comObject) HRESULT {
	return HRESULT(C.clrprof_test_shutdown(unsafe.Pointer(obj)))
}

func testJITStarted(obj comObject, fid uintptr) HRESULT {
	return HRESULT(C.clrprof_test_jit_started(unsafe.Pointer(obj), C.uintptr_t(fid)))
}

func testModuleLoaded(obj comObject, mid uintptr) HRESULT {
	return HRESULT(C.clrprof_test_module_loaded(unsafe.Pointer(obj), C.uintptr_t(mid)))
}

// Signal helpers.
func sigRTMin() int          { return int(C.clrprof_sigrtmin()) }
func saOnStack() int         { return int(C.clrprof_sa_onstack()) }
func sigFlags(sig int) int   { return int(C.clrprof_sig_flags(C.int(sig))) }
func sigBlocked(sig int) int { return int(C.clrprof_sig_blocked(C.int(sig))) }
func testSwapHandler(sig, flags int) int {
	return int(C.clrprof_test_swap_handler(C.int(sig), C.int(flags)))
}
func testRestoreHandler(sig int) int { return int(C.clrprof_test_restore_handler(C.int(sig))) }

// testSegvRoundTrip faults once under the SIGSEGV router with a stand-in
// host handler; see clrprof_test_segv_roundtrip.
func testSegvRoundTrip() (result int, rcx, xmm uint64) {
	var r, x C.uint64_t
	res := C.clrprof_test_segv_roundtrip(&r, &x)
	return int(res), uint64(r), uint64(x)
}

// testAudit runs one audit of the current process (without the once-only
// guard and without skipping this binary's own handlers) and returns what
// it saw.
func testAudit(activation int) []signalRecord {
	recs := make([]C.clrprof_sigrec, C.NSIG)
	n := C.clrprof_audit_signals(C.int(activation), 0, &recs[0], C.int(len(recs)))
	return copySigrecs(&recs[0], int(n))
}

// chainVia is how testChainCalls reaches the fake native profiler.
type chainVia = chain.Via

const (
	viaStraight = chain.ViaStraight // a direct call, no SDK in between
	viaFanOut   = chain.ViaFanOut   // the fan-out vtable (clrprof_chain_vtbl)
	viaLive     = chain.ViaLive     // the chaining object's vtable after refresh
)

// testChainCalls is chain.TestHookCalls (chain.c's clrprof_test_chain_calls).
func testChainCalls(n int, via chainVia, want, goWants bool) (ns, calls uint64, direct bool) {
	return chain.TestHookCalls(n, via, want, goWants)
}
