package gen

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"github.com/dave/jennifer/jen"
)

// OpcodeDef is one instruction of the IL opcode table (an OPDEF entry of
// opcode.def).
type OpcodeDef struct {
	Canonical string   // CEE_ADD
	Name      string   // "add", as ilasm spells it
	Pop       []string // stack behaviour terms: Pop0, Pop1, PopI, VarPop, ...
	Push      []string // Push0, Push1, PushI, VarPush, ...
	Operand   string   // InlineNone, InlineBrTarget, ...
	Kind      string   // IPrimitive, IMacro, IObjModel, IPrefix, IInternal
	Len       int      // encoded length of the opcode: 1 or 2 (0 for internal entries)
	Byte1     int      // first byte of the standard encoding (0xFF: one-byte opcode)
	Byte2     int      // second byte
	Flow      string   // NEXT, BRANCH, COND_BRANCH, CALL, RETURN, THROW, BREAK, META
	Pos       Pos
}

// Value is the opcode as clrprof numbers it: the byte of a one-byte
// opcode, 0xFE00|second byte for a two-byte one.
func (d *OpcodeDef) Value() uint16 {
	if d.Len == 1 {
		return uint16(d.Byte2)
	}
	return uint16(d.Byte1)<<8 | uint16(d.Byte2)
}

// Real reports whether the entry is an instruction that can appear in a
// method body (not an internal marker or an unused slot).
func (d *OpcodeDef) Real() bool {
	return (d.Len == 1 || d.Len == 2) && d.Name != "unused" && d.Kind != "IInternal"
}

// opcode.def's symbolic byte values.
var opcodeByteNames = map[string]int{"MOOT": 0x00, "STP1": 0xFE, "REFPRE": 0xFF}

// The names the table may use in each column; an unknown name is an error,
// so that a changed input is noticed here rather than in the output.
var (
	opcodePopTerms  = map[string]bool{"Pop0": true, "Pop1": true, "PopI": true, "PopI8": true, "PopR4": true, "PopR8": true, "PopRef": true, "VarPop": true}
	opcodePushTerms = map[string]bool{"Push0": true, "Push1": true, "PushI": true, "PushI8": true, "PushR4": true, "PushR8": true, "PushRef": true, "VarPush": true}
	opcodeOperands  = []string{"InlineNone", "ShortInlineVar", "InlineVar", "ShortInlineI", "InlineI", "InlineI8", "ShortInlineR", "InlineR",
		"ShortInlineBrTarget", "InlineBrTarget", "InlineMethod", "InlineField", "InlineType", "InlineTok", "InlineString", "InlineSig", "InlineSwitch"}
	opcodeFlows = map[string]string{"NEXT": "FlowNext", "BREAK": "FlowBreak", "CALL": "FlowCall", "RETURN": "FlowReturn",
		"BRANCH": "FlowBranch", "COND_BRANCH": "FlowCondBranch", "THROW": "FlowThrow", "META": "FlowMeta"}
	opcodeKinds = map[string]bool{"IPrimitive": true, "IMacro": true, "IObjModel": true, "IPrefix": true, "IInternal": true}
)

