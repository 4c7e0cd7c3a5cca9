//go:build cgo

package metadata

import (
	"fmt"

	"github.com/clrprof/clrprof/internal/cgoutil"

	com "github.com/clrprof/clrprof/internal/com"
)

// The idiomatic layer over IMetaDataImport2, IMetaDataAssemblyImport and
// IMetaDataEmit2: whole enumerations as slices, properties as structs with
// names split into namespace and name, signatures as blobs ready for the
// Parse functions. Every method answers a nil receiver with an error.

// recordNotFound is CLDB_E_RECORD_NOTFOUND, the answer of the Find methods
// for a name that is not there.
const recordNotFound = com.HRESULT(-2146234064)

// ErrNotFound matches the error of lookups (FindTypeDefByName, FindTypeRef,
// ...) that found nothing: errors.Is(err, metadata.ErrNotFound). It is the
// runtime's CLDB_E_RECORD_NOTFOUND.
var ErrNotFound error = recordNotFound

// maxEnum bounds how many tokens an enumeration collects (the token space
// has 2^24 rows per table).
const maxEnum = 1 << 24

// enumAll runs an Enum method to its end and closes the enumeration.
func enumAll(closeEnum func(EnumHandle), next func(*EnumHandle) ([]Token, error)) ([]Token, error) {
	var h EnumHandle
	defer func() {
		if h != 0 {
			closeEnum(h)
		}
	}()
	var all []Token
	for {
		batch, err := next(&h)
		if err != nil {
			return all, err
		}
		if len(batch) == 0 {
			return all, nil
		}
		all = append(all, batch...)
		if len(all) > maxEnum {
			return all, fmt.Errorf("metadata: enumeration of more than %d tokens", maxEnum)
		}
	}
}

func nilImport2() error { return com.NilObject("IMetaDataImport2") }

func (x *Import2) enum(next func(*EnumHandle) ([]Token, error)) ([]Token, error) {
	if x == nil || x.p == nil {
		return nil, nilImport2()
	}
	return enumAll(x.Import.CloseEnum, next)
}

// TypeDefs returns every TypeDef of the module except <Module>.
func (x *Import2) TypeDefs() ([]Token, error) { return x.enum(x.base().EnumTypeDefs) }

// TypeRefs returns every TypeRef.
func (x *Import2) TypeRefs() ([]Token, error) { return x.enum(x.base().EnumTypeRefs) }

// TypeSpecs returns every TypeSpec.
func (x *Import2) TypeSpecs() ([]Token, error) { return x.enum(x.base().EnumTypeSpecs) }

// ModuleRefs returns every ModuleRef.
func (x *Import2) ModuleRefs() ([]Token, error) { return x.enum(x.base().EnumModuleRefs) }

// Signatures returns every StandAloneSig (local-variable and call-site
// signatures).
func (x *Import2) Signatures() ([]Token, error) { return x.enum(x.base().EnumSignatures) }

// UserStrings returns every user string.
func (x *Import2) UserStrings() ([]Token, error) { return x.enum(x.base().EnumUserStrings) }

// Methods returns the methods of a TypeDef (0: the global functions).
func (x *Import2) Methods(td Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumMethods(h, td) })
}

// MethodsWithName returns the methods of a TypeDef with the given name.
func (x *Import2) MethodsWithName(td Token, name string) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumMethodsWithName(h, td, name) })
}

// Fields returns the fields of a TypeDef (0: the global fields).
func (x *Import2) Fields(td Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumFields(h, td) })
}

// Properties returns the properties of a TypeDef.
func (x *Import2) Properties(td Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumProperties(h, td) })
}

// Events returns the events of a TypeDef.
func (x *Import2) Events(td Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumEvents(h, td) })
}

// Params returns the Param rows of a MethodDef.
func (x *Import2) Params(md Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumParams(h, md) })
}

// InterfaceImpls returns the InterfaceImpl rows of a TypeDef.
func (x *Import2) InterfaceImpls(td Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumInterfaceImpls(h, td) })
}

// MemberRefs returns the MemberRefs whose parent is tk (a TypeRef,
// TypeSpec, ModuleRef, MethodDef or TypeDef).
func (x *Import2) MemberRefs(parent Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumMemberRefs(h, parent) })
}

// CustomAttributes returns the custom attributes on tk whose constructor
// belongs to attrType (0: all of them; tk 0: every custom attribute of the
// module).
func (x *Import2) CustomAttributes(tk, attrType Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.base().EnumCustomAttributes(h, tk, attrType) })
}

