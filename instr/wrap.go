package instr

import (
	"errors"
	"fmt"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// errNotWrappable marks the reasons a method cannot be instrumented that
// are facts about the method, not failures.
var errNotWrappable = errors.New("cannot be instrumented")

// wrapper holds what one wrap needs: the method being rewritten and the
// tokens of the integration's Begin and End in the method's module.
type wrapper struct {
	body      *ilrw.Body
	sig       *metadata.MethodSig // the method's signature
	em        ilrw.Emitter        // the method's module, writable
	id        int32
	args      bool           // Begin receives the arguments (Integration.Args)
	typeTok   metadata.Token // the declaring TypeDef
	valueTy   bool           // the declaring type is a value type
	generic   int            // generic parameters of the declaring type
	static    bool
	byRefLike func(tok metadata.Token) bool
	sink      metadata.Token // Config.Errors' method, 0 if none
	scratch   int            // local for the exception handed to sink
	code      hookCode       // when set, replaces the calls to Begin and End
	async     *asyncPlan     // End at the task's completion (async.go)
	// clauses are those of the code hookCode generated last (nested in
	// the guard the wrap puts around it): taken by takeClauses.
	clauses []*ilrw.Clause
}

// takeClauses returns the clauses hookCode added since the last call.
func (w *wrapper) takeClauses() []*ilrw.Clause {
	c := w.clauses
	w.clauses = nil
	return c
}

// hookCode generates the entry and exit calls of a wrap in place of the
// managed integration's Begin and End (Go hooks: gohook_wrap.go). The entry
// code ends having stored what it keeps; the exit code is guarded and
// followed by the leave like End's call.
type hookCode interface {
	enterCode(w *wrapper) ([]*ilrw.Instruction, error)
	exitCode(w *wrapper, ex ilrw.Exit, exc int) ([]*ilrw.Instruction, error)
}

// beginSig and endSig are the integration contract:
//
//	object Begin(int id, object instance, object[] args)
//	void   End(int id, object state, object returnValue, object exception)
var (
	objectT  = metadata.Primitive(metadata.ElementTypeObject)
	beginSig = &metadata.MethodSig{Return: objectT, Params: []*metadata.Type{
		metadata.Primitive(metadata.ElementTypeI4), objectT, metadata.SZArrayOf(objectT)}}
	endSig = &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid), Params: []*metadata.Type{
		metadata.Primitive(metadata.ElementTypeI4), objectT, objectT, objectT}}
	sinkSig = &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid), Params: []*metadata.Type{
		metadata.Primitive(metadata.ElementTypeI4), objectT}}
)

// kind classifies a type for boxing.
type kind int

const (
	kindRef  kind = iota // a reference: as is
	kindBox              // a value type or generic parameter: box
	kindNull             // cannot be an object (pointer, byref, typedref, byref-like): null
)

func (w *wrapper) classify(t *metadata.Type) kind {
	inner, _, pinned := t.Unwrap()
	if pinned || inner == nil {
		return kindNull
	}
	switch inner.Kind {
	case metadata.ElementTypeString, metadata.ElementTypeObject, metadata.ElementTypeClass,
		metadata.ElementTypeSzarray, metadata.ElementTypeArray:
		return kindRef
	case metadata.ElementTypeGenericinst:
		if inner.Elem == nil {
			return kindNull
		}
		if inner.Elem.Kind == metadata.ElementTypeClass {
			return kindRef
		}
		if w.byRefLike(inner.Elem.Token) {
			return kindNull
		}
		return kindBox
	case metadata.ElementTypeValuetype:
		if w.byRefLike(inner.Token) {
			return kindNull
		}
		return kindBox
	case metadata.ElementTypeByref, metadata.ElementTypePtr, metadata.ElementTypeTypedbyref,
		metadata.ElementTypeFnptr, metadata.ElementTypeVoid, metadata.ElementTypeSentinel,
		metadata.ElementTypeInternal:
		return kindNull
	}
	return kindBox // primitives, Var, Mvar
}

// asObject returns code that turns the value load pushed into an object.
func (w *wrapper) asObject(t *metadata.Type, load []*ilrw.Instruction) ([]*ilrw.Instruction, error) {
	switch w.classify(t) {
	case kindRef:
		return load, nil
	case kindNull:
		return []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull)}, nil
	}
	inner, _, _ := t.Unwrap()
	spec, err := w.spec(inner)
	if err != nil {
		return nil, err
	}
	return append(load, ilrw.IToken(ilrw.OpBox, spec)), nil
}

