package profiler

import (
	"unsafe"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/metadata"
)

// The bridge to the recorders (elt, alloc, heapwalk): what they need of an
// Info that is not exported. See internal/profimpl.
func init() {
	profimpl.Ptr = func(x any, v int) unsafe.Pointer { return x.(*Info).ptr(v) }
	profimpl.CheckNotification = func(x any, op string) error { return x.(*Info).checkNotification(op) }
	profimpl.NotAvailable = notAvailable
	profimpl.ErrNotAvailable = ErrNotAvailable
	profimpl.ErrOutOfMemory = E_OUTOFMEMORY
	profimpl.HRESULT = func(hr int32) error { return HRESULT(hr) }
	profimpl.Logger = logger
	profimpl.ReportPanic = reportPanic
	profimpl.Diagnostics = diagnostics
	profimpl.SetEnterLeaveFunctionHooks3 = func(x any, e, l, t unsafe.Pointer) error {
		return x.(*Info).setEnterLeaveFunctionHooks3(e, l, t)
	}
	profimpl.SetEnterLeaveFunctionHooks3WithInfo = func(x any, e, l, t unsafe.Pointer) error {
		return x.(*Info).setEnterLeaveFunctionHooks3WithInfo(e, l, t)
	}
	profimpl.SetFunctionIDMapper = func(x any, fn unsafe.Pointer) error { return x.(*Info).setFunctionIDMapper(fn) }
	profimpl.SetFunctionIDMapper2 = func(x any, fn, data unsafe.Pointer) error {
		return x.(*Info).setFunctionIDMapper2(fn, data)
	}
	profimpl.GetFunctionEnter3Info = func(x any, f, elt uintptr, size, buf unsafe.Pointer) (uintptr, error) {
		fr, err := x.(*Info).getFunctionEnter3Info(FunctionID(f), ELTInfo(elt), size, buf)
		return uintptr(fr), err
	}
	profimpl.ModuleImport = func(x any, m uintptr) (*metadata.Import2, func(), error) {
		return x.(*Info).sharedModuleImport(ModuleID(m))
	}
}
