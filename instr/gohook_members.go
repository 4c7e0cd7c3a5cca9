//go:build cgo

package instr

import (
	"fmt"
	"strings"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// The members of arguments and results that Go hooks read (GoHooks.Members).
// Each is resolved when the method is wrapped, in the metadata of the
// method's module, into a chain of steps (a property's getter, called with
// callvirt, or an instance field, loaded with ldfld); the wrap reads it
// before the entry's (or exit's) call, each member under a filter of its
// own that accepts every exception, into a local:
//
//	    .try {
//	      ldarg a (ldloc ret)
//	      dup; brfalse NULL; callvirt get_A     (each step)
//	      [box T;] [dup; brfalse NULL;] callvirt Object::ToString   (a value of another kind)
//	      stloc v; leave NEXT
//	NULL: pop; status |= 1<<j; leave NEXT
//	    } filter { pop; ldc.i4.1; endfilter } { pop; status |= 1<<j | 1<<(32+j); leave NEXT }
//	NEXT:
//
// and passes v as an argument of its kind, then the status word.

// memberStep is one name of a path: a getter or a field (a MethodDef or
// FieldDef of the target's module, or a MemberRef to another module's).
type memberStep struct {
	tok    metadata.Token
	field  bool
	static bool           // the first step of a static member: call or ldsfld, nothing loaded before
	typ    *metadata.Type // the member's type, in the target's token space
}

// memberPlan is a member resolved.
type memberPlan struct {
	slot     memberSlot
	steps    []memberStep
	final    *metadata.Type // the last step's type
	toString bool           // passed as its ToString()
	box      bool           // a value type: boxed for ToString
	absent   bool           // an Optional member that did not resolve: null
}

// resolveMembers resolves hooks' members: those of arguments against the
// parameters of sig, those of the result against res (nil: the method
// returns nothing a member can be read of), those of this against this
// (nil: none can be read), static ones from their Type. An Optional
// member that does not resolve is planned as a null, with the reason in
// absent.
func resolveMembers(r *memberResolver, sig *metadata.MethodSig, res, this *metadata.Type, members []Member, nargs int) (in, out []memberPlan, absent []string, err error) {
	for i, m := range members {
		p, err := resolveOne(r, sig, res, this, i, m)
		if err != nil {
			if !m.Optional {
				return nil, nil, nil, err
			}
			absent = append(absent, err.Error())
			p = memberPlan{absent: true, slot: memberSlot{kind: valueKind{kind: KindString}}}
		}
		p.slot.index = i
		if m.Arg == Result {
			out = append(out, p)
		} else {
			in = append(in, p)
		}
	}
	if len(out) > MaxGoResultMembers {
		return nil, nil, nil, fmt.Errorf("instr: %d result members, at most %d", len(out), MaxGoResultMembers)
	}
	if len(in) > 0 && nargs+len(in)+1 > MaxGoArgs {
		return nil, nil, nil, fmt.Errorf("instr: %d arguments and %d argument members: at most %d values in all, with one for the members' status", nargs, len(in), MaxGoArgs)
	}
	return in, out, absent, nil
}

func resolveOne(r *memberResolver, sig *metadata.MethodSig, res, this *metadata.Type, i int, m Member) (memberPlan, error) {
	var t *metadata.Type
	switch {
	case m.Arg == Static:
		p, err := resolveStatic(r, m.Type, m.Path)
		if err != nil {
			return p, fmt.Errorf("instr: member %d (%s of %s): %w", i, m.Path, m.Type, err)
		}
		return p, nil
	case m.Arg == This:
		if this == nil {
			return memberPlan{}, fmt.Errorf("instr: member %d (%s of this): the method is static, or of a struct or a generic type", i, m.Path)
		}
		t = this
	case m.Arg == Result:
		if res == nil {
			return memberPlan{}, fmt.Errorf("instr: member %d (%s of the result): the method returns no object", i, m.Path)
		}
		t = res
	case m.Arg >= 0 && m.Arg < len(sig.Params):
		t = sig.Params[m.Arg]
	default:
		return memberPlan{}, fmt.Errorf("instr: member %d: argument %d: the method has %d parameters", i, m.Arg, len(sig.Params))
	}
	p, err := resolveMember(r, t, m.Path)
	if err != nil {
		return p, fmt.Errorf("instr: member %d (%s of argument %d): %w", i, m.Path, m.Arg, err)
	}
	return p, nil
}

// walkPath resolves a dotted path of members from t (or, with static,
// from the static members of the type at loc): a step for each name, and
// the last one's type.
func walkPath(r *memberResolver, t *metadata.Type, static *typeLoc, path string) ([]memberStep, *metadata.Type, error) {
	var steps []memberStep
	cur := t
	for i, name := range strings.Split(path, ".") {
		var loc typeLoc
		if i == 0 && static != nil {
			loc = *static
		} else {
			var err error
			if loc, err = r.classLoc(cur); err != nil {
				return nil, nil, err
			}
		}
		st, err := findMember(r, loc, name, i == 0 && static != nil)
		if err != nil {
			return nil, nil, err
		}
		steps = append(steps, st)
		cur = st.typ
	}
	return steps, cur, nil
}

func resolveMember(r *memberResolver, t *metadata.Type, path string) (memberPlan, error) {
	if path == "" {
		return memberPlan{}, fmt.Errorf("empty path")
	}
	steps, cur, err := walkPath(r, t, nil, path)
	if err != nil {
		return memberPlan{}, err
	}
	return finishMember(r, steps, cur)
}

// resolveStatic resolves a path from a static property or field of the
// type spec names (Member.Type).
func resolveStatic(r *memberResolver, spec, path string) (memberPlan, error) {
	if path == "" {
		return memberPlan{}, fmt.Errorf("empty path")
	}
	loc, err := r.staticLoc(spec)
	if err != nil {
		return memberPlan{}, err
	}
	steps, cur, err := walkPath(r, nil, &loc, path)
	if err != nil {
		return memberPlan{}, err
	}
	return finishMember(r, steps, cur)
}

func finishMember(r *memberResolver, steps []memberStep, cur *metadata.Type) (memberPlan, error) {
	imp := r.self.im()
	p := memberPlan{steps: steps, final: cur}
	p.slot.kind = goKind(imp, cur)
	switch p.slot.kind.kind {
	case KindObject:
		inner, _, _ := cur.Unwrap()
		if inner == nil {
			return p, fmt.Errorf("no type")
		}
		switch inner.Kind {
		case metadata.ElementTypeClass, metadata.ElementTypeObject, metadata.ElementTypeSzarray, metadata.ElementTypeArray:
		case metadata.ElementTypeValuetype:
			p.box = true
		case metadata.ElementTypeGenericinst:
			p.box = inner.Elem != nil && inner.Elem.Kind == metadata.ElementTypeValuetype
		default:
			return p, fmt.Errorf("its type %s cannot be passed (a pointer, a by-ref or a generic parameter)", ParamName(imp, cur))
		}
		p.toString = true
		p.slot.kind = valueKind{kind: KindString, typ: ParamName(imp, cur)}
	case KindVoid:
		return p, fmt.Errorf("no value")
	}
	return p, nil
}

// findMember finds the property (with a getter) or field name of the
// class at loc or of its base types, instance members or, with static,
// static ones.
func findMember(r *memberResolver, loc typeLoc, name string, static bool) (memberStep, error) {
	start := r.typeName(loc)
	kind := "instance"
	if static {
		kind = "static"
	}
	for depth := 0; depth < 64; depth++ {
		imp := loc.sc.im()
		props, err := imp.Properties(loc.td)
		if err != nil {
			return memberStep{}, err
		}
		for _, pt := range props {
			pi, err := imp.Property(pt)
			if err != nil || pi.Name != name {
				continue
			}
			if pi.Getter.IsNil() {
				return memberStep{}, fmt.Errorf("property %s has no getter", name)
			}
			mi, err := imp.Method(pi.Getter)
			if err != nil {
				return memberStep{}, err
			}
			if (mi.Flags&metadata.MdStatic != 0) != static {
				return memberStep{}, fmt.Errorf("property %s is not %s", name, kind)
			}
			acc := mi.Flags & metadata.MdMemberAccessMask
			if err := r.accessible(loc, acc == metadata.MdPublic, acc == metadata.MdAssem || acc == metadata.MdFamOrAssem); err != nil {
				return memberStep{}, fmt.Errorf("the getter of %s is %w", name, err)
			}
			sig, err := metadata.ParseMethodSig(mi.Sig)
			if err != nil {
				return memberStep{}, err
			}
			if len(sig.Params) != 0 || sig.Return == nil {
				return memberStep{}, fmt.Errorf("property %s is an indexer", name)
			}
			tok, err := r.ref(loc, pi.Getter, mi.Name, sig, nil)
			if err != nil {
				return memberStep{}, fmt.Errorf("property %s of %s: %w", name, loc.sc.name, err)
			}
			typ, err := r.translate(loc.sc, sig.Return)
			if err != nil {
				return memberStep{}, fmt.Errorf("property %s of %s: %w", name, loc.sc.name, err)
			}
			return memberStep{tok: tok, static: static, typ: typ}, nil
		}
		fields, err := imp.Fields(loc.td)
		if err != nil {
			return memberStep{}, err
		}
		for _, ft := range fields {
			fi, err := imp.Field(ft)
			if err != nil || fi.Name != name {
				continue
			}
			if (fi.Flags&metadata.FdStatic != 0) != static {
				return memberStep{}, fmt.Errorf("field %s is not %s", name, kind)
			}
			acc := fi.Flags & metadata.FdFieldAccessMask
			if err := r.accessible(loc, acc == metadata.FdPublic, acc == metadata.FdAssembly || acc == metadata.FdFamOrAssem); err != nil {
				return memberStep{}, fmt.Errorf("field %s is %w", name, err)
			}
			fs, err := metadata.ParseFieldSig(fi.Sig)
			if err != nil {
				return memberStep{}, err
			}
			tok, err := r.ref(loc, ft, name, nil, fs)
			if err != nil {
				return memberStep{}, fmt.Errorf("field %s of %s: %w", name, loc.sc.name, err)
			}
			typ, err := r.translate(loc.sc, fs.Type)
			if err != nil {
				return memberStep{}, fmt.Errorf("field %s of %s: %w", name, loc.sc.name, err)
			}
			return memberStep{tok: tok, field: true, static: static, typ: typ}, nil
		}
		next, ok := r.base(loc)
		if !ok {
			break
		}
		loc = next
	}
	return memberStep{}, fmt.Errorf("%s has no %s property or field %s (nor its base types)", start, kind, name)
}

// memberCode returns the code that reads the members of plans from what
// load's instruction (a new one per call) pushes, each into a local of its own, under its own filter, and
// sets the bits of the status local; the values to pass are pushed by the
// code of the second result (widened as arguments), the status word
// last. Call it where the stack is empty.
func (gw *goWrap) memberCode(w *wrapper, plans []memberPlan, load func() *ilrw.Instruction, pinned *[]int) (read, push []*ilrw.Instruction, err error) {
	return gw.memberCodeEach(w, plans, func(int) []*ilrw.Instruction { return []*ilrw.Instruction{load()} }, pinned)
}

// memberCodeEach is memberCode with the load of each plan's object.
func (gw *goWrap) memberCodeEach(w *wrapper, plans []memberPlan, load func(j int) []*ilrw.Instruction, pinned *[]int) (read, push []*ilrw.Instruction, err error) {
	status, err := w.em.AddLocals(w.body, metadata.Primitive(metadata.ElementTypeI8))
	if err != nil {
		return nil, nil, err
	}
	read = []*ilrw.Instruction{ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpConvI8), ilrw.StLoc(status)}
	setBits := func(bits uint64) []*ilrw.Instruction {
		return []*ilrw.Instruction{ilrw.LdLoc(status), ilrw.IInt(ilrw.OpLdcI8, int64(bits)), ilrw.I(ilrw.OpOr), ilrw.StLoc(status)}
	}
	// Static members that start with the same static property or field
	// (the current activity's, say) read it once: the first into a local,
	// the others from it (null if the first read threw).
	shared := map[metadata.Token]int{}
	for j, p := range plans {
		lt := p.final
		if p.toString || p.absent {
			lt = metadata.Primitive(metadata.ElementTypeString)
		}
		v, err := w.em.AddLocals(w.body, lt)
		if err != nil {
			return nil, nil, err
		}
		if p.absent {
			// Null (the local's initial value), marked so.
			read = append(read, setBits(1<<j)...)
			ld, err := gw.widen(w, p.slot.kind, lt, []*ilrw.Instruction{ilrw.LdLoc(v)}, pinned)
			if err != nil {
				return nil, nil, err
			}
			push = append(push, ld...)
			continue
		}
		next := ilrw.I(ilrw.OpNop)
		null := ilrw.I(ilrw.OpPop)
		var code []*ilrw.Instruction
		nullUsed := false
		if !p.steps[0].static {
			code = append(code, load(j)...)
		}
		for _, st := range p.steps {
			if st.static {
				// Nothing to check: the first step reads a static member
				// (a type's initializer that throws is caught below).
				if loc, ok := shared[st.tok]; ok {
					code = append(code, ilrw.LdLoc(loc))
					continue
				}
				if st.field {
					code = append(code, ilrw.IToken(ilrw.OpLdsfld, st.tok))
				} else {
					code = append(code, ilrw.IToken(ilrw.OpCall, st.tok))
				}
				if len(p.steps) > 1 && sharesStatic(plans[j+1:], st.tok) {
					loc, err := w.em.AddLocals(w.body, st.typ)
					if err != nil {
						return nil, nil, err
					}
					shared[st.tok] = loc
					code = append(code, ilrw.I(ilrw.OpDup), ilrw.StLoc(loc))
				}
				continue
			}
			code = append(code, ilrw.I(ilrw.OpDup), ilrw.IBranch(ilrw.OpBrfalse, null))
			nullUsed = true
			if st.field {
				code = append(code, ilrw.IToken(ilrw.OpLdfld, st.tok))
			} else {
				code = append(code, ilrw.IToken(ilrw.OpCallvirt, st.tok))
			}
		}
		if p.toString {
			if p.box {
				inner, _, _ := p.final.Unwrap()
				spec, err := w.spec(inner)
				if err != nil {
					return nil, nil, err
				}
				code = append(code, ilrw.IToken(ilrw.OpBox, spec))
			} else {
				code = append(code, ilrw.I(ilrw.OpDup), ilrw.IBranch(ilrw.OpBrfalse, null))
				nullUsed = true
			}
			code = append(code, ilrw.IToken(ilrw.OpCallvirt, gw.toks.toString))
		}
		code = append(code, ilrw.StLoc(v), ilrw.IBranch(ilrw.OpLeave, next))
		if nullUsed {
			// A static member read alone has no null on the way: no
			// branch reaches this, and no unreachable code is left.
			code = append(code, null)
			code = append(code, setBits(1<<j)...)
			code = append(code, ilrw.IBranch(ilrw.OpLeave, next))
		}
		filter := ilrw.I(ilrw.OpPop)
		handler := ilrw.I(ilrw.OpPop)
		code = append(code, filter, ilrw.I(ilrw.OpLdcI41), ilrw.I(ilrw.OpEndfilter), handler)
		code = append(code, setBits(1<<j|1<<(memberThrewShift+j))...)
		code = append(code, ilrw.IBranch(ilrw.OpLeave, next), next)
		w.clauses = append(w.clauses, &ilrw.Clause{Kind: ilrw.ClauseFilter, TryStart: code[0], TryEnd: filter,
			FilterStart: filter, HandlerStart: handler, HandlerEnd: next})
		read = append(read, code...)
		ld, err := gw.widen(w, p.slot.kind, lt, []*ilrw.Instruction{ilrw.LdLoc(v)}, pinned)
		if err != nil {
			return nil, nil, err
		}
		push = append(push, ld...)
	}
	push = append(push, ilrw.LdLoc(status))
	return read, push, nil
}

