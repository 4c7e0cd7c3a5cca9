//go:build cgo

package instr

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// The managed half of Go hooks. In each module holding a target the SDK
// defines a type Clrprof.Instr.GoHooks with the P/Invoke methods
//
//	static long Enter(int id[, long a0 ... long a7])  -> clrprof_gohook_enterN
//	static void Exit(int id, long state, long ret, long exc, long type) -> clrprof_gohook_exit
//
// (overloads by arity, each bound to its own export). The wrap (wrap.go)
// calls Enter where a managed integration's Begin goes and Exit where End
// goes. Every value crosses as 64 bits: integers, bool, char and enums
// widened, floating point as the bits of a double, strings as the address
// of the string held in a pinned local for the duration of the call (the
// GC cannot move it; the Go side copies it at once), references of other
// kinds not at all. For the exception leaving the method Exit receives 1
// and its type's FullName (GetType().FullName, computed in the wrap: the
// profiling API's GetClassFromObject refuses calls from a P/Invoke).

const goHooksType = "Clrprof.Instr.GoHooks"

// testHooks is set in test builds (testhooks.go).
var testHooks bool

// goIntegration stands for the Integration of a Go rule: alreadyWrapped
// recognizes a wrapped body by its first call, Clrprof.Instr.GoHooks::Enter.
var goIntegration = Integration{Type: goHooksType, Begin: "Enter", End: "Exit"}

// goHooksQType holds the P/Invokes of deferred rules (bound to
// clrprof_gohook_q_*, gohook_deferred.c).
const goHooksQType = "Clrprof.Instr.GoHooksDeferred"

var goQIntegration = Integration{Type: goHooksQType, Begin: "Enter", End: "Exit"}

// checkRule checks a rule's integration (a Go rule needs none).
func checkRule(r *Rule) error {
	if r.Go != nil {
		if r.Go.Enter == nil && r.Go.Exit == nil {
			return fmt.Errorf("instr: GoHooks needs Enter or Exit")
		}
		if err := checkActions(r.Go); err != nil {
			return err
		}
		r.Integration = goIntegration
		if r.Go.Deferred {
			r.Integration = goQIntegration
		}
		return nil
	}
	return checkIntegration(&r.Integration)
}

// goTokens are the P/Invoke methods of one module.
type goTokens struct {
	enter    [MaxGoArgs + 1]metadata.Token
	exit     metadata.Token
	exitm    metadata.Token // Exit with the result members (clrprof_gohook_exitm)
	getType  metadata.Token // System.Object::GetType
	toString metadata.Token // System.Object::ToString
	fullName metadata.Token // System.Type::get_FullName
	// Actions (synchronous entries only): the P/Invokes taking and
	// freeing a call's block, and System.String::.ctor(char*, int, int).
	actTake  metadata.Token
	actDone  metadata.Token
	actThrew metadata.Token
	strCtor  metadata.Token
}

type goModKey struct {
	mod      profiler.ModuleID
	deferred bool
}

var goModules struct {
	sync.Mutex
	m map[goModKey]*goTokens
}

const (
	etI8   = 0x0a
	etPtr  = 0x0f
	etChar = 0x03
)

