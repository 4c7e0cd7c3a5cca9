package metadata

import (
	"encoding/binary"
	"fmt"
)

// sigReader is a cursor over a signature blob with a sticky error. It
// takes the Type nodes it decodes from a slab allocated at the first
// node, sized by how many of the bytes left could start one.
type sigReader struct {
	b     []byte
	off   int
	depth int
	err   error
	slab  []Type
	ptrs  []*Type     // the same for the lists of nodes
	reuse *SigDecoder // nil: allocate afresh
}

// startsType marks the bytes that can begin a Type node: every node
// begins with its element type, so their count in the rest of a blob
// bounds the number of nodes still to decode.
var startsType = func() (t [256]bool) {
	for k := ElementTypeVoid; k <= ElementTypeInternal; k++ {
		t[k] = true
	}
	t[ElementTypePinned] = true
	return t
}()

// maxSlab caps the nodes of one slab, so that a long blob that fails
// early does not cost a slab for all its bytes.
const maxSlab = 256

// typeList returns an empty list with room for n nodes, from the slab of
// pointers; at is where its first node starts. A list's capacity is its
// count, so that appending to it never writes over the next one.
func (r *sigReader) typeList(at, n int) []*Type {
	if cap(r.ptrs)-len(r.ptrs) < n {
		r.ptrs = make([]*Type, 0, max(n, r.bound(at), 2*cap(r.ptrs)))
		if r.reuse != nil {
			r.reuse.ptrs = r.ptrs
		}
	}
	l := r.ptrs[len(r.ptrs) : len(r.ptrs) : len(r.ptrs)+n]
	r.ptrs = r.ptrs[:len(r.ptrs)+n]
	return l
}

// bound returns how many of the bytes from at on could start a node
// (each node, and each place in a list of nodes, takes one), at least 1
// and at most maxSlab. It stops reading at the maxSlab-th, so that the
// slabs of a long signature cost one pass over it in all.
func (r *sigReader) bound(at int) int {
	n := 0
	for _, c := range r.b[at:] {
		if startsType[c] {
			if n++; n == maxSlab {
				break
			}
		}
	}
	return max(n, 1)
}

// newType returns a zeroed node from the slab for the node starting at
// byte at.
func (r *sigReader) newType(at int) *Type {
	if len(r.slab) == cap(r.slab) {
		if r.reuse == nil {
			r.slab = make([]Type, 0, r.bound(at))
		} else {
			r.slab = make([]Type, 0, max(r.bound(at), 2*cap(r.slab)))
			r.reuse.slab = r.slab
		}
	}
	r.slab = r.slab[:len(r.slab)+1]
	t := &r.slab[len(r.slab)-1]
	if r.reuse != nil {
		*t = Type{}
	}
	return t
}

func (r *sigReader) fail(off int, kind error, format string, args ...any) {
	if r.err == nil {
		r.err = &SigError{Offset: off, Err: kind, Detail: fmt.Sprintf(format, args...)}
	}
}

func (r *sigReader) byte1(what string) byte {
	if r.err != nil {
		return 0
	}
	if r.off >= len(r.b) {
		r.fail(r.off, ErrSigTruncated, "want %s, blob ends", what)
		return 0
	}
	c := r.b[r.off]
	r.off++
	return c
}

func (r *sigReader) peek() (byte, bool) {
	if r.err != nil || r.off >= len(r.b) {
		return 0, false
	}
	return r.b[r.off], true
}

