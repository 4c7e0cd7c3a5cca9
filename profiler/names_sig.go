package profiler

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// FunctionFullName returns a function's name with its instantiation and
// parameter list, in the format of package metadata's names:
//
//	Namespace.Outer+Nested<int,string>.Method<float>(int32, string[])
//
// The instantiation is what GetFunctionInfo2 reports for frame: with the
// COR_PRF_FRAME_INFO of an ELT hook with frame info the runtime names the
// exact type arguments of shared generic code; with frame 0, or a frame
// from a stack snapshot, it does not, and shared code is named as
// FunctionName describes (canonical instantiation, System.__Canon for
// reference-type arguments, or the formal type parameters when the SDK
// cannot tell). Type arguments use C# keywords; parameter types use
// ILAsm's names, with the instantiation's arguments substituted for the
// generic parameters.
func (x *Info) FunctionFullName(f FunctionID, frame FrameInfo) (string, error) {
	fn, err := x.functionParts(f, frame)
	if err != nil {
		return "", err
	}
	defer fn.done()
	fi, imp, m := fn.FunctionInfo2Result, fn.imp, fn.method
	sig, err := metadata.ParseMethodSig(m.Sig)
	if err != nil {
		return "", fmt.Errorf("clrprof: signature of method %v: %w", fi.Token, err)
	}
	ctx := &metadata.GenericContext{}
	var owner string
	if fi.ClassID != 0 {
		ci, err := x.GetClassIDInfo2(fi.ClassID)
		if err != nil {
			return "", fmt.Errorf("clrprof: class %#x: %w", uint64(fi.ClassID), err)
		}
		cs, il, err := x.argNames(ci.TypeArgs)
		if err != nil {
			return "", err
		}
		ctx.TypeArgs = il
		if owner, err = imp.TypeDefDisplayName(m.Class, cs); err != nil {
			return "", err
		}
	} else {
		// No class: name the type's generic parameters instead.
		if ctx.TypeArgs, err = imp.GenericParamNames(m.Class); err != nil {
			return "", err
		}
		if owner, err = imp.TypeDefDisplayName(m.Class, ctx.TypeArgs); err != nil {
			return "", err
		}
	}
	cs, il, err := x.argNames(fi.TypeArgs)
	if err != nil {
		return "", err
	}
	ctx.MethodArgs = il
	if len(cs) == 0 && sig.Generic() {
		if cs, err = imp.GenericParamNames(fi.Token); err != nil {
			return "", err
		}
		ctx.MethodArgs = cs
	}
	params, err := imp.FormatParams(sig, ctx)
	if err != nil {
		return "", err
	}
	return methodName(owner, m.Name, cs) + params, nil
}

// argNames names runtime type arguments twice: with C# keywords (for the
// instantiation) and with ILAsm's names (for parameters).
func (x *Info) argNames(ids []ClassID) (cs, il []string, err error) {
	for _, id := range ids {
		n, err := x.className(id, 1)
		if err != nil {
			return nil, nil, err
		}
		cs = append(cs, metadata.BuiltinName(n, metadata.CSharp))
		il = append(il, metadata.BuiltinName(n, metadata.ILAsm))
	}
	return cs, il, nil
}
