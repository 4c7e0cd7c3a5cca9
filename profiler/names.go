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
// method instantiation ("MyClass<int>.Foo<float>"); built-in types use
// their C# keywords, nested classes are joined with '+'.
//
// Code the runtime compiles once for several instantiations (shared
// generic code: every reference-type argument is represented by
// System.__Canon) is named by the instantiation it really is:
//
//   - a generic method whose code is shared shows System.__Canon for its
//     reference-type arguments: Id<System.__Canon>, Id<int>;
//   - a method of a generic class whose code is shared shows the class's
//     canonical instantiation, value-type arguments kept:
//     Pair<System.__Canon,System.__Canon>.Show for Pair<string,object> and
//     Pair<object,string>, Pair<int,System.__Canon>.Show for
//     Pair<int,string>; unshared code is exact (Pair<int,long>.Show).
//     From .NET 10 on the runtime reports that class itself (GetFunctionInfo2
//     without a frame gives the canonical instantiation,
//     dotnet/runtime#107753), so such names need nothing more. Before, the
//     runtime names no class for such code (ClassID 0), so the SDK finds it
//     among the canonical instantiations it has seen loaded: only when
//     Register was given WithSharedGenericNames and while the event mask has
//     MonitorClassLoads. Without them, or when the runtime refuses the lookup
//     (GetFunctionFromTokenAndTypeArgs, which may not be called from every
//     thread or callback), the class shows its formal type parameters there:
//     Pair<A,B>.Show.
//
// FunctionFullName with a frame from an ELT hook (FunctionEnter3WithInfo)
// names the exact instantiation; a frame from a stack snapshot does not.
func (x *Info) FunctionName(f FunctionID) (string, error) {
	p, err := x.FunctionNameParts(f)
	if err != nil {
		return "", err
	}
	return methodName(p.Class, p.Method, p.MethodArgs), nil
}

// NameParts are the parts FunctionName joins: the declaring class as
// ClassName formats it (with its type arguments), the bare method name,
// and the method's own type arguments.
type NameParts struct {
	// ClassID is the declaring class: for shared code of a generic class,
	// its canonical instantiation (see FunctionName); 0 when unknown.
	ClassID    ClassID
	Class      string   // "Namespace.Outer+Nested<int>"
	Method     string   // "Work", ".ctor"
	MethodArgs []string // type arguments of a generic method: ["float"]
}

// FunctionNameParts returns the declaring class and the bare method name
// of a function (see FunctionName for how they are formatted). Package
// instr/target's TypeFromProfiler turns Class into the reflection full name
// (Shop.Box<int>+Inner becomes Shop.Box`1+Inner) that instrumentation
// targets use, and TypeFromIL does the same for ilrw.Method.Name.
func (x *Info) FunctionNameParts(f FunctionID) (NameParts, error) {
	fn, err := x.functionParts(f, 0)
	if err != nil {
		return NameParts{}, err
	}
	defer fn.done()
	p := NameParts{ClassID: fn.ClassID, Method: fn.method.Name}
	if fn.ClassID != 0 {
		p.Class, err = x.className(fn.ClassID, 0)
	} else {
		p.Class, err = fn.imp.TypeDefDisplayName(fn.method.Class, nil)
	}
	if err != nil {
		return NameParts{}, err
	}
	if p.MethodArgs, err = x.typeArgNames(fn.TypeArgs, 0); err != nil {
		return NameParts{}, err
	}
	return p, nil
}

// funcParts is what a function's names are made of: what GetFunctionInfo2
// reports, the metadata of its module and its method's properties.
type funcParts struct {
	FunctionInfo2Result
	imp    *metadata.Import2 // the module's shared reader: call done when done
	done   func()
	method metadata.MethodInfo
}

// functionParts looks up a function's method (frame as for
// GetFunctionInfo2).
func (x *Info) functionParts(f FunctionID, frame FrameInfo) (funcParts, error) {
	fi, err := x.GetFunctionInfo2(f, frame)
	if err != nil {
		return funcParts{}, fmt.Errorf("clrprof: function %#x: %w", uint64(f), err)
	}
	imp, done, err := x.sharedModuleImport(fi.ModuleID)
	if err != nil {
		return funcParts{}, err
	}
	m, err := imp.Method(fi.Token)
	if err != nil {
		done()
		return funcParts{}, fmt.Errorf("clrprof: method %v of function %#x: %w", fi.Token, uint64(f), err)
	}
	if fi.ClassID == 0 {
		// Shared code of a generic class: the canonical instantiation it
		// belongs to, when the SDK knows it (canonical.go).
		fi.ClassID = x.canonicalClass(f, fi.ModuleID, m.Class, fi.Token, fi.TypeArgs)
	}
	return funcParts{fi, imp, done, m}, nil
}

// methodName joins "Owner.Method<args>".
func methodName(owner, method string, args []string) string {
	var b strings.Builder
	b.WriteString(owner)
	b.WriteByte('.')
	b.WriteString(method)
	if len(args) > 0 {
		b.WriteByte('<')
		b.WriteString(strings.Join(args, ","))
		b.WriteByte('>')
	}
	return b.String()
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
	if arr, isArray, err := x.IsArrayClass(c); err == nil && isArray && arr.Rank > 0 {
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
	imp, done, err := x.sharedModuleImport(ci.ModuleID)
	if err != nil {
		return "", err
	}
	defer done()
	args, err := x.typeArgNames(ci.TypeArgs, depth)
	if err != nil {
		return "", err
	}
	// TypeDefDisplayName shares args out along the nesting chain by arity;
	// they are not nil, so a type without them shows no parameter names.
	return imp.TypeDefDisplayName(ci.TypeDefToken, args)
}

// typeArgName names a class used as a type argument or array element
// type at depth, built-in types by their C# keywords.
func (x *Info) typeArgName(c ClassID, depth int) (string, error) {
	n, err := x.className(c, depth+1)
	if k, ok := keywords[n]; ok {
		n = k
	}
	return n, err
}

// typeArgNames names type arguments with typeArgName (never nil).
func (x *Info) typeArgNames(ids []ClassID, depth int) ([]string, error) {
	names := make([]string, len(ids))
	for i, a := range ids {
		var err error
		if names[i], err = x.typeArgName(a, depth); err != nil {
			return nil, err
		}
	}
	return names, nil
}

// elementName names an array's element type: a class, or a primitive that
// has no ClassID of its own.
func (x *Info) elementName(et metadata.ElementType, c ClassID, depth int) (string, error) {
	if c != 0 {
		return x.typeArgName(c, depth)
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