// ParseOpcodes reads the OPDEF entries of opcode.def. Preprocessor lines
// are ignored (every entry is read, internal ones included; see Real).
func ParseOpcodes(file string, src []byte) ([]*OpcodeDef, error) {
	toks, err := Lex(file, src)
	if err != nil {
		return nil, err
	}
	var defs []*OpcodeDef
	i := 0
	next := func() Token {
		t := toks[i]
		if t.Kind != TokEOF {
			i++
		}
		return t
	}
	expect := func(kind TokKind, text string) (Token, error) {
		t := next()
		if t.Kind != kind || (text != "" && t.Text != text) {
			want := kind.String()
			if text != "" {
				want = strconv.Quote(text)
			}
			return t, errorf(t.Pos, "opcode table: want %s, found %s", want, t)
		}
		return t, nil
	}
	// terms reads Name(+Name)* from a column whose names are in allowed.
	terms := func(allowed map[string]bool) ([]string, error) {
		var out []string
		for {
			t, err := expect(TokIdent, "")
			if err != nil {
				return nil, err
			}
			if !allowed[t.Text] {
				return nil, errorf(t.Pos, "opcode table: unknown stack behaviour %s", t.Text)
			}
			out = append(out, t.Text)
			if toks[i].Kind == TokPunct && toks[i].Text == "+" {
				next()
				continue
			}
			return out, nil
		}
	}
	byteVal := func() (int, error) {
		t := next()
		switch t.Kind {
		case TokIdent:
			if v, ok := opcodeByteNames[t.Text]; ok {
				return v, nil
			}
		case TokNumber:
			v, err := strconv.ParseUint(t.Text, 0, 8)
			if err == nil {
				return int(v), nil
			}
		}
		return 0, errorf(t.Pos, "opcode table: bad opcode byte %s", t)
	}
	comma := func() error { _, err := expect(TokPunct, ","); return err }
	for toks[i].Kind != TokEOF {
		t := next()
		if t.Kind == TokDirective {
			continue
		}
		if t.Kind == TokIdent && t.Text == "OPALIAS" {
			// OPALIAS(name, "string", CEE_REAL): an assembler spelling of
			// another opcode; nothing to generate.
			for toks[i].Kind != TokEOF && !(toks[i].Kind == TokPunct && toks[i].Text == ")") {
				next()
			}
			if _, err := expect(TokPunct, ")"); err != nil {
				return nil, err
			}
			continue
		}
		if t.Kind != TokIdent || t.Text != "OPDEF" {
			return nil, errorf(t.Pos, "opcode table: want OPDEF, found %s", t)
		}
		d := &OpcodeDef{Pos: t.Pos}
		if _, err := expect(TokPunct, "("); err != nil {
			return nil, err
		}
		ct, err := expect(TokIdent, "")
		if err != nil {
			return nil, err
		}
		d.Canonical = ct.Text
		if err := comma(); err != nil {
			return nil, err
		}
		nt, err := expect(TokString, "")
		if err != nil {
			return nil, err
		}
		if d.Name, err = strconv.Unquote(nt.Text); err != nil {
			return nil, errorf(nt.Pos, "opcode table: bad name %s", nt.Text)
		}
		if err := comma(); err != nil {
			return nil, err
		}
		if d.Pop, err = terms(opcodePopTerms); err != nil {
			return nil, err
		}
		if err := comma(); err != nil {
			return nil, err
		}
		if d.Push, err = terms(opcodePushTerms); err != nil {
			return nil, err
		}
		var idents [2]string
		for k := range idents {
			if err := comma(); err != nil {
				return nil, err
			}
			it, err := expect(TokIdent, "")
			if err != nil {
				return nil, err
			}
			idents[k] = it.Text
		}
		d.Operand, d.Kind = idents[0], idents[1]
		if !contains(opcodeOperands, d.Operand) {
			return nil, errorf(d.Pos, "opcode table: %s: unknown operand kind %s", d.Canonical, d.Operand)
		}
		if !opcodeKinds[d.Kind] {
			return nil, errorf(d.Pos, "opcode table: %s: unknown opcode kind %s", d.Canonical, d.Kind)
		}
		if err := comma(); err != nil {
			return nil, err
		}
		lt, err := expect(TokNumber, "")
		if err != nil {
			return nil, err
		}
		l, err := strconv.Atoi(lt.Text)
		if err != nil || l < 0 || l > 2 {
			return nil, errorf(lt.Pos, "opcode table: bad length %s", lt.Text)
		}
		d.Len = l
		for _, p := range []*int{&d.Byte1, &d.Byte2} {
			if err := comma(); err != nil {
				return nil, err
			}
			if *p, err = byteVal(); err != nil {
				return nil, err
			}
		}
		if err := comma(); err != nil {
			return nil, err
		}
		ft, err := expect(TokIdent, "")
		if err != nil {
			return nil, err
		}
		if _, ok := opcodeFlows[ft.Text]; !ok {
			return nil, errorf(ft.Pos, "opcode table: unknown flow control %s", ft.Text)
		}
		d.Flow = ft.Text
		if _, err := expect(TokPunct, ")"); err != nil {
			return nil, err
		}
		switch {
		case d.Len == 1 && d.Byte1 != 0xFF:
			return nil, errorf(d.Pos, "opcode table: %s: one-byte opcode with first byte %#x", d.Canonical, d.Byte1)
		case d.Len == 2 && d.Byte1 != 0xFE:
			return nil, errorf(d.Pos, "opcode table: %s: two-byte opcode with first byte %#x", d.Canonical, d.Byte1)
		}
		defs = append(defs, d)
	}
	if len(defs) == 0 {
		return nil, fmt.Errorf("%s: no OPDEF entries", file)
	}
	seenName, seenVal := map[string]bool{}, map[uint16]string{}
	for _, d := range defs {
		if !d.Real() {
			continue
		}
		if prev, ok := seenVal[d.Value()]; ok {
			return nil, errorf(d.Pos, "opcode table: %s has the value of %s", d.Canonical, prev)
		}
		seenVal[d.Value()] = d.Canonical
		id := opcodeGoName(d.Name)
		if seenName[id] {
			return nil, errorf(d.Pos, "opcode table: two opcodes named %s", id)
		}
		seenName[id] = true
	}
	return defs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// opcodeGoName turns an ilasm name into a Go identifier: "ldc.i4.m1" →
// "OpLdcI4M1", "tail." → "OpTail".
func opcodeGoName(name string) string {
	var b strings.Builder
	b.WriteString("Op")
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			continue
		}
		r := []rune(part)
		r[0] = unicode.ToUpper(r[0])
		b.WriteString(string(r))
	}
	return b.String()
}