// goPinvokes defines (once per module) the Clrprof.Instr.GoHooks type and
// its P/Invoke methods.
func goPinvokes(m *ilrw.Method, deferred bool) (*goTokens, error) {
	goModules.Lock()
	defer goModules.Unlock()
	typeName, prefix := goHooksType, "clrprof_gohook_"
	if deferred {
		typeName, prefix = goHooksQType, "clrprof_gohook_q_"
	}
	key := goModKey{m.ModuleID, deferred}
	if t := goModules.m[key]; t != nil {
		// A ModuleID can be reused after a collectible module unloads:
		// the cached tokens must still name this module's P/Invokes.
		if m.Module.TokenName(t.exit) == typeName+"::Exit" {
			return t, nil
		}
		delete(goModules.m, key)
	}
	mod := m.Module
	scope, err := mod.AssemblyRef(coreLib) // also opens the module for writing
	if err != nil {
		return nil, err
	}
	object, err := mod.TypeRef(scope, "System", "Object")
	if err != nil {
		return nil, err
	}
	td, err := mod.Emit.DefineTypeDef(typeName,
		metadata.TdNotPublic|metadata.TdClass|metadata.TdAbstract|metadata.TdSealed|metadata.TdBeforeFieldInit, object, nil)
	if err != nil {
		return nil, fmt.Errorf("TypeDef %s: %w", typeName, err)
	}
	typeT, err := mod.TypeRef(scope, "System", "Type")
	if err != nil {
		return nil, err
	}
	if testHooks && os.Getenv("CLRPROF_GOHOOK_ENTRY") == "c" {
		prefix = "clrprof_gohook_c_"
	}
	t := &goTokens{}
	if t.getType, err = mod.MemberRef(object, "GetType", classSig([]byte{sigHasThis, 0}, typeT)); err != nil {
		return nil, err
	}
	if t.fullName, err = mod.MemberRef(typeT, "get_FullName", []byte{sigHasThis, 0, etString}); err != nil {
		return nil, err
	}
	if t.toString, err = mod.MemberRef(object, "ToString", []byte{sigHasThis, 0, etString}); err != nil {
		return nil, err
	}
	for n := 0; n <= MaxGoArgs; n++ {
		sig := []byte{0, byte(n + 1), etI8, etI4}
		for i := 0; i < n; i++ {
			sig = append(sig, etI8)
		}
		if t.enter[n], err = (pinvoke{Name: "Enter", Sig: sig, Entry: fmt.Sprintf("%senter%d", prefix, n)}).define(mod, td); err != nil {
			return nil, err
		}
	}
	if t.exit, err = (pinvoke{Name: "Exit", Sig: []byte{0, 5, etVoid, etI4, etI8, etI8, etI8, etI8}, Entry: prefix + "exit"}).define(mod, td); err != nil {
		return nil, err
	}
	exitm := []byte{0, 11, etVoid, etI4, etI8, etI8, etI8, etI8, etI4, etI8, etI8, etI8, etI8, etI8}
	if t.exitm, err = (pinvoke{Name: "ExitM", Sig: exitm, Entry: prefix + "exitm"}).define(mod, td); err != nil {
		return nil, err
	}
	if !deferred {
		if t.actTake, err = (pinvoke{Name: "ActTake", Sig: []byte{0, 0, etI}, Entry: "clrprof_gohook_act_take"}).define(mod, td); err != nil {
			return nil, err
		}
		if t.actDone, err = (pinvoke{Name: "ActDone", Sig: []byte{0, 1, etVoid, etI}, Entry: "clrprof_gohook_act_done"}).define(mod, td); err != nil {
			return nil, err
		}
		if t.actThrew, err = (pinvoke{Name: "ActThrew", Sig: []byte{0, 2, etVoid, etI, etI}, Entry: "clrprof_gohook_act_threw"}).define(mod, td); err != nil {
			return nil, err
		}
		str, err := mod.TypeRef(scope, "System", "String")
		if err != nil {
			return nil, err
		}
		if t.strCtor, err = mod.MemberRef(str, ".ctor", []byte{sigHasThis, 3, etVoid, etPtr, etChar, etI4, etI4}); err != nil {
			return nil, err
		}
	}
	if goModules.m == nil {
		goModules.m = map[goModKey]*goTokens{}
	}
	goModules.m[key] = t
	return t, nil
}

// goWrap builds the entry and exit code of a Go-hooked method.
type goWrap struct {
	id    int32 // index in goTable
	pass  int32 // what the wrap passes the entries: id, or with Deferred qidinfo's word
	toks  *goTokens
	ge    *goEntry
	state int            // long: what Enter returned
	dbl   int            // double: scratch for floating point bits
	plan  *asyncPlan     // the target returns a task: End at its completion
	done  metadata.Token // in the exit code of DoneN (async.go): Task::get_IsCanceled
	in    []memberPlan   // the argument members
	out   []memberPlan   // the result members
	acts  []actionPlan   // the actions (GoHooks.Actions)
}

// asyncBox pushes what DoneN gets as its state: Enter's result, boxed.
func (gw *goWrap) asyncBox() []*ilrw.Instruction {
	return []*ilrw.Instruction{ilrw.LdLoc(gw.state), ilrw.IToken(ilrw.OpBox, gw.plan.toks.int64Box)}
}

// hasActs tells whether the hooks have actions of that end
// (Action.AtExit): the wrap then takes their block there.
func (gw *goWrap) hasActs(atExit bool) bool {
	for i := range gw.acts {
		if gw.ge.hooks.Actions[i].AtExit == atExit {
			return true
		}
	}
	return false
}

// Bits of Exit's exception argument beside 1 (an exception).
const (
	exitAsync    = 2 // Exit runs at the completion of the task the method returned
	exitCanceled = 4 // the task was cancelled
)

