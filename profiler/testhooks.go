//go:build clrprof_testhooks

package profiler

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include <stdlib.h>
#include "object.h"
#include "guard.h"
#include "object_testhooks.h"
*/
import "C"

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/chain"
	"github.com/clrprof/clrprof/internal/sigguard"
	"github.com/google/uuid"
)

// Go wrappers of the C test hooks in object_testhooks.c and sigguard,
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

// Signal helpers (package sigguard's test hooks).
func sigRTMin() int                      { return sigguard.SigRTMin() }
func saOnStack() int                     { return sigguard.SAOnStack() }
func sigFlags(sig int) int               { return sigguard.SigFlags(sig) }
func sigBlocked(sig int) int             { return sigguard.SigBlocked(sig) }
func testSwapHandler(sig, flags int) int { return sigguard.SwapHandler(sig, flags) }
func testRestoreHandler(sig int) int     { return sigguard.RestoreHandler(sig) }
func testAudit(activation int) []signalRecord {
	return sigguard.Audit(activation)
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
