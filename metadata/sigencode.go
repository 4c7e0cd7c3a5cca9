package metadata

import (
	"encoding/binary"
	"fmt"
)

// MaxCompressed is the largest value a compressed unsigned integer holds.
const MaxCompressed = 0x1FFFFFFF

// AppendCompressed appends v as a compressed unsigned integer (II.23.2):
// one byte up to 0x7F, two up to 0x3FFF, four up to 0x1FFFFFFF.
func AppendCompressed(b []byte, v uint32) ([]byte, error) {
	switch {
	case v <= 0x7F:
		return append(b, byte(v)), nil
	case v <= 0x3FFF:
		return append(b, byte(v>>8)|0x80, byte(v)), nil
	case v <= MaxCompressed:
		return append(b, byte(v>>24)|0xC0, byte(v>>16), byte(v>>8), byte(v)), nil
	}
	return b, &SigError{Offset: len(b), Err: ErrSigEncode, Detail: fmt.Sprintf("%d does not fit a compressed integer", v)}
}

// AppendCompressedSigned appends v as a compressed signed integer (II.23.2):
// the value is taken as 7, 14 or 29 bits two's complement, the smallest that
// holds it, and rotated left by one so the sign lands in bit 0.
func AppendCompressedSigned(b []byte, v int32) ([]byte, error) {
	var bits uint
	switch {
	case v >= -(1<<6) && v < 1<<6:
		bits = 7
	case v >= -(1<<13) && v < 1<<13:
		bits = 14
	case v >= -(1<<28) && v < 1<<28:
		bits = 29
	default:
		return b, &SigError{Offset: len(b), Err: ErrSigEncode, Detail: fmt.Sprintf("%d does not fit a compressed signed integer", v)}
	}
	mask := uint32(1)<<bits - 1
	m := uint32(v) & mask
	x := (m<<1 | m>>(bits-1)) & mask
	switch bits {
	case 7:
		return append(b, byte(x)), nil
	case 14:
		return append(b, byte(x>>8)|0x80, byte(x)), nil
	}
	return append(b, byte(x>>24)|0xC0, byte(x>>16), byte(x>>8), byte(x)), nil
}

// AppendTypeDefOrRef appends a TypeDef, TypeRef or TypeSpec token in its
// compressed coded form (II.23.2.8).
func AppendTypeDefOrRef(b []byte, tk Token) ([]byte, error) {
	var tag uint32
	switch TokenType(tk.Table()) {
	case MdtTypeDef:
		tag = 0
	case MdtTypeRef:
		tag = 1
	case MdtTypeSpec:
		tag = 2
	default:
		return b, &SigError{Offset: len(b), Err: ErrSigEncode, Detail: fmt.Sprintf("token %v is not a TypeDef, TypeRef or TypeSpec", tk)}
	}
	if tk.RID() > MaxCompressed>>2 {
		return b, &SigError{Offset: len(b), Err: ErrSigEncode, Detail: fmt.Sprintf("token %v: row too large for a coded token", tk)}
	}
	return AppendCompressed(b, tk.RID()<<2|tag)
}

// ReadCompressed decodes the compressed unsigned integer at the start of b
// and returns it with its length in bytes.
func ReadCompressed(b []byte) (uint32, int, error) {
	r := &sigReader{b: b}
	v := r.uint("compressed integer")
	return v, r.off, r.err
}

// ReadCompressedSigned decodes the compressed signed integer at the start
// of b and returns it with its length in bytes.
func ReadCompressedSigned(b []byte) (int32, int, error) {
	r := &sigReader{b: b}
	v := r.signedInt("compressed signed integer")
	return v, r.off, r.err
}

// ReadTypeDefOrRef decodes the coded TypeDefOrRefOrSpec token at the start
// of b and returns it with its length in bytes.
func ReadTypeDefOrRef(b []byte) (Token, int, error) {
	r := &sigReader{b: b}
	tk := r.typeDefOrRef("coded token")
	return tk, r.off, r.err
}

type sigWriter struct {
	b     []byte
	depth int
	err   error
}

func (w *sigWriter) fail(format string, args ...any) {
	if w.err == nil {
		w.err = &SigError{Offset: len(w.b), Err: ErrSigEncode, Detail: fmt.Sprintf(format, args...)}
	}
}

func (w *sigWriter) uint(v uint32) {
	if w.err == nil {
		w.b, w.err = AppendCompressed(w.b, v)
	}
}

func (w *sigWriter) count(n int, what string) {
	if n > MaxSigCount {
		w.fail("%d %s > %d", n, what, MaxSigCount)
		return
	}
	w.uint(uint32(n))
}

func (w *sigWriter) token(tk Token) {
	if w.err == nil {
		w.b, w.err = AppendTypeDefOrRef(w.b, tk)
	}
}

