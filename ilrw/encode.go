package ilrw

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Encode renders the body: header, code and exception section. It widens
// short branches whose target no longer fits in a signed byte, promotes a
// tiny header to fat and a small EH section to fat when needed, and
// records each instruction's new Offset. MaxStack is written as it is: call
// ComputeMaxStack after edits. An unmodified decoded body encodes to the
// bytes it was decoded from.
func (b *Body) Encode() ([]byte, error) {
	idx, err := b.index()
	if err != nil {
		return nil, err
	}
	codeSize, err := b.layout(idx)
	if err != nil {
		return nil, err
	}
	// Header.
	tiny := !b.Fat && codeSize < 64 && b.MaxStack <= 8 && b.LocalVarSig == 0 && len(b.Clauses) == 0 && b.Flags == 0
	var out []byte
	if tiny {
		out = make([]byte, 1, 1+codeSize)
		out[0] = byte(codeSize<<2) | flagTinyFormat
	} else {
		out = make([]byte, 12, 12+codeSize)
		fl := b.Flags&0x0FFF&^(flagFatFormat|flagMoreSects) | flagFatFormat | 3<<12
		if len(b.Clauses) > 0 {
			fl |= flagMoreSects
		}
		binary.LittleEndian.PutUint16(out, fl)
		binary.LittleEndian.PutUint16(out[2:], b.MaxStack)
		binary.LittleEndian.PutUint32(out[4:], uint32(codeSize))
		binary.LittleEndian.PutUint32(out[8:], uint32(b.LocalVarSig))
	}
	// Code.
	for _, in := range b.Instructions {
		out = in.appendTo(out)
	}
	if len(b.Clauses) == 0 {
		return out, nil
	}
	// Exception section, 4-byte aligned.
	for len(out)%4 != 0 {
		out = append(out, 0)
	}
	type region struct{ tryOff, tryLen, hOff, hLen, last uint32 }
	rs := make([]region, len(b.Clauses))
	fat := b.FatClauses || 4+12*len(b.Clauses) > 0xFF
	for i, c := range b.Clauses {
		off := func(in *Instruction) uint32 {
			if in == nil {
				return uint32(codeSize)
			}
			return uint32(in.Offset)
		}
		r := region{tryOff: off(c.TryStart), hOff: off(c.HandlerStart)}
		te, he := off(c.TryEnd), off(c.HandlerEnd)
		if te < r.tryOff || he < r.hOff {
			return nil, fmt.Errorf("ilrw: exception clause %d: a region ends before it starts", i)
		}
		r.tryLen, r.hLen = te-r.tryOff, he-r.hOff
		switch c.Kind {
		case ClauseCatch:
			r.last = uint32(c.ClassToken)
		case ClauseFilter:
			if c.FilterStart == nil {
				return nil, fmt.Errorf("ilrw: exception clause %d: filter without FilterStart", i)
			}
			r.last = off(c.FilterStart)
		default:
			r.last = c.Extra
		}
		if r.tryOff > 0xFFFF || r.hOff > 0xFFFF || r.tryLen > 0xFF || r.hLen > 0xFF {
			fat = true
		}
		rs[i] = r
	}
	if fat {
		size := 4 + 24*len(rs)
		out = binary.LittleEndian.AppendUint32(out, uint32(size)<<8|sectEHTable|sectFatFormat)
		for i, r := range rs {
			for _, v := range []uint32{uint32(b.Clauses[i].Kind), r.tryOff, r.tryLen, r.hOff, r.hLen, r.last} {
				out = binary.LittleEndian.AppendUint32(out, v)
			}
		}
	} else {
		out = append(out, sectEHTable, byte(4+12*len(rs)), 0, 0)
		for i, r := range rs {
			out = binary.LittleEndian.AppendUint16(out, uint16(b.Clauses[i].Kind))
			out = binary.LittleEndian.AppendUint16(out, uint16(r.tryOff))
			out = append(out, byte(r.tryLen))
			out = binary.LittleEndian.AppendUint16(out, uint16(r.hOff))
			out = append(out, byte(r.hLen))
			out = binary.LittleEndian.AppendUint32(out, r.last)
		}
	}
	return out, nil
}

