// Package profimpl is the bridge between package profiler and the packages
// of clrprof built on it that need more of a *profiler.Info than its
// exported methods (the recorders: elt, alloc, heapwalk). It cannot import
// profiler (profiler fills it, from an init), so an Info travels as the
// empty interface and profiler's functions, set below, assert it back.
// Everything here is called on cold paths only (setting a recorder up,
// reporting a panic); no hot path goes through it.
//
// Model: protobuf-go's runtime/protoimpl, between proto and internal/impl.
package profimpl

import (
	"log/slog"
	"runtime/debug"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
)

// The functions profiler sets at init. Info arguments are *profiler.Info.
var (
	// Ptr returns the raw ICorProfilerInfo<version> pointer of info, nil
	// when the runtime does not implement that version.
	Ptr func(info any, version int) unsafe.Pointer
	// CheckNotification refuses op when info is a notification-only
	// profiler's (a *profiler.NotificationError).
	CheckNotification func(info any, op string) error
	// NotAvailable is the *profiler.NotAvailableError of a method declared
	// by ICorProfilerInfo<need> on a runtime implementing up to <have>.
	NotAvailable func(method string, need, have int) error
	// ErrNotAvailable is profiler.ErrNotAvailable.
	ErrNotAvailable error
	// ErrOutOfMemory is profiler.E_OUTOFMEMORY.
	ErrOutOfMemory error
	// HRESULT converts a C HRESULT to the error profiler.HRESULT.
	HRESULT func(hr int32) error
	// Logger is the SDK's logger (profiler.Logger).
	Logger func() *slog.Logger
	// ReportPanic logs a recovered panic the way the dispatcher does.
	ReportPanic func(where string, r any, stack []byte)
	// Diagnostics says whether the diagnostic switches are compiled in
	// (build tag clrprof_testhooks).
	Diagnostics bool

	// The ICorProfilerInfo methods that take C function pointers, which
	// profiler does not export (the recorders pass their C hooks).
	SetEnterLeaveFunctionHooks3         func(info any, enter, leave, tailcall unsafe.Pointer) error
	SetEnterLeaveFunctionHooks3WithInfo func(info any, enter, leave, tailcall unsafe.Pointer) error
	SetFunctionIDMapper                 func(info any, fn unsafe.Pointer) error
	SetFunctionIDMapper2                func(info any, fn, clientData unsafe.Pointer) error
	// GetFunctionEnter3Info is ICorProfilerInfo3::GetFunctionEnter3Info
	// with the raw size and buffer pointers; the frame info comes back as
	// a uintptr (profiler.FrameInfo).
	GetFunctionEnter3Info func(info any, function, eltInfo uintptr, size, buf unsafe.Pointer) (frame uintptr, err error)

	// ModuleImport returns the metadata reader of a module from info's
	// cache of them, and the function to call when done with it (instead
	// of Release).
	ModuleImport func(info any, module uintptr) (*metadata.Import2, func(), error)
)

// RecoverExport is deferred by the recorders' cgo exports: it logs a
// panic and runs onPanic (which sets the export's failure result). Nothing
// may unwind into C.
func RecoverExport(where string, onPanic func()) {
	if r := recover(); r != nil {
		if ReportPanic != nil {
			ReportPanic(where, r, debug.Stack())
		}
		if onPanic != nil {
			onPanic()
		}
	}
}
