package metadata

// The Emit calls whose generated form takes a C array or a constant as a
// raw pointer, with Go types: token lists as slices (the runtime wants them
// terminated by a nil token, which these add), constants as [Constant],
// the saved image as []byte.

import (
	"fmt"
	"unicode/utf16"
	"unsafe"

	com "github.com/clrprof/clrprof/internal/com"
	"github.com/google/uuid"
)

// #include <string.h>
// #include "thunks_gen.h"
import "C"

// Constant is the value of a field, parameter or property constant (the
// ECMA-335 Constant table): the element type of the value and its bytes,
// little-endian, as [PropertyInfo] reports them. Strings are UTF-16LE.
// A nil *Constant means no constant.
type Constant struct {
	// Type is the constant's element type (ElementTypeI4, ElementTypeString, ...).
	Type ElementType
	// Value is the constant's bytes: little-endian, UTF-16 for a string.
	Value []byte
}

// StringConstant is a string constant.
func StringConstant(s string) *Constant {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		b[2*i], b[2*i+1] = byte(c), byte(c>>8)
	}
	return &Constant{Type: ElementTypeString, Value: b}
}

// Int32Constant is an int32 constant.
func Int32Constant(v int32) *Constant {
	return &Constant{Type: ElementTypeI4, Value: []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)}}
}

// args returns what the runtime takes for a constant: its element type,
// the value's address and, for strings, the length in characters.
func (c *Constant) args() (uint32, unsafe.Pointer, uint32, error) {
	if c == nil {
		return uint32(ElementTypeVoid), nil, 0, nil
	}
	want := map[ElementType]int{
		ElementTypeBoolean: 1, ElementTypeI1: 1, ElementTypeU1: 1, ElementTypeChar: 2, ElementTypeI2: 2, ElementTypeU2: 2,
		ElementTypeI4: 4, ElementTypeU4: 4, ElementTypeR4: 4, ElementTypeI8: 8, ElementTypeU8: 8, ElementTypeR8: 8,
		ElementTypeClass: 4,
	}
	switch n, ok := want[c.Type]; {
	case c.Type == ElementTypeString:
		if len(c.Value)%2 != 0 {
			return 0, nil, 0, fmt.Errorf("metadata: string constant of %d bytes: UTF-16 needs an even count", len(c.Value))
		}
		if len(c.Value) == 0 {
			return uint32(c.Type), unsafe.Pointer(&[2]byte{}), 0, nil
		}
		return uint32(c.Type), unsafe.Pointer(&c.Value[0]), uint32(len(c.Value) / 2), nil
	case !ok:
		return 0, nil, 0, fmt.Errorf("metadata: %v is not a type a constant can have", c.Type)
	case len(c.Value) != n:
		return 0, nil, 0, fmt.Errorf("metadata: %v constant of %d bytes, want %d", c.Type, len(c.Value), n)
	}
	return uint32(c.Type), unsafe.Pointer(&c.Value[0]), 0, nil
}

// nilTerminated returns tokens followed by a nil token, as C arrays
// without a count are passed.
func nilTerminated(tokens []Token) unsafe.Pointer {
	t := make([]Token, len(tokens)+1)
	copy(t, tokens)
	return unsafe.Pointer(&t[0])
}

func nilEmit2() error { return com.NilObject("IMetaDataEmit2") }

// DefineTypeDef defines a top-level type: its namespace-qualified name,
// attributes, base type (a TypeDef, TypeRef or TypeSpec; nil for
// interfaces) and the interfaces it implements.
func (x *Emit2) DefineTypeDef(fullName string, flags TypeAttr, extends Token, implements []Token) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	return x.defineTypeDef(fullName, uint32(flags), extends, nilTerminated(implements))
}

// DefineNestedType defines a type nested in enclosing.
func (x *Emit2) DefineNestedType(name string, flags TypeAttr, extends Token, implements []Token, enclosing Token) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	return x.defineNestedType(name, uint32(flags), extends, nilTerminated(implements), enclosing)
}

