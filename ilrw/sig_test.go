package ilrw

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseMethodSig(t *testing.T) {
	for _, c := range []struct {
		name    string
		sig     []byte
		params  int
		hasThis bool
		void    bool
		ret     []byte
	}{
		{"static void()", []byte{0x00, 0x00, 0x01}, 0, false, true, []byte{0x01}},
		{"instance int32(string, object)", []byte{0x20, 0x02, 0x08, 0x0e, 0x1c}, 2, true, false, []byte{0x08}},
		{"generic !!0 M<T>(!!0[])", []byte{0x10, 0x01, 0x01, 0x1e, 0x00, 0x1d, 0x1e, 0x00}, 1, false, false, []byte{0x1e, 0x00}},
		{"modreq void", []byte{0x00, 0x00, 0x1f, 0x09, 0x01}, 0, false, true, []byte{0x1f, 0x09, 0x01}},
		{"vararg with sentinel", []byte{0x05, 0x02, 0x01, 0x08, 0x41, 0x08}, 2, false, true, []byte{0x01}},
		{"explicit this", []byte{0x60, 0x01, 0x01, 0x12, 0x08}, 1, false, true, []byte{0x01}},
		{"generic inst return", []byte{0x00, 0x00, 0x15, 0x12, 0x10, 0x02, 0x08, 0x0e}, 0, false, false, []byte{0x15, 0x12, 0x10, 0x02, 0x08, 0x0e}},
		{"array param", []byte{0x00, 0x01, 0x01, 0x14, 0x08, 0x02, 0x01, 0x05, 0x01, 0x00}, 1, false, true, []byte{0x01}},
		{"fnptr param", []byte{0x00, 0x01, 0x01, 0x1b, 0x00, 0x01, 0x08, 0x08}, 1, false, true, []byte{0x01}},
	} {
		s, err := ParseMethodSig(c.sig)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if s.Params != c.params || s.HasThis() != c.hasThis || s.ReturnsVoid() != c.void || !bytes.Equal(s.Return, c.ret) {
			t.Errorf("%s: %+v this=%v void=%v", c.name, s, s.HasThis(), s.ReturnsVoid())
		}
	}
	for name, sig := range map[string][]byte{
		"empty": nil, "field": {0x06, 0x08}, "truncated": {0x00, 0x02, 0x01, 0x08},
		"bad element": {0x00, 0x00, 0x77}, "huge count": {0x00, 0xDF, 0xFF, 0xFF, 0xFF, 0x01},
		"bad compressed": {0x00, 0xFF}, "deep": append([]byte{0x00, 0x00}, bytes.Repeat([]byte{0x0f}, 100)...),
	} {
		_, err := ParseMethodSig(sig)
		var se *SigError
		if !errors.As(err, &se) {
			t.Errorf("%s: %v, want a SigError", name, err)
		}
	}
}

func TestAppendLocals(t *testing.T) {
	// No locals yet.
	sig, first, err := AppendLocals(nil, TypeInt32, TypeObject)
	if err != nil || first != 0 || !bytes.Equal(sig, []byte{0x07, 0x02, 0x08, 0x1c}) {
		t.Fatalf("%x %d %v", sig, first, err)
	}
	// Two existing locals (string, valuetype TypeRef 3), one new.
	vt, err := TypeValueType(0x01000003)
	if err != nil || !bytes.Equal(vt, []byte{0x11, 0x0d}) {
		t.Fatalf("TypeValueType: %x %v", vt, err)
	}
	sig, first, err = AppendLocals([]byte{0x07, 0x02, 0x0e, 0x11, 0x0d, 0xAA}, TypeInt64)
	if err != nil || first != 2 || !bytes.Equal(sig, []byte{0x07, 0x03, 0x0e, 0x11, 0x0d, 0x0a}) {
		t.Fatalf("%x %d %v", sig, first, err)
	}
	if n, err := LocalCount(sig); n != 3 || err != nil {
		t.Errorf("LocalCount %d %v", n, err)
	}
	// Crossing 127 locals widens the compressed count.
	old := append([]byte{0x07, 0x7F}, bytes.Repeat([]byte{0x08}, 127)...)
	sig, first, err = AppendLocals(old, TypeBool)
	if err != nil || first != 127 || !bytes.Equal(sig[:3], []byte{0x07, 0x80, 0x80}) || len(sig) != 3+128 {
		t.Fatalf("%x... %d %v", sig[:4], first, err)
	}
	for name, c := range map[string]struct{ sig, typ []byte }{
		"not locals": {[]byte{0x06, 0x08}, TypeInt32},
		"bad type":   {nil, []byte{0x77}},
		"two types":  {nil, []byte{0x08, 0x08}},
		"truncated":  {[]byte{0x07, 0x02, 0x08}, TypeInt32},
	} {
		if _, _, err := AppendLocals(c.sig, c.typ); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := TypeClass(0x06000001); err == nil {
		t.Error("TypeClass of a MethodDef")
	}
	if c, err := TypeClass(0x1b000001); err != nil || !bytes.Equal(c, []byte{0x12, 0x06}) {
		t.Errorf("TypeClass(TypeSpec 1) = %x %v", c, err)
	}
}
