package gen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseOpcodesReal(t *testing.T) {
	for _, set := range []string{"", "v3.1"} {
		dir := genInputDir(t, set)
		src, err := os.ReadFile(filepath.Join(dir, "opcode.def"))
		if err != nil {
			t.Fatal(err)
		}
		defs, err := ParseOpcodes("opcode.def", src)
		if err != nil {
			t.Fatal(err)
		}
		byName := map[string]*OpcodeDef{}
		real := 0
		for _, d := range defs {
			if d.Real() {
				real++
				byName[d.Name] = d
			}
		}
		// ECMA-335 Partition III lists 218 instructions (no "unused" slots).
		if real != 218 {
			t.Errorf("%s: %d real opcodes, want 218", set, real)
		}
		for _, c := range []struct {
			name      string
			value     uint16
			operand   string
			flow      string
			pop, push int
		}{
			{"nop", 0x00, "InlineNone", "NEXT", 0, 0},
			{"call", 0x28, "InlineMethod", "CALL", -1, -1},
			{"switch", 0x45, "InlineSwitch", "COND_BRANCH", 1, 0},
			{"br.s", 0x2B, "ShortInlineBrTarget", "BRANCH", 0, 0},
			{"ceq", 0xFE01, "InlineNone", "NEXT", 2, 1},
			{"dup", 0x25, "InlineNone", "NEXT", 1, 2},
			{"stelem.ref", 0xA2, "InlineNone", "NEXT", 3, 0},
			{"leave.s", 0xDE, "ShortInlineBrTarget", "BRANCH", 0, 0},
			{"tail.", 0xFE14, "InlineNone", "META", 0, 0},
			{"ldc.r8", 0x23, "InlineR", "NEXT", 0, 1},
			{"ret", 0x2A, "InlineNone", "RETURN", -1, 0},
		} {
			d := byName[c.name]
			if d == nil {
				t.Errorf("%s: no opcode %q", set, c.name)
				continue
			}
			if d.Value() != c.value || d.Operand != c.operand || d.Flow != c.flow || stackCount(d.Pop) != c.pop || stackCount(d.Push) != c.push {
				t.Errorf("%s: %s = %#x %s %s pop %d push %d, want %#x %s %s %d %d", set, c.name, d.Value(), d.Operand, d.Flow,
					stackCount(d.Pop), stackCount(d.Push), c.value, c.operand, c.flow, c.pop, c.push)
			}
		}
		if _, ok := byName["unused"]; ok {
			t.Errorf("unused slots counted as real")
		}
	}
}

func TestParseOpcodesErrors(t *testing.T) {
	good := `OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x00, NEXT)` + "\n"
	if _, err := ParseOpcodes("t.def", []byte(good)); err != nil {
		t.Fatalf("good input: %v", err)
	}
	for _, c := range []struct{ src, want string }{
		{``, "no OPDEF"},
		{`OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineWhat, IPrimitive, 1, 0xFF, 0x00, NEXT)`, "unknown operand kind InlineWhat"},
		{`OPDEF(CEE_NOP, "nop", PopX, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x00, NEXT)`, "unknown stack behaviour PopX"},
		{`OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x00, JUMP)`, "unknown flow control JUMP"},
		{`OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFE, 0x00, NEXT)`, "one-byte opcode with first byte"},
		{`OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x100, NEXT)`, "bad opcode byte"},
		{`OPDEF(CEE_NOP, "nop", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x00, NEXT`, `want ")"`},
		{good + `OPDEF(CEE_NOP2, "nop2", Pop0, Push0, InlineNone, IPrimitive, 1, 0xFF, 0x00, NEXT)`, "has the value of CEE_NOP"},
		{`FOO(1)`, "want OPDEF"},
	} {
		_, err := ParseOpcodes("t.def", []byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

func TestGenerateOpcodesNeedsRealOpcodes(t *testing.T) {
	defs, err := ParseOpcodes("t.def", []byte(`OPDEF(CEE_ILLEGAL, "illegal", Pop0, Push0, InlineNone, IInternal, 0, MOOT, MOOT, META)`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := GenerateOpcodes("comgen -w", defs); err == nil {
		t.Error("no error for a table without instructions")
	}
}
