package profiler

import (
	"fmt"
	"strings"

	"github.com/clrprof/clrprof/metadata"
)

// keywords are the C# names of the built-in types, used when formatting
// type arguments (List<int>, not List<System.Int32>).
var keywords = map[string]string{
	"System.Void": "void", "System.Boolean": "bool", "System.Char": "char",
	"System.SByte": "sbyte", "System.Byte": "byte", "System.Int16": "short",
	"System.UInt16": "ushort", "System.Int32": "int", "System.UInt32": "uint",
	"System.Int64": "long", "System.UInt64": "ulong", "System.Single": "float",
	"System.Double": "double", "System.String": "string", "System.Object": "object",
	"System.Decimal": "decimal", "System.IntPtr": "nint", "System.UIntPtr": "nuint",
}

// maxNameDepth bounds the recursion through type arguments and array
// element types, so a pathological instantiation cannot exhaust the stack.
const maxNameDepth = 32

// FunctionName returns the name of a function as the runtime knows it:
// "Namespace.Class.Method", with the type arguments of a generic class or
// method instantiation when the runtime reports them
// ("MyClass<int>.Foo<float>"); built-in types use their C# keywords. Code
// shared between reference-type instantiations reports System.__Canon for
// those arguments.
func (x *Info) FunctionName(f FunctionID) (string, error) {
	fi, err := x.GetFunctionInfo2(f, 0)
	if err != nil {
		return "", fmt.Errorf("clrprof: function %#x: %w", uint64(f), err)
	}
	imp, err := x.ModuleImport(fi.ModuleID)
	if err != nil {
		return "", err
	}
	defer imp.Release()
	mp, err := imp.GetMethodProps(fi.Token)
	if err != nil {
		return "", fmt.Errorf("clrprof: method %v of function %#x: %w", fi.Token, uint64(f), err)
	}
	var class string
	if fi.ClassID != 0 {
		class, err = x.className(fi.ClassID, 0)
	} else {
		class, err = typeDefName(imp, mp.Class, nil)
	}
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(class)
	b.WriteByte('.')
	b.WriteString(mp.Method)
	if err := x.writeTypeArgs(&b, fi.TypeArgs, 0); err != nil {
		return "", err
	}
	return b.String(), nil
}

// ClassName returns the name of a loaded class with its type arguments:
// "System.Collections.Generic.Dictionary<string,int>", "Outer+Nested",
// "int[]", "string[,]".
func (x *Info) ClassName(c ClassID) (string, error) {
	return x.className(c, 0)
}

func (x *Info) className(c ClassID, depth int) (string, error) {
	if depth > maxNameDepth {
		return "", fmt.Errorf("clrprof: class %#x: type arguments nested deeper than %d", uint64(c), maxNameDepth)
	}
	if arr, err := x.IsArrayClass(c); err == nil && arr.Rank > 0 {
		elem, err := x.elementName(metadata.ElementType(arr.BaseElemType), arr.BaseClassID, depth)
		if err != nil {
			return "", err
		}
		return elem + "[" + strings.Repeat(",", int(arr.Rank)-1) + "]", nil
	}
	ci, err := x.GetClassIDInfo2(c)
	if err != nil {
		return "", fmt.Errorf("clrprof: class %#x: %w", uint64(c), err)
	}
	imp, err := x.ModuleImport(ci.ModuleID)
	if err != nil {
		return "", err
	}
	defer imp.Release()
	args := make([]string, len(ci.TypeArgs))
	for i, a := range ci.TypeArgs {
		if args[i], err = x.className(a, depth+1); err != nil {
			return "", err
		}
		if k, ok := keywords[args[i]]; ok {
			args[i] = k
		}
	}
	return typeDefName(imp, ci.TypeDefToken, args)
}

// elementName names an array's element type: a class, or a primitive that
// has no ClassID of its own.
func (x *Info) elementName(et metadata.ElementType, c ClassID, depth int) (string, error) {
	if c != 0 {
		n, err := x.className(c, depth+1)
		if k, ok := keywords[n]; ok {
			n = k
		}
		return n, err
	}
	if n, ok := primitiveNames[et]; ok {
		return n, nil
	}
	return "", fmt.Errorf("clrprof: array of element type %v without a class", et)
}

var primitiveNames = map[metadata.ElementType]string{
	metadata.ElementTypeBoolean: "bool", metadata.ElementTypeChar: "char",
	metadata.ElementTypeI1: "sbyte", metadata.ElementTypeU1: "byte",
	metadata.ElementTypeI2: "short", metadata.ElementTypeU2: "ushort",
	metadata.ElementTypeI4: "int", metadata.ElementTypeU4: "uint",
	metadata.ElementTypeI8: "long", metadata.ElementTypeU8: "ulong",
	metadata.ElementTypeR4: "float", metadata.ElementTypeR8: "double",
	metadata.ElementTypeI: "nint", metadata.ElementTypeU: "nuint",
	metadata.ElementTypeString: "string", metadata.ElementTypeObject: "object",
}

func (x *Info) writeTypeArgs(b *strings.Builder, ids []ClassID, depth int) error {
	if len(ids) == 0 {
		return nil
	}
	b.WriteByte('<')
	for i, a := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		n, err := x.className(a, depth+1)
		if err != nil {
			return err
		}
		if k, ok := keywords[n]; ok {
			n = k
		}
		b.WriteString(n)
	}
	b.WriteByte('>')
	return nil
}

// typeDefName formats a TypeDef with its enclosing types ("Outer+Inner")
// and its type arguments shared out along the nesting chain by arity (see
// metadata's TypeDefDisplayName); with no args, generic types show their
// parameters' names ("List<T>").
func typeDefName(imp *metadata.Import2, td metadata.Token, args []string) (string, error) {
	return imp.TypeDefDisplayName(td, args)
}