// uncompressed reads a compressed unsigned integer (II.23.2) and returns it
// with the number of bits its encoding holds (7, 14 or 29).
func (r *sigReader) uncompressed(what string) (uint32, uint) {
	if r.err != nil {
		return 0, 0
	}
	start := r.off
	c := r.byte1(what)
	if r.err != nil {
		return 0, 0
	}
	switch {
	case c&0x80 == 0:
		return uint32(c), 7
	case c&0xC0 == 0x80:
		if len(r.b)-r.off < 1 {
			r.fail(start, ErrSigTruncated, "%s: two-byte compressed integer cut short", what)
			return 0, 0
		}
		v := uint32(c&0x3F)<<8 | uint32(r.b[r.off])
		r.off++
		return v, 14
	case c&0xE0 == 0xC0:
		if len(r.b)-r.off < 3 {
			r.fail(start, ErrSigTruncated, "%s: four-byte compressed integer cut short", what)
			return 0, 0
		}
		v := uint32(c&0x1F)<<24 | uint32(r.b[r.off])<<16 | uint32(r.b[r.off+1])<<8 | uint32(r.b[r.off+2])
		r.off += 3
		return v, 29
	}
	r.fail(start, ErrSigMalformed, "%s: bad compressed integer lead byte 0x%02x", what, c)
	return 0, 0
}

func (r *sigReader) uint(what string) uint32 {
	v, _ := r.uncompressed(what)
	return v
}

// count reads a compressed count and checks it against MaxSigCount and
// against what the rest of the blob can hold (each item takes at least
// minBytes).
func (r *sigReader) count(what string, minBytes int) int {
	start := r.off
	v := r.uint(what)
	if r.err != nil {
		return 0
	}
	if v > MaxSigCount {
		r.fail(start, ErrSigLimit, "%s %d > %d", what, v, MaxSigCount)
		return 0
	}
	if minBytes > 0 && int(v)*minBytes > len(r.b)-r.off {
		r.fail(start, ErrSigTruncated, "%s %d, only %d bytes left", what, v, len(r.b)-r.off)
		return 0
	}
	return int(v)
}

// signedInt reads a compressed signed integer (II.23.2: the sign bit is
// rotated into the least significant bit).
func (r *sigReader) signedInt(what string) int32 {
	u, bits := r.uncompressed(what)
	if r.err != nil {
		return 0
	}
	v := int32(u >> 1)
	if u&1 != 0 {
		v -= 1 << (bits - 1)
	}
	return v
}

// typeDefOrRef reads a TypeDefOrRefOrSpecEncoded token (II.23.2.8).
func (r *sigReader) typeDefOrRef(what string) Token {
	start := r.off
	v := r.uint(what)
	if r.err != nil {
		return 0
	}
	var table TokenType
	switch v & 3 {
	case 0:
		table = MdtTypeDef
	case 1:
		table = MdtTypeRef
	case 2:
		table = MdtTypeSpec
	default:
		r.fail(start, ErrSigMalformed, "%s: coded token with tag 3", what)
		return 0
	}
	if v>>2 > 0xFFFFFF {
		r.fail(start, ErrSigMalformed, "%s: row %#x does not fit a token", what, v>>2)
		return 0
	}
	return Token(uint32(table) | v>>2)
}

func (r *sigReader) enter() bool {
	r.depth++
	if r.depth > MaxSigDepth {
		r.fail(r.off, ErrSigLimit, "types nested deeper than %d", MaxSigDepth)
		return false
	}
	return true
}

func (r *sigReader) leave() { r.depth-- }

// typ reads one Type, including custom-modifier, PINNED, BYREF and
// TYPEDBYREF forms (the decoder accepts them wherever a type may appear;
// which positions make sense is the runtime's business).
func (r *sigReader) typ() *Type {
	if r.err != nil || !r.enter() {
		return nil
	}
	t := r.typeBody()
	r.leave()
	return t
}

