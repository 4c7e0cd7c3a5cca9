//go:build cgo

package ilrw

import (
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// Method is a method whose body a Rewriter is offering for rewriting.
type Method struct {
	// Info is the runtime's Info, for calls the rewrite needs.
	Info *profiler.Info
	// ModuleID is the module that defines the method.
	ModuleID profiler.ModuleID
	Token    metadata.Token // the MethodDef
	Module   *Module        // valid during the RewriteFunc call; opened writable on demand
	Body     *Body          // the original body; edit it in place
	ReJIT    bool           // true in GetReJITParameters, false at first JIT
}

// Sig returns the method's signature as declared (what its callers see).
// For a runtime-async method that is not what its body returns: see
// ILSig.
func (m *Method) Sig() (*metadata.MethodSig, error) { return m.Module.MethodSig(m.Token) }

// ILSig returns the method's signature as its body sees it: Sig, except
// that for a runtime-async method (MethodImplAttributes.Async) the return
// type is the unwrapped one (void for Task and ValueTask, T for Task<T>
// and ValueTask<T>), which is what its ret instructions return. Pass it to
// Body.WrapExit.
func (m *Method) ILSig() (*metadata.MethodSig, error) { return m.Module.ILSig(m.Token) }

// Async reports whether the method is runtime async: its implementation
// flags carry MethodImplAttributes.Async (0x2000).
func (m *Method) Async() (bool, error) { return m.Module.IsRuntimeAsync(m.Token) }

// Name returns "Type::Method" as ILAsm writes it: nested types after '/'
// (Shop.Box`1/Inner::Get). Package instr/target's TypeFromIL converts the
// type to the reflection full name that instrumentation targets and
// profiler.Info.FunctionNameParts (through TypeFromProfiler) share.
func (m *Method) Name() string { return m.Module.TokenName(m.Token) }

// RewriteFunc edits m.Body and reports whether it changed it; a method it
// returns false for keeps its IL.
type RewriteFunc func(m *Method) (bool, error)

type methodKey struct {
	module profiler.ModuleID
	token  metadata.Token
}

// Rewriter installs rewritten method bodies: at first JIT compilation
// (call its JITCompilationStarted from the profiler's callback) and
// through ReJIT (call its GetReJITParameters from the callback, and
// RequestReJIT / RequestRevert from any goroutine). The event mask must
// include MonitorJITCompilation for the first, and EnableReJIT at
// Initialize for the second. A method the JIT inlines into its callers is
// not compiled on its own and escapes a first-JIT rewrite: add
// DisableInlining to the event mask (or refuse those inlinings in
// JITInlining) when every call must see the new body.
//
// A method definition is rewritten once per way of installing it and the
// result cached by (module, MethodDef): every instantiation of a generic
// method, which the runtime compiles separately, gets the same IL, and a
// method is never rewritten twice over. MaxStack of every rewritten body is
// recomputed by ComputeMaxStack.
type Rewriter struct {
	info    *profiler.Info
	rewrite RewriteFunc

	mu      sync.Mutex
	jitted  map[methodKey]bool   // first-JIT decisions made
	rejit   map[methodKey][]byte // bodies for ReJIT, by request
	rejitFn map[methodKey]RewriteFunc
	// inlinerFn rewrites the methods a ReJIT with inliners recompiles
	// because they inlined a requested one (nil: their original IL).
	inlinerFn    RewriteFunc
	withInliners bool
	stats        Stats

	reqOnce sync.Once
	reqs    chan func()
}

// Stats counts what a Rewriter did.
type Stats struct {
	Rewritten int // bodies installed at first JIT
	Skipped   int // methods the RewriteFunc left alone
	ReJITted  int // bodies handed to GetReJITParameters
	Errors    int // methods that failed (and kept their IL)
	Widened   int // short branches widened to long ones
}

// NewRewriter returns a Rewriter that applies rewrite at first JIT.
// rewrite may be nil if only ReJIT is used.
func NewRewriter(info *profiler.Info, rewrite RewriteFunc) *Rewriter {
	return &Rewriter{info: info, rewrite: rewrite, jitted: map[methodKey]bool{},
		rejit: map[methodKey][]byte{}, rejitFn: map[methodKey]RewriteFunc{}}
}

// Stats returns the counts so far.
func (r *Rewriter) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.stats
}

