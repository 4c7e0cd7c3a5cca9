package profiler

import (
	"fmt"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
)

// #include <string.h>
// #include "thunks_gen.h"
import "C"

// maxILBody bounds the size of a body SetILFunctionBody accepts.
const maxILBody = 1 << 30

// SetILFunctionBody installs a new IL method body (header, code and sections) for
// a method before its first JIT compilation: it copies body into memory
// from the module's IMethodMalloc (which the runtime owns and never frees)
// and calls SetILFunctionBody. Call it from JITCompilationStarted or
// ModuleLoadFinished. The body applies to the method definition, so to
// every instantiation of a generic method.
func (x *Info) SetILFunctionBody(module ModuleID, method metadata.Token, body []byte) error {
	if err := x.checkNotification("SetILFunctionBody"); err != nil {
		return err
	}
	if len(body) == 0 || len(body) > maxILBody {
		return fmt.Errorf("clrprof: SetILFunctionBody: body of %d bytes", len(body))
	}
	alloc, err := x.GetILFunctionBodyAllocator(module)
	if err != nil {
		return fmt.Errorf("clrprof: SetILFunctionBody: allocator of module %#x: %w", uint64(module), err)
	}
	if alloc == nil || alloc.Raw() == nil {
		return fmt.Errorf("clrprof: SetILFunctionBody: no allocator for module %#x", uint64(module))
	}
	defer alloc.Release()
	p := C.clrprof_IMethodMalloc_Alloc((*C.IMethodMalloc)(alloc.Raw()), C.ULONG(len(body)))
	if p == nil {
		return fmt.Errorf("clrprof: SetILFunctionBody: IMethodMalloc::Alloc(%d): %w", len(body), E_OUTOFMEMORY)
	}
	C.memcpy(unsafe.Pointer(p), unsafe.Pointer(&body[0]), C.size_t(len(body)))
	return x.setILFunctionBody(module, method, unsafe.Pointer(p))
}

// RequestRevert asks the runtime to go back to the original IL of methods
// (modules[i], methods[i]) that RequestReJIT rewrote; it returns one status
// per method (S_OK, or why that method was not reverted) and an error when
// the request as a whole failed. modules and methods must have the same
// length.
func (x *Info) RequestRevert(modules []ModuleID, methods []metadata.Token) ([]HRESULT, error) {
	if len(modules) != len(methods) {
		return nil, fmt.Errorf("clrprof: RequestRevert: %d modules for %d methods", len(modules), len(methods))
	}
	if len(methods) == 0 {
		return nil, nil
	}
	status := make([]HRESULT, len(methods))
	if err := x.requestRevert(modules, methods, unsafe.Pointer(unsafe.SliceData(status))); err != nil {
		return nil, err
	}
	return status, nil
}
