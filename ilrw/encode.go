package ilrw

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
)

// Encode renders the body: header, code and exception section. It widens
// short branches whose target no longer fits in a signed byte, promotes a
// tiny header to fat and a small EH section to fat when needed, and
// records each instruction's new Offset. MaxStack is written as it is: call
// ComputeMaxStack after edits. An unmodified decoded body encodes to the
// bytes it was decoded from.
func (b *Body) Encode() ([]byte, error) { return b.AppendEncode(nil) }

// AppendEncode is [Body.Encode] appending to dst (which may be a buffer
// reused from one body to the next) and returning the extended slice; dst
// is returned unchanged with the error.
func (b *Body) AppendEncode(dst []byte) ([]byte, error) {
	codeSize, err := b.layout()
	if err != nil {
		return dst, err
	}
	// The exception section: check the clauses and choose its format.
	fat := b.FatClauses || 4+12*len(b.Clauses) > 0xFF
	for i, c := range b.Clauses {
		r, err := c.region(i, codeSize)
		if err != nil {
			return dst, err
		}
		if r.tryOff > 0xFFFF || r.hOff > 0xFFFF || r.tryLen > 0xFF || r.hLen > 0xFF {
			fat = true
		}
	}
	// Header.
	tiny := !b.Fat && codeSize < 64 && b.MaxStack <= 8 && b.LocalVarSig == 0 && len(b.Clauses) == 0 && b.Flags == 0
	size := 1 + codeSize
	if !tiny {
		size = 12 + codeSize
	}
	if len(b.Clauses) > 0 {
		size = (size+3)&^3 + 4 + 12*len(b.Clauses)
		if fat {
			size += 12 * len(b.Clauses)
		}
	}
	out := slices.Grow(dst, size)
	if tiny {
		out = append(out, byte(codeSize<<2)|flagTinyFormat)
	} else {
		fl := b.Flags&0x0FFF&^(flagFatFormat|flagMoreSects) | flagFatFormat | 3<<12
		if len(b.Clauses) > 0 {
			fl |= flagMoreSects
		}
		out = binary.LittleEndian.AppendUint16(out, fl)
		out = binary.LittleEndian.AppendUint16(out, b.MaxStack)
		out = binary.LittleEndian.AppendUint32(out, uint32(codeSize))
		out = binary.LittleEndian.AppendUint32(out, uint32(b.LocalVarSig))
	}
	// Code.
	for _, in := range b.Instructions {
		out = in.appendTo(out)
	}
	if len(b.Clauses) == 0 {
		return out, nil
	}
	// Exception section, 4-byte aligned.
	for (len(out)-len(dst))%4 != 0 {
		out = append(out, 0)
	}
	if fat {
		out = binary.LittleEndian.AppendUint32(out, uint32(4+24*len(b.Clauses))<<8|sectEHTable|sectFatFormat)
		for i, c := range b.Clauses {
			r, _ := c.region(i, codeSize)
			out = binary.LittleEndian.AppendUint32(out, uint32(c.Kind))
			out = binary.LittleEndian.AppendUint32(out, r.tryOff)
			out = binary.LittleEndian.AppendUint32(out, r.tryLen)
			out = binary.LittleEndian.AppendUint32(out, r.hOff)
			out = binary.LittleEndian.AppendUint32(out, r.hLen)
			out = binary.LittleEndian.AppendUint32(out, r.last)
		}
	} else {
		out = append(out, sectEHTable, byte(4+12*len(b.Clauses)), 0, 0)
		for i, c := range b.Clauses {
			r, _ := c.region(i, codeSize)
			out = binary.LittleEndian.AppendUint16(out, uint16(c.Kind))
			out = binary.LittleEndian.AppendUint16(out, uint16(r.tryOff))
			out = append(out, byte(r.tryLen))
			out = binary.LittleEndian.AppendUint16(out, uint16(r.hOff))
			out = append(out, byte(r.hLen))
			out = binary.LittleEndian.AppendUint32(out, r.last)
		}
	}
	return out, nil
}

// region is a clause's fields as encoded.
type region struct{ tryOff, tryLen, hOff, hLen, last uint32 }

