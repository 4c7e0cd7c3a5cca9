package ilrw

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// InsertAtEntry inserts instructions at the start of the body, before
// everything else: branches back to the old first instruction (a loop at
// offset 0) do not run them again, and they are outside any try block
// that starts there. The code must leave the stack as it found it.
func (b *Body) InsertAtEntry(ins ...*Instruction) error {
	return b.InsertAt(0, ins...)
}

// ReplaceCalls makes every call and callvirt of old a call of repl (which
// must take the same arguments, this included as its first parameter for
// an instance method, and return the same type). It returns the number of
// call sites changed.
func (b *Body) ReplaceCalls(old, repl metadata.Token) int {
	n := 0
	for _, in := range b.Instructions {
		if (in.Op == OpCall || in.Op == OpCallvirt) && in.Token == old {
			in.Op, in.Token = OpCall, repl
			n++
		}
	}
	return n
}

// Emitter defines what rewrites add to a module's metadata; *Module
// (opened writable) is one.
type Emitter interface {
	// AddLocals appends locals to b's signature (see Module.AddLocals).
	AddLocals(b *Body, types ...*metadata.Type) (int, error)
	// TypeSpec returns the TypeSpec token of an encoded type.
	TypeSpec(t []byte) (metadata.Token, error)
}

// Exit describes where WrapExit put the method's return value.
type Exit struct {
	// ReturnLocal is the index of the local holding the return value, -1
	// for a void method. In the finally block it holds the value being
	// returned, or its default when an exception is leaving the method.
	ReturnLocal int
	// ReturnType is the type the body returns (nil for void): the return
	// type of the signature WrapExit was given, which for a runtime-async
	// method must be the unwrapped one (Method.ILSig): T for Task<T> and
	// ValueTask<T>, void for Task and ValueTask. So for such a method the
	// finally sees the T the body produced at its completion, never the
	// Task its callers get.
	ReturnType *metadata.Type
}

// LoadReturnAsObject returns instructions that push the return value as an
// object: boxed for value types and generic parameters, as is for
// reference types, null for void and for types that cannot be boxed
// (byrefs, pointers). Boxing needs a TypeSpec token, so m must be writable.
func (e Exit) LoadReturnAsObject(m Emitter) ([]*Instruction, error) {
	if e.ReturnLocal < 0 {
		return []*Instruction{I(OpLdnull)}, nil
	}
	ref, unboxable := classifyType(e.ReturnType)
	switch {
	case unboxable:
		return []*Instruction{I(OpLdnull)}, nil
	case ref:
		return []*Instruction{LdLoc(e.ReturnLocal)}, nil
	}
	inner, _, _ := e.ReturnType.Unwrap() // the type spec without custom modifiers
	blob, err := inner.Encode()
	if err != nil {
		return nil, err
	}
	spec, err := m.TypeSpec(blob)
	if err != nil {
		return nil, err
	}
	return []*Instruction{LdLoc(e.ReturnLocal), IToken(OpBox, spec)}, nil
}

// LdLoc returns the shortest load of local i.
func LdLoc(i int) *Instruction {
	switch {
	case i <= 3:
		return I(OpLdloc0 + Opcode(i))
	case i <= 255:
		return IInt(OpLdlocS, int64(i))
	}
	return IInt(OpLdloc, int64(i))
}

// StLoc returns the shortest store to local i.
func StLoc(i int) *Instruction {
	switch {
	case i <= 3:
		return I(OpStloc0 + Opcode(i))
	case i <= 255:
		return IInt(OpStlocS, int64(i))
	}
	return IInt(OpStloc, int64(i))
}

// WrapExit wraps the whole body in try/finally so that code runs at every
// exit, normal or exceptional. Every ret becomes a store of the return
// value (into a new local) and a leave to a single exit that loads it and
// returns; tail. prefixes are dropped (no tail call may leave a try). The
// finally block is what hook returns (endfinally is added), given where
// the return value is. sig is the signature of the method being rewritten
// as its body sees it: Method.ILSig, which differs from the declared one
// (Method.Sig) for a runtime-async method (MethodImplAttributes.Async),
// whose ret returns nothing for Task and ValueTask and a T for Task<T>
// and ValueTask<T>; given the declared signature of such a method,
// WrapExit would store a value that is not on the stack (ComputeMaxStack
// then fails with "stack underflow"). m (writable) receives the new local
// signature. InitLocals is set, so the return local reads as its default
// on the exceptional path.
//
// A runtime-async body is one resumable frame: when it suspends at an
// await its state is captured and the frame left without running
// finally blocks, and it resumes (on whatever thread runs the
// continuation) inside the same try. So the finally runs once per call,
// when the body completes or faults, after every await.
func (b *Body) WrapExit(m Emitter, sig *metadata.MethodSig, hook func(Exit) ([]*Instruction, error)) error {
	if len(b.Instructions) == 0 {
		return fmt.Errorf("ilrw: WrapExit: empty body")
	}
	ex := Exit{ReturnLocal: -1}
	if !returnsVoid(sig.Return) {
		ex.ReturnType = sig.Return
		i, err := m.AddLocals(b, sig.Return)
		if err != nil {
			return fmt.Errorf("ilrw: WrapExit: return local: %w", err)
		}
		ex.ReturnLocal = i
	}
	b.Flags |= FlagInitLocals
	for i := 0; i < len(b.Instructions); {
		if in := b.Instructions[i]; in.Op == OpTail {
			if err := b.Remove(in); err != nil {
				return err
			}
			continue
		}
		i++
	}
	finally, err := hook(ex)
	if err != nil {
		return err
	}
	finally = append(finally, I(OpEndfinally))
	var exit []*Instruction
	if ex.ReturnLocal >= 0 {
		exit = append(exit, LdLoc(ex.ReturnLocal))
	}
	exit = append(exit, I(OpRet))
	first := b.Instructions[0]
	var rets []*Instruction
	for _, in := range b.Instructions {
		if in.Op == OpRet {
			rets = append(rets, in)
		}
	}
	for _, in := range rets {
		leave := IBranch(OpLeave, exit[0])
		if ex.ReturnLocal >= 0 {
			if err := b.Replace(in, StLoc(ex.ReturnLocal), leave); err != nil {
				return err
			}
		} else if err := b.Replace(in, leave); err != nil {
			return err
		}
	}
	b.Instructions = append(b.Instructions, finally...)
	b.Instructions = append(b.Instructions, exit...)
	b.Clauses = append(b.Clauses, &Clause{
		Kind:         ClauseFinally,
		TryStart:     first,
		TryEnd:       finally[0],
		HandlerStart: finally[0],
		HandlerEnd:   exit[0],
	})
	b.Fat = true
	return nil
}