func (r *Rewriter) count(f func(*Stats)) {
	r.mu.Lock()
	f(&r.stats)
	r.mu.Unlock()
}

// JITCompilationStarted rewrites the function's method at its first
// compilation. Errors are returned (and counted); the method then keeps
// its original IL.
func (r *Rewriter) JITCompilationStarted(f profiler.FunctionID) error {
	if r.rewrite == nil {
		return nil
	}
	fi, err := r.info.GetFunctionInfo(f)
	if err != nil {
		return err
	}
	return r.Rewrite(fi.ModuleID, fi.Token)
}

// Rewrite rewrites a method before its first compilation, e.g. from
// ModuleLoadFinished for methods known in advance (JITCompilationStarted
// calls it for each function compiled). A method already handled is left
// alone.
func (r *Rewriter) Rewrite(module profiler.ModuleID, method metadata.Token) error {
	if r.rewrite == nil {
		return nil
	}
	k := methodKey{module, method}
	r.mu.Lock()
	seen := r.jitted[k]
	r.jitted[k] = true
	r.mu.Unlock()
	if seen {
		// Another instantiation of a method already handled: the runtime
		// keeps the body set for the definition.
		return nil
	}
	body, changed, err := r.build(k, r.rewrite, false)
	if err != nil {
		r.count(func(s *Stats) { s.Errors++ })
		return err
	}
	if !changed {
		r.count(func(s *Stats) { s.Skipped++ })
		return nil
	}
	if err := r.info.SetILFunctionBody(k.module, k.token, body); err != nil {
		r.count(func(s *Stats) { s.Errors++ })
		return fmt.Errorf("ilrw: installing %v: %w", k.token, err)
	}
	r.count(func(s *Stats) { s.Rewritten++ })
	return nil
}

// build decodes the method's current IL, runs rw, and encodes the result.
func (r *Rewriter) build(k methodKey, rw RewriteFunc, rejit bool) ([]byte, bool, error) {
	il, err := r.info.GetILFunctionBody(k.module, k.token)
	if err != nil {
		return nil, false, fmt.Errorf("ilrw: IL of %v: %w", k.token, err)
	}
	b, err := Decode(il)
	if err != nil {
		return nil, false, fmt.Errorf("ilrw: %v: %w", k.token, err)
	}
	mod, err := OpenModule(r.info, k.module, false)
	if err != nil {
		return nil, false, err
	}
	defer mod.Release()
	m := &Method{Info: r.info, ModuleID: k.module, Token: k.token, Module: mod, Body: b, ReJIT: rejit}
	changed, err := rw(m)
	if err != nil || !changed {
		return nil, false, err
	}
	if _, err := b.ComputeMaxStack(mod); err != nil {
		return nil, false, fmt.Errorf("ilrw: %s: %w", m.Name(), err)
	}
	shorts := countShort(b)
	out, err := b.Encode()
	if err != nil {
		return nil, false, fmt.Errorf("ilrw: %s: %w", m.Name(), err)
	}
	if w := shorts - countShort(b); w > 0 {
		r.count(func(s *Stats) { s.Widened += w })
	}
	return out, true, nil
}

func countShort(b *Body) int {
	n := 0
	for _, in := range b.Instructions {
		if in.Op.Operand() == ShortInlineBrTarget {
			n++
		}
	}
	return n
}

// requests runs fn on the Rewriter's own OS thread, one that never runs
// managed code, as RequestReJIT and RequestRevert require; it waits for
// fn to finish. Do not call it from a profiler callback.
func (r *Rewriter) request(fn func() error) error {
	r.reqOnce.Do(func() {
		r.reqs = make(chan func())
		go func() {
			runtime.LockOSThread() // never unlocked: this thread serves requests only
			for f := range r.reqs {
				f()
			}
		}()
	})
	done := make(chan error, 1)
	r.reqs <- func() {
		defer func() {
			if p := recover(); p != nil {
				done <- fmt.Errorf("ilrw: panic in a ReJIT request: %v", p)
			}
		}()
		done <- fn()
	}
	return <-done
}

