package instr

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// End at a task's completion. For a target whose declared return type is
// Task, Task<T>, ValueTask or ValueTask<T> (and that is not runtime async:
// its body already ends at completion), the wrap's finally, when the
// method returns a task without throwing, hands the task to a method the
// SDK defines in the target's module,
//
//	static void <clrprof>AsyncN::Done(Task task, object state)
//
// one per wrapped method, each in a type of its own (a method added to a
// type already loaded is not found: MissingMethodException, seen on
// 8.0.4 with one type for all), which runs the integration's End (or the Go
// Exit hook) with the task's outcome: the result (Task<T>, ValueTask<T>),
// the exception it faulted with (the first of its AggregateException), or
// for a cancelled task a TaskCanceledException for it. A task complete at
// the return is handed over at once, on the calling thread; otherwise
// DoneN is registered with ContinueWith(ExecuteSynchronously,
// TaskScheduler.Default) before the method returns, so before its caller
// can await the task, and runs on the thread that completes it. A
// ValueTask is turned into its task (AsTask) and the method returns a
// ValueTask of that task in its place (a ValueTask may be consumed once).

const asyncTypeName = "<clrprof>Async"

// The ends registered to run at a task's completion (ContN, registered
// with ContinueWith) and the ends run: the wrap counts one registered
// before registering, ContN one finished after DoneN. A suspending call
// registers on the calling thread and finishes on the completing one, so
// each count is kept in shards by thread (a cache line and more apart),
// each thread's increments on lines of their own, rather than one counter
// moving between the two threads' caches with every call. The shard is
// the address of a local or argument of the running method shifted by
// 20 bits: threads' stacks lie a MiB and more apart, and the IL needs no
// call for it (Thread.CurrentThread, or Environment's
// CurrentManagedThreadId, cannot be called from an application's module
// on .NET Core 2.x, whose CoreLib keeps them internal: the wrap's
// registration threw, caught, and no End ran). The IL reaches the shards
// by their address, so they are globals (they never move).
const taskEndShards = 64 // a power of two

type taskEndShard struct {
	n atomic.Int64
	_ [120]byte
}

var taskEndsRegistered, taskEndsFinished [taskEndShards]taskEndShard

// PendingTaskEnds is the number of task-returning calls whose End (or Go
// Exit hook) waits for the task to complete: calls in flight, and tasks
// complete whose continuation has not run yet. It is the number
// registered less the number finished, the finished read first: a finish
// read comes after its registration, so the difference never falls below
// what is pending at the first read (0 means that everything registered
// by then had run).
func PendingTaskEnds() int64 {
	var fin, reg int64
	for i := range taskEndsFinished {
		fin += taskEndsFinished[i].n.Load()
	}
	for i := range taskEndsRegistered {
		reg += taskEndsRegistered[i].n.Load()
	}
	return reg - fin
}