// sharesStatic tells whether a plan of plans starts with the static
// member tok and reads further.
func sharesStatic(plans []memberPlan, tok metadata.Token) bool {
	for _, p := range plans {
		if !p.absent && len(p.steps) > 1 && p.steps[0].static && p.steps[0].tok == tok {
			return true
		}
	}
	return false
}

// actionPlan is an action (GoHooks.Actions) resolved: the steps to its
// object and its method.
type actionPlan struct {
	steps  []memberStep // from the argument, or (static) from a static member
	method metadata.Token
	kinds  []ParamKind
	ret    bool // the method returns a value: popped
	absent bool // an Optional action that did not resolve: never run
}

// resolveActions resolves hooks' actions against the parameters of sig
// and this (nil: the instance cannot be acted on); absent gives why each
// Optional action that did not resolve is left out.
func resolveActions(r *memberResolver, sig *metadata.MethodSig, this, res *metadata.Type, actions []Action) (out []actionPlan, absent []string, err error) {
	for i, a := range actions {
		p, err := resolveActionAt(r, sig, this, res, a)
		if err != nil {
			err = fmt.Errorf("instr: action %d (%s.%s of %s): %w", i, a.Path, a.Method, actionOf(a), err)
			if !a.Optional {
				return nil, nil, err
			}
			absent = append(absent, err.Error())
			p = actionPlan{absent: true}
		}
		out = append(out, p)
	}
	return out, absent, nil
}