func (w *wrapper) spec(t *metadata.Type) (metadata.Token, error) {
	blob, err := t.Encode()
	if err != nil {
		return 0, err
	}
	return w.em.TypeSpec(blob)
}

// loadArg returns code that pushes argument a (IL numbering) of type t as
// an object; a by-ref argument gives the value it points at.
func (w *wrapper) loadArg(a int, t *metadata.Type) ([]*ilrw.Instruction, error) {
	inner, _, _ := t.Unwrap()
	ld := ldarg(a)
	if inner != nil && inner.Kind == metadata.ElementTypeByref {
		el, _, _ := inner.Elem.Unwrap()
		k := w.classify(inner.Elem)
		if k == kindNull {
			return []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull)}, nil
		}
		spec, err := w.spec(el)
		if err != nil {
			return nil, err
		}
		load := []*ilrw.Instruction{ld, ilrw.IToken(ilrw.OpLdobj, spec)}
		if k == kindRef {
			return load, nil
		}
		return append(load, ilrw.IToken(ilrw.OpBox, spec)), nil
	}
	return w.asObject(t, []*ilrw.Instruction{ld})
}

func ldarg(a int) *ilrw.Instruction {
	switch {
	case a <= 3:
		return ilrw.I(ilrw.OpLdarg0 + ilrw.Opcode(a))
	case a <= 255:
		return ilrw.IInt(ilrw.OpLdargS, int64(a))
	}
	return ilrw.IInt(ilrw.OpLdarg, int64(a))
}

// loadThis pushes the instance as an object: this for a class, a boxed
// copy for a value type, null for a static method.
func (w *wrapper) loadThis() ([]*ilrw.Instruction, error) {
	if w.static {
		return []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull)}, nil
	}
	if !w.valueTy {
		return []*ilrw.Instruction{ilrw.I(ilrw.OpLdarg0)}, nil
	}
	self := metadata.ValueType(w.typeTok)
	if w.generic > 0 {
		args := make([]*metadata.Type, w.generic)
		for i := range args {
			args[i] = &metadata.Type{Kind: metadata.ElementTypeVar, Index: uint32(i)}
		}
		self = metadata.GenericInst(self, args...)
	}
	if w.byRefLike(w.typeTok) {
		return []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull)}, nil
	}
	spec, err := w.spec(self)
	if err != nil {
		return nil, err
	}
	return []*ilrw.Instruction{ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpLdobj, spec), ilrw.IToken(ilrw.OpBox, spec)}, nil
}

// dropAll returns a filter clause that swallows whatever the code from
// start to filter (exclusive) throws: the filter answers 1 and the handler
// drops the exception and leaves to after. It returns the filter and
// handler code to place right after the protected code.
func dropAll(start, after *ilrw.Instruction) ([]*ilrw.Instruction, *ilrw.Clause) {
	filter := ilrw.I(ilrw.OpPop)
	handler := ilrw.I(ilrw.OpPop)
	code := []*ilrw.Instruction{filter, ilrw.I(ilrw.OpLdcI41), ilrw.I(ilrw.OpEndfilter),
		handler, ilrw.IBranch(ilrw.OpLeave, after)}
	return code, &ilrw.Clause{Kind: ilrw.ClauseFilter, TryStart: start, TryEnd: filter,
		FilterStart: filter, HandlerStart: handler, HandlerEnd: after}
}

// catchAll is dropAll, except that with an error sink the handler hands
// the exception to it (under a dropAll of its own) before leaving. The
// clauses come innermost first.
func (w *wrapper) catchAll(start, after *ilrw.Instruction) ([]*ilrw.Instruction, []*ilrw.Clause) {
	if w.sink == 0 {
		code, cl := dropAll(start, after)
		return code, []*ilrw.Clause{cl}
	}
	filter := ilrw.I(ilrw.OpPop)
	handler := ilrw.StLoc(w.scratch)
	call := []*ilrw.Instruction{ilrw.LdcI4(w.id), ilrw.LdLoc(w.scratch), ilrw.IToken(ilrw.OpCall, w.sink),
		ilrw.IBranch(ilrw.OpLeave, after)}
	inner, innerCl := dropAll(call[0], after)
	code := []*ilrw.Instruction{filter, ilrw.I(ilrw.OpLdcI41), ilrw.I(ilrw.OpEndfilter), handler}
	code = append(code, call...)
	code = append(code, inner...)
	// The handler ends after the inner clause's handler; "after" follows.
	return code, []*ilrw.Clause{innerCl, {Kind: ilrw.ClauseFilter, TryStart: start, TryEnd: filter,
		FilterStart: filter, HandlerStart: handler, HandlerEnd: after}}
}

