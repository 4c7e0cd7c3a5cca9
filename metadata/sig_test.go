package metadata

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"
)

func TestCompressedIntegers(t *testing.T) {
	// The examples of ECMA-335 II.23.2.
	for _, c := range []struct {
		v   uint32
		hex string
	}{
		{0x03, "03"}, {0x7F, "7f"}, {0x80, "8080"}, {0x2E57, "ae57"},
		{0x3FFF, "bfff"}, {0x4000, "c0004000"}, {0x1FFFFFFF, "dfffffff"},
	} {
		b, err := AppendCompressed(nil, c.v)
		if err != nil || hex.EncodeToString(b) != c.hex {
			t.Errorf("AppendCompressed(%#x) = %x, %v; want %s", c.v, b, err, c.hex)
		}
		v, n, err := ReadCompressed(b)
		if err != nil || v != c.v || n != len(b) {
			t.Errorf("ReadCompressed(%x) = %#x, %d, %v", b, v, n, err)
		}
	}
	if _, err := AppendCompressed(nil, 0x20000000); !errors.Is(err, ErrSigEncode) {
		t.Errorf("AppendCompressed(0x20000000): %v", err)
	}
	for _, c := range []struct {
		v   int32
		hex string
	}{
		{3, "06"}, {-3, "7b"}, {64, "8080"}, {-64, "01"}, {8192, "c0004000"},
		{-8192, "8001"}, {268435455, "dffffffe"}, {-268435456, "c0000001"},
	} {
		b, err := AppendCompressedSigned(nil, c.v)
		if err != nil || hex.EncodeToString(b) != c.hex {
			t.Errorf("AppendCompressedSigned(%d) = %x, %v; want %s", c.v, b, err, c.hex)
		}
		v, n, err := ReadCompressedSigned(b)
		if err != nil || v != c.v || n != len(b) {
			t.Errorf("ReadCompressedSigned(%x) = %d, %d, %v", b, v, n, err)
		}
	}
	for v := int32(-1 << 28); v < 1<<28; v += 997 {
		b, err := AppendCompressedSigned(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if w, _, err := ReadCompressedSigned(b); err != nil || w != v {
			t.Fatalf("signed %d -> %x -> %d, %v", v, b, w, err)
		}
	}
	if _, err := AppendCompressedSigned(nil, 1<<28); !errors.Is(err, ErrSigEncode) {
		t.Errorf("AppendCompressedSigned(1<<28): %v", err)
	}
	// Coded tokens.
	for _, c := range []struct {
		tk  Token
		hex string
	}{{0x02000005, "14"}, {0x01000012, "49"}, {0x1b000001, "06"}, {0x01000100, "8401"}} {
		b, err := AppendTypeDefOrRef(nil, c.tk)
		if err != nil || hex.EncodeToString(b) != c.hex {
			t.Errorf("AppendTypeDefOrRef(%v) = %x, %v; want %s", c.tk, b, err, c.hex)
		}
		tk, _, err := ReadTypeDefOrRef(b)
		if err != nil || tk != c.tk {
			t.Errorf("ReadTypeDefOrRef(%x) = %v, %v", b, tk, err)
		}
	}
	if _, err := AppendTypeDefOrRef(nil, 0x06000001); !errors.Is(err, ErrSigEncode) {
		t.Errorf("MethodDef as a coded type token: %v", err)
	}
	if _, _, err := ReadTypeDefOrRef([]byte{0x07}); !errors.Is(err, ErrSigMalformed) {
		t.Errorf("tag 3: %v", err)
	}
}

// sigCase is a blob and the tree it must decode to.
type sigCase struct {
	name string
	hex  string
	want Signature
}

func sigCases() []sigCase {
	i4 := Primitive(ElementTypeI4)
	str := Primitive(ElementTypeString)
	return []sigCase{
		{"static void()", "000001", &MethodSig{Return: Primitive(ElementTypeVoid)}},
		{"instance int32(string[], int32&)", "200208" + "1d0e" + "1008",
			&MethodSig{CallConv: ImageCeeCsCallconvHasthis, Return: i4, Params: []*Type{SZArrayOf(str), ByRefTo(i4)}}},
		{"generic method !!0(!0, !!1)", "30" + "02" + "02" + "1e00" + "1300" + "1e01",
			&MethodSig{CallConv: ImageCeeCsCallconvHasthis | ImageCeeCsCallconvGeneric, GenericParams: 2,
				Return: &Type{Kind: ElementTypeMvar}, Params: []*Type{{Kind: ElementTypeVar}, {Kind: ElementTypeMvar, Index: 1}}}},
		{"vararg call site", "0503010e" + "41" + "0808",
			&MethodSig{CallConv: ImageCeeCsCallconvVararg, Return: Primitive(ElementTypeVoid), Params: []*Type{str}, VarArgs: []*Type{i4, i4}}},
		{"explicit this", "600101" + "1209",
			&MethodSig{CallConv: ImageCeeCsCallconvHasthis | ImageCeeCsCallconvExplicitthis, Return: Primitive(ElementTypeVoid), Params: []*Type{ClassType(0x01000002)}}},
		{"volatile field", "06" + "1f" + "49" + "08",
			&FieldSig{Type: &Type{Kind: ElementTypeCmodReqd, Token: 0x01000012, Elem: i4}}},
		{"field of List<int>", "06" + "15" + "12" + "0d" + "01" + "08",
			&FieldSig{Type: GenericInst(ClassType(0x01000003), i4)}},
		{"field int32[0...,2..5]", "06" + "14" + "08" + "02" + "01" + "04" + "02" + "00" + "04",
			&FieldSig{Type: &Type{Kind: ElementTypeArray, Elem: i4, Shape: &ArrayShape{Rank: 2, Sizes: []uint32{4}, LoBounds: []int32{0, 2}}}}},
		{"field method pointer", "06" + "1b" + "000108" + "0f01",
			&FieldSig{Type: &Type{Kind: ElementTypeFnptr, Method: &MethodSig{Return: i4, Params: []*Type{PtrTo(Primitive(ElementTypeVoid))}}}}},
		{"locals", "07" + "04" + "45" + "10" + "05" + "16" + "20" + "49" + "1c" + "11" + "14",
			&LocalVarSig{Locals: []*Type{
				{Kind: ElementTypePinned, Elem: ByRefTo(Primitive(ElementTypeU1))},
				Primitive(ElementTypeTypedbyref),
				{Kind: ElementTypeCmodOpt, Token: 0x01000012, Elem: Primitive(ElementTypeObject)},
				ValueType(0x02000005),
			}}},
		{"method spec <int32, string>", "0a" + "02" + "08" + "0e", &MethodSpecSig{Args: []*Type{i4, str}}},
		{"property", "28" + "01" + "08" + "0e", &MethodSig{CallConv: ImageCeeCsCallconvProperty | ImageCeeCsCallconvHasthis, Return: i4, Params: []*Type{str}}},
	}
}

func TestSignatureRoundTrip(t *testing.T) {
	for _, c := range sigCases() {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got, err := ParseSignature(b)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !sigEqual(got, c.want) {
			t.Errorf("%s: decoded %#v", c.name, got)
		}
		enc, err := c.want.Encode()
		if err != nil || !bytes.Equal(enc, b) {
			t.Errorf("%s: encoded %x, %v; want %x", c.name, enc, err, b)
		}
	}
}

func sigEqual(a, b Signature) bool {
	switch a := a.(type) {
	case *MethodSig:
		b, ok := b.(*MethodSig)
		return ok && a.Equal(b)
	case *FieldSig:
		b, ok := b.(*FieldSig)
		return ok && a.Type.Equal(b.Type)
	case *LocalVarSig:
		b, ok := b.(*LocalVarSig)
		return ok && typesEqual(a.Locals, b.Locals)
	case *MethodSpecSig:
		b, ok := b.(*MethodSpecSig)
		return ok && typesEqual(a.Args, b.Args)
	}
	return false
}

func TestSignatureErrors(t *testing.T) {
	for _, c := range []struct {
		hex    string
		kind   error
		offset int
		detail string
	}{
		{"", ErrSigTruncated, 0, "empty"},
		{"2001", ErrSigTruncated, 1, "parameter count 1"},
		{"200108", ErrSigTruncated, 3, "element type"},
		{"0617", ErrSigMalformed, 1, "unknown element type 0x17"},
		{"0612", ErrSigTruncated, 2, "class token"},
		{"061203", ErrSigMalformed, 2, "tag 3"},
		{"06080000", ErrSigMalformed, 2, "bytes after"},
		{"0615080d0108", ErrSigMalformed, 2, "GENERICINST of element type 0x08"},
		{"0614080301ff", ErrSigMalformed, 5, "lead byte 0xff"},
		{"0614082101", ErrSigLimit, 3, "rank 33"},
		{"0614080102000000", ErrSigMalformed, 3, "2 sizes for rank 1"},
		{"0641", ErrSigMalformed, 1, "SENTINEL"},
		{"0003014108", ErrSigTruncated, 5, "element type"},
		{"000201" + "4108" + "4108", ErrSigMalformed, 5, "misplaced SENTINEL"},
		{"0a00", ErrSigMalformed, 1, "without arguments"},
		{"0d0001", ErrSigMalformed, 0, "unknown calling convention 0x0d"},
		{"06" + strings.Repeat("0f", MaxSigDepth) + "08", ErrSigLimit, MaxSigDepth + 1, "nested deeper"},
		{"07" + "c0010000", ErrSigLimit, 1, "local count 65536"},
	} {
		b, _ := hex.DecodeString(c.hex)
		s, err := ParseSignature(b)
		var se *SigError
		if !errors.As(err, &se) {
			t.Errorf("%s: decoded %#v, %v; want a *SigError", c.hex, s, err)
			continue
		}
		if !errors.Is(err, c.kind) || se.Offset != c.offset || !strings.Contains(err.Error(), c.detail) {
			t.Errorf("%s: %v (offset %d); want %v at %d containing %q", c.hex, err, se.Offset, c.kind, c.offset, c.detail)
		}
	}
}

func TestEncodeErrors(t *testing.T) {
	for name, s := range map[string]Signature{
		"nil return":       &MethodSig{},
		"nil param":        &MethodSig{Return: Primitive(ElementTypeVoid), Params: []*Type{nil}},
		"bad token":        &FieldSig{Type: ClassType(0x06000001)},
		"bad genericinst":  &FieldSig{Type: GenericInst(Primitive(ElementTypeI4), Primitive(ElementTypeI4))},
		"no args":          &MethodSpecSig{},
		"big rank":         &FieldSig{Type: &Type{Kind: ElementTypeArray, Elem: Primitive(ElementTypeI4), Shape: &ArrayShape{Rank: 99}}},
		"unknown kind":     &FieldSig{Type: &Type{Kind: 0x17}},
		"generic no flag":  &MethodSig{GenericParams: 1, Return: Primitive(ElementTypeVoid)},
		"fnptr no method":  &FieldSig{Type: &Type{Kind: ElementTypeFnptr}},
		"bound range":      &FieldSig{Type: &Type{Kind: ElementTypeArray, Elem: Primitive(ElementTypeI4), Shape: &ArrayShape{Rank: 1, LoBounds: []int32{1 << 29}}}},
		"call conv > byte": &MethodSig{CallConv: 0x100, Return: Primitive(ElementTypeVoid)},
	} {
		if b, err := s.Encode(); !errors.Is(err, ErrSigEncode) {
			t.Errorf("%s: %x, %v", name, b, err)
		}
	}
	deep := Primitive(ElementTypeI4)
	for range MaxSigDepth + 1 {
		deep = PtrTo(deep)
	}
	if _, err := deep.Encode(); !errors.Is(err, ErrSigEncode) {
		t.Errorf("too deep: %v", err)
	}
}

func TestAppendLocals(t *testing.T) {
	i4, obj := Primitive(ElementTypeI4), Primitive(ElementTypeObject)
	// No locals yet.
	sig, first, err := AppendLocals(nil, i4, obj)
	if err != nil || first != 0 || !bytes.Equal(sig, []byte{0x07, 0x02, 0x08, 0x1c}) {
		t.Fatalf("%x %d %v", sig, first, err)
	}
	// Two existing locals (string, valuetype TypeRef 3) keep their bytes;
	// what follows them is dropped.
	sig, first, err = AppendLocals([]byte{0x07, 0x02, 0x0e, 0x11, 0x0d, 0xAA}, Primitive(ElementTypeI8), ValueType(0x01000003))
	if err != nil || first != 2 || !bytes.Equal(sig, []byte{0x07, 0x04, 0x0e, 0x11, 0x0d, 0x0a, 0x11, 0x0d}) {
		t.Fatalf("%x %d %v", sig, first, err)
	}
	// Crossing 127 locals widens the compressed count.
	old := append([]byte{0x07, 0x7F}, bytes.Repeat([]byte{0x08}, 127)...)
	sig, first, err = AppendLocals(old, Primitive(ElementTypeBoolean))
	if err != nil || first != 127 || !bytes.Equal(sig[:3], []byte{0x07, 0x80, 0x80}) || len(sig) != 3+128 || sig[len(sig)-1] != 0x02 {
		t.Fatalf("%x... %d %v", sig[:4], first, err)
	}
	// And crossing 0x3FFF widens it again.
	old = append([]byte{0x07, 0xBF, 0xFE}, bytes.Repeat([]byte{0x08}, 0x3FFE)...)
	sig, first, err = AppendLocals(old, i4, i4)
	if err != nil || first != 0x3FFE || !bytes.Equal(sig[:5], []byte{0x07, 0xC0, 0x00, 0x40, 0x00}) || len(sig) != 5+0x4000 {
		t.Fatalf("%x... %d %v", sig[:5], first, err)
	}
	for name, c := range map[string]struct {
		sig  []byte
		typ  *Type
		kind error
		off  int
	}{
		"not locals":  {[]byte{0x06, 0x08}, i4, ErrSigMalformed, 0},
		"bad type":    {nil, &Type{Kind: 0x77}, ErrSigEncode, 3},
		"nil type":    {[]byte{0x07, 0x01, 0x08}, nil, ErrSigEncode, 3},
		"truncated":   {[]byte{0x07, 0x02, 0x08}, i4, ErrSigTruncated, 1},
		"bad local":   {[]byte{0x07, 0x01, 0x77}, i4, ErrSigMalformed, 2},
		"too many":    {append([]byte{0x07, 0xC0, 0x00, 0xFF, 0xFE}, bytes.Repeat([]byte{0x08}, 0xFFFE)...), i4, ErrSigEncode, 1},
		"count limit": {[]byte{0x07, 0xC0, 0x01, 0x00, 0x00}, i4, ErrSigLimit, 1},
	} {
		sig, _, err := AppendLocals(c.sig, c.typ)
		var se *SigError
		if !errors.As(err, &se) || !errors.Is(err, c.kind) || se.Offset != c.off {
			t.Errorf("%s: %x, %v; want %v at byte %d", name, sig, err, c.kind, c.off)
		}
	}
}

// checkAppendLocals appends a local to b: when that succeeds, the result is
// a local-variable signature with the new local last.
func checkAppendLocals(t *testing.T, b []byte) {
	sig, first, err := AppendLocals(b, Primitive(ElementTypeI4))
	if err != nil {
		return
	}
	s, err := ParseLocalVarSig(sig)
	if err != nil || len(s.Locals) != first+1 || s.Locals[first].Kind != ElementTypeI4 {
		t.Fatalf("%x: appended %x (first %d), which decodes as %v, %v", b, sig, first, s, err)
	}
}

// checkRoundTrip decodes b with parse; when that succeeds, encoding must
// succeed, the encoding must decode to the same tree, and encode again to
// the same bytes.
func checkRoundTrip[S interface{ Encode() ([]byte, error) }](t *testing.T, b []byte, parse func([]byte) (S, error), eq func(a, b S) bool) {
	s, err := parse(b)
	if err != nil {
		var se *SigError
		if !errors.As(err, &se) || se.Offset < 0 || se.Offset > len(b) {
			t.Fatalf("%x: error %v is not a *SigError with an offset inside the blob", b, err)
		}
		return
	}
	enc, err := s.Encode()
	if err != nil {
		t.Fatalf("%x decoded but does not encode: %v", b, err)
	}
	s2, err := parse(enc)
	if err != nil {
		t.Fatalf("%x: re-encoded as %x, which does not decode: %v", b, enc, err)
	}
	if !eq(s, s2) {
		t.Fatalf("%x: re-encoded as %x, which decodes differently", b, enc)
	}
	enc2, err := s2.Encode()
	if err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("%x: second encoding %x, %v differs from %x", b, enc2, err, enc)
	}
}