func (w *sigWriter) typ(t *Type) {
	if w.err != nil {
		return
	}
	if t == nil {
		w.fail("nil type")
		return
	}
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > MaxSigDepth {
		w.fail("types nested deeper than %d", MaxSigDepth)
		return
	}
	k := t.Kind
	w.b = append(w.b, byte(k))
	switch {
	case k.IsPrimitive():
	case k == ElementTypeClass || k == ElementTypeValuetype:
		w.token(t.Token)
	case k == ElementTypeVar || k == ElementTypeMvar:
		w.uint(t.Index)
	case k == ElementTypePtr || k == ElementTypeByref || k == ElementTypeSzarray || k == ElementTypePinned:
		w.typ(t.Elem)
	case k == ElementTypeCmodReqd || k == ElementTypeCmodOpt:
		w.token(t.Token)
		w.typ(t.Elem)
	case k == ElementTypeArray:
		w.typ(t.Elem)
		var s ArrayShape
		if t.Shape != nil {
			s = *t.Shape
		}
		if s.Rank > MaxArrayRank || len(s.Sizes) > int(s.Rank) || len(s.LoBounds) > int(s.Rank) {
			w.fail("array shape rank %d with %d sizes and %d bounds", s.Rank, len(s.Sizes), len(s.LoBounds))
			return
		}
		w.uint(s.Rank)
		w.uint(uint32(len(s.Sizes)))
		for _, v := range s.Sizes {
			w.uint(v)
		}
		w.uint(uint32(len(s.LoBounds)))
		for _, v := range s.LoBounds {
			if w.err == nil {
				w.b, w.err = AppendCompressedSigned(w.b, v)
			}
		}
	case k == ElementTypeGenericinst:
		g := t.Elem
		if g == nil || (g.Kind != ElementTypeClass && g.Kind != ElementTypeValuetype) {
			w.fail("GENERICINST needs a CLASS or VALUETYPE node as Elem")
			return
		}
		if len(t.Args) == 0 {
			w.fail("GENERICINST without arguments")
			return
		}
		w.b = append(w.b, byte(g.Kind))
		w.token(g.Token)
		w.count(len(t.Args), "generic arguments")
		for _, a := range t.Args {
			w.typ(a)
		}
	case k == ElementTypeFnptr:
		if t.Method == nil {
			w.fail("FNPTR without a method signature")
			return
		}
		w.method(t.Method)
	case k == ElementTypeInternal:
		w.b = binary.LittleEndian.AppendUint64(w.b, t.Handle)
	default:
		w.fail("element type 0x%02x", byte(k))
	}
}

func (w *sigWriter) method(s *MethodSig) {
	if w.err != nil {
		return
	}
	if s == nil {
		w.fail("nil method signature")
		return
	}
	if s.CallConv > 0xFF {
		w.fail("calling convention 0x%x does not fit a byte", uint32(s.CallConv))
		return
	}
	w.b = append(w.b, byte(s.CallConv))
	if s.Generic() {
		w.uint(s.GenericParams)
	} else if s.GenericParams != 0 {
		w.fail("%d generic parameters without the GENERIC flag", s.GenericParams)
		return
	}
	w.count(len(s.Params)+len(s.VarArgs), "parameters")
	w.typ(s.Return)
	for _, p := range s.Params {
		w.typ(p)
	}
	if len(s.VarArgs) > 0 {
		w.b = append(w.b, byte(ElementTypeSentinel))
		for _, p := range s.VarArgs {
			w.typ(p)
		}
	}
}

func (w *sigWriter) result() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

// Encode returns the signature's blob.
func (s *MethodSig) Encode() ([]byte, error) {
	w := &sigWriter{}
	w.method(s)
	return w.result()
}

// Encode returns the signature's blob.
func (s *FieldSig) Encode() ([]byte, error) {
	w := &sigWriter{b: []byte{byte(ImageCeeCsCallconvField)}}
	if s == nil {
		w.fail("nil field signature")
	} else {
		w.typ(s.Type)
	}
	return w.result()
}

// Encode returns the signature's blob.
func (s *LocalVarSig) Encode() ([]byte, error) {
	w := &sigWriter{b: []byte{byte(ImageCeeCsCallconvLocalSig)}}
	if s == nil {
		w.fail("nil local signature")
		return w.result()
	}
	w.count(len(s.Locals), "locals")
	for _, t := range s.Locals {
		w.typ(t)
	}
	return w.result()
}

// Encode returns the signature's blob.
func (s *MethodSpecSig) Encode() ([]byte, error) {
	w := &sigWriter{b: []byte{byte(ImageCeeCsCallconvGenericinst)}}
	if s == nil || len(s.Args) == 0 {
		w.fail("method instantiation without arguments")
		return w.result()
	}
	w.count(len(s.Args), "generic arguments")
	for _, t := range s.Args {
		w.typ(t)
	}
	return w.result()
}

// Encode returns the type as a TypeSpec blob.
func (t *Type) Encode() ([]byte, error) {
	w := &sigWriter{}
	w.typ(t)
	return w.result()
}

// maxLocals is the most locals a method can have (ldloc and stloc take an
// index below 0xFFFF).
const maxLocals = 0xFFFE

// AppendLocals returns the local-variable signature sig with locals of the
// given types added after the ones it declares, and the index of the first
// new local. A nil or empty sig stands for a method without locals. The
// existing locals keep their bytes as they are; anything after the last of
// them is dropped.
func AppendLocals(sig []byte, types ...*Type) ([]byte, int, error) {
	var old []byte
	n := 0
	if len(sig) > 0 {
		r := &sigReader{b: sig}
		r.lead(ImageCeeCsCallconvLocalSig, "LOCAL_SIG")
		n = r.count("local count", 1)
		start := r.off
		for i := 0; i < n && r.err == nil; i++ {
			r.typ()
		}
		if r.err != nil {
			return nil, 0, r.err
		}
		old = sig[start:r.off]
	}
	w := &sigWriter{b: []byte{byte(ImageCeeCsCallconvLocalSig)}}
	if total := n + len(types); total > maxLocals {
		w.fail("%d locals > %d", total, maxLocals)
	}
	w.count(n+len(types), "locals")
	w.b = append(w.b, old...)
	for _, t := range types {
		w.typ(t)
	}
	out, err := w.result()
	if err != nil {
		return nil, 0, err
	}
	return out, n, nil
}