// endCall is the managed integration's exit code: the call to End (the
// wrap guards it and branches on).
func (w *wrapper) endCall(ex ilrw.Exit, end metadata.Token, state *ilrw.Instruction, exc int) ([]*ilrw.Instruction, error) {
	ret := []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull)}
	if ex.ReturnLocal >= 0 {
		var err error
		if ret, err = w.asObject(ex.ReturnType, []*ilrw.Instruction{ilrw.LdLoc(ex.ReturnLocal)}); err != nil {
			return nil, err
		}
	}
	call := []*ilrw.Instruction{ilrw.LdcI4(w.id), state}
	call = append(call, ret...)
	return append(call, ilrw.LdLoc(exc), ilrw.IToken(ilrw.OpCall, end)), nil
}

// beginCall is the managed integration's entry code: the call to Begin,
// its result stored in the state local.
func (w *wrapper) beginCall(begin metadata.Token, state int) ([]*ilrw.Instruction, error) {
	sig := w.sig
	entry := []*ilrw.Instruction{ilrw.LdcI4(w.id)}
	this, err := w.loadThis()
	if err != nil {
		return nil, err
	}
	entry = append(entry, this...)
	if w.args && len(sig.Params) > 0 {
		objSpec, err := w.spec(objectT)
		if err != nil {
			return nil, err
		}
		entry = append(entry, ilrw.LdcI4(int32(len(sig.Params))), ilrw.IToken(ilrw.OpNewarr, objSpec))
		first := 0
		if !w.static {
			first = 1
		}
		for i, p := range sig.Params {
			ld, err := w.loadArg(first+i, p)
			if err != nil {
				return nil, err
			}
			entry = append(entry, ilrw.I(ilrw.OpDup), ilrw.LdcI4(int32(i)))
			entry = append(entry, ld...)
			entry = append(entry, ilrw.I(ilrw.OpStelemRef))
		}
	} else {
		entry = append(entry, ilrw.I(ilrw.OpLdnull))
	}
	return append(entry, ilrw.IToken(ilrw.OpCall, begin), ilrw.StLoc(state)), nil
}

