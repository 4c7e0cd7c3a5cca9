//go:build cgo

package instr

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unsafe"
)

var testActions = []Action{
	{Arg: 0, Path: "Headers", Method: "Add", Params: 2},
	{Arg: This, Method: "Clear"},
	{Arg: 1, Method: "Set", Kinds: []ParamKind{ParamString, ParamBool, ParamInt32, ParamInt64}},
}

// flags is a named integer type, as an enum's Go counterpart would be.
type flags uint8

// TestCallAct: Act records what is asked in order and refuses what the
// actions cannot run, asking for nothing then.
func TestCallAct(t *testing.T) {
	c := NewCall(CallFields{Actions: testActions})
	if err := c.Act(0, "traceparent", "00-x"); err != nil {
		t.Fatal(err)
	}
	if err := c.Act(1); err != nil {
		t.Fatal(err)
	}
	args := []any{"k", "v"}
	if err := c.Act(0, args...); err != nil {
		t.Fatal(err)
	}
	args[0] = "changed" // Act copied them
	if err := c.Act(2, "s", true, flags(7), int64(-1)<<40); err != nil {
		t.Fatal(err)
	}
	if err := c.Act(2, "", false, int32(-5), uint64(1)<<62); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		i    int
		args []any
		want string
	}{
		{3, nil, "Act(3): the hooks have 3 actions"},
		{-1, nil, "Act(-1): the hooks have 3 actions"},
		{0, []any{"one"}, "Act(0): 1 values for Add, which takes 2"},
		{1, []any{"x"}, "Act(1): 1 values for Clear, which takes 0"},
		{0, []any{"k", 1}, "parameter 1 of Add: int for a string"},
		{2, []any{1, true, 1, 1}, "parameter 0 of Set: int for a string"},
		{2, []any{"s", 1, 1, 1}, "parameter 1 of Set: int for a bool"},
		{2, []any{"s", true, "1", 1}, "parameter 2 of Set: string for a int32"},
		{2, []any{"s", true, int64(1) << 31, 1}, "2147483648 is out of int32's range"},
		{2, []any{"s", true, -1 - int64(1)<<31, 1}, "-2147483649 is out of int32's range"},
		{2, []any{"s", true, 1, uint64(1) << 63}, "9223372036854775808 is out of int64's range"},
		{2, []any{"s", true, 1, 1.5}, "float64 for a int64"},
	} {
		err := c.Act(bad.i, bad.args...)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Act(%d, %q) = %v, want %q", bad.i, bad.args, err, bad.want)
		}
	}
	want := []ActionRequest{{0, []any{"traceparent", "00-x"}}, {1, []any{}}, {0, []any{"k", "v"}},
		{2, []any{"s", int64(1), int64(7), int64(-1) << 40}}, {2, []any{"", int64(0), int64(-5), int64(1) << 62}}}
	if got := c.Actions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Actions() = %v, want %v", got, want)
	}
	// A call without actions (a deferred hook's, or NewCall without
	// CallFields.Actions) refuses every Act.
	if err := NewCall(CallFields{}).Act(0); err == nil {
		t.Error("Act on a call without actions: no error")
	}
}

// TestCallActFloats: a double parameter takes a float64 or a float32, a
// float one either (rounded), each as its IEEE bits (a float's in the low
// half); nothing else.
func TestCallActFloats(t *testing.T) {
	c := NewCall(CallFields{Actions: []Action{{Method: "M", Kinds: []ParamKind{ParamFloat64, ParamFloat32}}}})
	if err := c.Act(0, 1.5, float32(-2.25)); err != nil {
		t.Fatal(err)
	}
	if err := c.Act(0, float32(0.1), 0.1); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]any{{1, float32(1)}, {1.0, "x"}, {true, 1.0}} {
		if err := c.Act(0, bad...); err == nil || !strings.Contains(err.Error(), "for a float") {
			t.Errorf("Act(0, %v) = %v", bad, err)
		}
	}
	want := []ActionRequest{
		{0, []any{int64(math.Float64bits(1.5)), int64(math.Float32bits(-2.25))}},
		{0, []any{int64(math.Float64bits(float64(float32(0.1)))), int64(math.Float32bits(0.1))}},
	}
	if got := c.Actions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Actions() = %v, want %v", got, want)
	}
}

