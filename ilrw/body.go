package ilrw

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/clrprof/clrprof/metadata"
)

// Header flags of a fat method header (ECMA-335 II.25.4.4, CorILMethod_*).
const (
	flagTinyFormat = 0x2
	flagFatFormat  = 0x3
	flagMoreSects  = 0x8
	// FlagInitLocals asks the runtime to zero the locals at entry.
	FlagInitLocals = 0x10
)

// Section kinds of the extra data after the code (CorILMethod_Sect_*).
const (
	sectEHTable   = 0x1
	sectOptILTab  = 0x2
	sectFatFormat = 0x40
	sectMoreSects = 0x80
)

// Limits on what the decoder accepts; real bodies are far smaller.
const (
	maxCodeSize = 1 << 26
	maxClauses  = 1 << 16
)

// FormatError reports a malformed method body.
type FormatError struct {
	Offset int // byte offset in the body (header included)
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("ilrw: malformed method body at offset %#x: %s", e.Offset, e.Msg)
}

func formatErr(off int, format string, args ...any) error {
	return &FormatError{Offset: off, Msg: fmt.Sprintf(format, args...)}
}

// Instruction is one IL instruction. Which operand field is used depends
// on Op.Operand():
//
//   - ShortInlineI, InlineI, InlineI8, ShortInlineVar, InlineVar: Int
//   - ShortInlineR, InlineR: Int holds the IEEE bits (see F32, F64)
//   - token kinds: Token
//   - branches: Target; InlineSwitch: Targets
//
// Branch targets and exception regions point at instructions, so that
// edits keep them attached to the code they name.
type Instruction struct {
	Op      Opcode
	Int     int64
	Token   metadata.Token
	Target  *Instruction
	Targets []*Instruction

	// Offset is where the instruction starts in the code: as decoded, then
	// as last encoded. Informational; edits do not update it.
	Offset int
}

// Size is the encoded size of the instruction with its current opcode.
func (in *Instruction) Size() int {
	n := in.Op.Size() + in.Op.Operand().Size()
	if in.Op.Operand() == InlineSwitch {
		n += 4 * len(in.Targets)
	}
	return n
}

// F32 returns a ShortInlineR operand.
func (in *Instruction) F32() float32 { return math.Float32frombits(uint32(in.Int)) }

// F64 returns an InlineR operand.
func (in *Instruction) F64() float64 { return math.Float64frombits(uint64(in.Int)) }

// ClauseKind is the kind of an exception handling clause.
type ClauseKind uint32

// The clause kinds (COR_ILEXCEPTION_CLAUSE_*).
const (
	ClauseCatch   ClauseKind = 0x0
	ClauseFilter  ClauseKind = 0x1
	ClauseFinally ClauseKind = 0x2
	ClauseFault   ClauseKind = 0x4
)

func (k ClauseKind) String() string {
	switch k {
	case ClauseCatch:
		return "catch"
	case ClauseFilter:
		return "filter"
	case ClauseFinally:
		return "finally"
	case ClauseFault:
		return "fault"
	}
	return fmt.Sprintf("ClauseKind(%#x)", uint32(k))
}

// Clause is an exception handling clause. Regions are half-open: Start is
// the first instruction inside, End the first one after (nil: the end of
// the code). A filter's code runs from FilterStart to HandlerStart.
type Clause struct {
	Kind         ClauseKind
	TryStart     *Instruction
	TryEnd       *Instruction
	HandlerStart *Instruction
	HandlerEnd   *Instruction
	FilterStart  *Instruction   // ClauseFilter only
	ClassToken   metadata.Token // ClauseCatch only: the exception type caught

	// Extra keeps the last field of finally and fault clauses (zero in
	// practice), so that re-encoding is byte-identical.
	Extra uint32
}

// Body is a decoded IL method body.
type Body struct {
	// Fat says the header is (or must be) fat. A body decoded from a tiny
	// header is re-encoded tiny as long as it still fits one; otherwise the
	// encoder promotes it whatever Fat says.
	Fat bool
	// Flags are the fat header's flags (FlagInitLocals; the format and
	// more-sections bits are computed by the encoder).
	Flags uint16
	// MaxStack is the header's maximum stack depth (8 for tiny headers).
	// ComputeMaxStack recomputes it.
	MaxStack uint16
	// LocalVarSig is the StandAloneSig token of the locals, 0 if none.
	LocalVarSig metadata.Token

	Instructions []*Instruction
	Clauses      []*Clause

	// FatClauses keeps the EH section fat when it was decoded fat; a small
	// section is promoted when a clause or the section no longer fits.
	FatClauses bool
}

