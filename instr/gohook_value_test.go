//go:build cgo

package instr

import (
	"math"
	"testing"
	"time"
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

// TestValueConstructors: the constructors make the Values the SDK's two
// decoders make (decode for synchronous hooks, setq for deferred ones)
// of the same bits, for the valueKinds goKind gives each type; NewCall
// copies its arguments. (TestGoHooks checks the same on every runtime,
// with the values of real calls.)
func TestValueConstructors(t *testing.T) {
	neg := int64(-42)
	for _, c := range []struct {
		k    valueKind
		bits uint64
		want Value
	}{
		{valueKind{kind: KindInt, typ: "System.Int32"}, uint64(neg), IntValue("System.Int32", -42)},
		{valueKind{kind: KindUint, typ: "System.UInt64", unsigned: true}, math.MaxUint64, UintValue("System.UInt64", math.MaxUint64)},
		{valueKind{kind: KindFloat, typ: "System.Single", single: true}, math.Float64bits(0.75), FloatValue("System.Single", 0.75)},
		{valueKind{kind: KindBool, typ: "System.Boolean", unsigned: true}, 1, BoolValue(true)},
		{valueKind{kind: KindBool, typ: "System.Boolean", unsigned: true}, 0, BoolValue(false)},
		{valueKind{kind: KindChar, typ: "System.Char", unsigned: true}, 0x2603, CharValue(0x2603)},
		{valueKind{kind: KindEnum, typ: "Shop.Big"}, uint64(neg), EnumValue("Shop.Big", -42)},
		{valueKind{kind: KindEnum, typ: "Shop.Color", unsigned: true}, 200, UnsignedEnumValue("Shop.Color", 200)},
		{valueKind{kind: KindString, typ: "System.String"}, 0, NullStringValue()},
		{valueKind{kind: KindObject, typ: "System.Object"}, 12345, ObjectValue("System.Object")},
		{valueKind{kind: KindVoid}, 7, VoidValue()},
	} {
		if got := decode(c.k, c.bits); got != c.want {
			t.Errorf("decode %v %#x: %#v, want %#v", c.k.kind, c.bits, got, c.want)
		}
		var s *qstr
		if c.k.kind == KindString {
			s = &qstr{null: true}
		}
		var got Value
		got.setq(&c.k, c.bits, s)
		if got != c.want {
			t.Errorf("setq %v %#x: %#v, want %#v", c.k.kind, c.bits, got, c.want)
		}
	}
	str := valueKind{kind: KindString, typ: "System.String"}
	for _, c := range []struct {
		s    qstr
		want Value
	}{
		{qstr{s: "hé☃"}, StringValue("hé☃")},
		{qstr{s: ""}, StringValue("")},
		{qstr{s: "abc", trunc: true}, TruncatedStringValue("abc")},
	} {
		var got Value
		got.setq(&str, 0, &c.s)
		if got != c.want {
			t.Errorf("setq %+v: %#v, want %#v", c.s, got, c.want)
		}
	}
	if v := TruncatedStringValue("ab"); !v.Truncated() || v.Str() != "ab" || v.IsNull() {
		t.Errorf("TruncatedStringValue: %#v", v)
	}

	args := []Value{IntValue("System.Int32", 1)}
	tm := time.Unix(5, 0)
	c := NewCall(CallFields{Method: 3, Thread: 9, Args: args, Time: tm})
	args[0] = IntValue("System.Int32", 2)
	if c.Method() != 3 || c.Thread() != 9 || c.Time() != tm || len(c.Args()) != 1 || c.Args()[0].Int() != 1 {
		t.Errorf("NewCall: %+v", c)
	}
	if NewCall(CallFields{}).Args() != nil {
		t.Error("NewCall without Args: Args() not nil")
	}
	r := NewReturn(ReturnFields{Method: 3, Thread: 9, State: 4, Value: VoidValue(), Exception: true, ExceptionType: "E", ExceptionTypeTruncated: true, Time: tm})
	if r.Method() != 3 || r.Thread() != 9 || r.State() != 4 || r.Value() != VoidValue() || !r.Exception() || r.ExceptionType() != "E" || !r.ExceptionTypeTruncated() || r.Time() != tm {
		t.Errorf("NewReturn: %+v", r)
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