// GenericParams returns the generic parameters of a TypeDef or MethodDef,
// in order.
func (x *Import2) GenericParams(owner Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.EnumGenericParams(h, owner) })
}

// MethodSpecs returns the MethodSpecs of a MethodDef or MemberRef (0: all
// of the module's).
func (x *Import2) MethodSpecs(tk Token) ([]Token, error) {
	return x.enum(func(h *EnumHandle) ([]Token, error) { return x.EnumMethodSpecs(h, tk) })
}

// AllMemberRefs returns every MemberRef of the module. There is no
// enumeration of them all; the MemberRef table's rows are numbered 1..n, so
// this walks them until IsValidToken says no.
func (x *Import2) AllMemberRefs() ([]Token, error) { return x.allRows(MdtMemberRef) }

// AllMethodSpecs returns every MethodSpec of the module.
func (x *Import2) AllMethodSpecs() ([]Token, error) { return x.allRows(MdtMethodSpec) }

func (x *Import2) allRows(table TokenType) ([]Token, error) {
	if x == nil || x.p == nil {
		return nil, nilImport2()
	}
	var out []Token
	for rid := uint32(1); rid < 1<<24; rid++ {
		tk := Token(uint32(table) | rid)
		if !x.IsValidToken(tk) {
			break
		}
		out = append(out, tk)
	}
	return out, nil
}

// TypeDefInfo describes a TypeDef.
type TypeDefInfo struct {
	// Token is the TypeDef token.
	Token     Token
	Namespace string // empty for nested types
	// Name is the type's name ("List`1" for a generic type).
	Name string
	// Flags are the type's attributes (TdPublic, TdInterface, ...).
	Flags     TypeAttr
	Extends   Token // base type: TypeDef, TypeRef, TypeSpec or nil
	Enclosing Token // enclosing TypeDef of a nested type, else 0
}

// IsNested reports whether the type is nested in another.
func (t TypeDefInfo) IsNested() bool { return !t.Enclosing.IsNil() }

// TypeDef returns the properties of a TypeDef.
func (x *Import2) TypeDef(td Token) (TypeDefInfo, error) {
	r, err := x.base().GetTypeDefProps(td)
	if err != nil {
		return TypeDefInfo{}, err
	}
	info := TypeDefInfo{Token: td, Flags: TypeAttr(r.TypeDefFlags), Extends: r.Extends}
	info.Namespace, info.Name = SplitTypeName(r.TypeDef)
	if TypeAttr(r.TypeDefFlags)&TdVisibilityMask >= TdNestedPublic {
		enc, err := x.GetNestedClassProps(td)
		if err != nil {
			return info, fmt.Errorf("metadata: enclosing type of %v: %w", td, err)
		}
		info.Enclosing = enc
	}
	return info, nil
}

// TypeRefInfo describes a TypeRef.
type TypeRefInfo struct {
	// Token is the TypeRef token.
	Token Token
	Scope Token // ResolutionScope: AssemblyRef, ModuleRef, Module or (nested) TypeRef
	// Namespace and Name are the referenced type's names.
	Namespace string
	// Name: see Namespace.
	Name string
}

// TypeRef returns the properties of a TypeRef.
func (x *Import2) TypeRef(tr Token) (TypeRefInfo, error) {
	r, err := x.base().GetTypeRefProps(tr)
	if err != nil {
		return TypeRefInfo{}, err
	}
	info := TypeRefInfo{Token: tr, Scope: r.ResolutionScope}
	info.Namespace, info.Name = SplitTypeName(r.Name)
	return info, nil
}

// MethodInfo describes a MethodDef.
type MethodInfo struct {
	// Token is the MethodDef token.
	Token Token
	// Class is the TypeDef that declares the method.
	Class Token
	// Name is the method's name (".ctor" for a constructor).
	Name string
	// Flags are the method's attributes (MdStatic, MdVirtual, ...).
	Flags MethodAttr
	// Sig is the method's signature blob (MethodSig decodes it).
	Sig []byte
	// RVA is where the method's IL body lies in the image, 0 for a method
	// without one (abstract, extern, runtime-implemented).
	RVA uint32
	// ImplFlags are the method's implementation flags (MiIL,
	// MiNoInlining, ...).
	ImplFlags MethodImpl
}

// Method returns the properties of a MethodDef.
func (x *Import2) Method(md Token) (MethodInfo, error) {
	r, err := x.base().GetMethodProps(md)
	if err != nil {
		return MethodInfo{}, err
	}
	return MethodInfo{Token: md, Class: r.Class, Name: r.Method, Flags: MethodAttr(r.Attr), Sig: r.SigBlob,
		RVA: r.CodeRVA, ImplFlags: MethodImpl(r.ImplFlags)}, nil
}