// InitLocals reports whether FlagInitLocals is set.
func (b *Body) InitLocals() bool { return b.Flags&FlagInitLocals != 0 }

// Decode parses a method body: header, code and exception sections, as
// returned by GetILFunctionBody or found at a method's RVA. Trailing bytes
// after the last section are ignored.
func Decode(data []byte) (*Body, error) {
	if len(data) == 0 {
		return nil, formatErr(0, "empty body")
	}
	b := &Body{}
	var code []byte
	var codeStart int
	more := false
	switch data[0] & 0x3 {
	case flagTinyFormat:
		size := int(data[0] >> 2)
		if 1+size > len(data) {
			return nil, formatErr(0, "tiny header: code size %d past the end (%d bytes)", size, len(data))
		}
		b.MaxStack = 8
		codeStart = 1
		code = data[1 : 1+size]
	case flagFatFormat:
		if len(data) < 12 {
			return nil, formatErr(0, "fat header truncated (%d bytes)", len(data))
		}
		fl := binary.LittleEndian.Uint16(data)
		if hs := int(fl>>12) * 4; hs != 12 {
			return nil, formatErr(1, "fat header size %d, want 12", hs)
		}
		b.Fat = true
		b.Flags = fl & 0x0FFF &^ (flagFatFormat | flagMoreSects)
		more = fl&flagMoreSects != 0
		b.MaxStack = binary.LittleEndian.Uint16(data[2:])
		size := binary.LittleEndian.Uint32(data[4:])
		b.LocalVarSig = metadata.Token(binary.LittleEndian.Uint32(data[8:]))
		if size > maxCodeSize || 12+int(size) > len(data) {
			return nil, formatErr(4, "code size %d past the end (%d bytes)", size, len(data))
		}
		codeStart = 12
		code = data[12 : 12+int(size)]
	default:
		return nil, formatErr(0, "header byte %#x is neither tiny nor fat", data[0])
	}
	byOffset, err := b.decodeCode(code, codeStart)
	if err != nil {
		return nil, err
	}
	pos := codeStart + len(code)
	for more {
		pos = (pos + 3) &^ 3
		if pos >= len(data) {
			return nil, formatErr(pos, "section header past the end")
		}
		kind := data[pos]
		if kind&sectEHTable == 0 || kind&sectOptILTab != 0 {
			return nil, formatErr(pos, "unsupported section kind %#x", kind)
		}
		more = kind&sectMoreSects != 0
		var n int
		if kind&sectFatFormat != 0 {
			if pos+4 > len(data) {
				return nil, formatErr(pos, "fat section header truncated")
			}
			size := int(binary.LittleEndian.Uint32(data[pos:]) >> 8)
			if size < 4 || pos+size > len(data) || (size-4)%24 != 0 {
				return nil, formatErr(pos, "fat EH section size %d does not fit %d bytes", size, len(data)-pos)
			}
			b.FatClauses = true
			n = (size - 4) / 24
			for i := range n {
				p := pos + 4 + 24*i
				c := data[p : p+24]
				if err := b.addClause(byOffset, p, binary.LittleEndian.Uint32(c),
					binary.LittleEndian.Uint32(c[4:]), binary.LittleEndian.Uint32(c[8:]),
					binary.LittleEndian.Uint32(c[12:]), binary.LittleEndian.Uint32(c[16:]),
					binary.LittleEndian.Uint32(c[20:]), len(code)); err != nil {
					return nil, err
				}
			}
			pos += size
		} else {
			if pos+4 > len(data) {
				return nil, formatErr(pos, "small section header truncated")
			}
			size := int(data[pos+1])
			if size < 4 || pos+size > len(data) {
				return nil, formatErr(pos, "small EH section size %d does not fit %d bytes", size, len(data)-pos)
			}
			n = (size - 4) / 12
			for i := range n {
				p := pos + 4 + 12*i
				c := data[p : p+12]
				if err := b.addClause(byOffset, p, uint32(binary.LittleEndian.Uint16(c)),
					uint32(binary.LittleEndian.Uint16(c[2:])), uint32(c[4]),
					uint32(binary.LittleEndian.Uint16(c[5:])), uint32(c[7]),
					binary.LittleEndian.Uint32(c[8:]), len(code)); err != nil {
					return nil, err
				}
			}
			pos += size
		}
		if len(b.Clauses) > maxClauses {
			return nil, formatErr(pos, "more than %d exception clauses", maxClauses)
		}
	}
	return b, nil
}