func (in *Instrumenter) wrapGo(m *ilrw.Method, e *entry) error {
	async, err := m.Async()
	if err != nil {
		return err
	}
	// A runtime-async call can exit on another thread than the one it
	// entered on (it resumes wherever its continuation runs); the
	// deferred rings pair an exit with its enter in the order of one
	// thread's records, so such a method is wrapped with the synchronous
	// entries even under a Deferred rule (with Timestamps, the hooks get
	// the times read in Go).
	// A target returning a task ends on the thread that completes it
	// (async.go): likewise.
	plan, err := planAsync(m, e)
	if err != nil {
		return err
	}
	deferred := e.goh.Deferred && !async && plan == nil
	toks, err := goPinvokes(m, deferred)
	if err != nil {
		return err
	}
	sig, err := m.ILSig() // a runtime-async method's return unwrapped
	if err != nil {
		return err
	}
	ge := &goEntry{hooks: e.goh, method: e.ID, name: e.Name, stamp: e.goh.Deferred && e.goh.Timestamps && !deferred}
	imp := m.Module.Import
	if e.goh.Args {
		for i, p := range sig.Params {
			if i == MaxGoArgs {
				break
			}
			ge.args = append(ge.args, goKind(imp, p))
		}
	}
	ge.ret = valueKind{kind: KindVoid}
	if r, _, _ := sig.Return.Unwrap(); r != nil && r.Kind != metadata.ElementTypeVoid {
		ge.ret = goKind(imp, sig.Return)
	}
	if plan != nil {
		switch {
		case plan.resultOf != 0:
			ge.ret = goKind(imp, plan.res)
		case plan.res != nil:
			ge.ret = valueKind{kind: KindObject, typ: ParamName(imp, plan.res)}
		default:
			ge.ret = valueKind{kind: KindVoid}
		}
	}
	gw := &goWrap{toks: toks, ge: ge, plan: plan}
	var mr *memberResolver
	if len(e.goh.Members) > 0 || len(e.goh.Actions) > 0 {
		mr = newMemberResolver(in.info, in.typeResolver(), m.Module)
		defer mr.release()
	}
	// What Exit gets as the value (the task's result for a target ending
	// at its task's completion), for Result members and actions, and the
	// instance (nil: not a class's instance method) for This.
	var res, this *metadata.Type
	switch {
	case plan != nil:
		if plan.resultOf != 0 {
			res = plan.res
		}
	default:
		if r, _, _ := sig.Return.Unwrap(); r != nil && r.Kind != metadata.ElementTypeVoid {
			res = sig.Return
		}
	}
	if !e.static && !e.valueTy && e.generic == 0 {
		this = metadata.ClassType(e.typeTok)
	}
	if len(e.goh.Members) > 0 {
		var absent []string
		if gw.in, gw.out, absent, err = resolveMembers(mr, sig, res, this, e.goh.Members, len(ge.args)); err != nil {
			return err
		}
		in.mu.Lock()
		e.absent = absent
		in.mu.Unlock()
		ge.nmem = len(e.goh.Members)
		for _, p := range gw.in {
			ge.inMem = append(ge.inMem, p.slot)
		}
		for _, p := range gw.out {
			ge.outMem = append(ge.outMem, p.slot)
		}
	}
	if len(e.goh.Actions) > 0 {
		if deferred {
			// checkActions refuses this when the rule is added.
			return fmt.Errorf("instr: GoHooks.Actions need synchronous hooks")
		}
		// Actions at exit run in the wrap's exit code, where the
		// arguments and the value returned are at hand: not in DoneN,
		// which runs at a task's completion with the task alone (so with
		// a plan, res is never an action's).
		for i, a := range e.goh.Actions {
			if a.AtExit && plan != nil {
				return fmt.Errorf("instr: action %d runs at exit, and this method's Exit runs when the task it returns completes, where its arguments are gone: "+
					"act at entry, or set Rule.EndAtReturn to run Exit (and the action) when the method returns its task", i)
			}
		}
		var absent []string
		if gw.acts, absent, err = resolveActions(mr, sig, this, res, e.goh.Actions); err != nil {
			return err
		}
		if len(absent) > 0 {
			in.mu.Lock()
			e.absent = append(e.absent, absent...)
			in.mu.Unlock()
		}
		ge.actThrew = make([]atomic.Int64, len(e.goh.Actions))
		ge.actFirst = make([]atomic.Pointer[string], len(e.goh.Actions))
	}
	w := &wrapper{body: m.Body, sig: sig, em: m.Module, id: e.ID, typeTok: e.typeTok, valueTy: e.valueTy,
		generic: e.generic, static: e.static, code: gw, async: plan}
	if s := in.cfg.Errors; s != nil {
		ns, name := metadata.SplitTypeName(s.Type)
		if w.sink, err = m.Module.ExternalMethod(s.Assembly, ns, name, s.Method, sinkSig); err != nil {
			return err
		}
	}
	w.byRefLike = func(tok metadata.Token) bool { return in.isByRefLike(m, tok) }
	// The entry is published before the code that uses its index exists.
	gw.id = addGoEntry(ge)
	gw.pass = gw.id
	if deferred {
		if gw.pass, err = qidinfo(gw.id, ge); err != nil {
			return err
		}
		startDeferred()
	}
	if plan != nil {
		// DoneN: Exit(pass, state, result, exception | flags, type), the
		// state boxed in ldarg.1.
		err := plan.defineDone(m, w, func(w2 *wrapper, ex ilrw.Exit, exc int) ([]*ilrw.Instruction, error) {
			done := *gw
			done.plan, done.done = nil, plan.toks.isCanceled
			st, err := w2.em.AddLocals(w2.body, metadata.Primitive(metadata.ElementTypeI8), metadata.Primitive(metadata.ElementTypeR8))
			if err != nil {
				return nil, err
			}
			done.state, done.dbl = st, st+1
			code := []*ilrw.Instruction{ilrw.I(ilrw.OpLdarg1), ilrw.IToken(ilrw.OpUnboxAny, plan.toks.int64Box), ilrw.StLoc(st)}
			exit, err := done.exitCode(w2, ex, exc)
			if err != nil {
				return nil, err
			}
			return append(code, exit...), nil
		})
		if err != nil {
			return err
		}
	}
	return w.wrap(0, 0)
}