// TestCallActLimits: MaxActs requests and 512 KiB of strings a call.
func TestCallActLimits(t *testing.T) {
	c := NewCall(CallFields{Actions: testActions})
	for i := range MaxActs {
		if err := c.Act(1); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	if err := c.Act(1); err == nil || !strings.Contains(err.Error(), "more than 64 actions") {
		t.Errorf("request %d: %v", MaxActs+1, err)
	}
	c = NewCall(CallFields{Actions: testActions})
	big := strings.Repeat("x", maxActBytes/2)
	if err := c.Act(0, big, big); err != nil {
		t.Fatal(err)
	}
	if err := c.Act(0, "", "y"); err == nil || !strings.Contains(err.Error(), "bytes of strings") {
		t.Errorf("past the limit: %v", err)
	}
	if len(c.Actions()) != 1 {
		t.Errorf("%d requests recorded, want 1", len(c.Actions()))
	}
}

// TestCheckActions: New refuses actions with Deferred hooks, without
// Enter, and malformed ones.
func TestCheckActions(t *testing.T) {
	enter := func(*Call) uint64 { return 0 }
	for _, tc := range []struct {
		h    GoHooks
		want string
	}{
		{GoHooks{Enter: enter, Deferred: true, Actions: testActions}, "need synchronous hooks"},
		{GoHooks{Exit: func(*Return) {}, Actions: testActions}, "action 0: an action at entry needs Enter"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: Result, Method: "M"}}}, "Arg Result is for an action at exit"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: -4, Method: "M"}}}, "Arg -4"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: Result, Method: "M", AtExit: true}}}, "an action at exit (AtExit) needs Exit"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: 0}}}, "no Method"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Params: MaxActionParams + 1}}}, "more than 4 parameters"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Kinds: make([]ParamKind, MaxActionParams+1)}}}, "more than 4 parameters"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Params: -1}}}, "more than 4 parameters"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Params: 1, Kinds: []ParamKind{ParamBool, ParamBool}}}}, "Params 1 and 2 Kinds"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Kinds: []ParamKind{ParamFloat32 + 1}}}}, "ParamKind(6)"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: Static, Path: "Current", Method: "M"}}}, "Static needs a Type and a Path"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: Static, Type: "T, A", Method: "M"}}}, "Static needs a Type and a Path"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: 0, Type: "T, A", Method: "M"}}}, "is for Arg Static"},
	} {
		r := Rule{Go: &tc.h}
		err := checkRule(&r)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.h.Actions, err, tc.want)
		}
	}
	r := Rule{Go: &GoHooks{Enter: enter, Actions: testActions}}
	if err := checkRule(&r); err != nil {
		t.Errorf("valid actions: %v", err)
	}
	// Actions at exit alone need Exit, not Enter.
	r = Rule{Go: &GoHooks{Exit: func(*Return) {}, Actions: exitActions[1:]}}
	if err := checkRule(&r); err != nil {
		t.Errorf("valid actions at exit: %v", err)
	}
}

var exitActions = []Action{
	{Arg: 0, Path: "Headers", Method: "Add", Params: 2},
	{Arg: Result, Method: "Append", Params: 1, AtExit: true},
	{Arg: Static, Type: ActivityType, Path: "Current", Method: "AddTag", Params: 2, AtExit: true},
}