// FieldInfo describes a FieldDef.
type FieldInfo struct {
	// Token is the FieldDef token.
	Token Token
	// Class is the TypeDef that declares the field.
	Class Token
	// Name is the field's name.
	Name string
	// Flags are the field's attributes (FdStatic, FdPublic, ...).
	Flags FieldAttr
	// Sig is the field's signature blob (FieldSig decodes it).
	Sig []byte
	// DefaultType is the element type of the field's constant value, 0
	// when it has none.
	DefaultType ElementType
	// Default is the constant's bytes (little-endian; UTF-16 for strings),
	// empty when the field has no constant.
	Default []byte
}

// Field returns the properties of a FieldDef.
func (x *Import2) Field(fd Token) (FieldInfo, error) {
	if x == nil {
		return FieldInfo{}, nilImport2()
	}
	return x.Import.fieldRaw(fd)
}

// Property returns the properties of a Property row.
func (x *Import2) Property(prop Token) (PropertyInfo, error) {
	if x == nil {
		return PropertyInfo{}, nilImport2()
	}
	return x.Import.propertyRaw(prop)
}

// Event returns the properties of an Event row.
func (x *Import2) Event(ev Token) (EventInfo, error) {
	if x == nil {
		return EventInfo{}, nilImport2()
	}
	return x.Import.eventRaw(ev)
}

// ParamInfo describes a Param row.
type ParamInfo struct {
	// Token is the Param token.
	Token Token
	// Method is the MethodDef the parameter belongs to.
	Method   Token
	Sequence uint32 // 0 is the return value, 1 the first parameter
	// Name is the parameter's name (empty for the return value).
	Name string
	// Flags are the parameter's attributes (PdIn, PdOut, PdOptional, ...).
	Flags ParamAttr
}

// Param returns the properties of a Param row.
func (x *Import2) Param(pd Token) (ParamInfo, error) {
	r, err := x.base().getParamProps(pd)
	if err != nil {
		return ParamInfo{}, err
	}
	return ParamInfo{Token: pd, Method: r.Method, Sequence: r.Sequence, Name: r.Name, Flags: ParamAttr(r.Attr)}, nil
}

// MemberRefInfo describes a MemberRef.
type MemberRefInfo struct {
	// Token is the MemberRef token.
	Token  Token
	Parent Token // TypeRef, TypeDef, TypeSpec, ModuleRef or MethodDef
	// Name is the member's name.
	Name string
	Sig  []byte // a method or field signature
}

// MemberRef returns the properties of a MemberRef.
func (x *Import2) MemberRef(mr Token) (MemberRefInfo, error) {
	if x == nil {
		return MemberRefInfo{}, nilImport2()
	}
	p, name, sig, err := x.Import.memberRefRaw(mr)
	if err != nil {
		return MemberRefInfo{}, err
	}
	return MemberRefInfo{Token: mr, Parent: p, Name: name, Sig: sig}, nil
}

// MethodSpecInfo describes a MethodSpec.
type MethodSpecInfo struct {
	// Token is the MethodSpec token.
	Token  Token
	Method Token // the generic MethodDef or MemberRef
	// Sig is the instantiation's blob (MethodSpecSig decodes it).
	Sig []byte
}

// MethodSpec returns the properties of a MethodSpec.
func (x *Import2) MethodSpec(ms Token) (MethodSpecInfo, error) {
	r, err := x.GetMethodSpecProps(ms)
	if err != nil {
		return MethodSpecInfo{}, err
	}
	return MethodSpecInfo{Token: ms, Method: r.Parent, Sig: r.SigBlob}, nil
}

// TypeSpec returns the signature blob of a TypeSpec.
func (x *Import2) TypeSpec(ts Token) ([]byte, error) { return x.base().GetTypeSpecFromToken(ts) }

// StandAloneSig returns the signature blob of a StandAloneSig.
func (x *Import2) StandAloneSig(sig Token) ([]byte, error) { return x.base().GetSigFromToken(sig) }

// UserString returns the text of a user string (an ldstr operand).
func (x *Import2) UserString(tk Token) (string, error) { return x.base().GetUserString(tk) }

// GenericParamInfo describes a generic parameter.
type GenericParamInfo struct {
	// Token is the GenericParam token.
	Token Token
	// Index is the parameter's position (0 for the first).
	Index uint32
	// Flags are its variance and constraint flags.
	Flags GenericParamAttr
	Owner Token // TypeDef or MethodDef
	// Name is the parameter's name ("T").
	Name string
}