// goKind classifies a parameter or return type (by-ref: the type it
// points at).
func goKind(imp *metadata.Import2, t *metadata.Type) valueKind {
	inner, _, pinned := t.Unwrap()
	if inner == nil || pinned {
		return valueKind{kind: KindObject}
	}
	if inner.Kind == metadata.ElementTypeByref {
		inner, _, _ = inner.Elem.Unwrap()
		if inner == nil {
			return valueKind{kind: KindObject}
		}
	}
	vk := valueKind{typ: ParamName(imp, inner)}
	switch inner.Kind {
	case metadata.ElementTypeI1, metadata.ElementTypeI2, metadata.ElementTypeI4, metadata.ElementTypeI8, metadata.ElementTypeI:
		vk.kind = KindInt
	case metadata.ElementTypeU1, metadata.ElementTypeU2, metadata.ElementTypeU4, metadata.ElementTypeU8, metadata.ElementTypeU:
		vk.kind, vk.unsigned = KindUint, true
	case metadata.ElementTypeR4:
		vk.kind, vk.single = KindFloat, true
	case metadata.ElementTypeR8:
		vk.kind = KindFloat
	case metadata.ElementTypeBoolean:
		vk.kind, vk.unsigned = KindBool, true
	case metadata.ElementTypeChar:
		vk.kind, vk.unsigned = KindChar, true
	case metadata.ElementTypeString:
		vk.kind = KindString
	case metadata.ElementTypeValuetype:
		if u, ok := enumUnderlying(imp, inner.Token); ok {
			vk.kind = KindEnum
			switch u {
			case metadata.ElementTypeU1, metadata.ElementTypeU2, metadata.ElementTypeU4, metadata.ElementTypeU8,
				metadata.ElementTypeChar, metadata.ElementTypeBoolean, metadata.ElementTypeU:
				vk.unsigned = true
			}
		} else {
			vk.kind = KindObject
		}
	default:
		vk.kind = KindObject
	}
	return vk
}

// enumUnderlying tells whether a TypeDef of the module is an enum, and its
// underlying type (the type of its instance field value__). Enums of other
// modules (TypeRefs) are not resolved: they pass as KindObject.
func enumUnderlying(imp *metadata.Import2, tok metadata.Token) (metadata.ElementType, bool) {
	if metadata.TokenType(tok.Table()) != metadata.MdtTypeDef {
		return 0, false
	}
	td, err := imp.TypeDef(tok)
	if err != nil || td.Extends.IsNil() || metadata.TokenType(td.Extends.Table()) != metadata.MdtTypeRef {
		return 0, false
	}
	if base, err := imp.TypeRefName(td.Extends); err != nil || base != "System.Enum" {
		return 0, false
	}
	return valueField(imp, tok)
}

