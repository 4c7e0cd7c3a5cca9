package ilrw

import (
	"fmt"
	"math"
	"slices"

	"github.com/clrprof/clrprof/metadata"
)

// I returns an instruction without operand (or with a zero one).
func I(op Opcode) *Instruction { return &Instruction{Op: op} }

// IInt returns an instruction with an integer operand (ldc.i4, ldc.i4.s,
// ldc.i8, ldarg.s, ldloc, unaligned., ...).
func IInt(op Opcode, v int64) *Instruction { return &Instruction{Op: op, Int: v} }

// IR4 returns ldc.r4 v.
func IR4(v float32) *Instruction { return &Instruction{Op: OpLdcR4, Int: int64(math.Float32bits(v))} }

// IR8 returns ldc.r8 v.
func IR8(v float64) *Instruction { return &Instruction{Op: OpLdcR8, Int: int64(math.Float64bits(v))} }

// IToken returns an instruction with a token operand (call, ldstr, box...).
func IToken(op Opcode, t metadata.Token) *Instruction { return &Instruction{Op: op, Token: t} }

// IBranch returns a branch to target.
func IBranch(op Opcode, target *Instruction) *Instruction {
	return &Instruction{Op: op, Target: target}
}

// ISwitch returns a switch over targets.
func ISwitch(targets ...*Instruction) *Instruction {
	return &Instruction{Op: OpSwitch, Targets: targets}
}

// LdcI4 returns the shortest instruction that loads the int32 v.
func LdcI4(v int32) *Instruction {
	switch {
	case v >= -1 && v <= 8:
		return I(OpLdcI40 + Opcode(v))
	case v >= -128 && v <= 127:
		return IInt(OpLdcI4S, int64(v))
	}
	return IInt(OpLdcI4, int64(v))
}

// Index returns the position of in in the body, or -1.
func (b *Body) Index(in *Instruction) int {
	for i, x := range b.Instructions {
		if x == in {
			return i
		}
	}
	return -1
}

// InsertAt inserts instructions before position i (len(Instructions)
// appends). Branches and exception regions keep pointing at the
// instructions they pointed at.
func (b *Body) InsertAt(i int, ins ...*Instruction) error {
	if i < 0 || i > len(b.Instructions) {
		return fmt.Errorf("ilrw: insert position %d out of range [0, %d]", i, len(b.Instructions))
	}
	for _, in := range ins {
		if in == nil {
			return fmt.Errorf("ilrw: inserting a nil instruction")
		}
	}
	b.Instructions = append(b.Instructions[:i], append(append([]*Instruction(nil), ins...), b.Instructions[i:]...)...)
	return nil
}

// InsertBefore inserts instructions just before at. Branches to at still
// land on at (so they skip the new code); a region that starts at at
// still starts there (the new code is outside it), and one that ends at
// at (exclusive) now covers the new code.
func (b *Body) InsertBefore(at *Instruction, ins ...*Instruction) error {
	i := b.Index(at)
	if i < 0 {
		return fmt.Errorf("ilrw: InsertBefore: instruction not in the body")
	}
	return b.InsertAt(i, ins...)
}

// InsertAfter inserts instructions just after at.
func (b *Body) InsertAfter(at *Instruction, ins ...*Instruction) error {
	i := b.Index(at)
	if i < 0 {
		return fmt.Errorf("ilrw: InsertAfter: instruction not in the body")
	}
	return b.InsertAt(i+1, ins...)
}

// Replace replaces old with the instructions given. The first one takes
// old's place and identity (old is overwritten with its opcode and
// operand), so that branches and regions that named old now name it; the
// others follow it.
func (b *Body) Replace(old *Instruction, with ...*Instruction) error {
	i := b.Index(old)
	if i < 0 {
		return fmt.Errorf("ilrw: Replace: instruction not in the body")
	}
	if len(with) == 0 {
		return b.Remove(old)
	}
	if with[0] == nil {
		return fmt.Errorf("ilrw: Replace: nil instruction")
	}
	first := *with[0]
	*old = first
	return b.InsertAt(i+1, with[1:]...)
}

// Remove deletes in from the body. Branches and region boundaries that
// named it move to the instruction that followed it; removing the last
// instruction while something still branches to it is an error.
func (b *Body) Remove(in *Instruction) error {
	i := b.Index(in)
	if i < 0 {
		return fmt.Errorf("ilrw: Remove: instruction not in the body")
	}
	var next *Instruction
	if i+1 < len(b.Instructions) {
		next = b.Instructions[i+1]
	}
	if next == nil {
		for _, x := range b.Instructions {
			if x.Target == in || slices.Contains(x.Targets, in) {
				return fmt.Errorf("ilrw: Remove: the last instruction is a branch target")
			}
		}
	}
	for _, c := range b.Clauses {
		if next == nil && (c.TryStart == in || c.HandlerStart == in || c.FilterStart == in) {
			return fmt.Errorf("ilrw: Remove: an exception region would start past the end")
		}
	}
	for _, x := range b.Instructions {
		if x.Target == in {
			x.Target = next
		}
		for k, t := range x.Targets {
			if t == in {
				x.Targets[k] = next
			}
		}
	}
	for _, c := range b.Clauses {
		for _, p := range []**Instruction{&c.TryStart, &c.TryEnd, &c.HandlerStart, &c.HandlerEnd, &c.FilterStart} {
			if *p == in {
				*p = next
			}
		}
	}
	b.Instructions = append(b.Instructions[:i], b.Instructions[i+1:]...)
	return nil
}