// SetTypeDefProps changes a TypeDef's attributes, base type and
// interfaces. A flags of ^TypeAttr(0), or an extends of ^Token(0), keeps
// the current value; implements nil keeps the current interfaces.
func (x *Emit2) SetTypeDefProps(td Token, flags TypeAttr, extends Token, implements []Token) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	var impl unsafe.Pointer
	if implements != nil {
		impl = nilTerminated(implements)
	}
	return x.setTypeDefProps(td, uint32(flags), extends, impl)
}

// DefineField defines a field of td with its signature blob (see
// [FieldSig]) and an optional constant.
func (x *Emit2) DefineField(td Token, name string, flags FieldAttr, sig []byte, value *Constant) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	typ, p, n, err := value.args()
	if err != nil {
		return 0, err
	}
	return x.defineField(td, name, uint32(flags), sig, typ, p, n)
}

// SetFieldProps changes a field's attributes and constant.
func (x *Emit2) SetFieldProps(fd Token, flags FieldAttr, value *Constant) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	typ, p, n, err := value.args()
	if err != nil {
		return err
	}
	return x.setFieldProps(fd, uint32(flags), typ, p, n)
}

// PropertyDef is what [Emit2.DefineProperty] and [Emit2.SetPropertyProps]
// take.
type PropertyDef struct {
	// Flags are the property's attributes.
	Flags PropertyAttr
	// Default is the property's constant value, nil for none.
	Default *Constant
	// Setter and Getter are the MethodDefs of its set and get methods
	// (0 for none).
	Setter, Getter Token
	// Other are the MethodDefs of its other methods.
	Other []Token
}

// DefineProperty defines a property of td with its signature blob.
func (x *Emit2) DefineProperty(td Token, name string, sig []byte, p PropertyDef) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	typ, v, n, err := p.Default.args()
	if err != nil {
		return 0, err
	}
	return x.defineProperty(td, name, uint32(p.Flags), sig, typ, v, n, p.Setter, p.Getter, nilTerminated(p.Other))
}

// SetPropertyProps changes a property.
func (x *Emit2) SetPropertyProps(prop Token, p PropertyDef) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	typ, v, n, err := p.Default.args()
	if err != nil {
		return err
	}
	return x.setPropertyProps(prop, uint32(p.Flags), typ, v, n, p.Setter, p.Getter, nilTerminated(p.Other))
}

// DefineParam defines parameter seq (1 for the first, 0 for the return
// value) of md, with an optional default value.
func (x *Emit2) DefineParam(md Token, seq uint32, name string, flags ParamAttr, value *Constant) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	typ, p, n, err := value.args()
	if err != nil {
		return 0, err
	}
	return x.defineParam(md, seq, name, uint32(flags), typ, p, n)
}

// SetParamProps changes a parameter's name, attributes and default value.
func (x *Emit2) SetParamProps(pd Token, name string, flags ParamAttr, value *Constant) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	typ, p, n, err := value.args()
	if err != nil {
		return err
	}
	return x.setParamProps(pd, name, uint32(flags), typ, p, n)
}

// EventDef is what [Emit2.DefineEvent] and [Emit2.SetEventProps] take.
type EventDef struct {
	// Flags are the event's attributes.
	Flags EventAttr
	Type  Token // the delegate type
	// AddOn, RemoveOn and Fire are the MethodDefs of the event's add,
	// remove and raise methods (0 for none).
	AddOn, RemoveOn, Fire Token
	// Other are the MethodDefs of its other methods.
	Other []Token
}

// DefineEvent defines an event of td.
func (x *Emit2) DefineEvent(td Token, name string, e EventDef) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	return x.defineEvent(td, name, uint32(e.Flags), e.Type, e.AddOn, e.RemoveOn, e.Fire, nilTerminated(e.Other))
}

