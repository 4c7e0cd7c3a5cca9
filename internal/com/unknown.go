package com

// #cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
// #include "comtypes.h"
// static HRESULT com_qi(void *self, const GUID *iid, void **out) {
//     return ((IUnknown *)self)->lpVtbl->QueryInterface((IUnknown *)self, iid, out);
// }
// static ULONG com_release(void *self) { return ((IUnknown *)self)->lpVtbl->Release((IUnknown *)self); }
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/clrprof/clrprof/internal/cgoutil"
	"github.com/google/uuid"
)

// Unknown wraps an IUnknown pointer. An owned value holds a reference that
// Release drops; a borrowed one (passed into a callback) does not.
type Unknown struct {
	p     unsafe.Pointer
	owned bool
}

// OwnUnknown wraps p, taking over the reference the caller holds.
func OwnUnknown(p unsafe.Pointer) *Unknown {
	if p == nil {
		return nil
	}
	return &Unknown{p: p, owned: true}
}

// BorrowUnknown wraps p without taking a reference.
func BorrowUnknown(p unsafe.Pointer) *Unknown {
	if p == nil {
		return nil
	}
	return &Unknown{p: p}
}

// Raw returns the COM pointer without adding a reference.
func (x *Unknown) Raw() unsafe.Pointer {
	if x == nil {
		return nil
	}
	return x.p
}

// QueryInterface asks the object for interface iid and returns a pointer
// holding a new reference, which the caller must release (Release).
func (x *Unknown) QueryInterface(iid uuid.UUID) (unsafe.Pointer, error) {
	if x == nil || x.p == nil {
		return nil, NilObject("IUnknown")
	}
	return QueryRaw(x.p, iid)
}

// QueryRaw asks the COM object p for interface iid; the pointer returned
// holds a new reference.
func QueryRaw(p unsafe.Pointer, iid uuid.UUID) (unsafe.Pointer, error) {
	if p == nil {
		return nil, NilObject("IUnknown")
	}
	g := cgoutil.ToGUID(iid)
	var out unsafe.Pointer
	hr := C.com_qi(p, (*C.GUID)(unsafe.Pointer(&g)), &out)
	if hr < 0 {
		return nil, HRESULT(hr)
	}
	return out, nil
}

// Release drops an owned reference; it is safe to call twice.
func (x *Unknown) Release() {
	if x == nil || x.p == nil || !x.owned {
		return
	}
	C.com_release(x.p)
	x.p = nil
}

// ReleaseRaw drops a reference on the raw pointer p.
func ReleaseRaw(p unsafe.Pointer) {
	if p != nil {
		C.com_release(p)
	}
}

// NilObject is the error of a method called on a nil or released wrapper.
func NilObject(iface string) error {
	return fmt.Errorf("clrprof: %s method called on a nil or released object: %w", iface, HRESULT(-2147467261)) // E_POINTER
}

// Object is any wrapper of a COM pointer: Unknown and every generated
// interface wrapper.
type Object interface {
	Raw() unsafe.Pointer
}