// region returns clause i's offsets and lengths, once layout has placed
// the code (codeSize bytes) and checked its boundaries.
func (c *Clause) region(i, codeSize int) (region, error) {
	off := func(in *Instruction) uint32 {
		if in == nil {
			return uint32(codeSize)
		}
		return uint32(in.Offset)
	}
	r := region{tryOff: off(c.TryStart), hOff: off(c.HandlerStart)}
	te, he := off(c.TryEnd), off(c.HandlerEnd)
	if te < r.tryOff || he < r.hOff {
		return r, fmt.Errorf("ilrw: exception clause %d: a region ends before it starts", i)
	}
	r.tryLen, r.hLen = te-r.tryOff, he-r.hOff
	switch c.Kind {
	case ClauseCatch:
		r.last = uint32(c.ClassToken)
	case ClauseFilter:
		if c.FilterStart == nil {
			return r, fmt.Errorf("ilrw: exception clause %d: filter without FilterStart", i)
		}
		r.last = off(c.FilterStart)
	default:
		r.last = c.Extra
	}
	return r, nil
}

// index maps each instruction to its position and checks that every
// branch target and clause boundary is an instruction of the body (for
// the stack analysis; Encode checks the same without a map, see layout).
func (b *Body) index() (map[*Instruction]int, error) {
	idx := make(map[*Instruction]int, len(b.Instructions))
	for i, in := range b.Instructions {
		if err := checkInstruction(i, in); err != nil {
			return nil, err
		}
		if _, dup := idx[in]; dup {
			return nil, fmt.Errorf("ilrw: instruction %d (%s) appears twice in the body", i, in.Op)
		}
		idx[in] = i
	}
	err := b.checkTargets(func(in *Instruction) bool {
		_, ok := idx[in]
		return ok
	})
	if err != nil {
		return nil, err
	}
	return idx, nil
}

// checkInstruction checks instruction i on its own: not nil, a valid
// opcode, an immediate operand in range.
func checkInstruction(i int, in *Instruction) error {
	if in == nil {
		return fmt.Errorf("ilrw: instruction %d is nil", i)
	}
	if !in.Op.Valid() {
		return fmt.Errorf("ilrw: instruction %d: invalid opcode %#x", i, uint16(in.Op))
	}
	switch k := in.Op.Operand(); k {
	case ShortInlineVar, InlineVar, ShortInlineI:
		lo, hi := int64(0), int64(0xFF)
		if k == InlineVar {
			hi = 0xFFFF
		} else if k == ShortInlineI {
			lo, hi = -128, 127
		}
		if in.Int < lo || in.Int > hi {
			return fmt.Errorf("ilrw: instruction %d (%s): operand %d out of range [%d, %d]", i, in.Op, in.Int, lo, hi)
		}
	case InlineI:
		if in.Int < -1<<31 || in.Int > 1<<31-1 {
			return fmt.Errorf("ilrw: instruction %d (%s): operand %d out of int32 range", i, in.Op, in.Int)
		}
	}
	return nil
}

// checkTargets checks that every branch target and clause boundary is
// an instruction of the body, as told by in.
func (b *Body) checkTargets(in func(*Instruction) bool) error {
	for i, ins := range b.Instructions {
		switch ins.Op.Operand() {
		case ShortInlineBrTarget, InlineBrTarget:
			if !in(ins.Target) {
				return fmt.Errorf("ilrw: instruction %d (%s): branch target is not in the body", i, ins.Op)
			}
		case InlineSwitch:
			for _, t := range ins.Targets {
				if !in(t) {
					return fmt.Errorf("ilrw: instruction %d (switch): a target is not in the body", i)
				}
			}
		}
	}
	for i, c := range b.Clauses {
		if c.TryStart == nil || c.HandlerStart == nil {
			return fmt.Errorf("ilrw: exception clause %d: missing start", i)
		}
		for _, p := range [...]*Instruction{c.TryStart, c.TryEnd, c.HandlerStart, c.HandlerEnd, c.FilterStart} {
			if p != nil && !in(p) {
				return fmt.Errorf("ilrw: exception clause %d: a boundary is not in the body", i)
			}
		}
	}
	return nil
}

// errTooLarge is returned for bodies whose code does not fit 32 bits.
var errTooLarge = errors.New("ilrw: code too large")

