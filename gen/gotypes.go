package gen

import (
	"strings"

	"github.com/dave/jennifer/jen"
)

// Kind classifies a C type for the Go mapping.
type Kind int

const (
	KindUnknown Kind = iota
	KindVoid
	KindBool    // BOOL: C int, Go bool
	KindNumber  // integers: Go basic type in GoBasic
	KindID      // profiler ID typedefs: named Go types
	KindToken   // mdToken family: metadata.Token
	KindEnum    // enums: named Go types
	KindStruct  // structs and unions mirrored in Go
	KindIface   // COM interfaces: wrapper types
	KindGUID    // GUID: uuid.UUID
	KindHRESULT // HRESULT
	KindWCHAR   // UTF-16 code unit
	KindFunc    // function types: C function pointers
	KindAddr    // an address in the process (UINT_PTR, a pointer to runtime memory): metadata.Address
)

// addressInfo is the Go view of an address: the named type metadata.Address
// (aliased as profiler.Address) rather than uintptr or unsafe.Pointer.
func (m *TypeMapper) addressInfo(cname string) TypeInfo {
	ti := TypeInfo{Kind: KindAddr, CName: cname, GoName: "Address", GoBasic: "uintptr"}
	if m.Pkg != tokenPkg && m.Pkg != profilerPkg { // profiler.Address aliases it
		ti.GoPkg = tokenPkg
	}
	return ti
}

var basicNumbers = map[string]string{
	"BYTE": "uint8", "UINT8": "uint8", "UCHAR": "uint8", "unsigned char": "uint8", "COR_SIGNATURE": "uint8",
	"CHAR": "int8", "char": "int8",
	"USHORT": "uint16", "WORD": "uint16", "unsigned short": "uint16",
	"SHORT": "int16", "short": "int16",
	"ULONG": "uint32", "DWORD": "uint32", "UINT": "uint32", "UINT32": "uint32", "ULONG32": "uint32", "unsigned int": "uint32", "unsigned long": "uint32", "unsigned": "uint32",
	"LONG": "int32", "INT": "int32", "INT32": "int32", "LONG32": "int32", "int": "int32", "long": "int32",
	"ULONGLONG": "uint64", "UINT64": "uint64", "ULONG64": "uint64", "unsigned __int64": "uint64", "DWORD64": "uint64",
	"LONGLONG": "int64", "INT64": "int64", "__int64": "int64", "long long": "int64",
	"UINT_PTR": "uintptr", "ULONG_PTR": "uintptr", "SIZE_T": "uint64", "DWORD_PTR": "uintptr",
	"INT_PTR": "int", "LONG_PTR": "int", "SSIZE_T": "int",
	"float": "float32", "double": "float64",
	"uint8_t": "uint8", "int8_t": "int8", "uint16_t": "uint16", "int16_t": "int16", "uint32_t": "uint32",
	"int32_t": "int32", "uint64_t": "uint64", "int64_t": "int64", "uintptr_t": "uintptr", "size_t": "uint64",
}

// TypeInfo is the Go view of a C type name at pointer depth zero.
type TypeInfo struct {
	Kind    Kind
	CName   string // the name to use after "C." in cgo
	GoName  string // Go type name (basic, or named in the package)
	GoPkg   string // import path when the Go type lives in another package
	Iface   *Interface
	Enum    *Enum
	Struct  *Struct
	Func    *FuncType
	GoBasic string // underlying Go basic type for numbers, IDs and enums
	// PtrTypedef marks an ID whose C type is a pointer typedef: converted to
	// C by reinterpreting its bits, never by a uintptr→pointer conversion.
	PtrTypedef bool
}

// Code returns the jennifer reference to the Go type.
func (ti TypeInfo) Code() *jen.Statement {
	switch ti.Kind {
	case KindBool:
		return jen.Bool()
	case KindGUID:
		return jen.Qual("github.com/google/uuid", "UUID")
	case KindFunc:
		return jen.Qual("unsafe", "Pointer")
	}
	if ti.GoPkg != "" {
		return jen.Qual(ti.GoPkg, ti.GoName)
	}
	return jen.Id(ti.GoName)
}

// TypeMapper maps C types to Go types for one output package.
type TypeMapper struct {
	U       *Universe
	Pkg     string          // import path of the package being generated
	IDs     map[string]bool // typedef names that become named Go ID types here
	Tokens  map[string]bool // typedef names of the mdToken family
	Renames map[string]string
	// Unexported are the C structs whose Go mirror is unexported here
	// (Overlay.Unexported).
	Unexported map[string]bool
	Docs       *Docs // idl/docs.txt, for the docs of enums and constants
	// ValueEnums are enums never treated as flags (Overlay.ValueEnums).
	ValueEnums map[string]bool
}

// tokenPkg is where metadata.Token lives.
const tokenPkg = "github.com/clrprof/clrprof/metadata"

