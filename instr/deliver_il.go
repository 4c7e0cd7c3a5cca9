package instr

import (
	"fmt"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// What the delivery defines in the host module: a type, not public, named
// so that it cannot clash with C# (angle brackets), holding
//
//	static int32 Op(int32 op, int32 index, ref native int data)  P/Invoke clrprof_instr_loader
//	static void Fail(string message)                             P/Invoke clrprof_instr_fail
//	static int32 started
//	static void Run()                                            the loader (IL below)
//
// and a call to Run at the host method's entry, inside a try/catch that
// drops anything it throws (Run is compiled on its first call: a failure to
// compile it would surface at that call).
const loaderTypeName = "<clrprof>Loader"

// System.Private.CoreLib: every type the loader names lives there on every
// .NET Core; 4.0.0.0 binds to it on all (its version is 4.0.0.0 before .NET 5).
var coreLib = metadata.AssemblyName{
	Name:           "System.Private.CoreLib",
	Version:        metadata.Version{Major: 4},
	PublicKeyToken: []byte{0x7c, 0xec, 0x85, 0xd7, 0xbe, 0xa7, 0x79, 0x8e},
}

// Element types of signatures (ECMA-335 II.23.1.16).
const (
	etVoid     = 0x01
	etI4       = 0x08
	etU1       = 0x05
	etString   = 0x0e
	etByRef    = 0x10
	etClass    = 0x12
	etI        = 0x18
	etObject   = 0x1c
	etSzArray  = 0x1d
	sigHasThis = 0x20
)

type loaderTokens struct {
	object, byteT, intPtr, typeT, assembly, methodInfo, methodBase, marshal metadata.Token
	copyFn, load, getType, getMethod, invoke, toString                      metadata.Token
}

func classSig(b []byte, tk metadata.Token) []byte {
	out, err := metadata.AppendTypeDefOrRef(append(b, etClass), tk)
	if err != nil {
		panic(err) // TypeRef tokens always encode
	}
	return out
}

func (d *Delivery) loaderRefs(mod *ilrw.Module) (*loaderTokens, error) {
	scope, err := mod.AssemblyRef(coreLib)
	if err != nil {
		return nil, err
	}
	t := &loaderTokens{}
	for _, r := range []struct {
		dst     *metadata.Token
		ns, typ string
	}{
		{&t.object, "System", "Object"}, {&t.byteT, "System", "Byte"}, {&t.intPtr, "System", "IntPtr"},
		{&t.typeT, "System", "Type"}, {&t.assembly, "System.Reflection", "Assembly"},
		{&t.methodInfo, "System.Reflection", "MethodInfo"}, {&t.methodBase, "System.Reflection", "MethodBase"},
		{&t.marshal, "System.Runtime.InteropServices", "Marshal"},
	} {
		if *r.dst, err = mod.TypeRef(scope, r.ns, r.typ); err != nil {
			return nil, err
		}
	}
	for _, r := range []struct {
		dst    *metadata.Token
		parent metadata.Token
		name   string
		sig    []byte
	}{
		{&t.copyFn, t.marshal, "Copy", []byte{0, 4, etVoid, etI, etSzArray, etU1, etI4, etI4}},
		{&t.load, t.assembly, "Load", append(classSig([]byte{0, 1}, t.assembly), etSzArray, etU1)},
		{&t.getType, t.assembly, "GetType", append(classSig([]byte{sigHasThis, 1}, t.typeT), etString)},
		{&t.getMethod, t.typeT, "GetMethod", append(classSig([]byte{sigHasThis, 1}, t.methodInfo), etString)},
		{&t.invoke, t.methodBase, "Invoke", []byte{sigHasThis, 2, etObject, etObject, etSzArray, etObject}},
		{&t.toString, t.object, "ToString", []byte{sigHasThis, 0, etString}},
	} {
		if *r.dst, err = mod.MemberRef(r.parent, r.name, r.sig); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// inject defines the loader in m's module and calls it at m's entry.
func (d *Delivery) inject(m *ilrw.Method) error {
	run, object, err := d.defineLoader(m.Module, m.ModuleID)
	if err != nil {
		return err
	}
	return callAtEntry(m.Body, run, object)
}

// defineLoader defines the loader type in module id (mod open on it) and
// installs the body of its Run method; it returns Run and the module's
// TypeRef of System.Object.
func (d *Delivery) defineLoader(mod *ilrw.Module, id profiler.ModuleID) (run, object metadata.Token, err error) {
	t, err := d.loaderRefs(mod) // opens the module for writing
	if err != nil {
		return 0, 0, err
	}
	emit := mod.Emit
	td, err := emit.DefineTypeDef(loaderTypeName,
		metadata.TdNotPublic|metadata.TdClass|metadata.TdAbstract|metadata.TdSealed|metadata.TdBeforeFieldInit, t.object, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("TypeDef %s: %w", loaderTypeName, err)
	}
	opTok, err := pinvoke{Name: "Op", Sig: []byte{0, 3, etI4, etI4, etI4, etByRef, etI}, Entry: "clrprof_instr_loader"}.define(mod, td)
	if err != nil {
		return 0, 0, err
	}
	failTok, err := pinvoke{Name: "Fail", Sig: []byte{0, 1, etVoid, etString}, Entry: "clrprof_instr_fail"}.define(mod, td)
	if err != nil {
		return 0, 0, err
	}
	started, err := emit.DefineField(td, "started", metadata.FdPrivate|metadata.FdStatic, []byte{0x06, etI4}, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("field: %w", err)
	}
	run, err = emit.DefineMethod(td, "Run", metadata.MdAssem|metadata.MdStatic|metadata.MdHideBySig,
		[]byte{0, 0, etVoid}, 0, metadata.MiIL|metadata.MiManaged)
	if err != nil {
		return 0, 0, fmt.Errorf("method Run: %w", err)
	}
	body, err := d.runBody(mod, t, opTok, failTok, started)
	if err != nil {
		return 0, 0, err
	}
	code, err := body.Encode()
	if err != nil {
		return 0, 0, fmt.Errorf("encoding Run: %w", err)
	}
	if err := d.info.SetILFunctionBody(id, run, code); err != nil {
		return 0, 0, fmt.Errorf("installing Run: %w", err)
	}
	return run, t.object, nil
}

// callAtEntry adds `call fn` at the entry of b, inside a try/catch of
// System.Object that drops whatever it throws.
func callAtEntry(b *ilrw.Body, fn, object metadata.Token) error {
	if len(b.Instructions) == 0 {
		return fmt.Errorf("empty body")
	}
	first := b.Instructions[0]
	call := ilrw.IToken(ilrw.OpCall, fn)
	handler := ilrw.I(ilrw.OpPop)
	if err := b.InsertAtEntry(call, ilrw.IBranch(ilrw.OpLeave, first), handler, ilrw.IBranch(ilrw.OpLeave, first)); err != nil {
		return err
	}
	// Not nested in any clause of the method: its place in the list is free;
	// first, so that a wrap added later (which encloses it) comes after.
	b.Clauses = append([]*ilrw.Clause{{
		Kind: ilrw.ClauseCatch, TryStart: call, TryEnd: handler,
		HandlerStart: handler, HandlerEnd: first, ClassToken: object,
	}}, b.Clauses...)
	b.Fat = true
	return nil
}

// runBody builds the loader:
//
//	if (started != 0) return; started = 1;
//	try {
//	    int n = Op(0, 0, ref p);
//	    if (n > 0) {
//	        Assembly[] asms = new Assembly[n];
//	        for (int i = 0; i < n; i++) {
//	            int len = Op(1, i, ref p);
//	            byte[] bytes = new byte[len];
//	            Marshal.Copy(p, bytes, 0, len);
//	            asms[i] = Assembly.Load(bytes);
//	        }
//	        Op(2, 0, ref p);
//	        asms[0].GetType("Clrprof.Instr.Loader").GetMethod("Start").Invoke(null, new object[] { asms, p });
//	        Op(3, 0, ref p);
//	    }
//	} catch (object e) {
//	    try { Fail(e.ToString()); } catch (object) { }
//	}
func (d *Delivery) runBody(mod *ilrw.Module, t *loaderTokens, opTok, failTok, started metadata.Token) (*ilrw.Body, error) {
	const (
		locN = iota
		locP
		locBytes
		locAsms
		locI
		locLen
		locExc
	)
	localSig := []byte{0x07, 7, etI4, etI, etSzArray, etU1}
	localSig = classSig(append(localSig, etSzArray), t.assembly)
	localSig = append(localSig, etI4, etI4, etObject)
	sigTok, err := mod.SigToken(localSig)
	if err != nil {
		return nil, err
	}
	op := func(n int32, index *ilrw.Instruction) []*ilrw.Instruction {
		return []*ilrw.Instruction{ilrw.LdcI4(n), index, ilrw.IInt(ilrw.OpLdlocaS, locP), ilrw.IToken(ilrw.OpCall, opTok)}
	}
	ret := ilrw.I(ilrw.OpRet)
	leaveTry := ilrw.IBranch(ilrw.OpLeave, ret)
	tryStart := ilrw.LdcI4(0)
	loop := ilrw.LdLoc(locI)
	done := ilrw.LdcI4(2)
	handler := ilrw.StLoc(locExc)
	innerTry := ilrw.LdLoc(locExc)
	innerHandler := ilrw.I(ilrw.OpPop)
	handlerEnd := ilrw.IBranch(ilrw.OpLeave, ret)

	var code []*ilrw.Instruction
	add := func(ins ...*ilrw.Instruction) { code = append(code, ins...) }
	add(ilrw.IToken(ilrw.OpLdsfld, started), ilrw.IBranch(ilrw.OpBrtrue, ret),
		ilrw.LdcI4(1), ilrw.IToken(ilrw.OpStsfld, started))
	// try
	add(tryStart, ilrw.LdcI4(0), ilrw.IInt(ilrw.OpLdlocaS, locP), ilrw.IToken(ilrw.OpCall, opTok), ilrw.StLoc(locN))
	add(ilrw.LdLoc(locN), ilrw.LdcI4(0), ilrw.IBranch(ilrw.OpBle, leaveTry))
	add(ilrw.LdLoc(locN), ilrw.IToken(ilrw.OpNewarr, t.assembly), ilrw.StLoc(locAsms))
	add(ilrw.LdcI4(0), ilrw.StLoc(locI))
	add(loop, ilrw.LdLoc(locN), ilrw.IBranch(ilrw.OpBge, done))
	add(op(1, ilrw.LdLoc(locI))...)
	add(ilrw.StLoc(locLen))
	add(ilrw.LdLoc(locLen), ilrw.IToken(ilrw.OpNewarr, t.byteT), ilrw.StLoc(locBytes))
	add(ilrw.LdLoc(locP), ilrw.LdLoc(locBytes), ilrw.LdcI4(0), ilrw.LdLoc(locLen), ilrw.IToken(ilrw.OpCall, t.copyFn))
	add(ilrw.LdLoc(locAsms), ilrw.LdLoc(locI), ilrw.LdLoc(locBytes), ilrw.IToken(ilrw.OpCall, t.load), ilrw.I(ilrw.OpStelemRef))
	add(ilrw.LdLoc(locI), ilrw.LdcI4(1), ilrw.I(ilrw.OpAdd), ilrw.StLoc(locI), ilrw.IBranch(ilrw.OpBr, loop))
	add(done, ilrw.LdcI4(0), ilrw.IInt(ilrw.OpLdlocaS, locP), ilrw.IToken(ilrw.OpCall, opTok), ilrw.I(ilrw.OpPop))
	name, err := mod.UserString("Clrprof.Instr.Loader")
	if err != nil {
		return nil, err
	}
	start, err := mod.UserString("Start")
	if err != nil {
		return nil, err
	}
	add(ilrw.LdLoc(locAsms), ilrw.LdcI4(0), ilrw.I(ilrw.OpLdelemRef))
	add(ilrw.IToken(ilrw.OpLdstr, name), ilrw.IToken(ilrw.OpCallvirt, t.getType))
	add(ilrw.IToken(ilrw.OpLdstr, start), ilrw.IToken(ilrw.OpCallvirt, t.getMethod))
	add(ilrw.I(ilrw.OpLdnull), ilrw.LdcI4(2), ilrw.IToken(ilrw.OpNewarr, t.object))
	add(ilrw.I(ilrw.OpDup), ilrw.LdcI4(0), ilrw.LdLoc(locAsms), ilrw.I(ilrw.OpStelemRef))
	add(ilrw.I(ilrw.OpDup), ilrw.LdcI4(1), ilrw.LdLoc(locP), ilrw.IToken(ilrw.OpBox, t.intPtr), ilrw.I(ilrw.OpStelemRef))
	add(ilrw.IToken(ilrw.OpCallvirt, t.invoke), ilrw.I(ilrw.OpPop))
	add(op(3, ilrw.LdcI4(0))...)
	add(ilrw.I(ilrw.OpPop))
	add(leaveTry)
	// catch (object e)
	add(handler)
	add(innerTry, ilrw.IToken(ilrw.OpCallvirt, t.toString), ilrw.IToken(ilrw.OpCall, failTok), ilrw.IBranch(ilrw.OpLeave, handlerEnd))
	add(innerHandler, ilrw.IBranch(ilrw.OpLeave, handlerEnd))
	add(handlerEnd)
	add(ret)

	b := &ilrw.Body{Fat: true, Flags: ilrw.FlagInitLocals, MaxStack: 16, LocalVarSig: sigTok, Instructions: code, FatClauses: true}
	b.Clauses = []*ilrw.Clause{
		{Kind: ilrw.ClauseCatch, TryStart: innerTry, TryEnd: innerHandler, HandlerStart: innerHandler, HandlerEnd: handlerEnd, ClassToken: t.object},
		{Kind: ilrw.ClauseCatch, TryStart: tryStart, TryEnd: handler, HandlerStart: handler, HandlerEnd: ret, ClassToken: t.object},
	}
	if n, err := b.ComputeMaxStack(mod); err == nil && n > 0 {
		b.MaxStack = uint16(n)
	}
	return b, nil
}
