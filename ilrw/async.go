package ilrw

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// miAsync is CorMethodImpl's miAsync (0x2000, MethodImplAttributes.Async,
// "cil managed async" in ILDasm): the method is runtime async (.NET 11's
// libraries, and code Roslyn compiles with -features:runtime-async=on; on
// .NET 10 only with DOTNET_RuntimeAsync=1). It is a local constant until
// package metadata's generated MethodImpl type has it.
const miAsync metadata.MethodImpl = 0x2000

// IsRuntimeAsync reports whether implementation flags (MethodInfo.ImplFlags)
// mark a runtime-async method.
func IsRuntimeAsync(impl metadata.MethodImpl) bool { return impl&miAsync != 0 }

// AsyncReturn returns the type a runtime-async method's IL returns, given
// the return type its signature declares: void for Task and ValueTask, T
// for Task<T> and ValueTask<T>. The body's ret pops nothing, or a T. The
// declared type must be one of the four (the runtime refuses anything
// else); the test is structural (a class or value type without arguments:
// void; a generic instantiation with one argument: that argument).
func AsyncReturn(declared *metadata.Type) (*metadata.Type, error) {
	inner, _, pinned := declared.Unwrap()
	if inner == nil || pinned {
		return nil, fmt.Errorf("ilrw: runtime-async return type: not a Task or ValueTask")
	}
	switch inner.Kind {
	case metadata.ElementTypeClass, metadata.ElementTypeValuetype:
		return metadata.Primitive(metadata.ElementTypeVoid), nil
	case metadata.ElementTypeGenericinst:
		if len(inner.Args) == 1 && inner.Elem != nil &&
			(inner.Elem.Kind == metadata.ElementTypeClass || inner.Elem.Kind == metadata.ElementTypeValuetype) {
			return inner.Args[0], nil
		}
	}
	return nil, fmt.Errorf("ilrw: runtime-async return type: not a Task or ValueTask (element type %#x)", inner.Kind)
}

// ILSig returns the signature as the body of a method with implementation
// flags impl sees it: sig itself, or for a runtime-async method a copy
// whose Return is AsyncReturn's (the parameters are the same). This is the
// signature [Body.WrapExit] needs; calls of the method (call sites, stack
// analysis) keep the declared signature, which is what callers see.
func ILSig(sig *metadata.MethodSig, impl metadata.MethodImpl) (*metadata.MethodSig, error) {
	if !IsRuntimeAsync(impl) {
		return sig, nil
	}
	r, err := AsyncReturn(sig.Return)
	if err != nil {
		return nil, err
	}
	c := *sig
	c.Return = r
	return &c, nil
}
