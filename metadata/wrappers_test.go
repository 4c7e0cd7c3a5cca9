//go:build cgo

package metadata

import (
	"reflect"
	"testing"
)

// TestDerivedWrappersKeepBaseMethods checks that a wrapper of a derived
// interface offers every method of its base's wrapper (by embedding).
func TestDerivedWrappersKeepBaseMethods(t *testing.T) {
	for _, c := range []struct{ derived, base any }{
		{(*Import2)(nil), (*Import)(nil)},
		{(*Emit2)(nil), (*Emit)(nil)},
		{(*DispenserEx)(nil), (*Dispenser)(nil)},
		{(*Tables2)(nil), (*Tables)(nil)},
	} {
		d, b := reflect.TypeOf(c.derived), reflect.TypeOf(c.base)
		if b.NumMethod() < 3 {
			t.Fatalf("%s has only %d methods", b, b.NumMethod())
		}
		for i := 0; i < b.NumMethod(); i++ {
			m := b.Method(i)
			dm, ok := d.MethodByName(m.Name)
			if !ok {
				t.Errorf("%s lacks %s of %s", d, m.Name, b)
				continue
			}
			if dm.Type.NumIn() != m.Type.NumIn() || dm.Type.NumOut() != m.Type.NumOut() {
				t.Errorf("%s.%s has another signature than %s.%s", d, m.Name, b, m.Name)
			}
		}
	}
	// A nil derived wrapper answers with an error, not a panic.
	var x *Import2
	if _, err := x.GetScopeProps(); err == nil {
		t.Error("GetScopeProps on a nil *Import2 succeeded")
	}
}