func FuzzParseSignature(f *testing.F) {
	for _, c := range sigCases() {
		b, _ := hex.DecodeString(c.hex)
		f.Add(b)
	}
	f.Add([]byte{0x00, 0x02, 0x01, 0x41, 0x08})
	var d SigDecoder // reused across inputs, as a loop would
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRoundTrip(t, b, ParseSignature, sigEqual)
		checkAppendLocals(t, b)
		checkSigDecoder(t, &d, b)
	})
}

// checkSigDecoder checks that d decodes b as ParseMethodSig and
// ParseLocalVarSig do, whatever it decoded before.
func checkSigDecoder(t *testing.T, d *SigDecoder, b []byte) {
	t.Helper()
	m, err := ParseMethodSig(b)
	dm, derr := d.ParseMethodSig(b)
	if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) || (err == nil && !m.Equal(dm)) {
		t.Fatalf("%x: SigDecoder.ParseMethodSig gives %#v, %v; ParseMethodSig %#v, %v", b, dm, derr, m, err)
	}
	l, err := ParseLocalVarSig(b)
	dl, derr := d.ParseLocalVarSig(b)
	if (err == nil) != (derr == nil) || (err != nil && err.Error() != derr.Error()) || (err == nil && !typesEqual(l.Locals, dl.Locals)) {
		t.Fatalf("%x: SigDecoder.ParseLocalVarSig gives %#v, %v; ParseLocalVarSig %#v, %v", b, dl, derr, l, err)
	}
}