// SetEventProps changes an event.
func (x *Emit2) SetEventProps(ev Token, e EventDef) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	return x.setEventProps(ev, uint32(e.Flags), e.Type, e.AddOn, e.RemoveOn, e.Fire, nilTerminated(e.Other))
}

// SetClassLayout sets a type's packing, explicit field offsets and size.
func (x *Emit2) SetClassLayout(td Token, pack uint32, offsets []FieldOffset, size uint32) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	o := make([]FieldOffset, len(offsets)+1)
	copy(o, offsets)
	o[len(offsets)].Field = Token(MdtFieldDef) // mdFieldDefNil ends the list
	return x.setClassLayout(td, pack, unsafe.Pointer(&o[0]), size)
}

// maxImage bounds the metadata image SaveToMemory accepts from GetSaveSize.
const maxImage = 1 << 30

// SaveToMemory returns the scope's metadata image (what a compiler writes
// into a PE file's metadata section).
func (x *Emit2) SaveToMemory() ([]byte, error) {
	if x == nil || x.p == nil {
		return nil, nilEmit2()
	}
	n, err := x.GetSaveSize(CssAccurate)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > maxImage {
		return nil, fmt.Errorf("metadata: GetSaveSize reported %d bytes", n)
	}
	buf := make([]byte, n)
	if err := x.saveToMemory(unsafe.Pointer(&buf[0]), n); err != nil {
		return nil, err
	}
	return buf, nil
}

// OpenScopeOnMemory opens the metadata image in data (for example one
// returned by [Emit2.SaveToMemory]) and returns the interface iid of it.
// The runtime copies data (ofCopyMemory is always added): data may be
// reused when the call returns.
func (x *Dispenser) OpenScopeOnMemory(data []byte, flags OpenFlags, iid uuid.UUID) (*Unknown, error) {
	if x == nil || x.p == nil {
		return nil, com.NilObject("IMetaDataDispenser")
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("metadata: OpenScopeOnMemory: empty image")
	}
	return x.openScopeOnMemory(unsafe.Pointer(&data[0]), uint32(len(data)), uint32(flags|OfCopyMemory), iid)
}

// OpenScopeOnMemory is [Dispenser.OpenScopeOnMemory].
func (x *DispenserEx) OpenScopeOnMemory(data []byte, flags OpenFlags, iid uuid.UUID) (*Unknown, error) {
	return x.base().OpenScopeOnMemory(data, flags, iid)
}

// OpenImport opens the metadata of the assembly or module file at path
// for reading. Release the result when done.
func (x *Dispenser) OpenImport(path string) (*Import2, error) {
	unk, err := x.OpenScope(path, OfRead, IIDImport2)
	if err != nil {
		return nil, fmt.Errorf("metadata: open %s: %w", path, err)
	}
	defer unk.Release()
	return QueryImport2(unk)
}

// OpenImport is [Dispenser.OpenImport].
func (x *DispenserEx) OpenImport(path string) (*Import2, error) { return x.base().OpenImport(path) }

// OpenAssemblyImport opens the manifest of the assembly file at path.
// Release the result when done.
func (x *Dispenser) OpenAssemblyImport(path string) (*AssemblyImport, error) {
	unk, err := x.OpenScope(path, OfRead, IIDAssemblyImport)
	if err != nil {
		return nil, fmt.Errorf("metadata: open %s: %w", path, err)
	}
	defer unk.Release()
	return QueryAssemblyImport(unk)
}

// OpenAssemblyImport is [Dispenser.OpenAssemblyImport].
func (x *DispenserEx) OpenAssemblyImport(path string) (*AssemblyImport, error) {
	return x.base().OpenAssemblyImport(path)
}

// MethodImplRow is one row of the MethodImpl table: Body implements Decl
// (an explicit interface implementation or override).
type MethodImplRow struct{ Body, Decl Token }

