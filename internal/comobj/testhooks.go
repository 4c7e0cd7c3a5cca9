//go:build clrprof_testhooks

package comobj

/*
#cgo CFLAGS: -DCLRPROF_TESTHOOKS
#include <stdlib.h>
#include "object.h"
#include "object_testhooks.h"
*/
import "C"

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	"github.com/google/uuid"
)

// The C test hooks of object_testhooks.c, for the tests of this package's
// users (test files cannot use cgo): they drive the object the way the
// runtime does, through DllGetClassObject, the class factory and the
// vtable. Objects are COM objects in C memory (never Go pointers). Test
// builds only (tag clrprof_testhooks).

// TestCreate loads the object as the runtime does: DllGetClassObject for
// clsid, then CreateInstance for the iidIndex'th ICorProfilerCallbackN IID
// (IUnknown when negative), with an outer object when aggregate.
func TestCreate(clsid uuid.UUID, iidIndex int, aggregate bool) (unsafe.Pointer, int32) {
	g := cgoutil.ToGUID(clsid)
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
	hr := C.clrprof_test_create((*C.GUID)(unsafe.Pointer(&g)), iid, agg, &obj)
	return obj, int32(hr)
}

// TestQI is the object's QueryInterface for iid.
func TestQI(obj unsafe.Pointer, iid uuid.UUID) (unsafe.Pointer, int32) {
	g := cgoutil.ToGUID(iid)
	var out unsafe.Pointer
	hr := C.clrprof_test_qi(obj, (*C.GUID)(unsafe.Pointer(&g)), &out)
	return out, int32(hr)
}

// TestCallbackIID is the i'th ICorProfilerCallbackN IID the object answers.
func TestCallbackIID(i int) (uuid.UUID, bool) {
	p := C.clrprof_test_callback_iid(C.int(i))
	if p == nil {
		return uuid.UUID{}, false
	}
	return cgoutil.GUIDAt(unsafe.Pointer(p)), true
}

// TestAddRef and TestRelease are the object's AddRef and Release.
func TestAddRef(obj unsafe.Pointer) uint32  { return uint32(C.clrprof_test_addref(obj)) }
func TestRelease(obj unsafe.Pointer) uint32 { return uint32(C.clrprof_test_release(obj)) }

// TestHandle reads the cgo.Handle stored in a profiler object.
func TestHandle(obj unsafe.Pointer) uintptr { return uintptr((*C.clrprof_object)(obj).handle) }

// TestFakeInfo makes a fake ICorProfilerInfo answering the first versions
// ICorProfilerInfoN IIDs; TestFakeRefs reads its reference count; TestFree
// frees it.
func TestFakeInfo(versions int) unsafe.Pointer {
	return C.clrprof_test_fake_info(C.int(versions))
}
func TestFakeRefs(info unsafe.Pointer) int { return int(C.clrprof_test_fake_refs(info)) }
func TestFree(p unsafe.Pointer)            { C.clrprof_test_free(p) }

// TestInitialize, TestInitializeForAttach, TestShutdown, TestJITStarted
// and TestModuleLoaded call the object's callbacks of those names.
func TestInitialize(obj, info unsafe.Pointer) int32 {
	return int32(C.clrprof_test_initialize(obj, info))
}

func TestInitializeForAttach(obj, info unsafe.Pointer, data []byte) int32 {
	var p unsafe.Pointer
	if len(data) > 0 {
		p = C.CBytes(data)
		defer C.free(p)
	}
	return int32(C.clrprof_test_initialize_for_attach(obj, info, p, C.unsigned(len(data))))
}

func TestShutdown(obj unsafe.Pointer) int32 { return int32(C.clrprof_test_shutdown(obj)) }

func TestJITStarted(obj unsafe.Pointer, fid uintptr) int32 {
	return int32(C.clrprof_test_jit_started(obj, C.uintptr_t(fid)))
}

func TestModuleLoaded(obj unsafe.Pointer, mid uintptr) int32 {
	return int32(C.clrprof_test_module_loaded(obj, C.uintptr_t(mid)))
}

// slotJITCompilationStarted is the callback slot the tests of this package
// drive (TestJITStarted).
const slotJITCompilationStarted = int(C.CLRPROF_CB_JITCompilationStarted)
