package gen

import (
	"fmt"

	"github.com/google/uuid"
)

// Pos is a position in an input file. Line and Col are 1-based.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.File == "" {
		return fmt.Sprintf("%d:%d", p.Line, p.Col)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Dir is the direction of a method parameter.
type Dir int

const (
	DirIn Dir = iota
	DirOut
	DirInOut
)

func (d Dir) String() string {
	switch d {
	case DirIn:
		return "in"
	case DirOut:
		return "out"
	case DirInOut:
		return "in,out"
	}
	return fmt.Sprintf("Dir(%d)", int(d))
}

// TypeRef is a C type as written in a declaration: a named base type,
// qualifiers, a pointer depth and an optional array suffix.
type TypeRef struct {
	Name     string // base type name: "ULONG", "WCHAR", "ICorProfilerInfo", "void"
	Const    bool   // const-qualified base type
	Ptr      int    // number of '*' after the base type
	Array    bool   // declared with a [] or [N] suffix on the name
	ArrayLen string // N for a fixed-size array suffix, "" for []
}

// String renders the type in C syntax (without the array suffix).
func (t TypeRef) String() string {
	s := t.Name
	if t.Const {
		s = "const " + s
	}
	for i := 0; i < t.Ptr; i++ {
		s += "*"
	}
	return s
}

// Indirections is the pointer depth counting an array suffix as one pointer,
// which is how a parameter declared as an array is passed.
func (t TypeRef) Indirections() int {
	if t.Array {
		return t.Ptr + 1
	}
	return t.Ptr
}

// Param is one parameter of a method or function-pointer type.
type Param struct {
	Name     string
	Type     TypeRef
	Dir      Dir
	Retval   bool   // [out, retval]
	Optional bool   // may be NULL ([unique], SAL *_opt_)
	SizeIs   string // [size_is(x)] or SAL element count: capacity expression, e.g. "cchName", "*pcbInfo"
	LengthIs string // [length_is(x)] or SAL "to" count: filled-count expression, e.g. "*pcchName"
	Pos      Pos
}

// Method is one vtable member of an interface, in declaration order.
type Method struct {
	Name   string
	Ret    TypeRef // "HRESULT" for nearly all methods
	Params []*Param
	Pos    Pos
}

// Interface is a COM interface: its own methods in vtable order after the
// methods of Base.
type Interface struct {
	Name    string
	Base    string // "" only for IUnknown itself
	IID     uuid.UUID
	Local   bool
	Methods []*Method
	Source  string // input file name, e.g. "corprof.idl" or "cor.h"
	Pos     Pos
}

// EnumValue is one enumerator. Expr is the expression as written ("" when
// implicit); Value is its evaluated value.
type EnumValue struct {
	Name  string
	Expr  string
	Value int64
	Pos   Pos
}

// Enum is a C enum. Name is the typedef name when there is one, otherwise the
// tag.
type Enum struct {
	Name   string
	Tag    string
	Values []*EnumValue
	Source string
	Pos    Pos
}

// Field is a member of a struct or union.
type Field struct {
	Name   string
	Type   TypeRef
	Bits   int     // bit-field width ("unsigned Kind : 8"); 0 when not a bit-field
	Nested *Struct // a struct or union type declared in place; Name is "" for an anonymous member
	Pos    Pos
}

// Struct is a C struct or union.
type Struct struct {
	Name   string
	Tag    string
	Union  bool
	Fields []*Field
	Source string
	Pos    Pos
}

// Typedef is a plain type alias: typedef Type Name.
type Typedef struct {
	Name   string
	Type   TypeRef
	Source string
	Pos    Pos
}

// FuncType is a function or function-pointer typedef (callbacks the runtime
// calls, such as FunctionEnter3 or StackSnapshotCallback).
type FuncType struct {
	Name    string
	Ret     TypeRef
	Pointer bool // declared as (*Name)
	Params  []*Param
	Source  string
	Pos     Pos
}

// ConstKind says what a Const holds.
type ConstKind int

const (
	ConstInt ConstKind = iota
	ConstString
)

// Const is a #define with a constant value, or an HRESULT definition.
type Const struct {
	Name   string
	Kind   ConstKind
	Value  int64  // ConstInt
	Str    string // ConstString
	Expr   string // the replacement text as written
	Source string
	Pos    Pos
}

// GUID is a named GUID (EXTERN_GUID / DEFINE_GUID).
type GUID struct {
	Name   string
	Value  uuid.UUID
	Source string
	Pos    Pos
}

// File is what a parser read from one input file, in declaration order.
type File struct {
	Name       string
	Interfaces []*Interface
	Enums      []*Enum
	Structs    []*Struct
	Typedefs   []*Typedef
	FuncTypes  []*FuncType
	Consts     []*Const
	GUIDs      []*GUID
}

// Interface returns the interface named name, or nil.
func (f *File) Interface(name string) *Interface {
	for _, it := range f.Interfaces {
		if it.Name == name {
			return it
		}
	}
	return nil
}

// Enum returns the enum named name, or nil.
func (f *File) Enum(name string) *Enum {
	for _, e := range f.Enums {
		if e.Name == name {
			return e
		}
	}
	return nil
}