// GenericParam returns the properties of a GenericParam row.
func (x *Import2) GenericParam(gp Token) (GenericParamInfo, error) {
	r, err := x.GetGenericParamProps(gp)
	if err != nil {
		return GenericParamInfo{}, err
	}
	return GenericParamInfo{Token: gp, Index: r.ParamSeq, Flags: GenericParamAttr(r.ParamFlags), Owner: r.Owner, Name: r.Wzname}, nil
}

// GenericParamNames returns the names of the generic parameters of a
// TypeDef or MethodDef, by index.
func (x *Import2) GenericParamNames(owner Token) ([]string, error) {
	gps, err := x.GenericParams(owner)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(gps))
	for _, gp := range gps {
		info, err := x.GenericParam(gp)
		if err != nil {
			return nil, err
		}
		if int(info.Index) < len(names) {
			names[info.Index] = info.Name
		}
	}
	return names, nil
}

// CustomAttributeInfo describes a custom attribute.
type CustomAttributeInfo struct {
	// Token is the CustomAttribute token.
	Token Token
	// Owner is the token the attribute is attached to (a TypeDef, a
	// MethodDef, the Assembly, ...).
	Owner Token
	Ctor  Token // the attribute's constructor: MethodDef or MemberRef
	// Value is the attribute's blob: its constructor arguments and named
	// arguments, in ECMA-335's CustomAttribute encoding.
	Value []byte
}

// CustomAttribute returns the properties of a CustomAttribute row.
func (x *Import2) CustomAttribute(ca Token) (CustomAttributeInfo, error) {
	r, err := x.base().getCustomAttributeProps(ca)
	if err != nil {
		return CustomAttributeInfo{}, err
	}
	return CustomAttributeInfo{Token: ca, Owner: r.Obj, Ctor: r.Type, Value: r.Blob}, nil
}

// CustomAttributeByName returns the value blob of the attribute named
// fullName ("System.ObsoleteAttribute") on tk, and whether there is one.
func (x *Import2) CustomAttributeByName(tk Token, fullName string) ([]byte, bool, error) {
	if x == nil || x.p == nil {
		return nil, false, nilImport2()
	}
	v, err := x.base().getCustomAttributeByName(tk, fullName)
	if err != nil {
		return nil, false, err
	}
	// S_FALSE (not found) leaves the data pointer NULL; a present attribute
	// always has at least its prolog.
	return v, len(v) > 0, nil
}

// FindTypeDef finds a TypeDef by namespace-qualified name ("A.B.C"), or a
// nested type by simple name within enclosing (a TypeDef; 0 for top-level
// types). It fails with an error matching ErrNotFound when there is none.
func (x *Import2) FindTypeDef(fullName string, enclosing Token) (Token, error) {
	return x.base().FindTypeDefByName(fullName, enclosing)
}

// Version is an assembly version.
type Version struct {
	// Major, Minor, Build and Revision are the four parts of the version.
	Major, Minor, Build, Revision uint16
}

// String returns "Major.Minor.Build.Revision".
func (v Version) String() string {
	return fmt.Sprintf("%d.%d.%d.%d", v.Major, v.Minor, v.Build, v.Revision)
}

// Less orders versions.
func (v Version) Less(w Version) bool {
	if v.Major != w.Major {
		return v.Major < w.Major
	}
	if v.Minor != w.Minor {
		return v.Minor < w.Minor
	}
	if v.Build != w.Build {
		return v.Build < w.Build
	}
	return v.Revision < w.Revision
}

func versionOf(m AssemblyMetadata) Version {
	return Version{m.MajorVersion, m.MinorVersion, m.BuildNumber, m.RevisionNumber}
}

// AssemblyInfo describes the assembly (manifest) of a module.
type AssemblyInfo struct {
	// Token is the Assembly token (0x20000001).
	Token Token
	// Name is the assembly's simple name ("System.Runtime").
	Name string
	// Version is the assembly's version.
	Version Version
	// PublicKey is the assembly's full public key, empty when unsigned.
	PublicKey []byte
	// Flags are the assembly's flags (AfPublicKey, ...).
	Flags AssemblyFlags
}

// afPublicKey is the AssemblyRef flag saying PublicKeyOrToken holds a full
// public key rather than its token.
const afPublicKey = 0x0001