// MethodImpls returns the MethodImpls of a type.
func (x *Import2) MethodImpls(td Token) ([]MethodImplRow, error) {
	if x == nil || x.p == nil {
		return nil, nilImport2()
	}
	var h EnumHandle
	defer func() {
		if h != 0 {
			x.CloseEnum(h)
		}
	}()
	var all []MethodImplRow
	for {
		decl := make([]Token, 64)
		bodies, err := x.enumMethodImplsN(&h, td, decl)
		if err != nil {
			return all, err
		}
		if len(bodies) == 0 {
			return all, nil
		}
		for i, b := range bodies {
			all = append(all, MethodImplRow{Body: b, Decl: decl[i]})
		}
		if len(all) > maxEnum {
			return all, fmt.Errorf("metadata: more than %d MethodImpls", maxEnum)
		}
	}
}

// enumMethodImplsN is EnumMethodImpls with the declarations in decl (as
// many as it has room for; the bodies come back as the result).
func (x *Import2) enumMethodImplsN(h *EnumHandle, td Token, decl []Token) ([]Token, error) {
	body := make([]Token, len(decl))
	var n C.ULONG
	hr := C.clrprof_IMetaDataImport_EnumMethodImpls((*C.IMetaDataImport)(x.p), (*C.HCORENUM)(unsafe.Pointer(h)), C.mdTypeDef(td),
		(*C.mdToken)(unsafe.Pointer(&body[0])), (*C.mdToken)(unsafe.Pointer(&decl[0])), C.ULONG(len(decl)), &n)
	if hr < 0 {
		return nil, com.HRESULT(hr)
	}
	return body[:min(int(n), len(body))], nil
}

// SaveDeltaToMemory returns the edit-and-continue delta of the scope: what
// changed since it was opened with the MetaDataSetUpdate option set to
// MDUpdateDelta.
func (x *Emit2) SaveDeltaToMemory() ([]byte, error) {
	if x == nil || x.p == nil {
		return nil, nilEmit2()
	}
	n, err := x.GetDeltaSaveSize(CssAccurate)
	if err != nil {
		return nil, err
	}
	if n == 0 || n > maxImage {
		return nil, fmt.Errorf("metadata: GetDeltaSaveSize reported %d bytes", n)
	}
	buf := make([]byte, n)
	if err := x.saveDeltaToMemory(unsafe.Pointer(&buf[0]), n); err != nil {
		return nil, err
	}
	return buf, nil
}

// DefineGenericParam defines generic parameter number index (from 0) of a
// TypeDef or MethodDef, with its constraints (TypeDefs, TypeRefs or
// TypeSpecs).
func (x *Emit2) DefineGenericParam(owner Token, index uint32, flags GenericParamAttr, name string, constraints []Token) (Token, error) {
	if x == nil || x.p == nil {
		return 0, nilEmit2()
	}
	return x.defineGenericParam(owner, index, flags, name, 0, nilTerminated(constraints))
}

// SetGenericParamProps changes a generic parameter's flags, name and
// constraints.
func (x *Emit2) SetGenericParamProps(gp Token, flags GenericParamAttr, name string, constraints []Token) error {
	if x == nil || x.p == nil {
		return nilEmit2()
	}
	return x.setGenericParamProps(gp, flags, name, 0, nilTerminated(constraints))
}

// NameFromToken returns the simple name (UTF-8 in the metadata) of a
// TypeDef, TypeRef, MethodDef, FieldDef, MemberRef, ModuleRef or Module
// token: "String", "WriteLine".
func (x *Import2) NameFromToken(tk Token) (string, error) {
	if x == nil || x.p == nil {
		return "", nilImport2()
	}
	var name *C.char
	if err := x.base().getNameFromToken(tk, unsafe.Pointer(&name)); err != nil {
		return "", err
	}
	if name == nil {
		return "", nil
	}
	return C.GoStringN(name, C.int(C.strnlen(name, maxNameLen))), nil
}
