package metadata

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Name formatting.
//
// Names look like C# with ILAsm's primitive names in signatures:
//
//	Namespace.Outer+Nested<int,string>.Method<float>(int32, string[])
//
// Types are namespace-qualified; a nested type follows its enclosing type
// after '+'. The type arguments of the named type and method (its
// instantiation) use C# keywords for built-in types (int, string, float),
// like the runtime-ID names of package profiler; types inside a signature
// (parameters, fields, locals) use ILAsm's names (int32, string,
// float32, native int, typedref). Arrays are T[], T[,], T[0...,2...5] for
// bounded ones; pointers T*, byrefs T&; custom modifiers follow the type
// ("int32 modreq(System.Runtime.CompilerServices.IsVolatile)"); pinned
// locals end in " pinned". Generic parameters are named when the context
// knows them (T, U) and written !0 / !!0 otherwise.

// ilasmNames are ILAsm's names of the primitive element types.
var ilasmNames = map[ElementType]string{
	ElementTypeVoid: "void", ElementTypeBoolean: "bool", ElementTypeChar: "char",
	ElementTypeI1: "int8", ElementTypeU1: "uint8", ElementTypeI2: "int16", ElementTypeU2: "uint16",
	ElementTypeI4: "int32", ElementTypeU4: "uint32", ElementTypeI8: "int64", ElementTypeU8: "uint64",
	ElementTypeR4: "float32", ElementTypeR8: "float64", ElementTypeString: "string", ElementTypeObject: "object",
	ElementTypeI: "native int", ElementTypeU: "native uint", ElementTypeTypedbyref: "typedref",
}

// csharpNames are C#'s keywords for the primitive element types.
var csharpNames = map[ElementType]string{
	ElementTypeVoid: "void", ElementTypeBoolean: "bool", ElementTypeChar: "char",
	ElementTypeI1: "sbyte", ElementTypeU1: "byte", ElementTypeI2: "short", ElementTypeU2: "ushort",
	ElementTypeI4: "int", ElementTypeU4: "uint", ElementTypeI8: "long", ElementTypeU8: "ulong",
	ElementTypeR4: "float", ElementTypeR8: "double", ElementTypeString: "string", ElementTypeObject: "object",
	ElementTypeI: "nint", ElementTypeU: "nuint", ElementTypeTypedbyref: "TypedReference",
}

// systemTypes maps the System types that have an element type of their own.
var systemTypes = map[string]ElementType{
	"System.Void": ElementTypeVoid, "System.Boolean": ElementTypeBoolean, "System.Char": ElementTypeChar,
	"System.SByte": ElementTypeI1, "System.Byte": ElementTypeU1, "System.Int16": ElementTypeI2,
	"System.UInt16": ElementTypeU2, "System.Int32": ElementTypeI4, "System.UInt32": ElementTypeU4,
	"System.Int64": ElementTypeI8, "System.UInt64": ElementTypeU8, "System.Single": ElementTypeR4,
	"System.Double": ElementTypeR8, "System.String": ElementTypeString, "System.Object": ElementTypeObject,
	"System.IntPtr": ElementTypeI, "System.UIntPtr": ElementTypeU, "System.TypedReference": ElementTypeTypedbyref,
}

// Style chooses the names of built-in types.
type Style int

const (
	// ILAsm names built-in types int32, string, float32, native int.
	ILAsm Style = iota
	// CSharp names them int, string, float, nint.
	CSharp
)

// PrimitiveName returns the name of a primitive element type in a style
// ("" when k is not primitive).
func PrimitiveName(k ElementType, s Style) string {
	if s == CSharp {
		return csharpNames[k]
	}
	return ilasmNames[k]
}

// BuiltinName returns the style's name for a System type that has an
// element type of its own ("System.Int32" → "int32" or "int"), and fullName
// unchanged otherwise.
func BuiltinName(fullName string, s Style) string {
	if k, ok := systemTypes[fullName]; ok {
		return PrimitiveName(k, s)
	}
	return fullName
}