// PublicKeyToken returns the token of the assembly's public key (nil when
// it has none).
func (a AssemblyInfo) PublicKeyToken() []byte { return PublicKeyToken(a.PublicKey) }

// Assembly returns the properties of the module's assembly.
func (x *AssemblyImport) Assembly() (AssemblyInfo, error) {
	tk, err := x.GetAssemblyFromScope()
	if err != nil {
		return AssemblyInfo{}, err
	}
	r, err := x.getAssemblyProps(tk)
	if err != nil {
		return AssemblyInfo{}, err
	}
	return AssemblyInfo{Token: tk, Name: r.Name, Version: versionOf(r.MetaData), PublicKey: r.PublicKey,
		Flags: AssemblyFlags(r.AssemblyFlags)}, nil
}

// AssemblyRefInfo describes an AssemblyRef.
type AssemblyRefInfo struct {
	// Token is the AssemblyRef token.
	Token Token
	// Name is the referenced assembly's simple name.
	Name string
	// Version is the referenced version.
	Version Version
	// PublicKeyOrToken is the full key when Flags has the PublicKey bit
	// (0x0001), else the 8-byte token (or empty).
	PublicKeyOrToken []byte
	// Flags are the reference's flags (AfPublicKey says which form
	// PublicKeyOrToken has).
	Flags AssemblyFlags
}

// PublicKeyToken returns the reference's public key token (nil when it
// names none).
func (a AssemblyRefInfo) PublicKeyToken() []byte {
	if a.Flags&afPublicKey != 0 {
		return PublicKeyToken(a.PublicKeyOrToken)
	}
	if len(a.PublicKeyOrToken) == 0 {
		return nil
	}
	return a.PublicKeyOrToken
}

// AssemblyRef returns the properties of an AssemblyRef.
func (x *AssemblyImport) AssemblyRef(ar Token) (AssemblyRefInfo, error) {
	r, err := x.getAssemblyRefProps(ar)
	if err != nil {
		return AssemblyRefInfo{}, err
	}
	return AssemblyRefInfo{Token: ar, Name: r.Name, Version: versionOf(r.MetaData), PublicKeyOrToken: r.PublicKeyOrToken,
		Flags: AssemblyFlags(r.AssemblyRefFlags)}, nil
}

func (x *AssemblyImport) enum(next func(*EnumHandle) ([]Token, error)) ([]Token, error) {
	if x == nil || x.p == nil {
		return nil, com.NilObject("IMetaDataAssemblyImport")
	}
	return enumAll(x.CloseEnum, next)
}

// AssemblyRefs returns every AssemblyRef.
func (x *AssemblyImport) AssemblyRefs() ([]Token, error) { return x.enum(x.EnumAssemblyRefs) }

// ExportedTypes returns every ExportedType (type forwarders among them).
func (x *AssemblyImport) ExportedTypes() ([]Token, error) { return x.enum(x.EnumExportedTypes) }

// ExportedTypeInfo describes an ExportedType.
type ExportedTypeInfo struct {
	// Token is the ExportedType token.
	Token Token
	// Namespace and Name are the exported type's names.
	Namespace string
	// Name: see Namespace.
	Name string
	// Implementation is where the type lives: an AssemblyRef (a type
	// forwarder), a File, or the ExportedType of the enclosing type.
	Implementation Token
	// TypeDefHint is the TypeDef token the type probably has in the
	// assembly that defines it (a hint only).
	TypeDefHint Token
	// Flags are the type's visibility and layout flags.
	Flags TypeAttr
}

// ExportedType returns the properties of an ExportedType.
func (x *AssemblyImport) ExportedType(et Token) (ExportedTypeInfo, error) {
	r, err := x.GetExportedTypeProps(et)
	if err != nil {
		return ExportedTypeInfo{}, err
	}
	info := ExportedTypeInfo{Token: et, Implementation: r.Implementation, TypeDefHint: r.TypeDef, Flags: TypeAttr(r.ExportedTypeFlags)}
	info.Namespace, info.Name = SplitTypeName(r.Name)
	return info, nil
}

// Emit helpers: blobs and strings instead of pointer and length pairs.

// DefineTypeRef defines (or finds) a TypeRef to namespace.name in scope (an
// AssemblyRef, ModuleRef, or a TypeRef for a nested type).
func (x *Emit2) DefineTypeRef(scope Token, namespace, name string) (Token, error) {
	return x.DefineTypeRefByName(scope, JoinTypeName(namespace, name))
}

func encodeUTF16Len(s string) []uint16 { return cgoutil.EncodeUTF16(s) }