func actionOf(a Action) string {
	switch a.Arg {
	case This:
		return "this"
	case Static:
		return a.Type
	case Result:
		return "the value returned"
	}
	return fmt.Sprintf("argument %d", a.Arg)
}

func resolveActionAt(r *memberResolver, sig *metadata.MethodSig, this, res *metadata.Type, a Action) (actionPlan, error) {
	p := actionPlan{kinds: a.kinds()}
	var cur *metadata.Type
	switch {
	case a.Arg == Static:
		loc, err := r.staticLoc(a.Type)
		if err != nil {
			return p, err
		}
		if p.steps, cur, err = walkPath(r, nil, &loc, a.Path); err != nil {
			return p, err
		}
	case a.Arg == This:
		if this == nil {
			return p, fmt.Errorf("the method is static, or of a struct or a generic type")
		}
		cur = this
	case a.Arg == Result:
		if res == nil {
			return p, fmt.Errorf("the method returns nothing")
		}
		cur = res
	case a.Arg >= 0 && a.Arg < len(sig.Params):
		cur = sig.Params[a.Arg]
	default:
		return p, fmt.Errorf("the method has %d parameters", len(sig.Params))
	}
	if a.Arg != Static && a.Path != "" {
		steps, last, err := walkPath(r, cur, nil, a.Path)
		if err != nil {
			return p, err
		}
		p.steps, cur = steps, last
	}
	loc, err := r.classLoc(cur)
	if err != nil {
		return p, err
	}
	p.method, p.ret, err = findActionMethod(r, loc, a.Method, p.kinds)
	return p, err
}