// GenericContext says how generic parameters are written: TypeArgs[i] for
// !i and MethodArgs[i] for !!i (parameter names like "T", or the names of
// an instantiation's arguments). Missing entries print as !i and !!i.
type GenericContext struct {
	TypeArgs   []string
	MethodArgs []string
}

func (c *GenericContext) arg(mvar bool, i uint32) string {
	var list []string
	prefix := "!"
	if c != nil {
		list = c.TypeArgs
	}
	if mvar {
		prefix = "!!"
		list = nil
		if c != nil {
			list = c.MethodArgs
		}
	}
	if int(i) < len(list) && list[i] != "" {
		return list[i]
	}
	return prefix + strconv.FormatUint(uint64(i), 10)
}

// nestingChain returns the names of a type and of the types it is nested
// in, innermost first, with their `n arity suffixes. step names one type
// and tells whether it is nested in outer.
func nestingChain(what string, tk Token, step func(Token) (name string, outer Token, nested bool, err error)) ([]string, error) {
	var chain []string
	for depth := 0; ; depth++ {
		if depth > MaxSigDepth {
			return nil, fmt.Errorf("metadata: %s %v: nesting deeper than %d", what, tk, MaxSigDepth)
		}
		name, outer, nested, err := step(tk)
		if err != nil {
			return nil, fmt.Errorf("metadata: %s %v: %w", what, tk, err)
		}
		chain = append(chain, name)
		if !nested {
			return chain, nil
		}
		tk = outer
	}
}

// joinChain joins a nesting chain into "Outer+Inner".
func joinChain(chain []string, err error) (string, error) {
	if err != nil {
		return "", err
	}
	slices.Reverse(chain)
	return strings.Join(chain, "+"), nil
}

// FormatArrayShape writes an array's brackets: [,] for rank 2 without
// sizes (a lower bound of 0 is the default and not shown), [0...3,2...]
// with sizes and other lower bounds.
func FormatArrayShape(s ArrayShape) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := 0; i < int(s.Rank); i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		lo, hasLo := int64(0), i < len(s.LoBounds)
		if hasLo {
			lo = int64(s.LoBounds[i])
		}
		switch {
		case i < len(s.Sizes):
			fmt.Fprintf(&b, "%d...%d", lo, lo+int64(s.Sizes[i])-1)
		case hasLo && lo != 0:
			fmt.Fprintf(&b, "%d...", lo)
		}
	}
	b.WriteByte(']')
	return b.String()
}

// StripArity removes the `n suffix of a generic type's name ("List`1" →
// "List"), in every nesting level.
func StripArity(name string) string {
	if !strings.Contains(name, "`") {
		return name
	}
	parts := strings.Split(name, "+")
	for i, p := range parts {
		if j := strings.LastIndexByte(p, '`'); j >= 0 {
			if _, err := strconv.Atoi(p[j+1:]); err == nil {
				parts[i] = p[:j]
			}
		}
	}
	return strings.Join(parts, "+")
}

// distributeArgs joins a nesting chain (innermost first, names with their
// `n arity suffixes) into "Outer<a>+Inner<b>".
func distributeArgs(chain []string, args []string) string {
	var b strings.Builder
	used := 0
	for i := len(chain) - 1; i >= 0; i-- {
		if i != len(chain)-1 {
			b.WriteByte('+')
		}
		name := chain[i]
		arity := 0
		if j := strings.LastIndexByte(name, '`'); j >= 0 {
			if n, err := strconv.Atoi(name[j+1:]); err == nil && n >= 0 {
				name, arity = name[:j], n
			}
		}
		b.WriteString(name)
		end := min(used+arity, len(args))
		if i == 0 {
			end = len(args)
		}
		if end > used {
			b.WriteByte('<')
			b.WriteString(strings.Join(args[used:end], ","))
			b.WriteByte('>')
		}
		used = max(used, end)
	}
	return b.String()
}
