package instr

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "pinvoke.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// The P/Invoke machinery: managed code the SDK injects reaches the
// profiler library through methods it defines in the application's own
// module, each a MethodDef with PinvokeImpl whose ImplMap names an exported
// C function (a Go //export) in a ModuleRef holding the library's absolute
// path, as the loader found it (dladdr), never CORECLR_PROFILER_PATH (which
// may be relative, name a different copy, or be unset under attach). The
// runtime binds the P/Invoke on its first call by dlopen of that path (the
// library is already loaded: the same handle) and dlsym of the entry.
//
// The entries are one exported function per shape of call, not per target:
// the arguments say what is asked (the delivery's operation number, a hook
// id), so the set of exports is fixed when the library is built.

var selfOnce struct {
	sync.Once
	path string
	err  error
}

// selfPath returns the absolute path of the profiler library.
func selfPath() (string, error) {
	selfOnce.Do(func() {
		buf := (*C.char)(C.malloc(4096))
		defer C.free(unsafe.Pointer(buf))
		if n := C.clrprof_instr_self(buf, 4096); n <= 0 {
			selfOnce.err = fmt.Errorf("instr: the profiler library's own path is unknown (dladdr)")
			return
		}
		selfOnce.path = C.GoString(buf)
	})
	return selfOnce.path, selfOnce.err
}

// symbolLookup is the address of clrprof_instr_symbol, handed to the
// managed loader (Clrprof.Instr.Loader.Symbol).
func symbolLookup() unsafe.Pointer { return unsafe.Pointer(C.clrprof_instr_symbol) }

// A pinvoke is a static method of an injected type whose body is an
// exported C function of the profiler library.
type pinvoke struct {
	Name  string // the method's name in the injected type
	Sig   []byte // its MethodDefSig blob (default calling convention, static)
	Entry string // the exported C function
}

// P/Invoke attributes: no name mangling, strings as char* (UTF-8 on Unix),
// cdecl; the method is static, PinvokeImpl, and PreserveSig.
const (
	pinvokeMapFlags = metadata.PmNoMangle | metadata.PmCharSetAnsi | metadata.PmCallConvCdecl
	pinvokeAttrs    = metadata.MdAssem | metadata.MdStatic | metadata.MdHideBySig | metadata.MdPinvokeImpl
)

// define defines p as a method of owner in module m and returns its token.
func (p pinvoke) define(m *ilrw.Module, owner metadata.Token) (metadata.Token, error) {
	path, err := selfPath()
	if err != nil {
		return 0, err
	}
	if m.Emit == nil {
		return 0, fmt.Errorf("instr: module not open for writing")
	}
	ref, err := m.Emit.DefineModuleRef(path)
	if err != nil {
		return 0, fmt.Errorf("instr: ModuleRef %q: %w", path, err)
	}
	md, err := m.Emit.DefineMethod(owner, p.Name, pinvokeAttrs, p.Sig, 0, metadata.MiPreserveSig)
	if err != nil {
		return 0, fmt.Errorf("instr: P/Invoke method %s: %w", p.Name, err)
	}
	if err := m.Emit.DefinePinvokeMap(md, pinvokeMapFlags, p.Entry, ref); err != nil {
		return 0, fmt.Errorf("instr: ImplMap %s -> %s: %w", p.Name, p.Entry, err)
	}
	return md, nil
}
