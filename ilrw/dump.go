package ilrw

import (
	"fmt"
	"strings"

	"github.com/clrprof/clrprof/metadata"
)

// Namer names tokens in dumps; *Module is one. A nil Namer prints tokens
// in hex.
type Namer interface {
	TokenName(tok metadata.Token) string
}

// Dump returns a readable listing of the body: header, one instruction
// per line with its offset (IL_xxxx labels as last encoded or decoded),
// token operands named by n, and the exception clauses.
func (b *Body) Dump(n Namer) string {
	name := func(t metadata.Token) string {
		if n == nil {
			return t.String()
		}
		return n.TokenName(t)
	}
	label := func(in *Instruction) string {
		if in == nil {
			return "end"
		}
		return fmt.Sprintf("IL_%04x", in.Offset)
	}
	var sb strings.Builder
	format := "tiny"
	if b.Fat {
		format = "fat"
	}
	fmt.Fprintf(&sb, "// %s header, maxstack %d, %d instructions", format, b.MaxStack, len(b.Instructions))
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