// TestReturnAct: Exit asks for the actions at exit (AtExit) and only
// those; Enter for the others.
func TestReturnAct(t *testing.T) {
	r := NewReturn(ReturnFields{Actions: exitActions})
	if err := r.Act(1, "-done"); err != nil {
		t.Fatal(err)
	}
	if err := r.Act(2, "http.response.status_code", "200"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct {
		i    int
		args []any
		want string
	}{
		{0, []any{"k", "v"}, "Return.Act(0): Add runs at entry: Enter asks for it, with Call.Act"},
		{3, nil, "Return.Act(3): the hooks have 3 actions"},
		{1, []any{"a", "b"}, "Return.Act(1): 2 values for Append, which takes 1"},
		{1, []any{true}, "Return.Act(1): parameter 0 of Append: bool for a string"},
	} {
		if err := r.Act(bad.i, bad.args...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Return.Act(%d, %v) = %v, want %q", bad.i, bad.args, err, bad.want)
		}
	}
	want := []ActionRequest{{1, []any{"-done"}}, {2, []any{"http.response.status_code", "200"}}}
	if got := r.Actions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Actions() = %v, want %v", got, want)
	}
	c := NewCall(CallFields{Actions: exitActions})
	if err := c.Act(1, "x"); err == nil || !strings.Contains(err.Error(), "Act(1): Append runs at exit (Action.AtExit): Exit asks for it, with Return.Act") {
		t.Errorf("Call.Act of an action at exit: %v", err)
	}
	if err := c.Act(0, "k", "v"); err != nil {
		t.Errorf("Call.Act of an action at entry: %v", err)
	}
	if err := NewReturn(ReturnFields{}).Act(0); err == nil {
		t.Error("Return.Act without actions: no error")
	}
}

// TestActBlock: the block the wrap reads (gohook_act.go's layout):
// records in order, absolute addresses of each string's UTF-16 units,
// never null (an empty string's too), surrogate pairs, invalid UTF-8 as
// U+FFFD.
func TestActBlock(t *testing.T) {
	acts := []ActionRequest{
		{Action: 1, Args: []any{"traceparent", "00-ab-cd-01"}},
		{Action: 0},
		{Action: 3, Args: []any{"", "é€😀", "bad\xff"}},
		{Action: 2, Args: []any{int64(-2), "x", int64(1) << 40}},
	}
	n := actBlockSize(acts)
	if want := actHeader + 4*actRecSize + 2*(11+11+0+4+4+1); n != want {
		t.Fatalf("size %d, want %d", n, want)
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = 0xAA // fillActBlock writes every byte the wrap reads
	}
	base := uintptr(unsafe.Pointer(&buf[0]))
	fillActBlock(buf, base, 42, acts)
	le := binary.LittleEndian
	if c, id := le.Uint32(buf), le.Uint32(buf[4:]); c != 4 || id != 42 {
		t.Fatalf("header: %d records, id %d", c, id)
	}
	for r, a := range acts {
		rec := buf[actHeader+r*actRecSize:]
		if got := int(le.Uint32(rec)); got != a.Action {
			t.Errorf("record %d: action %d, want %d", r, got, a.Action)
		}
		if threw := le.Uint32(rec[4:]); threw != 0 {
			t.Errorf("record %d: threw %d", r, threw)
		}
		if name := le.Uint64(rec[8+16*MaxActionParams:]); name != 0 {
			t.Errorf("record %d: an exception's name %#x before any action ran", r, name)
		}
		for j, v := range a.Args {
			s, ok := v.(string)
			if !ok {
				// An integer, in the address's place.
				if got := int64(le.Uint64(rec[8+16*j:])); got != v.(int64) {
					t.Errorf("record %d value %d: %d, want %d", r, j, got, v)
				}
				continue
			}
			addr := uintptr(le.Uint64(rec[8+16*j:]))
			units := int(le.Uint32(rec[16+16*j:]))
			if addr < base || addr+uintptr(2*units) > base+uintptr(n) {
				t.Fatalf("record %d string %d: address %#x (+%d units) outside the block", r, j, addr, units)
			}
			off := int(addr - base)
			u := make([]uint16, units)
			for k := range u {
				u[k] = le.Uint16(buf[off+2*k:])
			}
			want := strings.ToValidUTF8(s, "\uFFFD")
			if got := string(utf16.Decode(u)); got != want {
				t.Errorf("record %d string %d: %q, want %q", r, j, got, want)
			}
		}
	}
}