// findActionMethod finds the instance method name of the class at loc or
// of its base types taking parameters of kinds, public (or internal, in
// the target's module), not generic.
func findActionMethod(r *memberResolver, loc typeLoc, name string, kinds []ParamKind) (metadata.Token, bool, error) {
	start := r.typeName(loc)
	var seen []string
	for depth := 0; depth < 64; depth++ {
		imp := loc.sc.im()
		mds, err := imp.MethodsWithName(loc.td, name)
		if err != nil {
			return 0, false, err
		}
		for _, md := range mds {
			mi, err := imp.Method(md)
			if err != nil || mi.Name != name {
				continue
			}
			sig, err := metadata.ParseMethodSig(mi.Sig)
			if err != nil {
				return 0, false, err
			}
			why := ""
			switch {
			case mi.Flags&metadata.MdStatic != 0:
				why = "static"
			case sig.Generic():
				why = "generic"
			case len(sig.Params) != len(kinds):
				why = fmt.Sprintf("%d parameters", len(sig.Params))
			default:
				acc := mi.Flags & metadata.MdMemberAccessMask
				if err := r.accessible(loc, acc == metadata.MdPublic, acc == metadata.MdAssem || acc == metadata.MdFamOrAssem); err != nil {
					why = err.Error()
				}
				for j, pt := range sig.Params {
					if !r.paramIs(loc.sc, pt, kinds[j]) {
						why = fmt.Sprintf("parameter %d not a %s", j, kinds[j])
						break
					}
				}
			}
			if why != "" {
				seen = append(seen, why)
				continue
			}
			tok, err := r.ref(loc, md, name, sig, nil)
			if err != nil {
				return 0, false, fmt.Errorf("method %s of %s: %w", name, loc.sc.name, err)
			}
			ret, _, _ := sig.Return.Unwrap()
			return tok, ret != nil && ret.Kind != metadata.ElementTypeVoid, nil
		}
		next, ok := r.base(loc)
		if !ok {
			break
		}
		loc = next
	}
	msg := fmt.Sprintf("%s has no instance method %s(%s) (nor its base types)", start, name, kindList(kinds))
	if len(seen) > 0 {
		msg += "; methods of that name seen: " + strings.Join(seen, ", ")
	}
	return 0, false, fmt.Errorf("%s", msg)
}

