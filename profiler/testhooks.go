//go:build clrprof_testhooks

package profiler

// The test hooks of this package's own C (elt.c, ring.c) are compiled in
// by this define.

// #cgo CFLAGS: -DCLRPROF_TESTHOOKS
import "C"

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/comobj"
	"github.com/clrprof/clrprof/internal/sigguard"
	"github.com/google/uuid"
)

// Go wrappers of the test hooks of the profiler object (internal/comobj's
// object_testhooks.c) and of sigguard, for this package's tests. They
// drive the object the way the runtime does: through DllGetClassObject,
// the class factory and the vtable.

// comObject is a COM object in C memory (never a Go pointer).
type comObject unsafe.Pointer

func testCreate(clsid uuid.UUID, iidIndex int, aggregate bool) (comObject, HRESULT) {
	obj, hr := comobj.TestCreate(clsid, iidIndex, aggregate)
	return comObject(obj), HRESULT(hr)
}

func testQI(obj comObject, iid uuid.UUID) (comObject, HRESULT) {
	out, hr := comobj.TestQI(unsafe.Pointer(obj), iid)
	return comObject(out), HRESULT(hr)
}

func testCallbackIID(i int) (uuid.UUID, bool) { return comobj.TestCallbackIID(i) }

func testAddRef(obj comObject) uint32  { return comobj.TestAddRef(unsafe.Pointer(obj)) }
func testRelease(obj comObject) uint32 { return comobj.TestRelease(unsafe.Pointer(obj)) }

// testHandle reads the cgo.Handle stored in a profiler object.
func testHandle(obj comObject) uintptr { return comobj.TestHandle(unsafe.Pointer(obj)) }

func testFakeInfo(versions int) comObject { return comObject(comobj.TestFakeInfo(versions)) }
func testFakeRefs(info comObject) int     { return comobj.TestFakeRefs(unsafe.Pointer(info)) }
func testFree(p comObject)                { comobj.TestFree(unsafe.Pointer(p)) }

func testInitialize(obj, info comObject) HRESULT {
	return HRESULT(comobj.TestInitialize(unsafe.Pointer(obj), unsafe.Pointer(info)))
}

func testInitializeForAttach(obj, info comObject, data []byte) HRESULT {
	return HRESULT(comobj.TestInitializeForAttach(unsafe.Pointer(obj), unsafe.Pointer(info), data))
}

func testShutdown(obj comObject) HRESULT { return HRESULT(comobj.TestShutdown(unsafe.Pointer(obj))) }

func testJITStarted(obj comObject, fid uintptr) HRESULT {
	return HRESULT(comobj.TestJITStarted(unsafe.Pointer(obj), fid))
}

func testModuleLoaded(obj comObject, mid uintptr) HRESULT {
	return HRESULT(comobj.TestModuleLoaded(unsafe.Pointer(obj), mid))
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
