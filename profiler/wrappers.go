package profiler

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/com"
)

// Unknown wraps an IUnknown pointer returned by the runtime, such as the
// metadata interface of GetModuleMetaData. Owned values must be released.
type Unknown = com.Unknown

func ownUnknown(p unsafe.Pointer) *Unknown    { return com.OwnUnknown(p) }
func borrowUnknown(p unsafe.Pointer) *Unknown { return com.BorrowUnknown(p) }

// errNilObject is the error of a method called on a nil or released wrapper.
func errNilObject(iface string) error { return com.NilObject(iface) }
