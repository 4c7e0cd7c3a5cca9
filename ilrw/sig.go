package ilrw

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// Signature blobs (ECMA-335 II.23.2): just enough to count parameters,
// find the return type, and append locals.

// Element types used here (ELEMENT_TYPE_*).
const (
	etVoid        = 0x01
	etPtr         = 0x0f
	etByRef       = 0x10
	etValueType   = 0x11
	etClass       = 0x12
	etVar         = 0x13
	etArray       = 0x14
	etGenericInst = 0x15
	etTypedByRef  = 0x16
	etFnPtr       = 0x1b
	etSzArray     = 0x1d
	etMVar        = 0x1e
	etCModReqd    = 0x1f
	etCModOpt     = 0x20
	etInternal    = 0x21
	etSentinel    = 0x41
	etPinned      = 0x45
	sigLocal      = 0x07
	sigHasThis    = 0x20
	sigExplicit   = 0x40
	sigGeneric    = 0x10
	sigCallKind   = 0x0f
	sigField      = 0x06
	sigProperty   = 0x08
	sigGenericIns = 0x0a
)

// maxSigDepth caps nesting in signature types.
const maxSigDepth = 64

// SigError reports a malformed signature blob.
type SigError struct {
	Offset int
	Msg    string
}

func (e *SigError) Error() string {
	return fmt.Sprintf("ilrw: malformed signature at offset %d: %s", e.Offset, e.Msg)
}

type sigReader struct {
	b   []byte
	pos int
}

func (r *sigReader) fail(format string, args ...any) error {
	return &SigError{Offset: r.pos, Msg: fmt.Sprintf(format, args...)}
}