// valueField returns the type of enum tok's instance field value__, its
// underlying type.
func valueField(imp *metadata.Import2, tok metadata.Token) (metadata.ElementType, bool) {
	fields, err := imp.Fields(tok)
	if err != nil {
		return 0, false
	}
	for _, f := range fields {
		fi, err := imp.Field(f)
		if err != nil || fi.Flags&metadata.FdStatic != 0 {
			continue
		}
		fs, err := metadata.ParseFieldSig(fi.Sig)
		if err != nil {
			return 0, false
		}
		u, _, _ := fs.Type.Unwrap()
		if u == nil || !u.Kind.IsPrimitive() {
			return 0, false
		}
		return u.Kind, true
	}
	return 0, false
}

var pinnedObject = &metadata.Type{Kind: metadata.ElementTypePinned, Elem: objectT}

// widen returns code that turns the value load pushes into the 64 bits
// the P/Invoke passes; pinned lists the pinned locals to clear after the
// call. t is the declared type (by-ref: load pushes the address).
func (gw *goWrap) widen(w *wrapper, vk valueKind, t *metadata.Type, load []*ilrw.Instruction, pinned *[]int) ([]*ilrw.Instruction, error) {
	if vk.kind == KindObject || vk.kind == KindVoid {
		return []*ilrw.Instruction{ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpConvI8)}, nil
	}
	inner, _, _ := t.Unwrap()
	if inner.Kind == metadata.ElementTypeByref {
		el, _, _ := inner.Elem.Unwrap()
		spec, err := w.spec(el)
		if err != nil {
			return nil, err
		}
		load = append(load, ilrw.IToken(ilrw.OpLdobj, spec))
	}
	switch vk.kind {
	case KindFloat:
		return append(load, ilrw.I(ilrw.OpConvR8), ilrw.StLoc(gw.dbl), ldloca(gw.dbl), ilrw.I(ilrw.OpLdindI8)), nil
	case KindString:
		loc, err := w.em.AddLocals(w.body, pinnedObject)
		if err != nil {
			return nil, err
		}
		*pinned = append(*pinned, loc)
		return append(load, ilrw.StLoc(loc), ilrw.LdLoc(loc), ilrw.I(ilrw.OpConvU), ilrw.I(ilrw.OpConvU8)), nil
	}
	if vk.unsigned {
		return append(load, ilrw.I(ilrw.OpConvU8)), nil
	}
	return append(load, ilrw.I(ilrw.OpConvI8)), nil
}

func unpin(pinned []int) []*ilrw.Instruction {
	var out []*ilrw.Instruction
	for _, l := range pinned {
		out = append(out, ilrw.I(ilrw.OpLdnull), ilrw.StLoc(l))
	}
	return out
}

// enterCode: ldc.i4 pass; <args widened>; call Enter; stloc state; <unpin>.
func (gw *goWrap) enterCode(w *wrapper) ([]*ilrw.Instruction, error) {
	sig := w.sig
	var err error
	if gw.state, err = w.em.AddLocals(w.body, metadata.Primitive(metadata.ElementTypeI8), metadata.Primitive(metadata.ElementTypeR8)); err != nil {
		return nil, err
	}
	gw.dbl = gw.state + 1
	code := []*ilrw.Instruction{ilrw.LdcI4(gw.pass)}
	var pinned []int
	first := 0
	if !w.static {
		first = 1
	}
	for i, vk := range gw.ge.args {
		ld, err := gw.widen(w, vk, sig.Params[i], []*ilrw.Instruction{ldarg(first + i)}, &pinned)
		if err != nil {
			return nil, err
		}
		code = append(code, ld...)
	}
	n := len(gw.ge.args)
	// The argument members, grouped by argument: each is read into a
	// local before the call (the stack is empty there), then passed.
	var read []*ilrw.Instruction
	if len(gw.in) > 0 {
		var push []*ilrw.Instruction
		var err error
		read, push, err = gw.argMemberCode(w, gw.in, first, &pinned)
		if err != nil {
			return nil, err
		}
		code = append(code, push...)
		n += len(gw.in) + 1
	}
	code = append(code, ilrw.IToken(ilrw.OpCall, gw.toks.enter[n]), ilrw.StLoc(gw.state))
	code = append(append(read, code...), unpin(pinned)...)
	if gw.hasActs(false) {
		acts, err := gw.actionCode(w, first, false, nil)
		if err != nil {
			return nil, err
		}
		code = append(code, acts...)
	}
	return code, nil
}

