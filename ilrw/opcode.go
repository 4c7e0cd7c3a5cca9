package ilrw

import "fmt"

// Opcode is an IL instruction code: the byte of a one-byte opcode, or
// 0xFE00 | the second byte of a two-byte one. The constants (OpNop,
// OpCall, OpCeq, ...) are generated from the runtime's opcode.def.
type Opcode uint16

// OperandKind says what follows an opcode in the instruction stream
// (ECMA-335 Partition VI, C.2; the names are those of opcode.def).
type OperandKind uint8

// The operand kinds.
const (
	InlineNone          OperandKind = iota // no operand
	ShortInlineVar                         // uint8 argument or local index
	InlineVar                              // uint16 argument or local index
	ShortInlineI                           // int8
	InlineI                                // int32
	InlineI8                               // int64
	ShortInlineR                           // float32
	InlineR                                // float64
	ShortInlineBrTarget                    // int8 branch offset
	InlineBrTarget                         // int32 branch offset
	InlineMethod                           // method token
	InlineField                            // field token
	InlineType                             // type token
	InlineTok                              // type, method or field token (ldtoken)
	InlineString                           // user string token
	InlineSig                              // stand-alone signature token (calli)
	InlineSwitch                           // uint32 count, then count int32 offsets
)

var operandNames = [...]string{"InlineNone", "ShortInlineVar", "InlineVar", "ShortInlineI", "InlineI", "InlineI8", "ShortInlineR", "InlineR",
	"ShortInlineBrTarget", "InlineBrTarget", "InlineMethod", "InlineField", "InlineType", "InlineTok", "InlineString", "InlineSig", "InlineSwitch"}

// String returns the operand kind's ECMA-335 name ("InlineTok", ...).
func (k OperandKind) String() string {
	if int(k) < len(operandNames) {
		return operandNames[k]
	}
	return fmt.Sprintf("OperandKind(%d)", uint8(k))
}

// Size is the operand's size in bytes; for InlineSwitch, the size of the
// count alone.
func (k OperandKind) Size() int {
	if int(k) < len(operandSizes) {
		return int(operandSizes[k])
	}
	return 4
}

var operandSizes = [...]uint8{
	InlineNone: 0, ShortInlineVar: 1, InlineVar: 2, ShortInlineI: 1, InlineI: 4, InlineI8: 8, ShortInlineR: 4, InlineR: 8,
	ShortInlineBrTarget: 1, InlineBrTarget: 4, InlineMethod: 4, InlineField: 4, InlineType: 4, InlineTok: 4, InlineString: 4,
	InlineSig: 4, InlineSwitch: 4,
}

// IsToken reports whether the operand is a metadata token.
func (k OperandKind) IsToken() bool {
	switch k {
	case InlineMethod, InlineField, InlineType, InlineTok, InlineString, InlineSig:
		return true
	}
	return false
}

// FlowControl is what an instruction does to control flow.
type FlowControl uint8

// The kinds of control flow.
const (
	FlowNext       FlowControl = iota // falls through to the next instruction
	FlowBreak                         // break: a debugger trap, then next
	FlowCall                          // a call; execution continues with the next instruction
	FlowReturn                        // ret, endfinally, endfilter: leaves the method or handler
	FlowBranch                        // unconditional branch (br, leave)
	FlowCondBranch                    // conditional branch or switch: target or next
	FlowThrow                         // throw, rethrow
	FlowMeta                          // a prefix to the next instruction
)

var flowNames = [...]string{"Next", "Break", "Call", "Return", "Branch", "CondBranch", "Throw", "Meta"}

// String returns the flow control's name ("Next", "Branch", ...).
func (f FlowControl) String() string {
	if int(f) < len(flowNames) {
		return flowNames[f]
	}
	return fmt.Sprintf("FlowControl(%d)", uint8(f))
}

// opInfo describes an opcode; the tables (oneByteOps, twoByteOps) are
// generated. pop and push count stack items, -1 when they depend on the
// operand (calls, ret).
type opInfo struct {
	name    string
	operand OperandKind
	flow    FlowControl
	pop     int8
	push    int8
	prefix  bool
}

