package ilrw

import (
	"encoding/binary"
	"fmt"
	"math"
	"sync"

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
	// Offset is the byte offset in the body (header included) where
	// decoding failed.
	Offset int
	// Msg says what was wrong there.
	Msg string
}

// Error returns the offset and what was wrong there.
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
	Token   metadata.Token
	Int     int64
	Target  *Instruction
	Targets []*Instruction

	// Offset is where the instruction starts in the code: as decoded, then
	// as last encoded. Informational; edits do not update it (Dump shows
	// the offsets Encode will give, at any time).
	Offset int
}

// Size is the encoded size of the instruction with its current opcode.
func (in *Instruction) Size() int {
	f := in.Op.fact()
	if f.operand == InlineSwitch {
		return int(f.size) + 4*len(in.Targets)
	}
	if f.size == 0 { // not an opcode: as its bytes would be written
		return in.Op.Size() + in.Op.Operand().Size()
	}
	return int(f.size)
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

// String returns "catch", "filter", "finally" or "fault".
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
	// Kind is the clause's kind: catch, filter, finally or fault.
	Kind ClauseKind
	// TryStart is the first instruction of the protected block; TryEnd
	// the first instruction after it (nil: the end of the body).
	TryStart *Instruction
	// TryEnd: see TryStart.
	TryEnd *Instruction
	// HandlerStart is the first instruction of the handler; HandlerEnd
	// the first instruction after it (nil: the end of the body).
	HandlerStart *Instruction
	// HandlerEnd: see HandlerStart.
	HandlerEnd  *Instruction
	FilterStart *Instruction   // ClauseFilter only
	ClassToken  metadata.Token // ClauseCatch only: the exception type caught

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

	// Instructions is the code in order. Edit it with the Insert*,
	// Replace and Remove methods, which keep branches and clauses
	// pointing at the right instructions.
	Instructions []*Instruction
	// Clauses are the exception clauses, innermost first (the order
	// ECMA-335 requires).
	Clauses []*Clause

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
	b := &Body{}
	if err := decode(b, data, nil); err != nil {
		return nil, err
	}
	return b, nil
}

// A Decoder decodes method bodies into memory it keeps from one call to
// the next, for loops that decode, look at or edit, and re-encode one body
// at a time: the [*Body] that Decode returns, with its instructions and
// clauses, is valid until the next call of Decode on the same Decoder and
// must not be kept beyond it (use the function [Decode] for bodies that
// outlive the loop). Instructions added by edits are the caller's own and
// are not reused. The zero Decoder is ready to use; a Decoder must not be
// used by two goroutines at once.
type Decoder struct {
	body    Body
	insts   []Instruction
	ptrs    []*Instruction
	targets []*Instruction
	clauses []Clause
	cptrs   []*Clause
	at      []int32
}

// Decode is the function [Decode] into the Decoder's memory.
func (dec *Decoder) Decode(data []byte) (*Body, error) {
	dec.body = Body{}
	dec.clauses = dec.clauses[:0]
	if err := decode(&dec.body, data, dec); err != nil {
		return nil, err
	}
	return &dec.body, nil
}

