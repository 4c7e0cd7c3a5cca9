//go:build cgo

package instr

import (
	"encoding/binary"
	"reflect"
	"strings"
	"testing"
	"unicode/utf16"
	"unsafe"
)

var testActions = []Action{
	{Arg: 0, Path: "Headers", Method: "Add", Params: 2},
	{Arg: This, Method: "Clear"},
}

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
	args := []string{"k", "v"}
	if err := c.Act(0, args...); err != nil {
		t.Fatal(err)
	}
	args[0] = "changed" // Act copied them
	for _, bad := range []struct {
		i    int
		args []string
		want string
	}{
		{2, nil, "Act(2): the hooks have 2 actions"},
		{-1, nil, "Act(-1): the hooks have 2 actions"},
		{0, []string{"one"}, "Act(0): 1 strings for Add, which takes 2"},
		{1, []string{"x"}, "Act(1): 1 strings for Clear, which takes 0"},
	} {
		err := c.Act(bad.i, bad.args...)
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Act(%d, %q) = %v, want %q", bad.i, bad.args, err, bad.want)
		}
	}
	want := []ActionRequest{{0, []string{"traceparent", "00-x"}}, {1, nil}, {0, []string{"k", "v"}}}
	if got := c.Actions(); !reflect.DeepEqual(got, want) {
		t.Errorf("Actions() = %v, want %v", got, want)
	}
	// A call without actions (a deferred hook's, or NewCall without
	// CallFields.Actions) refuses every Act.
	if err := NewCall(CallFields{}).Act(0); err == nil {
		t.Error("Act on a call without actions: no error")
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
		{GoHooks{Exit: func(*Return) {}, Actions: testActions}, "need Enter"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: Result, Method: "M"}}}, "Arg -1"},
		{GoHooks{Enter: enter, Actions: []Action{{Arg: 0}}}, "no Method"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Params: MaxActionParams + 1}}}, "5 parameters, at most 4"},
		{GoHooks{Enter: enter, Actions: []Action{{Method: "M", Params: -1}}}, "-1 parameters"},
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
}

// TestActBlock: the block the wrap reads (gohook_act.go's layout):
// records in order, absolute addresses of each string's UTF-16 units,
// never null (an empty string's too), surrogate pairs, invalid UTF-8 as
// U+FFFD.
func TestActBlock(t *testing.T) {
	acts := []ActionRequest{
		{Action: 1, Args: []string{"traceparent", "00-ab-cd-01"}},
		{Action: 0},
		{Action: 3, Args: []string{"", "é€😀", "bad\xff"}},
	}
	n := actBlockSize(acts)
	if want := actHeader + 3*actRecSize + 2*(11+11+0+4+4); n != want {
		t.Fatalf("size %d, want %d", n, want)
	}
	buf := make([]byte, n)
	for i := range buf {
		buf[i] = 0xAA // fillActBlock writes every byte the wrap reads
	}
	base := uintptr(unsafe.Pointer(&buf[0]))
	fillActBlock(buf, base, 42, acts)
	le := binary.LittleEndian
	if c, id := le.Uint32(buf), le.Uint32(buf[4:]); c != 3 || id != 42 {
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
		for j, s := range a.Args {
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
