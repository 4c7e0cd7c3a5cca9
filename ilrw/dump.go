package ilrw

import (
	"fmt"
	"strings"

	"github.com/clrprof/clrprof/metadata"
)

// Namer names tokens in dumps; *Module is one. A nil Namer prints tokens
// in hex.
type Namer interface {
	// TokenName returns a readable name of tok ("System.String::Concat").
	TokenName(tok metadata.Token) string
}

// Dump returns a readable listing of the body: header, one instruction
// per line with its offset, token operands named by n, and the exception
// clauses. It is right at any time, in the middle of an edit too:
//
//   - the offsets (IL_xxxx) are those Encode would give the body as it
//     is now, inserted instructions and short branches Encode must widen
//     included, computed without changing the body (Instruction.Offset
//     keeps the last encoded or decoded offset until Encode runs);
//   - the max stack ("maxstack N") is computed from the code when n is
//     also a Resolver (*Module is both) or the body calls nothing; the
//     header's MaxStack follows when it differs ("(header M)": Encode
//     writes the header's value, which ComputeMaxStack, Rewrite and
//     Install update). When it cannot be computed, the header's value is
//     printed as "maxstack M (header)".
func (b *Body) Dump(n Namer) string {
	name := func(t metadata.Token) string {
		if n == nil {
			return t.String()
		}
		return n.TokenName(t)
	}
	offs := b.dumpOffsets()
	label := func(in *Instruction) string {
		if in == nil {
			return "end"
		}
		if o, ok := offs[in]; ok {
			return fmt.Sprintf("IL_%04x", o)
		}
		return fmt.Sprintf("IL_?%04x", in.Offset) // not in the body
	}
	var sb strings.Builder
	format := "tiny"
	if b.Fat {
		format = "fat"
	}
	r, _ := n.(Resolver)
	if ms, err := b.maxStack(r); err == nil {
		fmt.Fprintf(&sb, "// %s header, maxstack %d", format, ms)
		if ms != int(b.MaxStack) {
			fmt.Fprintf(&sb, " (header %d)", b.MaxStack)
		}
	} else {
		fmt.Fprintf(&sb, "// %s header, maxstack %d (header)", format, b.MaxStack)
	}
	fmt.Fprintf(&sb, ", %d instructions", len(b.Instructions))
	if b.LocalVarSig != 0 {
		fmt.Fprintf(&sb, ", locals %s", name(b.LocalVarSig))
	}
	if b.InitLocals() {
		sb.WriteString(", init")
	}
	sb.WriteByte('\n')
	for _, in := range b.Instructions {
		fmt.Fprintf(&sb, "%s: %s", label(in), in.Op)
		switch k := in.Op.Operand(); k {
		case InlineNone:
		case ShortInlineR:
			fmt.Fprintf(&sb, " %v", in.F32())
		case InlineR:
			fmt.Fprintf(&sb, " %v", in.F64())
		case ShortInlineBrTarget, InlineBrTarget:
			if in.Target != nil {
				fmt.Fprintf(&sb, " %s", label(in.Target))
			}
		case InlineSwitch:
			ls := make([]string, len(in.Targets))
			for i, t := range in.Targets {
				ls[i] = label(t)
			}
			fmt.Fprintf(&sb, " (%s)", strings.Join(ls, ", "))
		default:
			if k.IsToken() {
				fmt.Fprintf(&sb, " %s", name(in.Token))
			} else {
				fmt.Fprintf(&sb, " %d", in.Int)
			}
		}
		sb.WriteByte('\n')
	}
	for _, c := range b.Clauses {
		fmt.Fprintf(&sb, ".try %s to %s %s", label(c.TryStart), label(c.TryEnd), c.Kind)
		switch c.Kind {
		case ClauseCatch:
			fmt.Fprintf(&sb, " %s", name(c.ClassToken))
		case ClauseFilter:
			fmt.Fprintf(&sb, " %s", label(c.FilterStart))
		}
		fmt.Fprintf(&sb, " handler %s to %s\n", label(c.HandlerStart), label(c.HandlerEnd))
	}
	return sb.String()
}

// dumpOffsets returns the offset of each instruction as Encode would lay
// the body out now (short branches out of range widened), without
// changing the body.
func (b *Body) dumpOffsets() map[*Instruction]int {
	ins := b.Instructions
	offs := make(map[*Instruction]int, len(ins))
	wide := make([]bool, len(ins))
	for round := 0; round < 64; round++ {
		off := 0
		for i, in := range ins {
			if in == nil {
				continue
			}
			offs[in] = off
			off += in.Size()
			if wide[i] {
				off += 3 // a long branch's 4-byte offset instead of 1
			}
		}
		widened := false
		for i, in := range ins {
			if in == nil || wide[i] || in.Op.Operand() != ShortInlineBrTarget || in.Target == nil {
				continue
			}
			t, ok := offs[in.Target]
			if !ok {
				continue
			}
			if d := t - (offs[in] + in.Size()); d < -128 || d > 127 {
				if in.Op.Long() != in.Op {
					wide[i], widened = true, true
				}
			}
		}
		if !widened {
			break
		}
	}
	return offs
}