// decode fills in b from data, taking memory from reuse when it is not
// nil.
func decode(b *Body, data []byte, reuse *Decoder) error {
	if len(data) == 0 {
		return formatErr(0, "empty body")
	}
	var code []byte
	var codeStart int
	more := false
	switch data[0] & 0x3 {
	case flagTinyFormat:
		size := int(data[0] >> 2)
		if 1+size > len(data) {
			return formatErr(0, "tiny header: code size %d past the end (%d bytes)", size, len(data))
		}
		b.MaxStack = 8
		codeStart = 1
		code = data[1 : 1+size]
	case flagFatFormat:
		if len(data) < 12 {
			return formatErr(0, "fat header truncated (%d bytes)", len(data))
		}
		fl := binary.LittleEndian.Uint16(data)
		if hs := int(fl>>12) * 4; hs != 12 {
			return formatErr(1, "fat header size %d, want 12", hs)
		}
		b.Fat = true
		b.Flags = fl & 0x0FFF &^ (flagFatFormat | flagMoreSects)
		more = fl&flagMoreSects != 0
		b.MaxStack = binary.LittleEndian.Uint16(data[2:])
		size := binary.LittleEndian.Uint32(data[4:])
		b.LocalVarSig = metadata.Token(binary.LittleEndian.Uint32(data[8:]))
		if size > maxCodeSize || 12+int(size) > len(data) {
			return formatErr(4, "code size %d past the end (%d bytes)", size, len(data))
		}
		codeStart = 12
		code = data[12 : 12+int(size)]
	default:
		return formatErr(0, "header byte %#x is neither tiny nor fat", data[0])
	}
	d := decoder{code: code, base: codeStart, reuse: reuse}
	defer d.release()
	if err := b.decodeCode(&d); err != nil {
		return err
	}
	pos := codeStart + len(code)
	for more {
		pos = (pos + 3) &^ 3
		if pos >= len(data) {
			return formatErr(pos, "section header past the end")
		}
		kind := data[pos]
		if kind&sectEHTable == 0 || kind&sectOptILTab != 0 {
			return formatErr(pos, "unsupported section kind %#x", kind)
		}
		more = kind&sectMoreSects != 0
		if kind&sectFatFormat != 0 {
			if pos+4 > len(data) {
				return formatErr(pos, "fat section header truncated")
			}
			size := int(binary.LittleEndian.Uint32(data[pos:]) >> 8)
			if size < 4 || pos+size > len(data) || (size-4)%24 != 0 {
				return formatErr(pos, "fat EH section size %d does not fit %d bytes", size, len(data)-pos)
			}
			b.FatClauses = true
			n := (size - 4) / 24
			if len(b.Clauses)+n > maxClauses {
				return formatErr(pos, "more than %d exception clauses", maxClauses)
			}
			cs := d.growClauses(b, n)
			for i := range cs {
				p := pos + 4 + 24*i
				c := data[p : p+24]
				if err := d.clause(&cs[i], p, binary.LittleEndian.Uint32(c),
					binary.LittleEndian.Uint32(c[4:]), binary.LittleEndian.Uint32(c[8:]),
					binary.LittleEndian.Uint32(c[12:]), binary.LittleEndian.Uint32(c[16:]),
					binary.LittleEndian.Uint32(c[20:])); err != nil {
					return err
				}
			}
			pos += size
		} else {
			if pos+4 > len(data) {
				return formatErr(pos, "small section header truncated")
			}
			size := int(data[pos+1])
			if size < 4 || pos+size > len(data) {
				return formatErr(pos, "small EH section size %d does not fit %d bytes", size, len(data)-pos)
			}
			n := (size - 4) / 12
			if len(b.Clauses)+n > maxClauses {
				return formatErr(pos, "more than %d exception clauses", maxClauses)
			}
			cs := d.growClauses(b, n)
			for i := range cs {
				p := pos + 4 + 12*i
				c := data[p : p+12]
				if err := d.clause(&cs[i], p, uint32(binary.LittleEndian.Uint16(c)),
					uint32(binary.LittleEndian.Uint16(c[2:])), uint32(c[4]),
					uint32(binary.LittleEndian.Uint16(c[5:])), uint32(c[7]),
					binary.LittleEndian.Uint32(c[8:])); err != nil {
					return err
				}
			}
			pos += size
		}
	}
	return nil
}

// growClauses appends n zeroed clauses, allocated together, to b.Clauses
// and returns them to be filled in.
func (d *decoder) growClauses(b *Body, n int) []Clause {
	if n == 0 {
		return nil
	}
	if r := d.reuse; r != nil {
		if len(r.clauses) == 0 && n > cap(r.clauses) {
			r.clauses = make([]Clause, 0, max(n, 2*cap(r.clauses)))
			r.cptrs = make([]*Clause, 0, cap(r.clauses))
		}
		if len(r.clauses)+n <= cap(r.clauses) {
			cs := r.clauses[len(r.clauses) : len(r.clauses)+n]
			clear(cs)
			r.clauses = r.clauses[:len(r.clauses)+n]
			if b.Clauses == nil {
				b.Clauses = r.cptrs[:0]
			}
			for i := range cs {
				b.Clauses = append(b.Clauses, &cs[i])
			}
			return cs
		}
	}
	cs := make([]Clause, n)
	if b.Clauses == nil {
		b.Clauses = make([]*Clause, 0, n)
	}
	for i := range cs {
		b.Clauses = append(b.Clauses, &cs[i])
	}
	return cs
}

// decoder holds what decoding a body's code needs beyond the body: the
// code and where it starts in the body (for error offsets), and at, which
// maps each code offset to 1 + the index of the instruction starting
// there (0: none).
type decoder struct {
	code  []byte
	base  int
	at    []int32
	insts []*Instruction
	pool  *[]int32
	reuse *Decoder // nil: allocate afresh
}

// offsetTables recycles decoder.at between bodies.
var offsetTables = sync.Pool{New: func() any { return new([]int32) }}

// maxPooledTable is the largest table returned to offsetTables (code
// offsets); larger ones are left to the garbage collector.
const maxPooledTable = 1 << 16

func (d *decoder) table(n int) []int32 {
	if r := d.reuse; r != nil {
		if cap(r.at) < n {
			r.at = make([]int32, n)
		}
		r.at = r.at[:n]
		clear(r.at)
		return r.at
	}
	d.pool = offsetTables.Get().(*[]int32)
	t := *d.pool
	if cap(t) < n {
		t = make([]int32, n)
	} else {
		t = t[:n]
		clear(t)
	}
	*d.pool = t
	return t
}