// stackCount is the number of stack items a behaviour moves: the number of
// terms, 0 for Pop0/Push0, -1 for VarPop/VarPush.
func stackCount(terms []string) int {
	n := 0
	for _, t := range terms {
		switch t {
		case "Pop0", "Push0":
		case "VarPop", "VarPush":
			return -1
		default:
			n++
		}
	}
	return n
}

// GenerateOpcodes renders ilrw/opcodes_gen.go: the Opcode constants and
// the lookup tables of package ilrw, from the real entries of defs. The
// OperandKind and FlowControl constants it names are hand-written in ilrw,
// so an operand kind or flow the package does not know breaks its build.
func GenerateOpcodes(cmdline string, defs []*OpcodeDef) ([]byte, error) {
	f := jen.NewFile("ilrw")
	f.HeaderComment("Code generated by comgen. DO NOT EDIT.")
	f.HeaderComment(cmdline)
	var consts []jen.Code
	one, two := jen.Dict{}, jen.Dict{}
	n := 0
	for _, d := range defs {
		if !d.Real() {
			continue
		}
		n++
		id := opcodeGoName(d.Name)
		consts = append(consts, jen.Comment(fmt.Sprintf("%s is %q (%s).", id, d.Name, d.Canonical)),
			jen.Id(id).Id("Opcode").Op("=").Op(fmt.Sprintf("0x%02X", d.Value())))
		// name, operand, flow, pop, push, prefix (see opInfo).
		info := jen.Values(jen.Lit(d.Name), jen.Id(d.Operand), jen.Id(opcodeFlows[d.Flow]),
			jen.Lit(stackCount(d.Pop)), jen.Lit(stackCount(d.Push)), jen.Lit(d.Kind == "IPrefix"))
		key := jen.Op(fmt.Sprintf("0x%02X", d.Byte2))
		if d.Len == 1 {
			one[key] = info
		} else {
			two[key] = info
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("opcode table: no real opcodes")
	}
	f.Comment("The instructions of ECMA-335 Partition III, named after their ilasm")
	f.Comment("spelling. A two-byte opcode's value is 0xFE00 | its second byte.")
	f.Const().Defs(consts...)
	f.Line()
	f.Comment("oneByteOps describes the one-byte opcodes, indexed by their byte.")
	f.Var().Id("oneByteOps").Op("=").Index(jen.Lit(256)).Id("opInfo").Values(one)
	f.Line()
	f.Comment("twoByteOps describes the opcodes that start with 0xFE, indexed by their second byte.")
	f.Var().Id("twoByteOps").Op("=").Index(jen.Lit(256)).Id("opInfo").Values(two)
	f.Line()
	f.Comment("opcodeCount is the number of opcodes in the tables.")
	f.Const().Id("opcodeCount").Op("=").Lit(n)
	return render(f)
}
