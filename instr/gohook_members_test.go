//go:build cgo

package instr

import "testing"

// TestDeferredMembers decodes exit records with result members as
// gohook_deferred.c writes them (the status word, then the members, their
// strings after the return value's) and hands them to a Return as the
// drain does: values by GoHooks.Members' index, null and threw from the
// status word, strings from the record.
func TestDeferredMembers(t *testing.T) {
	e := &goEntry{nmem: 4, ret: valueKind{kind: KindInt, typ: "System.Int32"},
		outMem: []memberSlot{
			{index: 1, kind: valueKind{kind: KindInt, typ: "System.Int32"}},
			{index: 2, kind: valueKind{kind: KindString, typ: "System.String"}},
			{index: 3, kind: valueKind{kind: KindString, typ: "System.Uri"}},
		}}
	var q qbuild
	// Member 2 (slot 1) a string; slot 2 threw.
	at := q.hdr(qExit, 4, 8<<1, 5, 0)
	q.u64(77)                                    // the return value
	q.u64(1<<2 | 1<<(memberThrewShift+2))        // status: slot 2 null, threw
	q.u64(uint64(0xffffffff_fffffff6))           // slot 0: -10
	q.u64(0)                                     // slot 1: its string follows
	q.u64(0)                                     // slot 2
	q.str("https://example.com/ü", false, false) // slot 1's string
	q.end(at)
	// No room was left for a string member: the C side marks it null.
	at = q.hdr(qExit, 4, 0, 5, 0)
	q.u64(78)
	q.u64(1 << 1)
	q.u64(3)
	q.u64(0)
	q.u64(0)
	q.end(at)
	var recs []qrec
	if err := decodeQ(q.b, func(r *qrec) { recs = append(recs, *r) }); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 {
		t.Fatalf("%d records", len(recs))
	}
	var x Return
	e.deferredReturn(&x, &recs[0])
	if x.Value().Int() != 77 {
		t.Errorf("value %v", x.Value())
	}
	if v := x.Member(1); v != IntValue("System.Int32", -10) {
		t.Errorf("member 1: %#v", v)
	}
	if v := x.Member(2); v != StringValue("https://example.com/ü") {
		t.Errorf("member 2: %#v", v)
	}
	if v := x.Member(3); !v.IsNull() || !v.Threw() || v.Kind != KindString || v.Type != "System.Uri" || v.String() != "null" {
		t.Errorf("member 3: %#v", v)
	}
	if v := x.Member(0); v.Kind != KindVoid {
		t.Errorf("member 0 (an argument's): %#v", v)
	}
	if v := x.Member(4); v.Kind != KindVoid {
		t.Errorf("member 4 (out of range): %#v", v)
	}
	if n := e.memberThrew.Load(); n != 1 {
		t.Errorf("%d threw counted, want 1", n)
	}
	e.deferredReturn(&x, &recs[1])
	if v := x.Member(2); !v.IsNull() || v.Threw() {
		t.Errorf("member 2 without room: %#v", v)
	}
	if v := x.Member(1); v.Int() != 3 || v.IsNull() {
		t.Errorf("member 1: %#v", v)
	}
	// Malformed: more words than members can be, string flags beyond
	// them.
	for _, bad := range []struct {
		n     uint8
		flags uint16
	}{{6, 0}, {2, 8 << 1}} {
		var q qbuild
		at := q.hdr(qExit, bad.n, bad.flags, 5, 0)
		for i := 0; i <= int(bad.n); i++ {
			q.u64(0)
		}
		q.end(at)
		if err := decodeQ(q.b, func(*qrec) {}); err == nil {
			t.Errorf("n=%d flags=%#x: no error", bad.n, bad.flags)
		}
	}
}

// TestMemberValues: the synchronous entries' decoding of argument members.
func TestMemberValues(t *testing.T) {
	e := &goEntry{nmem: 3, inMem: []memberSlot{
		{index: 0, kind: valueKind{kind: KindFloat, typ: "System.Double"}},
		{index: 2, kind: valueKind{kind: KindEnum, typ: "Shop.Color", unsigned: true}},
	}}
	raw := []uint64{0x4004000000000000, 5}
	vals := e.memberValues(e.inMem, 0, func(j int, k *valueKind) Value { return decode(*k, raw[j]) })
	if vals[0] != FloatValue("System.Double", 2.5) || vals[2] != UnsignedEnumValue("Shop.Color", 5) || vals[1].Kind != KindVoid {
		t.Errorf("%#v", vals)
	}
	vals = e.memberValues(e.inMem, 1<<1, func(j int, k *valueKind) Value { return decode(*k, raw[j]) })
	if !vals[2].IsNull() || vals[2].Threw() || vals[2].Kind != KindEnum || vals[0].IsNull() {
		t.Errorf("%#v", vals)
	}
}

// TestMakeMembers: NewCall and NewReturn carry members as the SDK's do.
func TestMakeMembers(t *testing.T) {
	c := NewCall(CallFields{Members: []Value{StringValue("GET"), {}, NullMemberValue(KindInt, "System.Int32", true)}})
	if c.Member(0) != StringValue("GET") || c.Member(1).Kind != KindVoid || !c.Member(2).Threw() || !c.Member(2).IsNull() || c.Member(3).Kind != KindVoid {
		t.Errorf("%+v", c)
	}
	r := NewReturn(ReturnFields{Members: []Value{{}, IntValue("System.Int32", 200)}})
	if r.Member(1).Int() != 200 || r.Member(0).Kind != KindVoid || NewReturn(ReturnFields{}).Member(0).Kind != KindVoid {
		t.Errorf("%+v", r)
	}
	e := &goEntry{nmem: 1, inMem: []memberSlot{{index: 0, kind: valueKind{kind: KindEnum, typ: "Shop.Color", unsigned: true}}}}
	v := e.memberValues(e.inMem, 1|1<<memberThrewShift, nil)
	if v[0] != NullMemberValue(KindEnum, "Shop.Color", true) {
		t.Errorf("%#v", v[0])
	}
}