func (d *decoder) release() {
	if d.pool == nil {
		return
	}
	if cap(*d.pool) <= maxPooledTable {
		offsetTables.Put(d.pool)
	}
	d.pool, d.at = nil, nil
}

// instAt returns the instruction starting at code offset off, or nil.
func (d *decoder) instAt(off int64) *Instruction {
	if off < 0 || off >= int64(len(d.at)) || d.at[off] == 0 {
		return nil
	}
	return d.insts[d.at[off]-1]
}

// decodeCode reads the instruction stream in two passes: the first finds
// where each instruction starts, checks opcodes and operand lengths and
// counts instructions and switch targets; the second allocates them all
// at once and fills them in, resolving branch targets by code offset.
func (b *Body) decodeCode(d *decoder) error {
	code := d.code
	d.at = d.table(len(code))
	n, nTargets := 0, 0
	for pc := 0; pc < len(code); {
		start := pc
		op := Opcode(code[pc])
		pc++
		if op == 0xFE {
			if pc >= len(code) {
				return formatErr(d.base+start, "two-byte opcode truncated")
			}
			op = 0xFE00 | Opcode(code[pc])
			pc++
		}
		f := op.fact()
		if f.size == 0 {
			return formatErr(d.base+start, "invalid opcode %#x", uint16(op))
		}
		k := f.operand
		size := int(f.size) - (pc - start)
		if size > len(code)-pc {
			return formatErr(d.base+start, "%s: operand past the end of the code", op)
		}
		if k == InlineSwitch {
			c := binary.LittleEndian.Uint32(code[pc:])
			if uint64(c)*4 > uint64(len(code)-pc-4) {
				return formatErr(d.base+start, "switch with %d targets past the end of the code", c)
			}
			nTargets += int(c)
			size += 4 * int(c)
		}
		pc += size
		n++
		d.at[start] = int32(n)
	}
	if n == 0 {
		return nil
	}
	var insts []Instruction
	var ptrs, targets []*Instruction
	if r := d.reuse; r != nil {
		if cap(r.insts) < n {
			r.insts = make([]Instruction, n)
			r.ptrs = make([]*Instruction, n)
		}
		if cap(r.targets) < nTargets {
			r.targets = make([]*Instruction, nTargets)
		}
		insts, ptrs, targets = r.insts[:n:n], r.ptrs[:n:n], r.targets[:nTargets]
		clear(insts)
	} else {
		insts = make([]Instruction, n)
		ptrs = make([]*Instruction, n)
		if nTargets > 0 {
			targets = make([]*Instruction, nTargets)
		}
	}
	for i := range insts {
		ptrs[i] = &insts[i]
	}
	d.insts = ptrs
	pc := 0
	for i := range insts {
		in := &insts[i]
		start := pc
		op := Opcode(code[pc])
		pc++
		if op == 0xFE {
			op = 0xFE00 | Opcode(code[pc])
			pc++
		}
		in.Op, in.Offset = op, start
		f := op.fact()
		k := f.operand
		o := code[pc:]
		var target int64
		extra := 0
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
			target = int64(pc+1) + int64(int8(o[0]))
		case InlineBrTarget:
			target = int64(pc+4) + int64(int32(binary.LittleEndian.Uint32(o)))
		case InlineSwitch:
			c := int(binary.LittleEndian.Uint32(o))
			end := int64(pc + 4 + 4*c)
			ts := targets[:c:c]
			targets = targets[c:]
			for j := range ts {
				t := end + int64(int32(binary.LittleEndian.Uint32(o[4+4*j:])))
				if ts[j] = d.instAt(t); ts[j] == nil {
					return formatErr(d.base+start, "%s: target %#x is not an instruction", op, t)
				}
			}
			in.Targets = ts
			extra = 4 * c
		default: // tokens
			in.Token = metadata.Token(binary.LittleEndian.Uint32(o))
		}
		if k == ShortInlineBrTarget || k == InlineBrTarget {
			if in.Target = d.instAt(target); in.Target == nil {
				return formatErr(d.base+start, "%s: target %#x is not an instruction", op, target)
			}
		}
		pc = start + int(f.size) + extra
	}
	b.Instructions = ptrs
	return nil
}

// clause fills in c from the fields of an EH clause found at byte at.
func (d *decoder) clause(c *Clause, at int, flags, tryOff, tryLen, hOff, hLen, last uint32) error {
	codeSize := uint64(len(d.code))
	at2 := func(off uint64, end bool, what string) (*Instruction, error) {
		if end && off == codeSize {
			return nil, nil
		}
		if off < codeSize {
			if in := d.instAt(int64(off)); in != nil {
				return in, nil
			}
		}
		return nil, formatErr(at, "exception clause: %s %#x is not an instruction boundary", what, off)
	}
	c.Kind = ClauseKind(flags)
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
	return nil
}