// Info classifies a type name (ignoring pointers) after typedef resolution,
// keeping the first name along the typedef chain that has a Go meaning.
func (m *TypeMapper) Info(name string) TypeInfo {
	for i := 0; i < 32; i++ {
		switch {
		case name == "void":
			return TypeInfo{Kind: KindVoid, CName: "void"}
		case name == "BOOL":
			return TypeInfo{Kind: KindBool, CName: "BOOL", GoBasic: "int32"}
		case name == "HRESULT":
			return TypeInfo{Kind: KindHRESULT, CName: "HRESULT", GoName: "HRESULT", GoBasic: "int32"}
		case name == "WCHAR":
			return TypeInfo{Kind: KindWCHAR, CName: "WCHAR", GoName: "uint16", GoBasic: "uint16"}
		case name == "GUID" || name == "IID" || name == "CLSID":
			return TypeInfo{Kind: KindGUID, CName: "GUID"}
		case m.Tokens[name]:
			ti := TypeInfo{Kind: KindToken, CName: name, GoName: "Token", GoBasic: "uint32"}
			if m.Pkg != tokenPkg {
				ti.GoPkg = tokenPkg
			}
			return ti
		case name == "UINT_PTR" || name == "ULONG_PTR" || name == "DWORD_PTR":
			return m.addressInfo(name)
		case m.IDs[name]:
			r := m.U.Resolve(TypeRef{Name: name})
			if r.Ptr > 0 {
				return TypeInfo{Kind: KindID, CName: name, GoName: m.goTypeName(name), GoBasic: "uintptr", PtrTypedef: true}
			}
			return TypeInfo{Kind: KindID, CName: name, GoName: m.goTypeName(name), GoBasic: basicNumbers[r.Name]}
		}
		if it, ok := m.U.Interfaces[name]; ok {
			return TypeInfo{Kind: KindIface, CName: name, GoName: InterfaceGoName(name), Iface: it}
		}
		if name == "IUnknown" {
			return TypeInfo{Kind: KindIface, CName: "IUnknown", GoName: "Unknown"}
		}
		if e, ok := m.U.Enums[name]; ok {
			return TypeInfo{Kind: KindEnum, CName: name, GoName: m.goTypeName(name), Enum: e, GoBasic: enumBasic(e)}
		}
		if s, ok := m.U.Structs[name]; ok {
			if s.Union {
				// Unions in these inputs are pointer-sized tagged values.
				return TypeInfo{Kind: KindNumber, CName: name, GoName: "uintptr", GoBasic: "uintptr"}
			}
			return TypeInfo{Kind: KindStruct, CName: name, GoName: m.goTypeName(name), Struct: s}
		}
		if f, ok := m.U.FuncTypes[name]; ok {
			return TypeInfo{Kind: KindFunc, CName: name, Func: f}
		}
		if b, ok := basicNumbers[name]; ok {
			return TypeInfo{Kind: KindNumber, CName: name, GoName: b, GoBasic: b}
		}
		td, ok := m.U.Typedefs[name]
		if !ok || td.Type.Ptr > 0 || td.Type.Array {
			return TypeInfo{Kind: KindUnknown, CName: name}
		}
		name = td.Type.Name
	}
	return TypeInfo{Kind: KindUnknown, CName: name}
}

func (m *TypeMapper) goTypeName(c string) string {
	n := m.exportedTypeName(c)
	if m.Unexported[c] {
		n = UnexportedName(n)
	}
	return n
}

// exportedTypeName is the name c has where it is exported.
func (m *TypeMapper) exportedTypeName(c string) string {
	if r, ok := m.Renames[c]; ok {
		return r
	}
	return TypeName(c)
}

func enumBasic(e *Enum) string {
	for _, v := range e.Values {
		if v.Value < 0 {
			return "int32"
		}
	}
	return "uint32"
}

// Norm resolves pointer typedefs (LPCBYTE → const BYTE*, REFIID → const
// GUID*, PCCOR_SIGNATURE → const COR_SIGNATURE*) so that the pointer depth
// is explicit, while keeping meaningful scalar names (FunctionID stays).
func (m *TypeMapper) Norm(t TypeRef) TypeRef {
	for i := 0; i < 32; i++ {
		if b, ok := builtinPointers[t.Name]; ok {
			b.Ptr += t.Ptr
			b.Array, b.ArrayLen = t.Array, t.ArrayLen
			t = b
			continue
		}
		td, ok := m.U.Typedefs[t.Name]
		if !ok || td.Type.Ptr == 0 || m.IDs[t.Name] || opaqueHandles[t.Name] {
			return t
		}
		nt := td.Type
		nt.Ptr += t.Ptr
		nt.Array, nt.ArrayLen = t.Array, t.ArrayLen
		nt.Const = nt.Const || t.Const
		t = nt
	}
	return t
}

// builtinPointers are the pointer typedefs of comtypes.h.
var builtinPointers = map[string]TypeRef{
	"REFGUID": {Name: "GUID", Const: true, Ptr: 1}, "REFIID": {Name: "GUID", Const: true, Ptr: 1},
	"REFCLSID": {Name: "GUID", Const: true, Ptr: 1}, "LPCGUID": {Name: "GUID", Const: true, Ptr: 1},
	"LPCBYTE": {Name: "BYTE", Const: true, Ptr: 1}, "LPBYTE": {Name: "BYTE", Ptr: 1},
	"LPCWSTR": {Name: "WCHAR", Const: true, Ptr: 1}, "LPWSTR": {Name: "WCHAR", Ptr: 1},
	"PVOID": {Name: "void", Ptr: 1}, "LPVOID": {Name: "void", Ptr: 1}, "LPCVOID": {Name: "void", Const: true, Ptr: 1},
	"LPCSTR": {Name: "char", Const: true, Ptr: 1}, "LPSTR": {Name: "char", Ptr: 1},
}

// opaqueHandles are pointer typedefs kept by name: Go sees them as handles.
var opaqueHandles = map[string]bool{"HCORENUM": true}

// cTypeString returns the spelling of a C type for use in generated C code.
func cTypeString(t TypeRef) string {
	s := t.Name
	if t.Const {
		s = "const " + s
	}
	if t.Ptr > 0 {
		s += " " + strings.Repeat("*", t.Ptr)
	}
	return s
}