// actionCode runs the actions Enter asked for (gohook_act.go's block):
//
//	      call ActTake; stloc blk; ldloc blk; brfalse DONE
//	      r = 0
//	LOOP: if r >= *(int*)blk goto END
//	      rec = blk + 8 + r*REC
//	      *(int*)rec == 0 ? goto A0 : *(int*)rec == 1 ? goto A1 ... : goto NEXT
//	A_i:  .try {
//	        (ldarg a | ldloc ret | ldsfld S | call get_S); (dup; brfalse NULL; callvirt get_X | ldfld X)...; dup; brfalse NULL
//	        (newobj string(*(char**)(rec+8+16j), 0, *(int*)(rec+16+16j)) | *(long*)(rec+8+16j) | *(int*)(rec+8+16j))...
//	        callvirt Method; [pop]; leave NEXT
//	NULL:   pop; leave NEXT
//	      } filter { pop; ldc.i4.1; endfilter }
//	        { callvirt GetType; callvirt get_FullName; stloc name (pinned)
//	          call ActThrew(rec, name); name = null; leave NEXT }
//	A_k:  goto NEXT (an Optional action that did not resolve)
//	NEXT: r++; goto LOOP
//	END:  ldloc blk; call ActDone
//	DONE:
//
// Its clauses go to w.clauses (inside the entry's or the exit's guard).
// atExit picks the actions of that end (Action.AtExit); result makes an
// instruction that loads the value returned, for each action on it
// (Result).
func (gw *goWrap) actionCode(w *wrapper, first int, atExit bool, result func() *ilrw.Instruction) ([]*ilrw.Instruction, error) {
	ni := metadata.Primitive(metadata.ElementTypeI)
	blk, err := w.em.AddLocals(w.body, ni, metadata.Primitive(metadata.ElementTypeI4), ni)
	if err != nil {
		return nil, err
	}
	r, rec := blk+1, blk+2
	name, err := w.em.AddLocals(w.body, pinnedObject) // an exception's type name, while C copies it
	if err != nil {
		return nil, err
	}
	done, loop, end, next := ilrw.I(ilrw.OpNop), ilrw.LdLoc(r), ilrw.LdLoc(blk), ilrw.LdLoc(r)
	code := []*ilrw.Instruction{ilrw.IToken(ilrw.OpCall, gw.toks.actTake), ilrw.StLoc(blk),
		ilrw.LdLoc(blk), ilrw.IBranch(ilrw.OpBrfalse, done),
		ilrw.I(ilrw.OpLdcI40), ilrw.StLoc(r),
		loop, ilrw.LdLoc(blk), ilrw.I(ilrw.OpLdindI4), ilrw.IBranch(ilrw.OpBge, end),
		ilrw.LdLoc(blk), ilrw.LdcI4(actHeader), ilrw.I(ilrw.OpAdd),
		ilrw.LdLoc(r), ilrw.LdcI4(actRecSize), ilrw.I(ilrw.OpMul), ilrw.I(ilrw.OpAdd), ilrw.StLoc(rec)}
	starts := make([]*ilrw.Instruction, len(gw.acts))
	for i := range starts {
		starts[i] = ilrw.I(ilrw.OpNop)
	}
	code = append(code, ilrw.LdLoc(rec), ilrw.I(ilrw.OpLdindI4), ilrw.ISwitch(starts...), ilrw.IBranch(ilrw.OpBr, next))
	at := func(off int32) []*ilrw.Instruction {
		return []*ilrw.Instruction{ilrw.LdLoc(rec), ilrw.LdcI4(off), ilrw.I(ilrw.OpAdd)}
	}
	for i, p := range gw.acts {
		a := gw.ge.hooks.Actions[i]
		if p.absent || a.AtExit != atExit {
			// An Optional action that did not resolve, or one of the
			// other end (Act and Return.Act ask for neither): asked
			// for, it does nothing.
			code = append(code, starts[i], ilrw.IBranch(ilrw.OpBr, next))
			continue
		}
		var try []*ilrw.Instruction
		steps := p.steps
		switch a.Arg {
		case This:
			try = append(try, ilrw.I(ilrw.OpLdarg0))
		case Result:
			try = append(try, result()) // an instruction of its own for each action
		case Static:
			// The first step reads a static member: nothing to check
			// before it.
			st := steps[0]
			switch {
			case st.field:
				try = append(try, ilrw.IToken(ilrw.OpLdsfld, st.tok))
			default:
				try = append(try, ilrw.IToken(ilrw.OpCall, st.tok))
			}
			steps = steps[1:]
		default:
			try = append(try, ldarg(first+a.Arg))
		}
		null := ilrw.I(ilrw.OpPop)
		for _, st := range steps {
			try = append(try, ilrw.I(ilrw.OpDup), ilrw.IBranch(ilrw.OpBrfalse, null))
			if st.field {
				try = append(try, ilrw.IToken(ilrw.OpLdfld, st.tok))
			} else {
				try = append(try, ilrw.IToken(ilrw.OpCallvirt, st.tok))
			}
		}
		try = append(try, ilrw.I(ilrw.OpDup), ilrw.IBranch(ilrw.OpBrfalse, null))
		for j, k := range p.kinds {
			try = append(try, at(int32(8+16*j))...)
			switch k {
			case ParamString:
				try = append(try, ilrw.I(ilrw.OpLdindI), ilrw.I(ilrw.OpLdcI40))
				try = append(try, at(int32(16+16*j))...)
				try = append(try, ilrw.I(ilrw.OpLdindI4), ilrw.IToken(ilrw.OpNewobj, gw.toks.strCtor))
			case ParamInt64:
				try = append(try, ilrw.I(ilrw.OpLdindI8))
			case ParamFloat64:
				try = append(try, ilrw.I(ilrw.OpLdindR8))
			case ParamFloat32: // its bits in the low half
				try = append(try, ilrw.I(ilrw.OpLdindR4))
			default: // a bool or an int32: the low half
				try = append(try, ilrw.I(ilrw.OpLdindI4))
			}
		}
		try = append(try, ilrw.IToken(ilrw.OpCallvirt, p.method))
		if p.ret {
			try = append(try, ilrw.I(ilrw.OpPop))
		}
		try = append(try, ilrw.IBranch(ilrw.OpLeave, next), null, ilrw.IBranch(ilrw.OpLeave, next))
		filter, handler := ilrw.I(ilrw.OpPop), ilrw.IToken(ilrw.OpCallvirt, gw.toks.getType)
		code = append(code, starts[i])
		code = append(code, try...)
		// The handler hands the record and the exception's type name
		// (pinned) to C, which marks the record and copies the name.
		code = append(code, filter, ilrw.I(ilrw.OpLdcI41), ilrw.I(ilrw.OpEndfilter), handler,
			ilrw.IToken(ilrw.OpCallvirt, gw.toks.fullName), ilrw.StLoc(name),
			ilrw.LdLoc(rec), ilrw.LdLoc(name), ilrw.I(ilrw.OpConvU), ilrw.IToken(ilrw.OpCall, gw.toks.actThrew),
			ilrw.I(ilrw.OpLdnull), ilrw.StLoc(name), ilrw.IBranch(ilrw.OpLeave, next))
		// The handler ends where the next action's code starts.
		hend := next
		if i+1 < len(starts) {
			hend = starts[i+1]
		}
		w.clauses = append(w.clauses, &ilrw.Clause{Kind: ilrw.ClauseFilter, TryStart: try[0], TryEnd: filter,
			FilterStart: filter, HandlerStart: handler, HandlerEnd: hend})
	}
	code = append(code, next, ilrw.LdcI4(1), ilrw.I(ilrw.OpAdd), ilrw.StLoc(r), ilrw.IBranch(ilrw.OpBr, loop),
		end, ilrw.IToken(ilrw.OpCall, gw.toks.actDone), done)
	return code, nil
}

