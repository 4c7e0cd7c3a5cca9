//go:build cgo

package instr

import (
	"math"
	"testing"
	"unsafe"
)

// TestDecode checks how the 64 bits the wrap passes become Values.
func TestDecode(t *testing.T) {
	// A System.String as CoreCLR lays it out on 64-bit: MethodTable
	// pointer, int32 length, UTF-16 characters.
	var obj [8]uint64
	*(*int32)(unsafe.Pointer(uintptr(unsafe.Pointer(&obj[0])) + 8)) = 3
	chars := (*[3]uint16)(unsafe.Pointer(uintptr(unsafe.Pointer(&obj[0])) + 12))
	chars[0], chars[1], chars[2] = 'h', 0xe9, 0x2603 // h, é, ☃
	strBits := uint64(uintptr(unsafe.Pointer(&obj[0])))

	neg := int64(-42)
	for _, c := range []struct {
		k    valueKind
		bits uint64
		want string
	}{
		{valueKind{kind: KindInt}, uint64(neg), "-42"},
		{valueKind{kind: KindUint, unsigned: true}, math.MaxUint64, "18446744073709551615"},
		{valueKind{kind: KindFloat}, math.Float64bits(-2.25), "-2.25"},
		{valueKind{kind: KindBool, unsigned: true}, 1, "true"},
		{valueKind{kind: KindBool, unsigned: true}, 0, "false"},
		{valueKind{kind: KindChar, unsigned: true}, 'y', "'y'"},
		{valueKind{kind: KindEnum}, uint64(neg), "-42"},
		{valueKind{kind: KindEnum, unsigned: true}, 200, "200"},
		{valueKind{kind: KindString}, 0, "null"},
		{valueKind{kind: KindString}, strBits, `"hé☃"`},
		{valueKind{kind: KindObject}, 12345, "<object>"},
		{valueKind{kind: KindVoid}, 7, "void"},
	} {
		v := decode(c.k, c.bits)
		if got := v.String(); got != c.want {
			t.Errorf("%v %#x: %s, want %s", c.k.kind, c.bits, got, c.want)
		}
		if c.k.kind == KindObject && v.Uint() != 0 {
			t.Errorf("an object passed a value: %d", v.Uint())
		}
	}
	if v := decode(valueKind{kind: KindString}, 0); !v.IsNull() || v.Str() != "" {
		t.Errorf("null string: %+v", v)
	}
	if s := decode(valueKind{kind: KindString}, strBits).Str(); s != "hé☃" {
		t.Errorf("Str() = %q", s)
	}
}

// TestGoHookPanicsCounted: a panic recorded by an entry shows in
// GoHookPanics with its count and first value.
func TestGoHookPanicsCounted(t *testing.T) {
	e := &goEntry{name: "A!B::C", hooks: &GoHooks{}}
	id := addGoEntry(e)
	if goLookup(id) != e || goLookup(-1) != nil || goLookup(id+1000) != nil {
		t.Fatal("lookup")
	}
	e.recovered("first")
	e.recovered("second")
	for _, p := range GoHookPanics() {
		if p.Method == "A!B::C" {
			if p.Count != 2 || p.First != "first" {
				t.Errorf("%+v", p)
			}
			return
		}
	}
	t.Error("not reported")
}