func TestSigDecoderReuse(t *testing.T) {
	var d SigDecoder
	var blobs [][]byte
	for _, c := range sigCases() {
		b, _ := hex.DecodeString(c.hex)
		blobs = append(blobs, b)
	}
	// Locals beyond those held inline, and a method signature with many
	// parameters, so that the slabs grow.
	blobs = append(blobs, []byte{0x07, 0x06, 0x08, 0x0E, 0x1D, 0x08, 0x15, 0x12, 0x05, 0x02, 0x08, 0x0E, 0x1C, 0x0F, 0x01})
	blobs = append(blobs, []byte{0x00, 0x06, 0x01, 0x08, 0x08, 0x08, 0x08, 0x08, 0x08})
	if l, err := ParseLocalVarSig(blobs[len(blobs)-2]); err != nil || len(l.Locals) != 6 {
		t.Fatalf("locals: %v", err)
	}
	if m, err := ParseMethodSig(blobs[len(blobs)-1]); err != nil || len(m.Params) != 6 {
		t.Fatalf("method: %v", err)
	}
	for round := 0; round < 2; round++ {
		for _, b := range blobs {
			checkSigDecoder(t, &d, b)
		}
	}
}

func FuzzParseTypeSpec(f *testing.F) {
	for _, c := range sigCases() {
		b, _ := hex.DecodeString(c.hex)
		if len(b) > 1 {
			f.Add(b[1:])
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkRoundTrip(t, b, ParseTypeSpec, (*Type).Equal)
	})
}