func (r *sigReader) typeBody() *Type {
	start := r.off
	if r.off >= len(r.b) {
		r.fail(r.off, ErrSigTruncated, "want element type, blob ends")
		return nil
	}
	k := ElementType(r.b[r.off])
	r.off++
	t := r.newType(start)
	t.Kind = k
	if k.IsPrimitive() {
		return t
	}
	switch {
	case k.IsPrimitive():
	case k == ElementTypeClass || k == ElementTypeValuetype:
		t.Token = r.typeDefOrRef("class token")
	case k == ElementTypeVar || k == ElementTypeMvar:
		t.Index = r.uint("generic parameter number")
	case k == ElementTypePtr || k == ElementTypeByref || k == ElementTypeSzarray || k == ElementTypePinned:
		t.Elem = r.typ()
	case k == ElementTypeCmodReqd || k == ElementTypeCmodOpt:
		t.Token = r.typeDefOrRef("modifier token")
		t.Elem = r.typ()
	case k == ElementTypeArray:
		t.Elem = r.typ()
		rankAt := r.off
		sh := &ArrayShape{Rank: r.uint("array rank")}
		t.Shape = sh
		if r.err == nil && sh.Rank > MaxArrayRank {
			r.fail(rankAt, ErrSigLimit, "array rank %d > %d", sh.Rank, MaxArrayRank)
		}
		n := r.count("array size count", 1)
		if r.err == nil && n > int(sh.Rank) {
			r.fail(rankAt, ErrSigMalformed, "%d sizes for rank %d", n, sh.Rank)
		}
		if r.err == nil && n > 0 {
			sh.Sizes = make([]uint32, 0, n)
		}
		for i := 0; i < n && r.err == nil; i++ {
			sh.Sizes = append(sh.Sizes, r.uint("array size"))
		}
		n = r.count("array lower bound count", 1)
		if r.err == nil && n > int(sh.Rank) {
			r.fail(rankAt, ErrSigMalformed, "%d lower bounds for rank %d", n, sh.Rank)
		}
		if r.err == nil && n > 0 {
			sh.LoBounds = make([]int32, 0, n)
		}
		for i := 0; i < n && r.err == nil; i++ {
			sh.LoBounds = append(sh.LoBounds, r.signedInt("array lower bound"))
		}
	case k == ElementTypeGenericinst:
		gAt := r.off
		g := ElementType(r.byte1("CLASS or VALUETYPE after GENERICINST"))
		if r.err == nil && g != ElementTypeClass && g != ElementTypeValuetype {
			r.fail(gAt, ErrSigMalformed, "GENERICINST of element type 0x%02x, want CLASS or VALUETYPE", byte(g))
		}
		if r.err != nil {
			return nil
		}
		gt := r.newType(gAt)
		gt.Kind = g
		gt.Token = r.typeDefOrRef("generic type token")
		t.Elem = gt
		n := r.count("generic argument count", 1)
		if r.err == nil && n == 0 {
			r.fail(gAt, ErrSigMalformed, "GENERICINST without arguments")
		}
		if r.err == nil {
			t.Args = r.typeList(r.off, n)
		}
		for i := 0; i < n && r.err == nil; i++ {
			t.Args = append(t.Args, r.typ())
		}
	case k == ElementTypeFnptr:
		t.Method = r.method(true)
	case k == ElementTypeInternal:
		if len(r.b)-r.off < 8 {
			r.fail(r.off, ErrSigTruncated, "INTERNAL needs an 8-byte type handle")
			return nil
		}
		t.Handle = binary.LittleEndian.Uint64(r.b[r.off:])
		r.off += 8
	case k == ElementTypeSentinel:
		r.fail(start, ErrSigMalformed, "SENTINEL outside a method's parameter list")
	default:
		r.fail(start, ErrSigMalformed, "unknown element type 0x%02x", byte(k))
	}
	if r.err != nil {
		return nil
	}
	return t
}

