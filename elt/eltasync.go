package elt

import (
	"os"
	"strings"

	"github.com/clrprof/clrprof/internal/profimpl"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// Runtime async and the enter/leave hooks (docs/runtime-async.md).
//
// .NET 10's JIT mis-compiles two kinds of hooked runtime-async code, so
// that the application misbehaves; the SDK gives those functions no hooks
// on .NET 10 (its function ID mapper answers "no hooks" for them, whatever
// the user's filter says). .NET 11.0.0 compiles both right.
//
//   - The AsyncSuspend intrinsic (System.Private.CoreLib's
//     AsyncHelpers.AwaitAwaiter<T> and UnsafeAwaitAwaiter<T>, which every
//     runtime-async await that suspends goes through) compiled at Tier0 or
//     MinOpts with a leave hook: the JIT puts the continuation in rcx and
//     then emits the normal return's "xor ecx, ecx" and the leave hook
//     call, so the suspension returns no continuation and the caller runs
//     on as if the awaited operation had completed. An await of a Task then
//     blocks its thread, Task.Yield does not yield, and an await of a
//     ValueTask over an IValueTaskSource (an async iterator's MoveNextAsync,
//     DisposeAsync) throws InvalidOperationException or
//     NotSupportedException. Seen on 10.0.15 with DOTNET_RuntimeAsync=1:
//     the disassembly (DOTNET_JitDisasm) shows "mov rcx, rax; xor ecx, ecx;
//     call [CORINFO_HELP_PROF_FCN_LEAVE]".
//   - Every async variant with the slow-path hooks
//     (SetEnterLeaveFunctionHooks3WithInfo): the JIT zeroes rcx, the
//     continuation register, before the leave hook, and the runtime's
//     leave helper does not preserve rcx, so a normal return hands its
//     caller a garbage continuation: an access violation (seen on 10.0.15;
//     dotnet/runtime#122475, fixed in 11 by #122490, which zeroes rcx after
//     the hook). Async variants are the bodies of runtime-async methods
//     (MethodImplAttributes.Async) and the thunks the runtime makes for
//     every other Task- or ValueTask-returning method that a runtime-async
//     caller awaits (an async iterator's MoveNextAsync and DisposeAsync,
//     for instance). The SDK's fast-path stubs preserve rcx, so NewRecorder
//     and NewCallCounter keep these functions' hooks.
//
// A method's two compilations (the Task-returning entry and the async
// variant) share one metadata token, and the profiling API does not say
// which one a FunctionID is, so on .NET 10 with runtime async on
// (DOTNET_RuntimeAsync=1, or COMPlus_RuntimeAsync=1; without it no async
// variant is ever made) EnableWithInfo hooks neither: no method with
// MethodImplAttributes.Async and no method whose declared return type is
// Task, Task<T>, ValueTask or ValueTask<T>.

// miAsync is MethodImplAttributes.Async: the method is runtime async.
const miAsync metadata.MethodImpl = 0x2000

// eltGuard says which functions the SDK never hooks on this runtime.
type eltGuard struct {
	info *profiler.Info
	// allAsync: no method that may have an async variant gets hooks (the
	// slow path on .NET 10 with runtime async on); otherwise only the
	// AsyncSuspend callers.
	allAsync bool
}

// runtimeAsyncOn reports whether .NET 10's runtime async is turned on in
// this process's environment (it is off by default on .NET 10).
func runtimeAsyncOn() bool {
	for _, k := range []string{"DOTNET_RuntimeAsync", "COMPlus_RuntimeAsync"} {
		if v := os.Getenv(k); v != "" && v != "0" {
			return true
		}
	}
	return false
}

// newELTGuard returns the guard the runtime needs, nil when none (every
// runtime but .NET 10).
func newELTGuard(info *profiler.Info, withInfo bool) *eltGuard {
	major, err := info.RuntimeMajor()
	if err != nil || major != 10 {
		return nil
	}
	return &eltGuard{info: info, allAsync: withInfo && runtimeAsyncOn()}
}

// excludes reports whether f must not get hooks. Called by the function ID
// mapper, once per function, when the runtime compiles it.
func (g *eltGuard) excludes(f profiler.FunctionID) bool {
	fi, err := g.info.GetFunctionInfo(f)
	if err != nil || fi.ModuleID == 0 {
		return false
	}
	imp, done, err := profimpl.ModuleImport(g.info, uintptr(fi.ModuleID))
	if err != nil {
		return false
	}
	defer done()
	m, err := imp.Method(fi.Token)
	if err != nil {
		return false
	}
	if g.allAsync && (m.ImplFlags&miAsync != 0 || returnsTask(imp, m.Sig)) {
		return true
	}
	if m.ImplFlags&miAsync == 0 {
		return false
	}
	if m.Name != "AwaitAwaiter" && m.Name != "UnsafeAwaitAwaiter" {
		return false
	}
	cls, err := imp.TypeDefDisplayName(m.Class, nil)
	return err == nil && cls == "System.Runtime.CompilerServices.AsyncHelpers"
}

// returnsTask reports whether a method signature's return type is Task,
// Task<T>, ValueTask or ValueTask<T> (System.Threading.Tasks).
func returnsTask(imp *metadata.Import2, sig []byte) bool {
	ms, err := metadata.ParseMethodSig(sig)
	if err != nil || ms.Return == nil {
		return false
	}
	t := ms.Return
	if t.Kind == metadata.ElementTypeGenericinst && t.Elem != nil {
		t = t.Elem
	}
	if t.Kind != metadata.ElementTypeClass && t.Kind != metadata.ElementTypeValuetype {
		return false
	}
	n, err := imp.TypeName(t.Token, nil)
	if err != nil {
		return false
	}
	n, _, _ = strings.Cut(n, "`")
	n, _, _ = strings.Cut(n, "<")
	return n == "System.Threading.Tasks.Task" || n == "System.Threading.Tasks.ValueTask"
}

// Roles in call counting (the bits clrprofGoELTFilter adds for the
// function ID mapper of eltcount.c).
const (
	eltRoleDispatch  = 2 // the runtime's continuation dispatcher
	eltRoleMayResume = 4 // may be an async variant
)

// asyncDispatchers are the methods of System.Private.CoreLib that resume
// runtime-async continuations (each calls the resumption stub, which calls
// the resumed method): declaring class prefix and method name (a trailing
// "*" matches a name prefix). .NET 10.0.15: ThunkTaskCore.MoveNext; .NET
// 11.0.0: RuntimeAsyncTask<T>.DispatchContinuations and, when the
// runtime's async instrumentation or a ValueTask source resumes one, the
// others (found by the calli to the resumption stub in their IL).
var asyncDispatchers = []struct{ class, method string }{
	{"System.Runtime.CompilerServices.AsyncHelpers+ThunkTaskCore", "MoveNext"},
	{"System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncTask", "DispatchContinuations"},
	{"System.Runtime.CompilerServices.AsyncHelpers+RuntimeAsyncInstrumentationHelpers", "ResumeContinuation"},
	{"System.Runtime.CompilerServices.AsyncHelpers+ValueTaskSourceContinuation+ValueTaskSourceContinuationResume", "GetResult"},
	{"System.Runtime.CompilerServices.AsyncProfiler+ContinuationWrapper+ContinuationWrapperTable", "Dispatch"},
	{"System.Runtime.CompilerServices.AsyncProfiler+ContinuationWrapper+ContinuationWrapperTable", "Continuation_Wrapper_*"},
}

// asyncRole returns f's eltRole bits: a continuation dispatcher, or a
// function that may be an async variant (a runtime-async method, or a
// Task- or ValueTask-returning one, for which the runtime makes an async
// variant when a runtime-async caller awaits it). The FunctionID of an
// async variant cannot be told from its method's other compilation, so
// both get the bit; the counter only uses it for an enter directly under
// a dispatcher, which only a resumption is.
func asyncRole(info *profiler.Info, f profiler.FunctionID) int {
	fi, err := info.GetFunctionInfo(f)
	if err != nil || fi.ModuleID == 0 {
		return 0
	}
	imp, done, err := profimpl.ModuleImport(info, uintptr(fi.ModuleID))
	if err != nil {
		return 0
	}
	defer done()
	m, err := imp.Method(fi.Token)
	if err != nil {
		return 0
	}
	if m.ImplFlags&miAsync != 0 || returnsTask(imp, m.Sig) {
		return eltRoleMayResume
	}
	for _, d := range asyncDispatchers {
		name, prefix := d.method, false
		if strings.HasSuffix(name, "*") {
			name, prefix = strings.TrimSuffix(name, "*"), true
		}
		if m.Name != name && !(prefix && strings.HasPrefix(m.Name, name)) {
			continue
		}
		cls, err := imp.TypeDefDisplayName(m.Class, nil)
		if err == nil && strings.HasPrefix(cls, d.class) {
			return eltRoleDispatch
		}
	}
	return 0
}
