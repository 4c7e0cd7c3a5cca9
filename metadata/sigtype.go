package metadata

import (
	"errors"
	"fmt"
)

// Type is one node of a signature's type tree (ECMA-335 II.23.2.12 and the
// element types of II.23.1.16).
//
// Which fields a node uses depends on its Kind:
//
//   - primitives (Void, Boolean ... U, Object, String, Typedbyref): none;
//   - Class, Valuetype: Token (a TypeDef, TypeRef or TypeSpec);
//   - Var, Mvar: Index, the generic parameter's number;
//   - Ptr, Byref, Szarray, Pinned: Elem;
//   - Array: Elem and Shape (nil reads as rank 0, no sizes, no bounds);
//   - Genericinst: Elem (the generic type itself, a Class or Valuetype
//     node) and Args;
//   - CmodReqd, CmodOpt: Token (the modifier type) and Elem (the type it
//     modifies). Custom modifiers and PINNED are prefix nodes, so any order
//     the compiler wrote survives a decode and encode unchanged;
//   - Fnptr: Method;
//   - Internal: Handle, a runtime type handle (only in signatures the
//     runtime makes itself).
type Type struct {
	Kind   ElementType
	Token  Token
	Index  uint32
	Elem   *Type
	Args   []*Type
	Shape  *ArrayShape
	Method *MethodSig
	Handle uint64
}

// ArrayShape is the shape of a general array (II.23.2.13): its rank, the
// sizes of the first len(Sizes) dimensions and the lower bounds of the
// first len(LoBounds) dimensions.
type ArrayShape struct {
	// Rank is the number of dimensions.
	Rank uint32
	// Sizes are the sizes given for the first len(Sizes) dimensions (often none).
	Sizes []uint32
	// LoBounds are the lower bounds given for the first len(LoBounds)
	// dimensions (often none: 0).
	LoBounds []int32
}

// MethodSig is a method signature (II.23.2.1-3: MethodDefSig, MethodRefSig,
// StandAloneMethodSig), the signature of a function pointer, or a property
// signature (II.23.2.5, CallConv kind ImageCeeCsCallconvProperty; its Return
// is the property's type).
type MethodSig struct {
	// CallConv is the whole first byte: the kind (default, vararg, C,
	// stdcall, ..., property) and the HasThis, ExplicitThis and Generic
	// flags.
	CallConv CallingConvention
	// GenericParams is the number of generic parameters (only with the
	// Generic flag).
	GenericParams uint32
	// Return is the return type (possibly Byref, Typedbyref or Void, with
	// custom modifiers).
	Return *Type
	// Params are the parameters before any sentinel.
	Params []*Type
	// VarArgs are the parameters after the sentinel of a vararg call site
	// (MethodRefSig, StandAloneMethodSig); empty when there is none.
	VarArgs []*Type
}

// Kind returns the calling convention without its flags.
func (s *MethodSig) Kind() CallingConvention { return s.CallConv & ImageCeeCsCallconvMask }

// HasThis reports the HASTHIS flag: an instance method.
func (s *MethodSig) HasThis() bool { return s.CallConv&ImageCeeCsCallconvHasthis != 0 }

// ExplicitThis reports the EXPLICITTHIS flag: the first parameter is the
// this pointer's type.
func (s *MethodSig) ExplicitThis() bool { return s.CallConv&ImageCeeCsCallconvExplicitthis != 0 }

// Generic reports the GENERIC flag.
func (s *MethodSig) Generic() bool { return s.CallConv&ImageCeeCsCallconvGeneric != 0 }

// FieldSig is a field signature (II.23.2.4).
type FieldSig struct {
	// Type is the field's type with its custom modifiers (for a volatile
	// field, a CmodReqd node naming IsVolatile).
	Type *Type
}

// LocalVarSig is a local-variable signature (II.23.2.6).
type LocalVarSig struct {
	// Locals are the local variables' types, in slot order.
	Locals []*Type
}

// MethodSpecSig is the instantiation of a generic method (II.23.2.15).
type MethodSpecSig struct {
	// Args are the method's type arguments, in order.
	Args []*Type
}

// Signature is any decoded signature: *MethodSig, *FieldSig, *LocalVarSig,
// *MethodSpecSig. [ParseSignature] returns one, chosen by the blob's first
// byte.
type Signature interface {
	// Encode returns the signature's blob.
	Encode() ([]byte, error)
}

// Limits on what the decoder accepts, so that hostile or corrupt blobs
// cannot make it recurse or allocate without bound.
const (
	// MaxSigDepth is the deepest nesting of types (each Ptr, Byref, array,
	// modifier, generic argument or function pointer is one level).
	MaxSigDepth = 64
	// MaxArrayRank is the highest rank of a general array (the runtime's own
	// limit).
	MaxArrayRank = 32
	// MaxSigCount bounds every count in a signature (parameters, locals,
	// generic arguments, array sizes and bounds).
	MaxSigCount = 0xFFFF
)