func FuzzCompressed(f *testing.F) {
	f.Add(uint32(0x2E57), int32(-8192))
	f.Fuzz(func(t *testing.T, u uint32, s int32) {
		if b, err := AppendCompressed(nil, u); err == nil {
			if v, n, err := ReadCompressed(b); err != nil || v != u || n != len(b) {
				t.Fatalf("%d -> %x -> %d, %v", u, b, v, err)
			}
		} else if u <= MaxCompressed {
			t.Fatalf("%d: %v", u, err)
		}
		if b, err := AppendCompressedSigned(nil, s); err == nil {
			if v, n, err := ReadCompressedSigned(b); err != nil || v != s || n != len(b) {
				t.Fatalf("%d -> %x -> %d, %v", s, b, v, err)
			}
		} else if s >= -(1<<28) && s < 1<<28 {
			t.Fatalf("%d: %v", s, err)
		}
	})
}

// TestLongLocalSig decodes the most locals a signature may hold, which
// takes many slabs of nodes and lists.
func TestLongLocalSig(t *testing.T) {
	b := []byte{0x07, 0xC0, 0x00, 0xFF, 0xFF}
	for i := 0; i < MaxSigCount; i++ {
		b = append(b, byte(ElementTypeI4+ElementType(i%2)))
	}
	var d SigDecoder
	for _, parse := range []func([]byte) (*LocalVarSig, error){ParseLocalVarSig, d.ParseLocalVarSig, d.ParseLocalVarSig} {
		s, err := parse(b)
		if err != nil || len(s.Locals) != MaxSigCount {
			t.Fatalf("%v", err)
		}
		for i, l := range s.Locals {
			if want := ElementTypeI4 + ElementType(i%2); l.Kind != want || (i > 0 && l == s.Locals[i-1]) {
				t.Fatalf("local %d: %v, want %v", i, l.Kind, want)
			}
		}
	}
}