// WaitTaskEnds waits until every End (or Go Exit hook) registered to run
// at a task's completion has run, or until ctx ends, and returns how many
// are still pending (0 when it returns nil).
//
// Call it at Shutdown, with a deadline, before FlushDeferred and before
// exporting. A caller that waits for a task synchronously (Wait, Result,
// GetAwaiter().GetResult(), the Main an async Main compiles to) can go on
// as soon as the task is complete, while its End still runs on the thread
// that completed it; when that caller is Main, the runtime shuts down
// with the End under way, and without the wait it would be cut off
// (docs/instrumentation.md, "A synchronous waiter"). A task that never
// completes keeps the count up: the wait then lasts until ctx ends, so
// give it a bound (the samples give 200 ms).
func WaitTaskEnds(ctx context.Context) (pending int64, err error) {
	for {
		n := PendingTaskEnds()
		if n <= 0 {
			return 0, nil
		}
		if err := ctx.Err(); err != nil {
			return n, err
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// taskShape is which of the task types a method declares it returns.
type taskShape int

const (
	taskNone taskShape = iota
	taskPlain
	taskOfT
	valueTaskPlain
	valueTaskOfT
)

var taskShapes = map[string]taskShape{
	"System.Threading.Tasks.Task": taskPlain, "System.Threading.Tasks.Task`1": taskOfT,
	"System.Threading.Tasks.ValueTask": valueTaskPlain, "System.Threading.Tasks.ValueTask`1": valueTaskOfT,
}

// taskReturn classifies a declared return type; res is T (nil for Task
// and ValueTask).
func taskReturn(mod *ilrw.Module, t *metadata.Type) (shape taskShape, res *metadata.Type) {
	inner, _, _ := t.Unwrap()
	if inner == nil {
		return taskNone, nil
	}
	switch inner.Kind {
	case metadata.ElementTypeClass, metadata.ElementTypeValuetype:
		s := taskShapes[mod.TokenName(inner.Token)]
		if s == taskPlain || s == valueTaskPlain {
			return s, nil
		}
	case metadata.ElementTypeGenericinst:
		if inner.Elem == nil || len(inner.Args) != 1 {
			return taskNone, nil
		}
		s := taskShapes[mod.TokenName(inner.Elem.Token)]
		if s == taskOfT || s == valueTaskOfT {
			return s, inner.Args[0]
		}
	}
	return taskNone, nil
}

// generic tells whether t names a generic parameter (of the method or of
// its type): such a T cannot be named in DoneN.
func generic(t *metadata.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind {
	case metadata.ElementTypeVar, metadata.ElementTypeMvar:
		return true
	}
	if generic(t.Elem) {
		return true
	}
	for _, a := range t.Args {
		if generic(a) {
			return true
		}
	}
	return false
}

// asyncToks are the references of one module that the async code uses.
type asyncToks struct {
	td                                    metadata.Token // <clrprof>Async (a marker: the module's references are made)
	task, taskT, exception, object        metadata.Token // TypeRefs
	isCompleted, isFaulted, isCanceled    metadata.Token
	getException, inner, canceledCtor     metadata.Token
	action, actionCtor, continueWith      metadata.Token // Action<Task, object>
	tokenNone, schedulerDefault, int64Box metadata.Token
	increment                             metadata.Token // Interlocked.Increment(int64&)
}

var asyncModules struct {
	sync.Mutex
	m map[profiler.ModuleID]*asyncToks
}

var doneSerial atomic.Int64

func methodRef(mod *ilrw.Module, parent metadata.Token, name string, s *metadata.MethodSig) (metadata.Token, error) {
	b, err := s.Encode()
	if err != nil {
		return 0, err
	}
	return mod.MemberRef(parent, name, b)
}

func instSig(ret *metadata.Type, params ...*metadata.Type) *metadata.MethodSig {
	return &metadata.MethodSig{CallConv: metadata.ImageCeeCsCallconvHasthis, Return: ret, Params: params}
}

func staticSig(ret *metadata.Type, params ...*metadata.Type) *metadata.MethodSig {
	return &metadata.MethodSig{Return: ret, Params: params}
}

var (
	voidT = metadata.Primitive(metadata.ElementTypeVoid)
	boolT = metadata.Primitive(metadata.ElementTypeBoolean)
	i8T   = metadata.Primitive(metadata.ElementTypeI8)
)

// asyncRefs defines (once per module) the <clrprof>Async type and the
// references the async code needs.
func asyncRefs(m *ilrw.Method) (*asyncToks, error) {
	asyncModules.Lock()
	defer asyncModules.Unlock()
	mod := m.Module
	scope, err := mod.AssemblyRef(coreLib) // also opens the module for writing
	if err != nil {
		return nil, err
	}
	if t := asyncModules.m[m.ModuleID]; t != nil {
		// A ModuleID can be reused after a collectible module unloads.
		if mod.TokenName(t.td) == asyncTypeName {
			return t, nil
		}
		delete(asyncModules.m, m.ModuleID)
	}
	t := &asyncToks{}
	var canceledExc, aggregate, actionG, tokenT, continuation, scheduler, int64T, interlocked metadata.Token
	for _, r := range []struct {
		dst      *metadata.Token
		ns, name string
	}{
		{&t.object, "System", "Object"}, {&t.task, "System.Threading.Tasks", "Task"},
		{&t.taskT, "System.Threading.Tasks", "Task`1"}, {&t.exception, "System", "Exception"},
		{&canceledExc, "System.Threading.Tasks", "TaskCanceledException"},
		{&aggregate, "System", "AggregateException"}, {&actionG, "System", "Action`2"},
		{&tokenT, "System.Threading", "CancellationToken"},
		{&continuation, "System.Threading.Tasks", "TaskContinuationOptions"},
		{&scheduler, "System.Threading.Tasks", "TaskScheduler"}, {&int64T, "System", "Int64"},
		{&interlocked, "System.Threading", "Interlocked"},
	} {
		if *r.dst, err = mod.TypeRef(scope, r.ns, r.name); err != nil {
			return nil, err
		}
	}
	taskC := metadata.ClassType(t.task)
	actionT := metadata.GenericInst(metadata.ClassType(actionG), taskC, objectT)
	if t.action, err = mod.TypeSpec(mustEncode(actionT)); err != nil {
		return nil, err
	}
	for _, r := range []struct {
		dst    *metadata.Token
		parent metadata.Token
		name   string
		sig    *metadata.MethodSig
	}{
		{&t.isCompleted, t.task, "get_IsCompleted", instSig(boolT)},
		{&t.isFaulted, t.task, "get_IsFaulted", instSig(boolT)},
		{&t.isCanceled, t.task, "get_IsCanceled", instSig(boolT)},
		{&t.getException, t.task, "get_Exception", instSig(metadata.ClassType(aggregate))},
		{&t.inner, t.exception, "get_InnerException", instSig(metadata.ClassType(t.exception))},
		{&t.canceledCtor, canceledExc, ".ctor", instSig(voidT, taskC)},
		{&t.actionCtor, t.action, ".ctor", instSig(voidT, objectT, metadata.Primitive(metadata.ElementTypeI))},
		{&t.continueWith, t.task, "ContinueWith", instSig(taskC, actionT, objectT, metadata.ValueType(tokenT),
			metadata.ValueType(continuation), metadata.ClassType(scheduler))},
		{&t.tokenNone, tokenT, "get_None", staticSig(metadata.ValueType(tokenT))},
		{&t.schedulerDefault, scheduler, "get_Default", staticSig(metadata.ClassType(scheduler))},
		{&t.increment, interlocked, "Increment", staticSig(i8T, metadata.ByRefTo(i8T))},
	} {
		if *r.dst, err = methodRef(mod, r.parent, r.name, r.sig); err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
	}
	t.int64Box = int64T
	if t.td, err = mod.Emit.DefineTypeDef(asyncTypeName,
		metadata.TdNotPublic|metadata.TdClass|metadata.TdAbstract|metadata.TdSealed|metadata.TdBeforeFieldInit, t.object, nil); err != nil {
		return nil, fmt.Errorf("TypeDef %s: %w", asyncTypeName, err)
	}
	if asyncModules.m == nil {
		asyncModules.m = map[profiler.ModuleID]*asyncToks{}
	}
	asyncModules.m[m.ModuleID] = t
	return t, nil
}

func mustEncode(t *metadata.Type) []byte {
	b, err := t.Encode()
	if err != nil {
		panic(err) // TypeRefs and primitives always encode
	}
	return b
}

// asyncPlan is what the wrap of a task-returning method needs.
type asyncPlan struct {
	toks  *asyncToks
	shape taskShape
	decl  *metadata.Type // the declared return type
	res   *metadata.Type // T, nil for Task and ValueTask
	done  metadata.Token // DoneN
	// cont is ContN, the continuation: DoneN, then the count of pending
	// ends finished up by one.
	cont metadata.Token
	// asTask and ctor are ValueTask's AsTask and .ctor(Task).
	asTask, ctor metadata.Token
	// resultOf is Task<T>::get_Result (0: no result, or T generic).
	resultOf metadata.Token
	taskOfT  metadata.Token // Task<T>'s TypeSpec
	task     int            // the wrap's local holding the task
	// box pushes the state DoneN gets (set by wrap once the entry code
	// has its locals).
	box func() []*ilrw.Instruction
}

// planAsync tells whether e's method gets its End at the completion of
// the task it returns, and prepares the references.
func planAsync(m *ilrw.Method, e *entry) (*asyncPlan, error) {
	if e.atRet {
		return nil, nil
	}
	if async, err := m.Async(); err != nil || async {
		return nil, err
	}
	sig, err := m.Sig() // declared
	if err != nil {
		return nil, err
	}
	shape, res := taskReturn(m.Module, sig.Return)
	if shape == taskNone {
		return nil, nil
	}
	toks, err := asyncRefs(m)
	if err != nil {
		return nil, err
	}
	p := &asyncPlan{toks: toks, shape: shape, decl: sig.Return, res: res}
	mod := m.Module
	if res != nil && !generic(res) {
		taskOfT := metadata.GenericInst(metadata.ClassType(toks.taskT), res)
		if p.taskOfT, err = mod.TypeSpec(mustEncode(taskOfT)); err != nil {
			return nil, err
		}
		if p.resultOf, err = methodRef(mod, p.taskOfT, "get_Result", instSig(&metadata.Type{Kind: metadata.ElementTypeVar, Index: 0})); err != nil {
			return nil, err
		}
	}
	if shape == valueTaskPlain || shape == valueTaskOfT {
		inner, _, _ := sig.Return.Unwrap()
		vt, err := mod.TypeSpec(mustEncode(inner))
		if err != nil {
			return nil, err
		}
		taskArg := metadata.ClassType(toks.task)
		if shape == valueTaskOfT {
			taskArg = metadata.GenericInst(metadata.ClassType(toks.taskT), &metadata.Type{Kind: metadata.ElementTypeVar, Index: 0})
		}
		if p.asTask, err = methodRef(mod, vt, "AsTask", instSig(taskArg)); err != nil {
			return nil, err
		}
		if p.ctor, err = methodRef(mod, vt, ".ctor", instSig(voidT, taskArg)); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// defineDone defines DoneN with the body exit builds: exit gets a wrapper
// over DoneN's body, the local holding the exception and, when the task
// has a result that can be read, the local holding it, and returns the
// code calling End or Exit (it may push the state with ldarg.1).
func (p *asyncPlan) defineDone(m *ilrw.Method, w *wrapper,
	exit func(w2 *wrapper, ex ilrw.Exit, exc int) ([]*ilrw.Instruction, error)) error {
	mod := m.Module
	typeName := fmt.Sprintf("%s%d", asyncTypeName, doneSerial.Add(1))
	name := typeName + "::Done"
	taskC := metadata.ClassType(p.toks.task)
	sigBlob, err := staticSig(voidT, taskC, objectT).Encode()
	if err != nil {
		return err
	}
	td, err := mod.Emit.DefineTypeDef(typeName,
		metadata.TdNotPublic|metadata.TdClass|metadata.TdAbstract|metadata.TdSealed|metadata.TdBeforeFieldInit, p.toks.object, nil)
	if err != nil {
		return fmt.Errorf("TypeDef %s: %w", typeName, err)
	}
	tok, err := mod.Emit.DefineMethod(td, "Done", metadata.MdAssem|metadata.MdStatic|metadata.MdHideBySig,
		sigBlob, 0, metadata.MiIL|metadata.MiManaged)
	if err != nil {
		return fmt.Errorf("method %s: %w", name, err)
	}
	empty, err := mod.SigToken([]byte{0x07, 0})
	if err != nil {
		return err
	}
	b := &ilrw.Body{Fat: true, Flags: ilrw.FlagInitLocals, MaxStack: 16, LocalVarSig: empty, FatClauses: true}
	w2 := &wrapper{body: b, sig: w.sig, em: mod, id: w.id, typeTok: w.typeTok, valueTy: w.valueTy, generic: w.generic,
		static: true, byRefLike: w.byRefLike, sink: w.sink}
	exc, err := mod.AddLocals(b, objectT, objectT)
	if err != nil {
		return err
	}
	w2.scratch = exc + 1
	ex := ilrw.Exit{ReturnLocal: -1}
	if p.resultOf != 0 {
		if ex.ReturnLocal, err = mod.AddLocals(b, p.res); err != nil {
			return err
		}
		ex.ReturnType = p.res
	}
	t := p.toks
	ret := ilrw.I(ilrw.OpRet)
	start := ilrw.I(ilrw.OpLdarg0)
	notFaulted := ilrw.I(ilrw.OpLdarg0)
	ok := ilrw.I(ilrw.OpNop)
	outcome := ilrw.I(ilrw.OpNop)
	pop := ilrw.I(ilrw.OpPop)
	code := []*ilrw.Instruction{
		start, ilrw.IToken(ilrw.OpCallvirt, t.isFaulted), ilrw.IBranch(ilrw.OpBrfalse, notFaulted),
		ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpCallvirt, t.getException), ilrw.StLoc(exc),
		ilrw.LdLoc(exc), ilrw.IToken(ilrw.OpCallvirt, t.inner), ilrw.I(ilrw.OpDup), ilrw.IBranch(ilrw.OpBrfalse, pop),
		ilrw.StLoc(exc), ilrw.IBranch(ilrw.OpBr, outcome),
		pop, ilrw.IBranch(ilrw.OpBr, outcome),
		notFaulted, ilrw.IToken(ilrw.OpCallvirt, t.isCanceled), ilrw.IBranch(ilrw.OpBrfalse, ok),
		ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpNewobj, t.canceledCtor), ilrw.StLoc(exc), ilrw.IBranch(ilrw.OpBr, outcome),
		ok,
	}
	if p.resultOf != 0 {
		code = append(code, ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpCastclass, p.taskOfT),
			ilrw.IToken(ilrw.OpCallvirt, p.resultOf), ilrw.StLoc(ex.ReturnLocal))
	}
	code = append(code, outcome)
	call, err := exit(w2, ex, exc)
	if err != nil {
		return err
	}
	call = append(call, ilrw.IBranch(ilrw.OpLeave, ret))
	guard, cls := w2.catchAll(start, ret)
	code = append(code, call...)
	code = append(code, guard...)
	code = append(code, ret)
	b.Instructions = code
	b.Clauses = append(w2.takeClauses(), cls...)
	if n, err := b.ComputeMaxStack(mod); err == nil && n > 0 {
		b.MaxStack = uint16(n)
	}
	enc, err := b.Encode()
	if err != nil {
		return fmt.Errorf("encoding %s: %w", name, err)
	}
	if err := m.Info.SetILFunctionBody(m.ModuleID, tok, enc); err != nil {
		return fmt.Errorf("installing %s: %w", name, err)
	}
	p.done = tok
	return p.defineCont(m, td, tok, sigBlob)
}

// defineCont defines ContN, the method the continuation runs: DoneN and,
// in a finally, the count of ends finished up by one.
func (p *asyncPlan) defineCont(m *ilrw.Method, td, done metadata.Token, sigBlob []byte) error {
	mod := m.Module
	tok, err := mod.Emit.DefineMethod(td, "Cont", metadata.MdAssem|metadata.MdStatic|metadata.MdHideBySig,
		sigBlob, 0, metadata.MiIL|metadata.MiManaged)
	if err != nil {
		return fmt.Errorf("method Cont: %w", err)
	}
	count := p.toks.countEnd(&taskEndsFinished, ilrw.IInt(ilrw.OpLdargaS, 0))
	start, fin, ret := ilrw.I(ilrw.OpLdarg0), count[0], ilrw.I(ilrw.OpRet)
	b := &ilrw.Body{Fat: true, MaxStack: 4, FatClauses: true}
	b.Instructions = []*ilrw.Instruction{
		start, ilrw.I(ilrw.OpLdarg1), ilrw.IToken(ilrw.OpCall, done), ilrw.IBranch(ilrw.OpLeave, ret)}
	b.Instructions = append(b.Instructions, count...)
	b.Instructions = append(b.Instructions, ilrw.I(ilrw.OpEndfinally), ret)
	b.Clauses = []*ilrw.Clause{{Kind: ilrw.ClauseFinally, TryStart: start, TryEnd: fin, HandlerStart: fin, HandlerEnd: ret}}
	enc, err := b.Encode()
	if err != nil {
		return fmt.Errorf("encoding Cont: %w", err)
	}
	if err := m.Info.SetILFunctionBody(m.ModuleID, tok, enc); err != nil {
		return fmt.Errorf("installing Cont: %w", err)
	}
	p.cont = tok
	return nil
}

// countEnd is the code adding one to the current thread's shard of c:
// Interlocked.Increment on the shard's address (a native unsigned int the
// JIT takes for the int64& parameter), the shard chosen by the address
// that local pushes (a ldloca or ldarga: on the thread's stack).
func (t *asyncToks) countEnd(c *[taskEndShards]taskEndShard, local *ilrw.Instruction) []*ilrw.Instruction {
	return []*ilrw.Instruction{
		ilrw.IInt(ilrw.OpLdcI8, int64(uintptr(unsafe.Pointer(c)))), ilrw.I(ilrw.OpConvU),
		local, ilrw.I(ilrw.OpConvU), ilrw.LdcI4(20), ilrw.I(ilrw.OpShrUn),
		ilrw.LdcI4(taskEndShards - 1), ilrw.I(ilrw.OpAnd),
		ilrw.LdcI4(int32(unsafe.Sizeof(taskEndShard{}))), ilrw.I(ilrw.OpMul), ilrw.I(ilrw.OpConvU), ilrw.I(ilrw.OpAdd),
		ilrw.IToken(ilrw.OpCall, t.increment), ilrw.I(ilrw.OpPop),
	}
}

// finallyCode is the code that, at the head of the wrap's finally, hands
// the task to DoneN and leaves to after; it branches to sync (the End
// call at return) when an exception leaves the method or the task is
// null.
func (p *asyncPlan) finallyCode(ex ilrw.Exit, exc int, sync, after *ilrw.Instruction) []*ilrw.Instruction {
	t := p.toks
	code := []*ilrw.Instruction{ilrw.LdLoc(exc), ilrw.IBranch(ilrw.OpBrtrue, sync)}
	switch p.shape {
	case taskPlain, taskOfT:
		code = append(code, ilrw.LdLoc(ex.ReturnLocal), ilrw.StLoc(p.task))
	default:
		code = append(code, ldloca(ex.ReturnLocal), ilrw.IToken(ilrw.OpCall, p.asTask), ilrw.StLoc(p.task),
			ldloca(ex.ReturnLocal), ilrw.LdLoc(p.task), ilrw.IToken(ilrw.OpCall, p.ctor))
	}
	count := t.countEnd(&taskEndsRegistered, ldloca(p.task))
	cont := count[0]
	code = append(code, ilrw.LdLoc(p.task), ilrw.IBranch(ilrw.OpBrfalse, sync),
		ilrw.LdLoc(p.task), ilrw.IToken(ilrw.OpCallvirt, t.isCompleted), ilrw.IBranch(ilrw.OpBrfalse, cont),
		ilrw.LdLoc(p.task))
	code = append(code, p.box()...)
	code = append(code, ilrw.IToken(ilrw.OpCall, p.done), ilrw.IBranch(ilrw.OpLeave, after))
	code = append(code, count...)
	code = append(code, ilrw.LdLoc(p.task), ilrw.I(ilrw.OpLdnull), ilrw.IToken(ilrw.OpLdftn, p.cont), ilrw.IToken(ilrw.OpNewobj, t.actionCtor))
	code = append(code, p.box()...)
	return append(code, ilrw.IToken(ilrw.OpCall, t.tokenNone), ilrw.LdcI4(0x80000), // ExecuteSynchronously
		ilrw.IToken(ilrw.OpCall, t.schedulerDefault), ilrw.IToken(ilrw.OpCallvirt, t.continueWith), ilrw.I(ilrw.OpPop),
		ilrw.IBranch(ilrw.OpLeave, after))
}

func ldloca(i int) *ilrw.Instruction {
	if i <= 255 {
		return ilrw.IInt(ilrw.OpLdlocaS, int64(i))
	}
	return ilrw.IInt(ilrw.OpLdloca, int64(i))
}
