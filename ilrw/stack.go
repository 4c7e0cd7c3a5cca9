package ilrw

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// CallSite is what the stack analysis needs to know about the method a
// call, callvirt, newobj or calli names.
type CallSite struct {
	Params       int  // parameters in the signature (varargs included)
	HasThis      bool // an instance method: the object is popped too (not for newobj)
	ReturnsValue bool // the return type is not void
}

// Resolver tells the stack analysis about the call sites of a body: tok
// is the operand of call, callvirt, newobj (MethodDef, MemberRef or
// MethodSpec) or calli (StandAloneSig).
type Resolver interface {
	// CallSite returns how many stack items a call, callvirt, newobj or
	// calli to tok pops and pushes.
	CallSite(tok metadata.Token) (CallSite, error)
}

// ComputeMaxStack computes the maximum evaluation stack depth of the body
// by following its control flow (branches, switch, exception handlers
// entered with the exception object), sets MaxStack and returns it. It
// fails on code whose stack depth underflows or disagrees at a join.
// Unreachable code is analysed as if entered with an empty stack.
func (b *Body) ComputeMaxStack(r Resolver) (int, error) {
	n, err := b.maxStack(r)
	if err != nil {
		return 0, err
	}
	if n > 0xFFFF {
		return 0, fmt.Errorf("ilrw: max stack %d does not fit the header", n)
	}
	b.MaxStack = uint16(n)
	return n, nil
}

func (b *Body) maxStack(r Resolver) (int, error) {
	idx, err := b.index()
	if err != nil {
		return 0, err
	}
	depth := make([]int, len(b.Instructions))
	for i := range depth {
		depth[i] = -1
	}
	var work []int
	max := 0
	// loose marks code reached only from unreachable code: its depth is a
	// guess (empty stack), so disagreements there are not errors.
	loose := make([]bool, len(b.Instructions))
	phase2 := false
	enter := func(in *Instruction, d int) error {
		i := idx[in]
		switch depth[i] {
		case -1:
			depth[i] = d
			loose[i] = phase2
			work = append(work, i)
		case d:
		default:
			if phase2 || loose[i] {
				return nil
			}
			return fmt.Errorf("ilrw: stack depth at %s (instruction %d) is %d on one path and %d on another", in.Op, i, depth[i], d)
		}
		if d > max {
			max = d
		}
		return nil
	}
	if len(b.Instructions) > 0 {
		if err := enter(b.Instructions[0], 0); err != nil {
			return 0, err
		}
	}
	for _, c := range b.Clauses {
		d := 0
		if c.Kind == ClauseCatch || c.Kind == ClauseFilter {
			d = 1
		}
		if err := enter(c.HandlerStart, d); err != nil {
			return 0, err
		}
		if c.Kind == ClauseFilter && c.FilterStart != nil {
			if err := enter(c.FilterStart, 1); err != nil {
				return 0, err
			}
		}
	}
	next := 0 // for unreachable code
	for {
		for len(work) > 0 {
			i := work[len(work)-1]
			work = work[:len(work)-1]
			in := b.Instructions[i]
			d := depth[i]
			pop, push, err := stackEffect(in, d, r)
			if err != nil {
				return 0, fmt.Errorf("ilrw: %s (instruction %d): %w", in.Op, i, err)
			}
			if d < pop {
				if loose[i] {
					continue
				}
				return 0, fmt.Errorf("ilrw: stack underflow at %s (instruction %d): depth %d, pops %d", in.Op, i, d, pop)
			}
			d += push - pop
			if d > max {
				max = d
			}
			switch in.Op.Operand() {
			case ShortInlineBrTarget, InlineBrTarget:
				td := d
				if in.Op == OpLeave || in.Op == OpLeaveS {
					td = 0
				}
				if err := enter(in.Target, td); err != nil {
					return 0, err
				}
			case InlineSwitch:
				for _, t := range in.Targets {
					if err := enter(t, d); err != nil {
						return 0, err
					}
				}
			}
			switch in.Op.Flow() {
			case FlowBranch, FlowReturn, FlowThrow:
				continue
			}
			if in.Op == OpJmp {
				continue
			}
			if i+1 < len(b.Instructions) {
				if err := enter(b.Instructions[i+1], d); err != nil {
					return 0, err
				}
			}
		}
		for next < len(depth) && depth[next] >= 0 {
			next++
		}
		if next == len(depth) {
			return max, nil
		}
		phase2 = true
		if err := enter(b.Instructions[next], 0); err != nil {
			return 0, err
		}
	}
}

// stackEffect returns what the instruction pops and pushes at depth d.
func stackEffect(in *Instruction, d int, r Resolver) (pop, push int, err error) {
	op := in.Op
	switch op {
	case OpRet:
		return d, 0, nil // ret leaves; nothing after it counts
	case OpCall, OpCallvirt, OpNewobj, OpCalli:
		if r == nil {
			return 0, 0, fmt.Errorf("no resolver for call sites")
		}
		cs, err := r.CallSite(in.Token)
		if err != nil {
			return 0, 0, err
		}
		pop = cs.Params
		if cs.HasThis && op != OpNewobj {
			pop++
		}
		if cs.ReturnsValue || op == OpNewobj {
			push = 1
		}
		if op == OpCalli {
			pop++ // the function pointer
		}
		return pop, push, nil
	}
	pop, push = op.StackPop(), op.StackPush()
	if pop < 0 || push < 0 {
		return 0, 0, fmt.Errorf("variable stack behaviour not handled")
	}
	return pop, push, nil
}