func (o Opcode) info() *opInfo {
	switch {
	case o <= 0xFF:
		return &oneByteOps[o]
	case o&0xFF00 == 0xFE00:
		return &twoByteOps[o&0xFF]
	}
	return &noOp
}

var noOp opInfo

// opFact is what encoding and decoding need of an opcode, packed small:
// its operand kind and its encoded size with the operand (for a switch,
// without the targets). size 0 marks an invalid opcode.
type opFact struct {
	operand OperandKind
	size    uint8
}

// opFacts holds the facts of the one-byte opcodes at their byte and of
// the two-byte ones at 256 + their second byte; built from the generated
// tables.
var opFacts = func() (f [512]opFact) {
	for i := range oneByteOps {
		if in := &oneByteOps[i]; in.name != "" {
			f[i] = opFact{in.operand, uint8(1 + in.operand.Size())}
		}
	}
	for i := range twoByteOps {
		if in := &twoByteOps[i]; in.name != "" {
			f[256+i] = opFact{in.operand, uint8(2 + in.operand.Size())}
		}
	}
	return f
}()

// fact returns o's facts (size 0 when o is not an opcode).
func (o Opcode) fact() opFact {
	i := uint(o)
	if i > 0xFF {
		if i&0xFF00 != 0xFE00 {
			return opFact{}
		}
		i = 256 + i&0xFF
	}
	return opFacts[i]
}

// Valid reports whether o is an instruction of the opcode table.
func (o Opcode) Valid() bool { return o.info().name != "" }

// String returns the ilasm name ("ldc.i4.s"), or a hex form for invalid
// values.
func (o Opcode) String() string {
	if n := o.info().name; n != "" {
		return n
	}
	return fmt.Sprintf("Opcode(%#x)", uint16(o))
}

// Operand is the kind of operand the opcode takes.
func (o Opcode) Operand() OperandKind { return o.info().operand }

// Flow is the opcode's control flow.
func (o Opcode) Flow() FlowControl { return o.info().flow }

// StackPop is the number of stack items the instruction pops, -1 when it
// depends on the operand or the method (call, callvirt, newobj, calli, ret).
func (o Opcode) StackPop() int { return int(o.info().pop) }

// StackPush is the number of stack items the instruction pushes, -1 when
// it depends on the operand (calls).
func (o Opcode) StackPush() int { return int(o.info().push) }

// IsPrefix reports whether the opcode is a prefix (tail., volatile., ...).
func (o Opcode) IsPrefix() bool { return o.info().prefix }

// Size is the encoded size of the opcode itself: 1 or 2 bytes.
func (o Opcode) Size() int {
	if o > 0xFF {
		return 2
	}
	return 1
}

// IsBranch reports whether the operand is a branch target (not switch).
func (o Opcode) IsBranch() bool {
	k := o.Operand()
	return k == InlineBrTarget || k == ShortInlineBrTarget
}

// Long returns the long form of a short branch (br.s → br), or o itself.
func (o Opcode) Long() Opcode {
	if o.Operand() != ShortInlineBrTarget {
		return o
	}
	if l, ok := shortToLong[o]; ok {
		return l
	}
	return o
}

// Short returns the short form of a long branch (br → br.s), or o itself.
func (o Opcode) Short() Opcode {
	for s, l := range shortToLong {
		if l == o {
			return s
		}
	}
	return o
}

var shortToLong = map[Opcode]Opcode{
	OpBrS: OpBr, OpBrfalseS: OpBrfalse, OpBrtrueS: OpBrtrue, OpBeqS: OpBeq, OpBgeS: OpBge, OpBgtS: OpBgt,
	OpBleS: OpBle, OpBltS: OpBlt, OpBneUnS: OpBneUn, OpBgeUnS: OpBgeUn, OpBgtUnS: OpBgtUn, OpBleUnS: OpBleUn,
	OpBltUnS: OpBltUn, OpLeaveS: OpLeave,
}