func kindList(kinds []ParamKind) string {
	var b strings.Builder
	for i, k := range kinds {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(k.String())
	}
	return b.String()
}

// paramIs tells whether parameter type t, in scope s's tokens, is of kind
// k: the primitive, or for the integers an enum whose underlying type it
// is.
func (r *memberResolver) paramIs(s *memberScope, t *metadata.Type, k ParamKind) bool {
	t, mods, _ := t.Unwrap()
	for _, m := range mods {
		if m.Kind == metadata.ElementTypeCmodReqd {
			return false // e.g. an in parameter's
		}
	}
	if t == nil {
		return false
	}
	want := [...]metadata.ElementType{ParamString: metadata.ElementTypeString, ParamBool: metadata.ElementTypeBoolean,
		ParamInt32: metadata.ElementTypeI4, ParamInt64: metadata.ElementTypeI8,
		ParamFloat64: metadata.ElementTypeR8, ParamFloat32: metadata.ElementTypeR4}[k]
	if t.Kind == want {
		return true
	}
	if t.Kind != metadata.ElementTypeValuetype || (k != ParamInt32 && k != ParamInt64) {
		return false
	}
	u, ok := r.enumUnderlying(s, t.Token)
	return ok && u == want
}

// enumUnderlying returns the underlying type of the enum that tok (a
// TypeDef or TypeRef of scope s) names; false when it is not an enum.
func (r *memberResolver) enumUnderlying(s *memberScope, tok metadata.Token) (metadata.ElementType, bool) {
	var loc typeLoc
	switch metadata.TokenType(tok.Table()) {
	case metadata.MdtTypeDef:
		loc = typeLoc{s, tok}
	case metadata.MdtTypeRef:
		l, err := r.refLoc(s, tok, "")
		if err != nil {
			return 0, false
		}
		loc = l
	default:
		return 0, false
	}
	// The base type by name: a TypeRef of a module read from its file
	// (not loaded yet) cannot be resolved, and only System.Enum's name
	// matters here.
	imp := loc.sc.im()
	if info, err := imp.TypeDef(loc.td); err != nil || baseName(imp, info) != "System.Enum" {
		return 0, false
	}
	return valueField(imp, loc.td)
}