// RequestReJIT asks the runtime to recompile methods with the IL that rw
// makes of their original bodies; the new code is used from their next
// call on. It returns once the runtime accepted the request. Call it from
// a goroutine of your own, never from inside a callback.
func (r *Rewriter) RequestReJIT(module profiler.ModuleID, methods []metadata.Token, rw RewriteFunc) error {
	if rw == nil {
		return errors.New("ilrw: RequestReJIT without a RewriteFunc")
	}
	r.mu.Lock()
	for _, t := range methods {
		k := methodKey{module, t}
		r.rejitFn[k] = rw
		delete(r.rejit, k) // a new request rebuilds the body
	}
	r.mu.Unlock()
	mods := make([]profiler.ModuleID, len(methods))
	for i := range mods {
		mods[i] = module
	}
	return r.request(func() error { return r.info.RequestReJIT(mods, methods) })
}

// RequestReJITWithInliners is RequestReJIT through
// ICorProfilerInfo10::RequestReJITWithInliners (.NET Core 3.0 and later):
// the runtime also recompiles every method that inlined one of methods, so
// that no inlined copy of the old body survives. With
// profiler.ReJITBlockInlining in flags, the recompiled code calls the
// requested methods instead of inlining them again. The runtime asks
// GetReJITParameters for those inliners too: inliners rewrites their
// bodies (nil: they are recompiled with the IL they have). Call it from a
// goroutine of your own, never from inside a callback.
func (r *Rewriter) RequestReJITWithInliners(flags profiler.ReJITFlags, module profiler.ModuleID, methods []metadata.Token, rw, inliners RewriteFunc) error {
	if rw == nil {
		return errors.New("ilrw: RequestReJITWithInliners without a RewriteFunc")
	}
	r.mu.Lock()
	for _, t := range methods {
		k := methodKey{module, t}
		r.rejitFn[k] = rw
		delete(r.rejit, k)
	}
	r.inlinerFn, r.withInliners = inliners, true
	r.mu.Unlock()
	mods := make([]profiler.ModuleID, len(methods))
	for i := range mods {
		mods[i] = module
	}
	return r.request(func() error { return r.info.RequestReJITWithInliners(flags, mods, methods) })
}

// RequestRevert asks the runtime to go back to the methods' original code
// (from their next call). Like RequestReJIT, call it from a goroutine.
func (r *Rewriter) RequestRevert(module profiler.ModuleID, methods []metadata.Token) error {
	mods := make([]profiler.ModuleID, len(methods))
	for i := range mods {
		mods[i] = module
	}
	var status []profiler.HRESULT
	err := r.request(func() error {
		var err error
		status, err = r.info.RequestRevert(mods, methods)
		return err
	})
	if err != nil {
		return err
	}
	for i, s := range status {
		if s < 0 {
			return fmt.Errorf("ilrw: reverting %v: %w", methods[i], s)
		}
	}
	r.mu.Lock()
	for _, t := range methods {
		delete(r.rejit, methodKey{module, t})
		delete(r.rejitFn, methodKey{module, t})
	}
	r.mu.Unlock()
	return nil
}

// GetReJITParameters hands the runtime the rewritten body of a method
// being recompiled after RequestReJIT. The body is built once per request
// and reused if the runtime asks again.
func (r *Rewriter) GetReJITParameters(module profiler.ModuleID, method metadata.Token, fc *profiler.FunctionControl) error {
	k := methodKey{module, method}
	r.mu.Lock()
	body, ok := r.rejit[k]
	rw := r.rejitFn[k]
	inliner := rw == nil && r.withInliners
	if inliner {
		rw = r.inlinerFn
	}
	r.mu.Unlock()
	if !ok {
		if inliner && rw == nil {
			return nil // an inliner recompiled with its own IL
		}
		if rw == nil {
			return fmt.Errorf("ilrw: GetReJITParameters for %v, which was not requested", method)
		}
		b, changed, err := r.build(k, rw, true)
		if err != nil {
			r.count(func(s *Stats) { s.Errors++ })
			return err
		}
		if !changed {
			return nil // recompiled with the original IL
		}
		body = b
		r.mu.Lock()
		r.rejit[k] = body
		r.mu.Unlock()
	}
	if err := fc.SetILFunctionBody(body); err != nil {
		r.count(func(s *Stats) { s.Errors++ })
		return fmt.Errorf("ilrw: SetILFunctionBody for %v: %w", method, err)
	}
	r.count(func(s *Stats) { s.ReJITted++ })
	return nil
}