// method reads a MethodDefSig, MethodRefSig, StandAloneMethodSig or
// PropertySig starting at its calling-convention byte.
func (r *sigReader) method(inType bool) *MethodSig {
	start := r.off
	cc := CallingConvention(r.byte1("calling convention"))
	if r.err != nil {
		return nil
	}
	var blk *methodSigBlock
	if r.reuse != nil && !inType {
		blk = &r.reuse.method
		*blk = methodSigBlock{}
	} else {
		blk = new(methodSigBlock)
	}
	s := &blk.sig
	s.CallConv = cc
	switch kind := s.Kind(); {
	case kind == ImageCeeCsCallconvField || kind == ImageCeeCsCallconvLocalSig || kind == ImageCeeCsCallconvGenericinst:
		r.fail(start, ErrSigMalformed, "calling convention 0x%02x is not a method's", byte(cc))
		return nil
	case kind == ImageCeeCsCallconvProperty && inType:
		r.fail(start, ErrSigMalformed, "function pointer with a property's calling convention")
		return nil
	case kind > ImageCeeCsCallconvNativevararg:
		r.fail(start, ErrSigMalformed, "unknown calling convention 0x%02x", byte(cc))
		return nil
	}
	if cc&^(ImageCeeCsCallconvMask|ImageCeeCsCallconvHasthis|ImageCeeCsCallconvExplicitthis|ImageCeeCsCallconvGeneric) != 0 {
		r.fail(start, ErrSigMalformed, "unknown calling convention flags 0x%02x", byte(cc))
		return nil
	}
	if s.Generic() {
		s.GenericParams = r.uint("generic parameter count")
	}
	n := r.count("parameter count", 1)
	s.Return = r.typ()
	if r.err != nil || n == 0 {
		return s.orNil(r)
	}
	// Params and VarArgs share one array, split at the sentinel.
	var ps []*Type
	if n <= len(blk.params) {
		ps = blk.params[:0:n]
	} else {
		ps = r.typeList(r.off, n)
	}
	sentinel := -1
	for i := 0; i < n && r.err == nil; i++ {
		if c, ok := r.peek(); ok && ElementType(c) == ElementTypeSentinel {
			if sentinel >= 0 || s.Kind() == ImageCeeCsCallconvProperty {
				r.fail(r.off, ErrSigMalformed, "misplaced SENTINEL")
				return nil
			}
			r.off++
			sentinel = i
		}
		ps = append(ps, r.typ())
	}
	switch {
	case sentinel < 0:
		s.Params = ps
	case sentinel > 0:
		s.Params, s.VarArgs = ps[:sentinel:sentinel], ps[sentinel:]
	default:
		s.VarArgs = ps
	}
	return s.orNil(r)
}

// inlineTypes is how many parameters or locals a decoded signature holds
// in the allocation of the signature itself.
const inlineTypes = 4

// methodSigBlock is a MethodSig with room for its first parameters, so
// that a signature with few takes one allocation for both.
type methodSigBlock struct {
	sig    MethodSig
	params [inlineTypes]*Type
}

// localVarSigBlock is the same for a LocalVarSig.
type localVarSigBlock struct {
	sig    LocalVarSig
	locals [inlineTypes]*Type
}

// orNil returns s, or nil once r has failed.
func (s *MethodSig) orNil(r *sigReader) *MethodSig {
	if r.err != nil {
		return nil
	}
	return s
}

func (r *sigReader) end() {
	if r.err == nil && r.off != len(r.b) {
		r.fail(r.off, ErrSigMalformed, "%d bytes after the signature", len(r.b)-r.off)
	}
}

// done checks that the whole blob was read and returns v, or the first
// error met.
func done[T any](r *sigReader, v *T) (*T, error) {
	r.end()
	if r.err != nil {
		return nil, r.err
	}
	return v, nil
}

// lead reads a signature's first byte, which must be cc.
func (r *sigReader) lead(cc CallingConvention, name string) {
	if c := r.byte1(name); r.err == nil && CallingConvention(c) != cc {
		r.fail(0, ErrSigMalformed, "first byte 0x%02x, want %s (0x%02x)", c, name, byte(cc))
	}
}

// types reads a compressed count and that many types.
func (r *sigReader) types(what string) []*Type { return r.typesInto(nil, what) }

