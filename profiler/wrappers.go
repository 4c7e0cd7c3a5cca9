package profiler

/*
#include "thunks_gen.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	"github.com/google/uuid"
)

// hrInsufficientBuffer is HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER): the
// answer of some methods when a caller's buffer is too small. Generated
// wrappers grow the buffer and retry on it.
const hrInsufficientBuffer = -2147024774 // 0x8007007A

// errNilObject is the error of a method called on a nil or released wrapper.
func errNilObject(iface string) error {
	return fmt.Errorf("clrprof: %s method called on a nil or released object: %w", iface, E_POINTER)
}

// Unknown wraps an IUnknown pointer returned by the runtime, such as the
// metadata interface of GetModuleMetaData. Owned values must be released.
type Unknown struct {
	p     unsafe.Pointer
	owned bool
}

func ownUnknown(p unsafe.Pointer) *Unknown {
	if p == nil {
		return nil
	}
	return &Unknown{p: p, owned: true}
}

func borrowUnknown(p unsafe.Pointer) *Unknown {
	if p == nil {
		return nil
	}
	return &Unknown{p: p}
}

func (x *Unknown) raw() unsafe.Pointer {
	if x == nil {
		return nil
	}
	return x.p
}

// Pointer returns the raw COM pointer, for handing to another wrapper
// package (metadata) that takes its own reference with AddRef.
func (x *Unknown) Pointer() unsafe.Pointer { return x.raw() }

// QueryInterface asks the object for interface iid and returns the raw
// pointer, which holds a reference the caller must release.
func (x *Unknown) QueryInterface(iid uuid.UUID) (unsafe.Pointer, error) {
	if x == nil || x.p == nil {
		return nil, errNilObject("IUnknown")
	}
	g := cgoutil.ToGUID(iid)
	var out unsafe.Pointer
	hr := C.clrprof_QueryInterface(x.p, (*C.GUID)(unsafe.Pointer(&g)), &out)
	if hr < 0 {
		return nil, HRESULT(hr)
	}
	return out, nil
}

// Release drops an owned reference; safe to call twice.
func (x *Unknown) Release() {
	if x == nil || x.p == nil || !x.owned {
		return
	}
	C.clrprof_ReleaseRef(x.p)
	x.p = nil
}