// wrap rewrites w.m.Body:
//
//	    .try { ldc.i4 id; <this>; <args>; call Begin; stloc state; leave L1 }
//	    filter { pop; ldc.i4.1; endfilter } { pop; leave L1 }
//	L1: .try {
//	      .try { <original body; every ret: stloc ret; leave EXIT> }
//	      filter { stloc exception; ldc.i4.0; endfilter } { pop; rethrow }
//	    } finally {
//	      .try { ldc.i4 id; ldloc state; <ret as object>; ldloc exception; call End; leave L3 }
//	      filter { pop; ldc.i4.1; endfilter } { pop; leave L3 }
//	L3:   endfinally
//	    }
//	EXIT: ldloc ret; ret
//
// The exception filter records the exception leaving the method and
// declines it, so the exception goes on unchanged (no catch, no rethrow
// on the way): End sees it in the finally of the second pass. Begin and
// End run under filters that accept everything, so that what they throw
// stops there.
func (w *wrapper) wrap(begin, end metadata.Token) error {
	b := w.body
	sig := w.sig
	if len(b.Instructions) == 0 {
		return fmt.Errorf("%w: empty body", errNotWrappable)
	}
	switch b.Instructions[len(b.Instructions)-1].Op.Flow() {
	case ilrw.FlowReturn, ilrw.FlowBranch, ilrw.FlowThrow:
	default:
		return fmt.Errorf("%w: the code runs off the end of the body (invalid IL)", errNotWrappable)
	}
	for _, in := range b.Instructions {
		switch in.Op {
		case ilrw.OpJmp:
			return fmt.Errorf("%w: the body ends in jmp, which may not leave a try block", errNotWrappable)
		}
	}
	mod := w.em
	state, err := mod.AddLocals(b, objectT, objectT, objectT)
	if err != nil {
		return err
	}
	exc := state + 1
	w.scratch = state + 2
	if w.async != nil {
		if w.async.task, err = mod.AddLocals(b, metadata.ClassType(w.async.toks.task)); err != nil {
			return err
		}
	}

	// Entry code, built now (argument loads need type specs).
	var entry []*ilrw.Instruction
	if w.code != nil {
		entry, err = w.code.enterCode(w)
	} else {
		entry, err = w.beginCall(begin, state)
	}
	if err != nil {
		return err
	}
	entryClauses := w.takeClauses()
	if w.async != nil {
		if b, ok := w.code.(interface{ asyncBox() []*ilrw.Instruction }); ok {
			w.async.box = b.asyncBox
		} else {
			w.async.box = func() []*ilrw.Instruction { return []*ilrw.Instruction{ilrw.LdLoc(state)} }
		}
	}

	var innerFilter *ilrw.Clause
	var endClauses []*ilrw.Clause
	oldClauses := len(b.Clauses)
	// A region of the body that ends with the code (End == nil) must end
	// where the body ends, not after what the wrap appends.
	type openEnd struct {
		c       *ilrw.Clause
		try, hd bool
	}
	var openEnds []openEnd
	for _, c := range b.Clauses {
		if c.TryEnd == nil || c.HandlerEnd == nil {
			openEnds = append(openEnds, openEnd{c, c.TryEnd == nil, c.HandlerEnd == nil})
		}
	}
	bodyStart := b.Instructions[0]
	err = b.WrapExit(mod, sig, func(ex ilrw.Exit) ([]*ilrw.Instruction, error) {
		var call []*ilrw.Instruction
		var err error
		if w.code != nil {
			call, err = w.code.exitCode(w, ex, exc)
		} else {
			call, err = w.endCall(ex, end, ilrw.LdLoc(state), exc)
		}
		if err != nil {
			return nil, err
		}
		l3 := ilrw.I(ilrw.OpNop)
		if w.async != nil && ex.ReturnLocal >= 0 {
			call = append(w.async.finallyCode(ex, exc, call[0], l3), call...)
		}
		call = append(call, ilrw.IBranch(ilrw.OpLeave, l3))
		guard, cls := w.catchAll(call[0], l3)
		endClauses = append(w.takeClauses(), cls...)
		out := append(call, guard...)
		return append(out, l3), nil
	})
	if err != nil {
		return err
	}
	// WrapExit appended its finally clause last; the finally starts with
	// the End call's code.
	fin := b.Clauses[len(b.Clauses)-1]
	finStart := fin.HandlerStart
	filter := ilrw.StLoc(exc)
	handler := ilrw.I(ilrw.OpPop)
	if err := b.InsertBefore(finStart, filter, ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpEndfilter),
		handler, ilrw.I(ilrw.OpRethrow)); err != nil {
		return err
	}
	// InsertBefore extends a region ending at finStart over the new code:
	// the finally's try now covers the filter and its handler, as wanted.
	innerFilter = &ilrw.Clause{Kind: ilrw.ClauseFilter, TryStart: bodyStart, TryEnd: filter,
		FilterStart: filter, HandlerStart: handler, HandlerEnd: finStart}
	fin.TryEnd = finStart
	for _, e := range openEnds {
		if e.try {
			e.c.TryEnd = filter
		}
		if e.hd {
			e.c.HandlerEnd = filter
		}
	}
	// Order: the body's own clauses, the End guard (inside the finally),
	// the exception filter, the finally.
	clauses := append([]*ilrw.Clause{}, b.Clauses[:oldClauses]...)
	clauses = append(clauses, endClauses...)
	clauses = append(clauses, innerFilter, fin)
	b.Clauses = clauses

	// The Begin call, guarded, before everything.
	entry = append(entry, ilrw.IBranch(ilrw.OpLeave, bodyStart))
	guard, cls := w.catchAll(entry[0], bodyStart)
	entry = append(entry, guard...)
	if err := b.InsertAtEntry(entry...); err != nil {
		return err
	}
	b.Clauses = append(b.Clauses, entryClauses...)
	b.Clauses = append(b.Clauses, cls...)
	return nil
}
