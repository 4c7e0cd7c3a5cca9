package ilrw

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// A tiny body: ldarg.0 ldarg.1 add ret.
var tinyAdd = []byte{4<<2 | 2, 0x02, 0x03, 0x58, 0x2A}

// A fat body with a small EH section (try/catch), hand-assembled:
//
//	IL_0000 ldc.i4.1; IL_0001 stloc.0; IL_0002 leave.s IL_0009
//	IL_0004 pop; IL_0005 ldc.i4.2; IL_0006 stloc.0; IL_0007 leave.s IL_0009
//	IL_0009 ldloc.0; IL_000a ret
//	.try IL_0000 to IL_0004 catch [TypeRef 1] handler IL_0004 to IL_0009
var fatCatch = []byte{
	0x1B, 0x30, 0x01, 0x00, 0x0B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x11,
	0x17, 0x0A, 0xDE, 0x05, 0x26, 0x18, 0x0A, 0xDE, 0x00, 0x06, 0x2A,
	0x00,
	0x01, 0x10, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x04, 0x04, 0x00, 0x05, 0x01, 0x00, 0x00, 0x01,
}

func mustDecode(t *testing.T, b []byte) *Body {
	t.Helper()
	body, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

func mustEncode(t *testing.T, b *Body) []byte {
	t.Helper()
	out, err := b.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func ops(b *Body) string {
	var s []string
	for _, in := range b.Instructions {
		s = append(s, in.Op.String())
	}
	return strings.Join(s, " ")
}

func TestOpcodeTable(t *testing.T) {
	if opcodeCount != 218 {
		t.Errorf("%d opcodes", opcodeCount)
	}
	n := 0
	for v := 0; v <= 0xFFFF; v++ {
		if Opcode(v).Valid() {
			n++
		}
	}
	if n != opcodeCount {
		t.Errorf("%d valid values, want %d", n, opcodeCount)
	}
	for _, c := range []struct {
		op        Opcode
		name      string
		k         OperandKind
		pop, push int
	}{
		{OpNop, "nop", InlineNone, 0, 0}, {OpLdcI4S, "ldc.i4.s", ShortInlineI, 0, 1},
		{OpSwitch, "switch", InlineSwitch, 1, 0}, {OpCeq, "ceq", InlineNone, 2, 1},
		{OpStelemRef, "stelem.ref", InlineNone, 3, 0}, {OpCall, "call", InlineMethod, -1, -1},
		{OpLdcR8, "ldc.r8", InlineR, 0, 1}, {OpLdtoken, "ldtoken", InlineTok, 0, 1},
	} {
		if c.op.String() != c.name || c.op.Operand() != c.k || c.op.StackPop() != c.pop || c.op.StackPush() != c.push {
			t.Errorf("%#x: %s %s %d %d", uint16(c.op), c.op, c.op.Operand(), c.op.StackPop(), c.op.StackPush())
		}
	}
	if OpCeq != 0xFE01 || OpCeq.Size() != 2 || OpRet.Size() != 1 {
		t.Error("two-byte encoding")
	}
	if OpBrS.Long() != OpBr || OpBr.Short() != OpBrS || OpLeaveS.Long() != OpLeave || OpNop.Long() != OpNop {
		t.Error("short/long forms")
	}
	if !OpTail.IsPrefix() || OpCall.IsPrefix() || OpBr.Flow() != FlowBranch || OpThrow.Flow() != FlowThrow {
		t.Error("prefix/flow")
	}
	if Opcode(0xFE).Valid() || Opcode(0xFE23).Valid() || Opcode(0x1234).Valid() || Opcode(0x24).Valid() {
		t.Error("invalid values accepted")
	}
}

func TestTinyRoundTrip(t *testing.T) {
	b := mustDecode(t, tinyAdd)
	if b.Fat || b.MaxStack != 8 || ops(b) != "ldarg.0 ldarg.1 add ret" {
		t.Fatalf("decoded %+v %s", b, ops(b))
	}
	if out := mustEncode(t, b); !bytes.Equal(out, tinyAdd) {
		t.Errorf("encoded %x, want %x", out, tinyAdd)
	}
	if n, err := b.ComputeMaxStack(nil); err != nil || n != 2 {
		t.Errorf("max stack %d %v", n, err)
	}
	// Still tiny: max stack 2 fits.
	if out := mustEncode(t, b); !bytes.Equal(out, tinyAdd) {
		t.Errorf("encoded %x after ComputeMaxStack", out)
	}
}

func TestFatCatchRoundTrip(t *testing.T) {
	b := mustDecode(t, fatCatch)
	if !b.Fat || !b.InitLocals() || b.LocalVarSig != 0x11000001 || b.MaxStack != 1 || b.FatClauses {
		t.Fatalf("header %+v", b)
	}
	if len(b.Clauses) != 1 {
		t.Fatalf("%d clauses", len(b.Clauses))
	}
	c := b.Clauses[0]
	if c.Kind != ClauseCatch || c.TryStart != b.Instructions[0] || c.TryEnd != b.Instructions[3] ||
		c.HandlerStart != b.Instructions[3] || c.HandlerEnd != b.Instructions[7] || c.ClassToken != 0x01000001 {
		t.Fatalf("clause %+v", c)
	}
	if b.Instructions[2].Target != b.Instructions[7] || b.Instructions[6].Target != b.Instructions[7] {
		t.Fatal("leave targets")
	}
	if out := mustEncode(t, b); !bytes.Equal(out, fatCatch) {
		t.Errorf("encoded\n%x, want\n%x", out, fatCatch)
	}
	if n, err := b.ComputeMaxStack(nil); err != nil || n != 1 {
		t.Errorf("max stack %d %v", n, err)
	}
	d := b.Dump(nil)
	for _, want := range []string{"fat header, maxstack 1", "IL_0002: leave.s IL_0009", ".try IL_0000 to IL_0004 catch 0x01000001 handler IL_0004 to IL_0009"} {
		if !strings.Contains(d, want) {
			t.Errorf("dump lacks %q:\n%s", want, d)
		}
	}
}

func nops(n int) []*Instruction {
	s := make([]*Instruction, n)
	for i := range s {
		s[i] = I(OpNop)
	}
	return s
}

// roundTrip encodes, decodes and re-encodes b, and checks the second
// encoding is identical.
func roundTrip(t *testing.T, b *Body) (*Body, []byte) {
	t.Helper()
	out := mustEncode(t, b)
	b2 := mustDecode(t, out)
	if out2 := mustEncode(t, b2); !bytes.Equal(out, out2) {
		t.Fatalf("re-encoding differs")
	}
	return b2, out
}

func TestTinyPromotedToFat(t *testing.T) {
	b := mustDecode(t, tinyAdd)
	if err := b.InsertAtEntry(nops(70)...); err != nil {
		t.Fatal(err)
	}
	b2, out := roundTrip(t, b)
	if out[0]&3 != flagFatFormat || !b2.Fat || len(b2.Instructions) != 74 {
		t.Fatalf("not promoted: %x", out[:4])
	}
	// Locals also need a fat header.
	b = mustDecode(t, tinyAdd)
	b.LocalVarSig = 0x11000002
	if out := mustEncode(t, b); out[0]&3 != flagFatFormat {
		t.Error("locals in a tiny header")
	}
	// And a max stack above 8.
	b = mustDecode(t, tinyAdd)
	b.MaxStack = 9
	if out := mustEncode(t, b); out[0]&3 != flagFatFormat {
		t.Error("max stack 9 in a tiny header")
	}
}

func TestBranchWidening(t *testing.T) {
	// IL_0000 br.s IL_0003; IL_0002 nop; IL_0003 ret
	b := mustDecode(t, []byte{4<<2 | 2, 0x2B, 0x01, 0x00, 0x2A})
	ret := b.Instructions[2]
	if b.Instructions[0].Target != ret {
		t.Fatal("target")
	}
	if err := b.InsertBefore(ret, nops(200)...); err != nil {
		t.Fatal(err)
	}
	b2, _ := roundTrip(t, b)
	if b2.Instructions[0].Op != OpBr || b2.Instructions[0].Target != b2.Instructions[len(b2.Instructions)-1] {
		t.Fatalf("not widened: %s -> %v", b2.Instructions[0].Op, b2.Instructions[0].Target)
	}
	// Backward: a loop whose body grows past 127 bytes.
	// IL_0000 nop; IL_0001 br.s IL_0000
	b = mustDecode(t, []byte{3<<2 | 2, 0x00, 0x2B, 0xFD})
	if err := b.InsertAfter(b.Instructions[0], nops(130)...); err != nil {
		t.Fatal(err)
	}
	b2, _ = roundTrip(t, b)
	last := b2.Instructions[len(b2.Instructions)-1]
	if last.Op != OpBr || last.Target != b2.Instructions[0] {
		t.Fatalf("backward branch %s -> %v", last.Op, last.Target)
	}
}

func TestSwitchFixed(t *testing.T) {
	a, c := I(OpNop), I(OpRet)
	b := &Body{MaxStack: 8, Instructions: []*Instruction{I(OpLdarg0), ISwitch(a, c, a), a, c}}
	if err := b.InsertBefore(c, nops(1000)...); err != nil {
		t.Fatal(err)
	}
	b2, _ := roundTrip(t, b)
	sw := b2.Instructions[1]
	if len(sw.Targets) != 3 || sw.Targets[0] != b2.Instructions[2] || sw.Targets[1] != b2.Instructions[len(b2.Instructions)-1] || sw.Targets[2] != sw.Targets[0] {
		t.Fatalf("switch targets %v", sw.Targets)
	}
	if b2.Instructions[len(b2.Instructions)-1].Offset != 1+17+1+1000 {
		t.Errorf("ret at %#x", b2.Instructions[len(b2.Instructions)-1].Offset)
	}
}

func TestEHPromotedToFat(t *testing.T) {
	b := mustDecode(t, fatCatch)
	// Grow the try block past 255 bytes: the small clause cannot hold it.
	if err := b.InsertAfter(b.Instructions[0], nops(300)...); err != nil {
		t.Fatal(err)
	}
	b2, out := roundTrip(t, b)
	if !b2.FatClauses {
		t.Fatal("EH section not promoted")
	}
	c := b2.Clauses[0]
	if c.TryStart.Offset != 0 || c.TryEnd.Offset != 304 || c.HandlerStart != c.TryEnd || c.HandlerEnd.Offset != 309 {
		t.Fatalf("clause %d %d %d %d", c.TryStart.Offset, c.TryEnd.Offset, c.HandlerStart.Offset, c.HandlerEnd.Offset)
	}
	if b2.Instructions[2+300].Target != b2.Instructions[len(b2.Instructions)-2] {
		t.Error("leave target")
	}
	_ = out
	// Many clauses do not fit a small section either (its size is a byte).
	b = mustDecode(t, fatCatch)
	for range 21 {
		c := *b.Clauses[0]
		b.Clauses = append(b.Clauses, &c)
	}
	if b2, _ := roundTrip(t, b); !b2.FatClauses || len(b2.Clauses) != 22 {
		t.Error("22 clauses in a small section")
	}
}

func TestRemoveRetargets(t *testing.T) {
	b := mustDecode(t, fatCatch)
	// Remove the ldloc.0 at IL_0009, target of both leaves.
	ld := b.Instructions[7]
	if err := b.Remove(ld); err != nil {
		t.Fatal(err)
	}
	if b.Instructions[2].Target != b.Instructions[7] || b.Instructions[7].Op != OpRet || b.Clauses[0].HandlerEnd != b.Instructions[7] {
		t.Fatal("not retargeted")
	}
	// Removing the last instruction while it is a target fails.
	if err := b.Remove(b.Instructions[7]); err == nil {
		t.Error("removed a target with nothing after it")
	}
	if err := b.Remove(I(OpNop)); err == nil {
		t.Error("removed an instruction not in the body")
	}
}

func TestReplaceKeepsIdentity(t *testing.T) {
	b := mustDecode(t, fatCatch)
	ld := b.Instructions[7]
	if err := b.Replace(ld, I(OpLdcI40), I(OpNop)); err != nil {
		t.Fatal(err)
	}
	if b.Instructions[7] != ld || ld.Op != OpLdcI40 || b.Instructions[8].Op != OpNop || b.Instructions[2].Target != ld {
		t.Fatalf("replace: %s", ops(b))
	}
}

func TestEncodeErrors(t *testing.T) {
	stray := I(OpRet)
	for name, b := range map[string]*Body{
		"target outside":  {Instructions: []*Instruction{IBranch(OpBr, stray), I(OpRet)}},
		"nil target":      {Instructions: []*Instruction{IBranch(OpBr, nil)}},
		"switch outside":  {Instructions: []*Instruction{ISwitch(stray)}},
		"invalid opcode":  {Instructions: []*Instruction{I(0x24)}},
		"nil instruction": {Instructions: []*Instruction{nil}},
		"twice":           {Instructions: []*Instruction{stray, stray}},
		"clause outside":  {Instructions: []*Instruction{I(OpRet)}, Clauses: []*Clause{{TryStart: stray, HandlerStart: stray}}},
		"clause no start": {Instructions: []*Instruction{I(OpRet)}, Clauses: []*Clause{{}}},
	} {
		if _, err := b.Encode(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"neither", []byte{0x00}},
		{"tiny past end", []byte{5<<2 | 2, 0}},
		{"fat truncated", []byte{0x13, 0x30, 0, 0}},
		{"fat header size", []byte{0x03, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}},
		{"code past end", []byte{0x03, 0x30, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}},
		{"invalid opcode", []byte{1<<2 | 2, 0x24}},
		{"two-byte truncated", []byte{1<<2 | 2, 0xFE}},
		{"operand truncated", []byte{2<<2 | 2, 0x20, 0}},
		{"branch into operand", []byte{6<<2 | 2, 0x2B, 0x01, 0x20, 0, 0, 0}},
		{"branch outside", []byte{2<<2 | 2, 0x2B, 0x10}},
		{"switch too long", []byte{5<<2 | 2, 0x45, 0xFF, 0xFF, 0xFF, 0x7F}},
		{"section missing", []byte{0x0B, 0x30, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0x2A}},
		{"section kind", append(append([]byte{}, fatCatch[:24]...), 0x02, 0x10, 0, 0)},
		{"clause boundary", func() []byte { b := append([]byte{}, fatCatch...); b[32] = 3; return b }()},
		{"clause flags", func() []byte { b := append([]byte{}, fatCatch...); b[28] = 9; return b }()},
		{"small section size", func() []byte { b := append([]byte{}, fatCatch...); b[25] = 0x40; return b }()},
	} {
		_, err := Decode(c.b)
		var fe *FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%s: error %v, want a FormatError", c.name, err)
		}
	}
}

// fakeResolver knows call sites by token.
type fakeResolver map[metadata.Token]CallSite

func (f fakeResolver) CallSite(t metadata.Token) (CallSite, error) {
	if cs, ok := f[t]; ok {
		return cs, nil
	}
	return CallSite{}, fmt.Errorf("unknown %v", t)
}

func TestComputeMaxStack(t *testing.T) {
	r := fakeResolver{
		0x06000001: {Params: 3, ReturnsValue: true},                 // static int F(a, b, c)
		0x0A000001: {Params: 1, HasThis: true},                      // instance void G(x)
		0x0A000002: {Params: 2, HasThis: true},                      // .ctor(a, b)
		0x11000001: {Params: 2, HasThis: false, ReturnsValue: true}, // calli
	}
	for _, c := range []struct {
		name string
		code []*Instruction
		want int
	}{
		{"calls", []*Instruction{LdcI4(1), LdcI4(2), LdcI4(3), IToken(OpCall, 0x06000001), I(OpPop), I(OpRet)}, 3},
		{"instance", []*Instruction{I(OpLdarg0), LdcI4(1), IToken(OpCallvirt, 0x0A000001), I(OpRet)}, 2},
		{"newobj", []*Instruction{LdcI4(1), LdcI4(2), IToken(OpNewobj, 0x0A000002), I(OpDup), I(OpPop), I(OpPop), I(OpRet)}, 2},
		{"calli", []*Instruction{LdcI4(1), LdcI4(2), I(OpLdnull), IToken(OpCalli, 0x11000001), I(OpRet)}, 3},
	} {
		b := &Body{Instructions: c.code}
		if n, err := b.ComputeMaxStack(r); err != nil || n != c.want || int(b.MaxStack) != c.want {
			t.Errorf("%s: %d %v, want %d", c.name, n, err, c.want)
		}
	}
	// Branches join with the same depth; a loop.
	top := LdcI4(1)
	end := I(OpRet)
	b := &Body{Instructions: []*Instruction{top, LdcI4(2), I(OpAdd), IBranch(OpBrtrueS, top), LdcI4(5), IBranch(OpBrS, end), I(OpNop), end}}
	if n, err := b.ComputeMaxStack(r); err != nil || n != 2 {
		t.Errorf("loop: %d %v", n, err)
	}
	// Catch handlers start with the exception on the stack.
	b = mustDecode(t, fatCatch)
	b.Instructions[3].Op = OpNop // keep the exception: depth 1 at leave.s is fine (leave empties)
	if n, err := b.ComputeMaxStack(r); err != nil || n != 2 {
		t.Errorf("catch: %d %v", n, err)
	}
	// Errors: underflow, disagreeing depths, unknown call.
	for name, code := range map[string][]*Instruction{
		"underflow": {I(OpPop), I(OpRet)},
		"unknown":   {IToken(OpCall, 0x06000009), I(OpRet)},
	} {
		b := &Body{Instructions: code}
		if _, err := b.ComputeMaxStack(r); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	join := I(OpRet)
	b = &Body{Instructions: []*Instruction{LdcI4(1), IBranch(OpBrtrueS, join), LdcI4(1), join}}
	if _, err := b.ComputeMaxStack(r); err == nil || !strings.Contains(err.Error(), "on one path") {
		t.Errorf("join: %v", err)
	}
}

func TestLdcAndLocals(t *testing.T) {
	for v, want := range map[int32]string{-1: "ldc.i4.m1", 0: "ldc.i4.0", 8: "ldc.i4.8", 9: "ldc.i4.s", -128: "ldc.i4.s", 128: "ldc.i4", -129: "ldc.i4"} {
		if in := LdcI4(v); in.Op.String() != want || (in.Op.Operand() != InlineNone && in.Int != int64(v)) {
			t.Errorf("LdcI4(%d) = %s %d", v, in.Op, in.Int)
		}
	}
	for i, want := range map[int]string{0: "ldloc.0", 3: "ldloc.3", 4: "ldloc.s", 300: "ldloc"} {
		if LdLoc(i).Op.String() != want || StLoc(i).Op.String() != strings.Replace(want, "ld", "st", 1) {
			t.Errorf("local %d: %s %s", i, LdLoc(i).Op, StLoc(i).Op)
		}
	}
}

func TestShortenBranches(t *testing.T) {
	ret, mid, top := I(OpRet), I(OpNop), I(OpNop)
	// top: nop; br ret (over 200 bytes: stays long); brtrue top (short);
	// br mid (over 10 bytes: short); 10 nops; mid: nop; 190 nops; ret.
	code := []*Instruction{top, IBranch(OpBr, ret), IBranch(OpBrtrue, top), IBranch(OpBr, mid)}
	code = append(code, nops(10)...)
	code = append(code, mid)
	code = append(code, nops(190)...)
	b := &Body{Instructions: append(code, ret)}
	n, err := b.ShortenBranches()
	if err != nil || n != 2 {
		t.Fatalf("%d shortened (%v), want 2", n, err)
	}
	if b.Instructions[1].Op != OpBr || b.Instructions[2].Op != OpBrtrueS || b.Instructions[3].Op != OpBrS {
		t.Fatalf("%s", ops(b)[:40])
	}
	before := len(mustEncode(t, b))
	b2, out := roundTrip(t, b)
	if len(out) != before || b2.Instructions[3].Target != b2.Instructions[14] || b2.Instructions[1].Target != b2.Instructions[len(b2.Instructions)-1] {
		t.Error("targets or size changed")
	}
}

// TestDecoderReuse decodes bodies of different shapes one after another
// with one Decoder, and checks each is what Decode gives (same encoding,
// same dump) whatever came before; and that AppendEncode appends.
func TestDecoderReuse(t *testing.T) {
	// A fat body with two small EH sections of one clause each (a try/catch
	// and a try/finally over the same code), and a switch.
	twoSects := []byte{
		0x0B, 0x30, 0x02, 0x00, 0x0C, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
		0x45, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xDE, 0x00, 0x2A,
		0x81, 0x10, 0x00, 0x00,
		0x00, 0x00, 0x00, 0x00, 0x09, 0x09, 0x00, 0x02, 0x01, 0x00, 0x00, 0x01,
		0x01, 0x10, 0x00, 0x00,
		0x02, 0x00, 0x00, 0x00, 0x09, 0x09, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00,
	}
	if _, err := Decode(twoSects); err != nil {
		t.Fatalf("twoSects does not decode: %v", err)
	}
	var dec Decoder
	var buf []byte
	for i, data := range [][]byte{fatCatch, tinyAdd, twoSects, fatCatch, {0x02}, twoSects, tinyAdd, fatCatch} {
		want := mustDecode(t, data)
		got, err := dec.Decode(data)
		if err != nil {
			t.Fatalf("body %d: %v", i, err)
		}
		if g, w := got.Dump(nil), want.Dump(nil); g != w {
			t.Errorf("body %d: decoded\n%s\nwant\n%s", i, g, w)
		}
		// (Two sections are re-encoded as one.)
		enc := mustEncode(t, want)
		prefix := []byte{0xAA, 0xBB, 0xCC}
		buf, err = got.AppendEncode(append(buf[:0], prefix...))
		if err != nil || !bytes.Equal(buf[:3], prefix) || !bytes.Equal(buf[3:], enc) {
			t.Errorf("body %d: AppendEncode gave %x, %v; want %x after %x", i, buf, err, enc, prefix)
		}
		if _, err := dec.Decode([]byte{0x03}); err == nil {
			t.Fatal("a bad body decodes")
		}
	}
}

// TestDumpMidEdit: Dump gives inserted instructions the offsets Encode
// will give them (a short branch that no longer reaches counted widened)
// and the computed max stack, before Encode runs, without changing the
// body; after Encode its listing is the same.
func TestDumpMidEdit(t *testing.T) {
	ret := I(OpRet)
	br := IBranch(OpBrS, ret)
	b := &Body{MaxStack: 8, Instructions: []*Instruction{br, ret}}
	if _, err := b.Encode(); err != nil {
		t.Fatal(err)
	}
	var nops []*Instruction
	for range 200 {
		nops = append(nops, I(OpNop))
	}
	if err := b.InsertAfter(br, nops...); err != nil {
		t.Fatal(err)
	}
	if err := b.InsertAtEntry(LdcI4(1), LdcI4(2), I(OpAdd), I(OpPop)); err != nil {
		t.Fatal(err)
	}
	before := b.Dump(nil)
	for _, want := range []string{"maxstack 2 (header 8)", "IL_0004: br.s IL_00d1", "IL_00d1: ret", "IL_0009: nop"} {
		if !strings.Contains(before, want) {
			t.Errorf("Dump before Encode lacks %q:\n%s", want, before)
		}
	}
	if b.Instructions[0].Offset != 0 || ret.Offset != 2 || br.Op != OpBrS {
		t.Errorf("Dump changed the body: ret.Offset %d, branch %s", ret.Offset, br.Op)
	}
	if _, err := b.ComputeMaxStack(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Encode(); err != nil {
		t.Fatal(err)
	}
	after := b.Dump(nil)
	// Encode widened the branch: same offsets, the long form's name.
	if want := strings.ReplaceAll(strings.ReplaceAll(before, "br.s", "br"), "maxstack 2 (header 8)", "maxstack 2"); after != want {
		t.Errorf("Dump after Encode:\n%s\nwant (the listing before Encode):\n%s", after, want)
	}
}
