package profiler

import (
	"fmt"
	"unsafe"

	"github.com/clrprof/clrprof/metadata"
)

// #include <string.h>
// #include "thunks_gen.h"
import "C"

// maxILBody bounds the size of a body SetILBody accepts.
const maxILBody = 1 << 30

// SetILBody installs a new IL method body (header, code and sections) for
// a method before its first JIT compilation: it copies body into memory
// from the module's IMethodMalloc (which the runtime owns and never frees)
// and calls SetILFunctionBody. Call it from JITCompilationStarted or
// ModuleLoadFinished. The body applies to the method definition, so to
// every instantiation of a generic method.
func (x *Info) SetILBody(module ModuleID, method metadata.Token, body []byte) error {
	if len(body) == 0 || len(body) > maxILBody {
		return fmt.Errorf("clrprof: SetILBody: body of %d bytes", len(body))
	}
	alloc, err := x.GetILFunctionBodyAllocator(module)
	if err != nil {
		return fmt.Errorf("clrprof: SetILBody: allocator of module %#x: %w", uint64(module), err)
	}
	if alloc == nil || alloc.Raw() == nil {
		return fmt.Errorf("clrprof: SetILBody: no allocator for module %#x", uint64(module))
	}
	defer alloc.Release()
	p := C.clrprof_IMethodMalloc_Alloc((*C.IMethodMalloc)(alloc.Raw()), C.ULONG(len(body)))
	if p == nil {
		return fmt.Errorf("clrprof: SetILBody: IMethodMalloc::Alloc(%d): %w", len(body), E_OUTOFMEMORY)
	}
	C.memcpy(unsafe.Pointer(p), unsafe.Pointer(&body[0]), C.size_t(len(body)))
	return x.SetILFunctionBody(module, method, unsafe.Pointer(p))
}