func (r *sigReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("unexpected end")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

// uint reads a compressed unsigned integer (II.23.2).
func (r *sigReader) uint() (uint32, error) {
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	switch {
	case c&0x80 == 0:
		return uint32(c), nil
	case c&0xC0 == 0x80:
		d, err := r.byte()
		if err != nil {
			return 0, err
		}
		return uint32(c&0x3F)<<8 | uint32(d), nil
	case c&0xE0 == 0xC0:
		if r.pos+3 > len(r.b) {
			return 0, r.fail("unexpected end")
		}
		v := uint32(c&0x1F)<<24 | uint32(r.b[r.pos])<<16 | uint32(r.b[r.pos+1])<<8 | uint32(r.b[r.pos+2])
		r.pos += 3
		return v, nil
	}
	return 0, r.fail("bad compressed integer %#x", c)
}

// skipType skips one Type (II.23.2.12), custom modifiers included.
func (r *sigReader) skipType(depth int) error {
	if depth > maxSigDepth {
		return r.fail("types nested too deeply")
	}
	c, err := r.byte()
	if err != nil {
		return err
	}
	switch {
	case c >= 0x01 && c <= 0x0e, c == etTypedByRef, c == 0x18, c == 0x19, c == 0x1c:
		return nil // primitives, string, object, I, U
	case c == etPtr, c == etByRef, c == etSzArray, c == etPinned:
		return r.skipType(depth + 1)
	case c == etCModReqd, c == etCModOpt:
		if _, err := r.uint(); err != nil {
			return err
		}
		return r.skipType(depth + 1)
	case c == etValueType, c == etClass:
		_, err := r.uint()
		return err
	case c == etVar, c == etMVar:
		_, err := r.uint()
		return err
	case c == etInternal:
		if r.pos+8 > len(r.b) {
			return r.fail("unexpected end")
		}
		r.pos += 8
		return nil
	case c == etArray:
		if err := r.skipType(depth + 1); err != nil {
			return err
		}
		if _, err := r.uint(); err != nil { // rank
			return err
		}
		for range 2 { // sizes, then lower bounds
			n, err := r.uint()
			if err != nil {
				return err
			}
			if int(n) > len(r.b)-r.pos {
				return r.fail("array shape count %d too large", n)
			}
			for range n {
				if _, err := r.uint(); err != nil {
					return err
				}
			}
		}
		return nil
	case c == etGenericInst:
		k, err := r.byte()
		if err != nil {
			return err
		}
		if k != etClass && k != etValueType {
			return r.fail("generic instantiation of %#x", k)
		}
		if _, err := r.uint(); err != nil {
			return err
		}
		n, err := r.uint()
		if err != nil {
			return err
		}
		if int(n) > len(r.b)-r.pos {
			return r.fail("generic argument count %d too large", n)
		}
		for range n {
			if err := r.skipType(depth + 1); err != nil {
				return err
			}
		}
		return nil
	case c == etFnPtr:
		_, err := r.methodSig(depth + 1)
		return err
	}
	return r.fail("unknown element type %#x", c)
}

// MethodSig is a parsed method signature: calling convention, parameter
// count and the bytes of the return type.
type MethodSig struct {
	CallConv byte
	Params   int
	Return   []byte // the return type, custom modifiers included
}

// HasThis reports whether the signature is of an instance method whose
// this is not among the explicit parameters.
func (s MethodSig) HasThis() bool { return s.CallConv&sigHasThis != 0 && s.CallConv&sigExplicit == 0 }

// ReturnsVoid reports whether the return type is void.
func (s MethodSig) ReturnsVoid() bool {
	r := &sigReader{b: s.Return}
	for {
		c, err := r.byte()
		if err != nil {
			return false
		}
		if c == etCModReqd || c == etCModOpt {
			if _, err := r.uint(); err != nil {
				return false
			}
			continue
		}
		return c == etVoid
	}
}

// ParseMethodSig parses a MethodDefSig, MethodRefSig or StandAloneMethodSig.
func ParseMethodSig(sig []byte) (MethodSig, error) {
	r := &sigReader{b: sig}
	return r.methodSig(0)
}

func (r *sigReader) methodSig(depth int) (MethodSig, error) {
	var s MethodSig
	c, err := r.byte()
	if err != nil {
		return s, err
	}
	switch c & sigCallKind {
	case sigField, sigLocal, sigProperty, sigGenericIns:
		return s, r.fail("not a method signature (%#x)", c)
	}
	s.CallConv = c
	if c&sigGeneric != 0 {
		if _, err := r.uint(); err != nil {
			return s, err
		}
	}
	n, err := r.uint()
	if err != nil {
		return s, err
	}
	if int(n) > len(r.b)-r.pos {
		return s, r.fail("parameter count %d too large", n)
	}
	s.Params = int(n)
	start := r.pos
	if err := r.skipType(depth + 1); err != nil {
		return s, err
	}
	s.Return = r.b[start:r.pos]
	for i := 0; i < s.Params; i++ {
		if r.pos < len(r.b) && r.b[r.pos] == etSentinel {
			r.pos++
		}
		if err := r.skipType(depth + 1); err != nil {
			return s, err
		}
	}
	return s, nil
}

// AppendLocals returns a local variable signature with types appended to
// sig (nil or empty sig: a new signature), and the index of the first new
// local. Each type is the encoded Type of one local (see the Type*
// helpers).
func AppendLocals(sig []byte, types ...[]byte) ([]byte, int, error) {
	count := 0
	rest := []byte(nil)
	if len(sig) > 0 {
		r := &sigReader{b: sig}
		c, err := r.byte()
		if err != nil {
			return nil, 0, err
		}
		if c != sigLocal {
			return nil, 0, r.fail("not a local variable signature (%#x)", c)
		}
		n, err := r.uint()
		if err != nil {
			return nil, 0, err
		}
		start := r.pos
		for range n {
			if err := r.skipType(0); err != nil {
				return nil, 0, err
			}
		}
		count, rest = int(n), sig[start:r.pos]
	}
	for i, t := range types {
		r := &sigReader{b: t}
		if err := r.skipType(0); err != nil || r.pos != len(t) {
			return nil, 0, fmt.Errorf("ilrw: local type %d is not one encoded type (%x)", i, t)
		}
	}
	total := count + len(types)
	if total > 0xFFFE {
		return nil, 0, fmt.Errorf("ilrw: %d locals is too many", total)
	}
	out := append([]byte{sigLocal}, compressUint(uint32(total))...)
	out = append(out, rest...)
	for _, t := range types {
		out = append(out, t...)
	}
	return out, count, nil
}

// LocalCount returns the number of locals a local variable signature
// declares.
func LocalCount(sig []byte) (int, error) {
	r := &sigReader{b: sig}
	c, err := r.byte()
	if err != nil {
		return 0, err
	}
	if c != sigLocal {
		return 0, r.fail("not a local variable signature (%#x)", c)
	}
	n, err := r.uint()
	return int(n), err
}

func compressUint(v uint32) []byte {
	switch {
	case v < 0x80:
		return []byte{byte(v)}
	case v < 0x4000:
		return []byte{byte(v>>8) | 0x80, byte(v)}
	}
	return []byte{byte(v>>24) | 0xC0, byte(v >> 16), byte(v >> 8), byte(v)}
}

// Encoded types for locals and type specs.
var (
	TypeBool   = []byte{0x02}
	TypeInt32  = []byte{0x08}
	TypeInt64  = []byte{0x0a}
	TypeString = []byte{0x0e}
	TypeIntPtr = []byte{0x18}
	TypeObject = []byte{0x1c}
)

// codedTypeDefOrRef encodes a TypeDef, TypeRef or TypeSpec token as a
// TypeDefOrRefOrSpecEncoded value.
func codedTypeDefOrRef(t metadata.Token) ([]byte, error) {
	var tag uint32
	switch table(t) {
	case 0x02: // TypeDef
		tag = 0
	case 0x01: // TypeRef
		tag = 1
	case 0x1b: // TypeSpec
		tag = 2
	default:
		return nil, fmt.Errorf("ilrw: %v is not a TypeDef, TypeRef or TypeSpec", t)
	}
	if t.RID() >= 1<<27 {
		return nil, fmt.Errorf("ilrw: row of %v too large", t)
	}
	return compressUint(t.RID()<<2 | tag), nil
}

// TypeClass encodes a reference type named by a TypeDef or TypeRef.
func TypeClass(t metadata.Token) ([]byte, error) {
	c, err := codedTypeDefOrRef(t)
	if err != nil {
		return nil, err
	}
	return append([]byte{etClass}, c...), nil
}

// TypeValueType encodes a value type named by a TypeDef or TypeRef.
func TypeValueType(t metadata.Token) ([]byte, error) {
	c, err := codedTypeDefOrRef(t)
	if err != nil {
		return nil, err
	}
	return append([]byte{etValueType}, c...), nil
}

// isRefType reports whether an encoded type is certainly a reference
// type (no box needed to pass it as object), and whether it is a byref,
// pointer or typedref that cannot be boxed at all.
func classifyType(t []byte) (ref, unboxable bool) {
	r := &sigReader{b: t}
	for {
		c, err := r.byte()
		if err != nil {
			return false, true
		}
		switch c {
		case etCModReqd, etCModOpt:
			if _, err := r.uint(); err != nil {
				return false, true
			}
			continue
		case 0x0e, 0x1c, etClass, etSzArray, etArray: // string, object, class, arrays
			return true, false
		case etGenericInst:
			k, _ := r.byte()
			return k == etClass, false
		case etByRef, etPtr, etTypedByRef, etFnPtr, etVoid, etPinned:
			return false, true
		}
		return false, false
	}
}

// table returns a token's table number (0x06 for a MethodDef).
func table(t metadata.Token) uint32 { return uint32(t) >> 24 }