// layout checks the body and assigns offsets, widening short branches
// until every target fits, and returns the code size. It needs no map:
// offsets grow strictly along a body without repeated instructions, so
// an instruction is in the body when the one found at its offset by
// binary search is itself.
func (b *Body) layout() (int, error) {
	ins := b.Instructions
	off := 0
	branches, short := false, false
	for i, in := range ins {
		if in == nil {
			return 0, checkInstruction(i, in)
		}
		f := in.Op.fact()
		size := int(f.size)
		switch f.operand {
		case InlineNone:
			if f.size == 0 {
				return 0, checkInstruction(i, in)
			}
		case ShortInlineBrTarget:
			branches, short = true, true
		case InlineBrTarget:
			branches = true
		case InlineSwitch:
			branches = true
			size += 4 * len(in.Targets)
		case ShortInlineVar, InlineVar, ShortInlineI, InlineI:
			if err := checkInstruction(i, in); err != nil {
				return 0, err
			}
		}
		in.Offset = off
		off += size
		if off > maxCodeSize {
			return 0, errTooLarge
		}
	}
	// An instruction listed twice carries the offset of its last place,
	// which breaks the strict order somewhere between its two places.
	for i := 1; i < len(ins); i++ {
		if ins[i].Offset <= ins[i-1].Offset {
			_, err := b.index() // names the repeated instruction
			if err == nil {
				err = fmt.Errorf("ilrw: instruction %d (%s) appears twice in the body", i, ins[i].Op)
			}
			return 0, err
		}
	}
	if branches || len(b.Clauses) > 0 {
		if err := b.checkTargets(b.contains); err != nil {
			return 0, err
		}
	}
	for short {
		widened := false
		for _, in := range ins {
			if in.Op.fact().operand != ShortInlineBrTarget {
				continue
			}
			d := in.Target.Offset - (in.Offset + in.Size())
			if d < -128 || d > 127 {
				l := in.Op.Long()
				if l == in.Op {
					return 0, fmt.Errorf("ilrw: %s at %#x: target out of range and no long form", in.Op, in.Offset)
				}
				in.Op = l
				widened = true
			}
		}
		if !widened {
			break
		}
		off = 0
		for _, in := range ins {
			in.Offset = off
			off += in.Size()
			if off > maxCodeSize {
				return 0, errTooLarge
			}
		}
	}
	return off, nil
}

// contains reports whether t is one of the instructions, whose offsets
// layout has just assigned.
func (b *Body) contains(t *Instruction) bool {
	if t == nil {
		return false
	}
	ins := b.Instructions
	lo, hi := 0, len(ins)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if ins[m].Offset < t.Offset {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo < len(ins) && ins[lo] == t
}

func (in *Instruction) appendTo(out []byte) []byte {
	if in.Op > 0xFF {
		out = append(out, 0xFE, byte(in.Op))
	} else {
		out = append(out, byte(in.Op))
	}
	f := in.Op.fact()
	end := in.Offset + int(f.size)
	switch f.operand {
	case InlineNone:
	case ShortInlineVar, ShortInlineI:
		out = append(out, byte(in.Int))
	case InlineVar:
		out = binary.LittleEndian.AppendUint16(out, uint16(in.Int))
	case InlineI, ShortInlineR:
		out = binary.LittleEndian.AppendUint32(out, uint32(in.Int))
	case InlineI8, InlineR:
		out = binary.LittleEndian.AppendUint64(out, uint64(in.Int))
	case ShortInlineBrTarget:
		out = append(out, byte(int8(in.Target.Offset-end)))
	case InlineBrTarget:
		out = binary.LittleEndian.AppendUint32(out, uint32(int32(in.Target.Offset-end)))
	case InlineSwitch:
		end += 4 * len(in.Targets)
		out = binary.LittleEndian.AppendUint32(out, uint32(len(in.Targets)))
		for _, t := range in.Targets {
			out = binary.LittleEndian.AppendUint32(out, uint32(int32(t.Offset-end)))
		}
	default:
		out = binary.LittleEndian.AppendUint32(out, uint32(in.Token))
	}
	return out
}

// ShortenBranches turns long branches whose target is within reach of the
// short form into short ones (br → br.s), as optimising compilers emit
// them, and returns how many it changed. Encode widens them again if later
// edits move their targets out of reach.
func (b *Body) ShortenBranches() (int, error) {
	n := 0
	for {
		if _, err := b.layout(); err != nil {
			return n, err
		}
		changed := false
		for _, in := range b.Instructions {
			if in.Op.Operand() != InlineBrTarget {
				continue
			}
			s := in.Op.Short()
			if s == in.Op {
				continue
			}
			// Shrinking code only brings instructions closer, so a branch
			// that fits now still fits after this pass.
			d := in.Target.Offset - (in.Offset + in.Op.Size() + 1)
			if in.Target.Offset > in.Offset {
				d = in.Target.Offset - (in.Offset + in.Size())
			}
			if d >= -128 && d <= 127 {
				in.Op = s
				n++
				changed = true
			}
		}
		if !changed {
			return n, nil
		}
	}
}