// decodeCode reads the instruction stream and resolves branch targets; it
// returns the instructions by code offset (for the EH clauses).
func (b *Body) decodeCode(code []byte, base int) (map[int]*Instruction, error) {
	byOffset := make(map[int]*Instruction)
	type fix struct {
		in      *Instruction
		targets []int
	}
	var fixes []fix
	for pc := 0; pc < len(code); {
		start := pc
		op := Opcode(code[pc])
		pc++
		if op == 0xFE {
			if pc >= len(code) {
				return nil, formatErr(base+start, "two-byte opcode truncated")
			}
			op = 0xFE00 | Opcode(code[pc])
			pc++
		}
		if !op.Valid() {
			return nil, formatErr(base+start, "invalid opcode %#x", uint16(op))
		}
		in := &Instruction{Op: op, Offset: start}
		k := op.Operand()
		if pc+k.Size() > len(code) {
			return nil, formatErr(base+start, "%s: operand past the end of the code", op)
		}
		o := code[pc:]
		switch k {
		case InlineNone:
		case ShortInlineVar:
			in.Int = int64(o[0])
		case ShortInlineI:
			in.Int = int64(int8(o[0]))
		case InlineVar:
			in.Int = int64(binary.LittleEndian.Uint16(o))
		case InlineI:
			in.Int = int64(int32(binary.LittleEndian.Uint32(o)))
		case ShortInlineR:
			in.Int = int64(binary.LittleEndian.Uint32(o))
		case InlineI8, InlineR:
			in.Int = int64(binary.LittleEndian.Uint64(o))
		case ShortInlineBrTarget:
			fixes = append(fixes, fix{in, []int{pc + 1 + int(int8(o[0]))}})
		case InlineBrTarget:
			fixes = append(fixes, fix{in, []int{pc + 4 + int(int32(binary.LittleEndian.Uint32(o)))}})
		case InlineSwitch:
			n := binary.LittleEndian.Uint32(o)
			if uint64(n)*4 > uint64(len(code)-pc-4) {
				return nil, formatErr(base+start, "switch with %d targets past the end of the code", n)
			}
			end := pc + 4 + 4*int(n)
			t := make([]int, n)
			for i := range t {
				t[i] = end + int(int32(binary.LittleEndian.Uint32(o[4+4*i:])))
			}
			fixes = append(fixes, fix{in, t})
			pc = end - 4 // the count is added below
		default: // tokens
			in.Token = metadata.Token(binary.LittleEndian.Uint32(o))
		}
		pc += k.Size()
		byOffset[start] = in
		b.Instructions = append(b.Instructions, in)
	}
	for _, f := range fixes {
		ts := make([]*Instruction, len(f.targets))
		for i, t := range f.targets {
			ts[i] = byOffset[t]
			if ts[i] == nil {
				return nil, formatErr(base+f.in.Offset, "%s: target %#x is not an instruction", f.in.Op, t)
			}
		}
		if f.in.Op.Operand() == InlineSwitch {
			f.in.Targets = ts
		} else {
			f.in.Target = ts[0]
		}
	}
	return byOffset, nil
}

func (b *Body) addClause(byOffset map[int]*Instruction, at int, flags, tryOff, tryLen, hOff, hLen, last uint32, codeSize int) error {
	at2 := func(off uint64, end bool, what string) (*Instruction, error) {
		if end && off == uint64(codeSize) {
			return nil, nil
		}
		if in := byOffset[int(off)]; in != nil && off < uint64(codeSize) {
			return in, nil
		}
		return nil, formatErr(at, "exception clause: %s %#x is not an instruction boundary", what, off)
	}
	c := &Clause{Kind: ClauseKind(flags)}
	var err error
	switch c.Kind {
	case ClauseCatch, ClauseFilter, ClauseFinally, ClauseFault:
	default:
		return formatErr(at, "exception clause: unknown flags %#x", flags)
	}
	if c.TryStart, err = at2(uint64(tryOff), false, "try start"); err != nil {
		return err
	}
	if c.TryEnd, err = at2(uint64(tryOff)+uint64(tryLen), true, "try end"); err != nil {
		return err
	}
	if c.HandlerStart, err = at2(uint64(hOff), false, "handler start"); err != nil {
		return err
	}
	if c.HandlerEnd, err = at2(uint64(hOff)+uint64(hLen), true, "handler end"); err != nil {
		return err
	}
	switch c.Kind {
	case ClauseCatch:
		c.ClassToken = metadata.Token(last)
	case ClauseFilter:
		if c.FilterStart, err = at2(uint64(last), false, "filter start"); err != nil {
			return err
		}
	default:
		c.Extra = last
	}
	b.Clauses = append(b.Clauses, c)
	return nil
}