// exitCode: <the exception's type name, pinned>; ldc.i4 pass; ldloc state;
// <return value widened>; <exception != null>; <the name>; call Exit;
// <unpin>.
func (gw *goWrap) exitCode(w *wrapper, ex ilrw.Exit, exc int) ([]*ilrw.Instruction, error) {
	var pinned []int
	name, err := w.em.AddLocals(w.body, pinnedObject)
	if err != nil {
		return nil, err
	}
	pinned = append(pinned, name)
	// The result members, read before the rest (from the return value's
	// local: at the method's return, unless its hooks see its task's
	// result, which DoneN passes).
	var read, push []*ilrw.Instruction
	withMembers := len(gw.out) > 0
	if withMembers {
		if ex.ReturnLocal >= 0 && gw.plan == nil {
			if read, push, err = gw.memberCode(w, gw.out, func() *ilrw.Instruction { return ilrw.LdLoc(ex.ReturnLocal) }, &pinned); err != nil {
				return nil, err
			}
		} else {
			// No value (the task is passed at its completion): every
			// member null.
			push = []*ilrw.Instruction{}
			for range gw.out {
				push = append(push, ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpConvI8))
			}
			push = append(push, ilrw.IInt(ilrw.OpLdcI8, int64(1)<<len(gw.out)-1))
		}
	}
	skip := ilrw.I(ilrw.OpNop)
	code := []*ilrw.Instruction{ilrw.I(ilrw.OpLdnull), ilrw.StLoc(name),
		ilrw.LdLoc(exc), ilrw.IBranch(ilrw.OpBrfalse, skip),
		ilrw.LdLoc(exc), ilrw.IToken(ilrw.OpCallvirt, gw.toks.getType), ilrw.IToken(ilrw.OpCallvirt, gw.toks.fullName),
		ilrw.StLoc(name), skip,
		ilrw.LdcI4(gw.pass), ilrw.LdLoc(gw.state)}
	// At the return of a method whose hooks see its task's result, the
	// value is not passed (an exception is leaving, or the task is null).
	if ex.ReturnLocal >= 0 && gw.ge.ret.kind != KindVoid && gw.plan == nil {
		ld, err := gw.widen(w, gw.ge.ret, ex.ReturnType, []*ilrw.Instruction{ilrw.LdLoc(ex.ReturnLocal)}, &pinned)
		if err != nil {
			return nil, err
		}
		code = append(code, ld...)
	} else {
		code = append(code, ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpConvI8))
	}
	code = append(code, ilrw.LdLoc(exc), ilrw.I(ilrw.OpLdnull), ilrw.I(ilrw.OpCgtUn), ilrw.I(ilrw.OpConvI8))
	if gw.done != 0 {
		// | exitAsync | (task.IsCanceled << 2)
		code = append(code, ilrw.LdcI4(exitAsync), ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpCallvirt, gw.done),
			ilrw.LdcI4(2), ilrw.I(ilrw.OpShl), ilrw.I(ilrw.OpOr), ilrw.I(ilrw.OpConvI8), ilrw.I(ilrw.OpOr))
	}
	code = append(code, ilrw.LdLoc(name), ilrw.I(ilrw.OpConvU), ilrw.I(ilrw.OpConvU8))
	if !withMembers {
		code = append(code, ilrw.IToken(ilrw.OpCall, gw.toks.exit))
		return gw.exitActions(w, ex, append(code, unpin(pinned)...))
	}
	// ExitM: minfo (the count, and which are strings), the status word
	// and the members, four slots in all.
	minfo := int32(len(gw.out))
	for j, p := range gw.out {
		if p.slot.kind.kind == KindString {
			minfo |= 1 << (4 + j)
		}
	}
	// push ends with the status word; ExitM takes it before the members.
	status := push[len(push)-1]
	code = append(code, ilrw.LdcI4(minfo), status)
	code = append(code, push[:len(push)-1]...)
	for range MaxGoResultMembers - len(gw.out) {
		code = append(code, ilrw.I(ilrw.OpLdcI40), ilrw.I(ilrw.OpConvI8))
	}
	code = append(code, ilrw.IToken(ilrw.OpCall, gw.toks.exitm))
	return gw.exitActions(w, ex, append(append(read, code...), unpin(pinned)...))
}