// index maps each instruction to its position and checks that every
// branch target and clause boundary is an instruction of the body.
func (b *Body) index() (map[*Instruction]int, error) {
	idx := make(map[*Instruction]int, len(b.Instructions))
	for i, in := range b.Instructions {
		if in == nil {
			return nil, fmt.Errorf("ilrw: instruction %d is nil", i)
		}
		if _, dup := idx[in]; dup {
			return nil, fmt.Errorf("ilrw: instruction %d (%s) appears twice in the body", i, in.Op)
		}
		if !in.Op.Valid() {
			return nil, fmt.Errorf("ilrw: instruction %d: invalid opcode %#x", i, uint16(in.Op))
		}
		idx[in] = i
	}
	for i, in := range b.Instructions {
		switch k := in.Op.Operand(); k {
		case ShortInlineVar, InlineVar, ShortInlineI:
			lo, hi := int64(0), int64(0xFF)
			if k == InlineVar {
				hi = 0xFFFF
			} else if k == ShortInlineI {
				lo, hi = -128, 127
			}
			if in.Int < lo || in.Int > hi {
				return nil, fmt.Errorf("ilrw: instruction %d (%s): operand %d out of range [%d, %d]", i, in.Op, in.Int, lo, hi)
			}
		case InlineI:
			if in.Int < -1<<31 || in.Int > 1<<31-1 {
				return nil, fmt.Errorf("ilrw: instruction %d (%s): operand %d out of int32 range", i, in.Op, in.Int)
			}
		case ShortInlineBrTarget, InlineBrTarget:
			if _, ok := idx[in.Target]; !ok {
				return nil, fmt.Errorf("ilrw: instruction %d (%s): branch target is not in the body", i, in.Op)
			}
		case InlineSwitch:
			for _, t := range in.Targets {
				if _, ok := idx[t]; !ok {
					return nil, fmt.Errorf("ilrw: instruction %d (switch): a target is not in the body", i)
				}
			}
		}
	}
	for i, c := range b.Clauses {
		for _, p := range []struct {
			in       *Instruction
			nilMeans string // "" if nil is not allowed
		}{{c.TryStart, ""}, {c.TryEnd, "end"}, {c.HandlerStart, ""}, {c.HandlerEnd, "end"}, {c.FilterStart, "none"}} {
			if p.in == nil {
				if p.nilMeans == "" {
					return nil, fmt.Errorf("ilrw: exception clause %d: missing start", i)
				}
				continue
			}
			if _, ok := idx[p.in]; !ok {
				return nil, fmt.Errorf("ilrw: exception clause %d: a boundary is not in the body", i)
			}
		}
	}
	return idx, nil
}

// errTooLarge is returned for bodies whose code does not fit 32 bits.
var errTooLarge = errors.New("ilrw: code too large")

// layout assigns offsets, widening short branches until every target
// fits, and returns the code size.
func (b *Body) layout(idx map[*Instruction]int) (int, error) {
	for {
		off := 0
		for _, in := range b.Instructions {
			in.Offset = off
			off += in.Size()
			if off > maxCodeSize {
				return 0, errTooLarge
			}
		}
		widened := false
		for _, in := range b.Instructions {
			if in.Op.Operand() != ShortInlineBrTarget {
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
			return off, nil
		}
	}
}

func (in *Instruction) appendTo(out []byte) []byte {
	if in.Op > 0xFF {
		out = append(out, 0xFE, byte(in.Op))
	} else {
		out = append(out, byte(in.Op))
	}
	end := in.Offset + in.Size()
	switch in.Op.Operand() {
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
	idx, err := b.index()
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		if _, err := b.layout(idx); err != nil {
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
