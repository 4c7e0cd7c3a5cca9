package ilrw

import (
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// TestILSig: a runtime-async method's IL returns void for Task and
// ValueTask and T for Task<T> and ValueTask<T>; other methods keep their
// signature; anything else declared by a runtime-async method is an error.
func TestILSig(t *testing.T) {
	const async = metadata.MethodImpl(0x2000)
	for _, c := range []struct {
		name string
		sig  []byte // static, one int32 parameter
		ret  metadata.ElementType
		err  bool
	}{
		{"Task", []byte{0x00, 0x01, 0x12, 0x05, 0x08}, metadata.ElementTypeVoid, false},
		{"Task<int32>", []byte{0x00, 0x01, 0x15, 0x12, 0x05, 0x01, 0x08, 0x08}, metadata.ElementTypeI4, false},
		{"ValueTask", []byte{0x00, 0x01, 0x11, 0x05, 0x08}, metadata.ElementTypeVoid, false},
		{"ValueTask<string>", []byte{0x00, 0x01, 0x15, 0x11, 0x05, 0x01, 0x0e, 0x08}, metadata.ElementTypeString, false},
		{"Task<!!0>", []byte{0x10, 0x01, 0x01, 0x15, 0x12, 0x05, 0x01, 0x1e, 0x00, 0x08}, metadata.ElementTypeMvar, false},
		{"int32", []byte{0x00, 0x01, 0x08, 0x08}, 0, true},
		{"Dictionary<int32,int32>", []byte{0x00, 0x01, 0x15, 0x12, 0x05, 0x02, 0x08, 0x08, 0x08}, 0, true},
	} {
		s, err := metadata.ParseMethodSig(c.sig)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if same, err := ILSig(s, metadata.MiIL); err != nil || same != s {
			t.Errorf("%s without miAsync: %v, %v: want the signature itself", c.name, same, err)
		}
		il, err := ILSig(s, async|metadata.MiIL)
		if c.err {
			if err == nil {
				t.Errorf("%s: runtime async accepted (%v)", c.name, il.Return)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if il.Return.Kind != c.ret || len(il.Params) != 1 || il.Params[0].Kind != metadata.ElementTypeI4 || il == s {
			t.Errorf("%s: IL signature returns %v (%d params), want %v", c.name, il.Return.Kind, len(il.Params), c.ret)
		}
		if s.Return.Kind == il.Return.Kind {
			t.Errorf("%s: the declared signature was changed", c.name)
		}
		if got := CallSiteOf(il).ReturnsValue; got != (c.ret != metadata.ElementTypeVoid) {
			t.Errorf("%s: ReturnsValue %v", c.name, got)
		}
	}
	if !IsRuntimeAsync(0x2000) || IsRuntimeAsync(metadata.MiNoInlining) {
		t.Error("IsRuntimeAsync")
	}
}