// exitActions appends to code, the call to Exit, the actions Exit asked
// for (Action.AtExit): at the method's return, where its arguments and
// the value it returns (null when an exception is leaving) are at hand.
// DoneN, a task's completion, has none (wrapGo refuses them there).
func (gw *goWrap) exitActions(w *wrapper, ex ilrw.Exit, code []*ilrw.Instruction) ([]*ilrw.Instruction, error) {
	if gw.done != 0 || gw.plan != nil || !gw.hasActs(true) {
		return code, nil
	}
	first := 0
	if !w.static {
		first = 1
	}
	result := func() *ilrw.Instruction { return ilrw.I(ilrw.OpLdnull) }
	if ex.ReturnLocal >= 0 {
		result = func() *ilrw.Instruction { return ilrw.LdLoc(ex.ReturnLocal) }
	}
	acts, err := gw.actionCode(w, first, true, result)
	if err != nil {
		return nil, err
	}
	return append(code, acts...), nil
}

// argMemberCode is memberCode for the argument members: each plan reads
// from its own argument (IL numbering from first).
func (gw *goWrap) argMemberCode(w *wrapper, plans []memberPlan, first int, pinned *[]int) (read, push []*ilrw.Instruction, err error) {
	// memberCode reads every plan from one load: the argument of each is
	// chosen per plan by a load of its own.
	loads := make([][]*ilrw.Instruction, len(plans))
	for j, p := range plans {
		a := gw.ge.hooks.Members[p.slot.index].Arg
		if a == Static || p.absent {
			continue // a static member or an absent one: nothing loaded
		}
		if a == This {
			loads[j] = []*ilrw.Instruction{ilrw.I(ilrw.OpLdarg0)}
		} else {
			loads[j] = []*ilrw.Instruction{ldarg(first + a)}
		}
	}
	return gw.memberCodeEach(w, plans, func(j int) []*ilrw.Instruction { return loads[j] }, pinned)
}