// typesInto is types, into room if the count fits it.
func (r *sigReader) typesInto(room []*Type, what string) []*Type {
	n := r.count(what, 1)
	if r.err != nil {
		return nil
	}
	var ts []*Type
	if n <= cap(room) {
		ts = room[:0:n]
	} else {
		ts = r.typeList(r.off, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		ts = append(ts, r.typ())
	}
	return ts
}

// ParseMethodSig decodes a method signature: MethodDefSig, MethodRefSig
// (with a vararg sentinel), StandAloneMethodSig, or a PropertySig.
func ParseMethodSig(b []byte) (*MethodSig, error) {
	r := &sigReader{b: b}
	return done(r, r.method(false))
}

// ParseFieldSig decodes a field signature (leading byte 0x06).
func ParseFieldSig(b []byte) (*FieldSig, error) {
	r := &sigReader{b: b}
	r.lead(ImageCeeCsCallconvField, "FIELD")
	return done(r, &FieldSig{Type: r.typ()})
}

// ParseLocalVarSig decodes a local-variable signature (leading byte 0x07).
func ParseLocalVarSig(b []byte) (*LocalVarSig, error) {
	r := &sigReader{b: b}
	r.lead(ImageCeeCsCallconvLocalSig, "LOCAL_SIG")
	blk := new(localVarSigBlock)
	blk.sig.Locals = r.typesInto(blk.locals[:0], "local count")
	return done(r, &blk.sig)
}

// A SigDecoder decodes signatures into memory it keeps from one call to
// the next, for loops that look at one signature at a time: the
// signature a method returns, with all its nodes and lists, is valid
// until the next call on the same SigDecoder and must not be kept beyond
// it (use the functions [ParseMethodSig] and [ParseLocalVarSig] for
// signatures that outlive the loop). The zero SigDecoder is ready to use;
// a SigDecoder must not be used by two goroutines at once.
type SigDecoder struct {
	slab   []Type
	ptrs   []*Type
	method methodSigBlock
	local  localVarSigBlock
}

func (d *SigDecoder) reader(b []byte) sigReader {
	return sigReader{b: b, reuse: d, slab: d.slab[:0], ptrs: d.ptrs[:0]}
}

// ParseMethodSig is the function [ParseMethodSig] into the SigDecoder's
// memory.
func (d *SigDecoder) ParseMethodSig(b []byte) (*MethodSig, error) {
	r := d.reader(b)
	return done(&r, r.method(false))
}

// ParseLocalVarSig is the function [ParseLocalVarSig] into the
// SigDecoder's memory.
func (d *SigDecoder) ParseLocalVarSig(b []byte) (*LocalVarSig, error) {
	r := d.reader(b)
	r.lead(ImageCeeCsCallconvLocalSig, "LOCAL_SIG")
	d.local = localVarSigBlock{}
	d.local.sig.Locals = r.typesInto(d.local.locals[:0], "local count")
	return done(&r, &d.local.sig)
}

// ParseMethodSpec decodes a method instantiation (leading byte 0x0A).
func ParseMethodSpec(b []byte) (*MethodSpecSig, error) {
	r := &sigReader{b: b}
	r.lead(ImageCeeCsCallconvGenericinst, "GENERICINST")
	s := &MethodSpecSig{Args: r.types("generic argument count")}
	if r.err == nil && len(s.Args) == 0 {
		r.fail(1, ErrSigMalformed, "method instantiation without arguments")
	}
	return done(r, s)
}

// ParseTypeSpec decodes a TypeSpec blob (II.23.2.14): a single type.
func ParseTypeSpec(b []byte) (*Type, error) {
	r := &sigReader{b: b}
	return done(r, r.typ())
}

// ParseSignature decodes any signature blob found behind a MethodDef,
// MemberRef, Field, Property, StandAloneSig or MethodSpec token, choosing
// the grammar by its first byte: FIELD gives a *FieldSig, LOCAL_SIG a
// *LocalVarSig, GENERICINST a *MethodSpecSig, anything else a *MethodSig.
// (A TypeSpec blob starts with an element type instead: use
// [ParseTypeSpec].)
func ParseSignature(b []byte) (Signature, error) {
	if len(b) == 0 {
		return nil, &SigError{Offset: 0, Err: ErrSigTruncated, Detail: "empty signature"}
	}
	switch CallingConvention(b[0]) & ImageCeeCsCallconvMask {
	case ImageCeeCsCallconvField:
		return ParseFieldSig(b)
	case ImageCeeCsCallconvLocalSig:
		return ParseLocalVarSig(b)
	case ImageCeeCsCallconvGenericinst:
		return ParseMethodSpec(b)
	}
	return ParseMethodSig(b)
}