// Errors that a [SigError] wraps; compare with errors.Is.
var (
	// ErrSigTruncated: the blob ends in the middle of an item.
	ErrSigTruncated = errors.New("truncated")
	// ErrSigMalformed: an item is not valid where it is.
	ErrSigMalformed = errors.New("malformed")
	// ErrSigLimit: a count, rank or nesting depth is beyond the decoder's caps.
	ErrSigLimit = errors.New("limit exceeded")
	// ErrSigEncode: a tree cannot be encoded (nil node, value out of range,
	// token of the wrong table).
	ErrSigEncode = errors.New("cannot encode")
)

// SigError is the error of a signature decoder or encoder: what went wrong
// and the byte offset in the blob where it did (for the encoder, the
// offset in the output so far).
type SigError struct {
	// Offset is the byte offset in the signature where decoding failed.
	Offset int
	Err    error  // one of the ErrSig values
	Detail string // what was expected or found
}

// Error returns the offset, the kind of error and what was expected.
func (e *SigError) Error() string {
	return fmt.Sprintf("metadata: signature: %v at byte %d: %s", e.Err, e.Offset, e.Detail)
}

// Unwrap returns Err (one of the ErrSig values), for errors.Is.
func (e *SigError) Unwrap() error { return e.Err }

// IsPrimitive reports whether k is an element type without operands
// (void, the numeric types, string, object, typedbyref, native ints).
func (k ElementType) IsPrimitive() bool {
	switch k {
	case ElementTypeVoid, ElementTypeBoolean, ElementTypeChar,
		ElementTypeI1, ElementTypeU1, ElementTypeI2, ElementTypeU2,
		ElementTypeI4, ElementTypeU4, ElementTypeI8, ElementTypeU8,
		ElementTypeR4, ElementTypeR8, ElementTypeString, ElementTypeObject,
		ElementTypeTypedbyref, ElementTypeI, ElementTypeU:
		return true
	}
	return false
}

// Unwrap returns the type under any custom-modifier and PINNED prefix
// nodes, with the modifiers met on the way (outermost first) and whether
// PINNED was among them.
func (t *Type) Unwrap() (inner *Type, mods []*Type, pinned bool) {
	for t != nil {
		switch t.Kind {
		case ElementTypeCmodReqd, ElementTypeCmodOpt:
			mods = append(mods, t)
		case ElementTypePinned:
			pinned = true
		default:
			return t, mods, pinned
		}
		t = t.Elem
	}
	return nil, mods, pinned
}

// Equal reports whether two type trees are the same.
func (t *Type) Equal(u *Type) bool {
	if t == nil || u == nil {
		return t == u
	}
	if t.Kind != u.Kind || t.Token != u.Token || t.Index != u.Index || t.Handle != u.Handle ||
		!t.Elem.Equal(u.Elem) || !typesEqual(t.Args, u.Args) || !t.Method.Equal(u.Method) {
		return false
	}
	return t.Shape.equal(u.Shape)
}

// equal compares two shapes, nil being the zero shape.
func (s *ArrayShape) equal(o *ArrayShape) bool {
	var zero ArrayShape
	if s == nil {
		s = &zero
	}
	if o == nil {
		o = &zero
	}
	if s.Rank != o.Rank || len(s.Sizes) != len(o.Sizes) || len(s.LoBounds) != len(o.LoBounds) {
		return false
	}
	for i := range s.Sizes {
		if s.Sizes[i] != o.Sizes[i] {
			return false
		}
	}
	for i := range s.LoBounds {
		if s.LoBounds[i] != o.LoBounds[i] {
			return false
		}
	}
	return true
}

// Equal reports whether two method signatures are the same.
func (s *MethodSig) Equal(o *MethodSig) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.CallConv == o.CallConv && s.GenericParams == o.GenericParams &&
		s.Return.Equal(o.Return) && typesEqual(s.Params, o.Params) && typesEqual(s.VarArgs, o.VarArgs)
}

func typesEqual(a, b []*Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

// Primitive returns a node for a primitive element type.
func Primitive(k ElementType) *Type { return &Type{Kind: k} }

// ClassType returns a CLASS node for a TypeDef, TypeRef or TypeSpec.
func ClassType(tk Token) *Type { return &Type{Kind: ElementTypeClass, Token: tk} }

// ValueType returns a VALUETYPE node for a TypeDef, TypeRef or TypeSpec.
func ValueType(tk Token) *Type { return &Type{Kind: ElementTypeValuetype, Token: tk} }

// SZArrayOf returns a single-dimensional zero-based array of elem.
func SZArrayOf(elem *Type) *Type { return &Type{Kind: ElementTypeSzarray, Elem: elem} }

// PtrTo returns an unmanaged pointer to elem.
func PtrTo(elem *Type) *Type { return &Type{Kind: ElementTypePtr, Elem: elem} }

// ByRefTo returns a managed reference to elem.
func ByRefTo(elem *Type) *Type { return &Type{Kind: ElementTypeByref, Elem: elem} }

// GenericInst returns the instantiation of a generic type (a ClassType or
// ValueType node) with args.
func GenericInst(generic *Type, args ...*Type) *Type {
	return &Type{Kind: ElementTypeGenericinst, Elem: generic, Args: args}
}
