//go:build cgo

package instr

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/typeref"
)

// Rule applies an Integration to the methods its targets name.
type Rule struct {
	Targets     []target.Target
	Integration Integration
	// Go, when set, makes the targets call Go functions in the profiler
	// library instead of a managed integration (Integration is then
	// ignored): see GoHooks.
	Go *GoHooks
	// EndAtReturn keeps End (or a Go Exit hook) at the return of a
	// target declared to return Task, Task<T>, ValueTask or ValueTask<T>,
	// with the task as the return value (for classic async: when the
	// stub returns at the first await that does not complete at once).
	// By default End runs when the task completes, with its result or
	// the exception it faulted with (docs/instrumentation.md, "Async
	// methods: what End sees").
	EndAtReturn bool
}

// Config configures an Instrumenter.
type Config struct {
	Rules []Rule
	// Prepare, when set, runs on every method compiled for the first time
	// (a target or not), before the wrap and on the same body: a hook for
	// other first-JIT edits, such as injecting the code that loads the
	// helper assembly. It reports whether it changed the body.
	Prepare ilrw.RewriteFunc
	// Preparing, when set, tells whether Prepare still wants to see
	// methods: while it answers false, a method that is not a target is
	// not offered to Prepare, which saves decoding its body at every JIT
	// compilation.
	Preparing func() bool
	// ReJIT enables ReJIT (the event mask's EnableReJIT, which must be set
	// at Initialize): needed to instrument precompiled (ReadyToRun)
	// methods, methods compiled before their target was added
	// (AddRule) and, after an attach, methods already running
	// (InstrumentLoaded).
	ReJIT bool
	// Ready, when set, tells whether the helper assemblies can be resolved
	// yet. A target compiled (or a precompiled module loaded) while it
	// answers false is left as it is and remembered: HelperReady later
	// instruments those methods through ReJIT (with Config.ReJIT) or
	// reports them as failed. Unset, the helpers (installed beside the
	// app) count as resolvable from the load of the first module that is
	// not precompiled, the app's own normally: framework methods wrapped
	// while the runtime starts could not load them.
	Ready func() bool

	// delivery, set by Delivery.Configure, hosts the loader in targets
	// recompiled by ReJIT before the helpers are loaded (after an attach).
	delivery *Delivery
	// Errors, when set, names a method that receives what Begin or End
	// threw (the wrap drops it either way; what Errors.Method throws is
	// dropped too): static void Method(int id, object exception).
	Errors *ErrorSink
}

// Method is a method a target matched.
type Method struct {
	// ID is what Begin and End receive for this method; stable for the
	// life of the process.
	ID int32
	// Name is the method in target syntax: assembly!Type::Method.
	Name string
	// Params are the parameter types, as a parameter list of a target
	// spells them.
	Params   []string
	Module   profiler.ModuleID
	Token    metadata.Token
	Target   target.Target // the target that matched it
	ReJIT    bool          // instrumented (or to be) through ReJIT
	Compiled bool          // the instrumented code was handed to the runtime
}

// Failure is a method a target matched that could not be instrumented.
type Failure struct {
	Method string // in target syntax
	Reason string
}

func (f Failure) String() string { return f.Method + ": " + f.Reason }

// Report is what an Instrumenter did so far.
type Report struct {
	// Instrumented are the methods whose wrapped code the runtime has
	// (at first JIT, or for ReJIT when the runtime asked for the body).
	Instrumented []Method
	// Pending are matched methods not compiled yet: not called so far,
	// or waiting for a ReJIT the runtime has not carried out.
	Pending []Method
	// Failed are matched methods that could not be instrumented, with
	// the reason.
	Failed []Failure
	// Unmatched are the targets that matched no method so far (their
	// assembly may not have loaded yet).
	Unmatched []target.Target
	// WithoutBody counts methods a wildcard target ('*' for the method)
	// matched that have no IL to wrap (abstract, extern, runtime
	// methods): nothing runs there. A method named explicitly without a
	// body is a Failure.
	WithoutBody int
	// Absent are the Optional members (GoHooks.Members) that did not
	// resolve in methods wrapped without them (they read null), with the
	// reason.
	Absent []Failure
}

type key struct {
	module profiler.ModuleID
	token  metadata.Token
}

type entry struct {
	Method
	integ   *Integration
	typeTok metadata.Token
	valueTy bool
	generic int
	static  bool
	ngen    bool // in a precompiled module
	failed  string
	absent  []string // Optional members that did not resolve (GoHooks.Members)
	early   bool     // compiled before the helper was ready: left alone
	goh     *GoHooks // Go hooks instead of the managed integration
	atRet   bool     // Rule.EndAtReturn
}

type module struct {
	asm  string
	ngen bool
	// byRefLike memoizes IsByRefLike by type token.
	byRefLike map[metadata.Token]bool
}

type targetRef struct{ rule, target int }

// Instrumenter wraps the methods that its rules' targets name. Create it
// in Initialize, OR EventMask into the profiler's mask, and forward the
// callbacks its methods are named after. Methods are safe for concurrent
// use.
type Instrumenter struct {
	info *profiler.Info
	rw   *ilrw.Rewriter
	reqs sync.WaitGroup // ReJIT requests under way on goroutines

	mu       sync.Mutex
	cfg      Config
	modules  map[profiler.ModuleID]*module
	entries  map[key]*entry
	byID     []*entry
	hits     map[targetRef]int
	failures []Failure
	noBody   int
	inlined  map[key][]key                          // before ICorProfilerInfo10: callee -> callers that inlined it
	ready    bool                                   // HelperReady was called
	waiting  map[profiler.ModuleID][]metadata.Token // ReJITs waiting for HelperReady

	typesOnce sync.Once
	types     *typeref.Resolver // the types of members' and actions' paths in other modules
}

// typeResolver returns the resolver of other modules' types.
func (in *Instrumenter) typeResolver() *typeref.Resolver {
	in.typesOnce.Do(func() { in.types = typeref.New(in.info) })
	return in.types
}

// New returns an Instrumenter for the profiler whose Info is info.
func New(info *profiler.Info, cfg Config) (*Instrumenter, error) {
	cfg.Rules = append([]Rule(nil), cfg.Rules...) // the defaults below are the Instrumenter's own
	for ri := range cfg.Rules {
		if err := checkRule(&cfg.Rules[ri]); err != nil {
			return nil, err
		}
	}
	in := &Instrumenter{info: info, cfg: cfg, modules: map[profiler.ModuleID]*module{},
		entries: map[key]*entry{}, hits: map[targetRef]int{}, waiting: map[profiler.ModuleID][]metadata.Token{}}
	in.rw = ilrw.NewRewriter(info, in.rewriteFirstJIT)
	return in, nil
}

func checkIntegration(integ *Integration) error {
	if integ.Assembly.Name == "" || integ.Type == "" {
		return errors.New("instr: an Integration needs its Assembly and Type")
	}
	if integ.Begin == "" {
		integ.Begin = "Begin"
	}
	if integ.End == "" {
		integ.End = "End"
	}
	return nil
}

// EventMask is what the Instrumenter needs in the event mask:
// MonitorModuleLoads and MonitorJITCompilation, and EnableReJIT with
// Config.ReJIT.
func (in *Instrumenter) EventMask() profiler.Monitor {
	m := profiler.MonitorModuleLoads | profiler.MonitorJITCompilation
	if in.cfg.ReJIT {
		m |= profiler.EnableReJIT
	}
	return m
}

// Method returns the method an id (as Begin and End receive it) names.
func (in *Instrumenter) Method(id int32) (Method, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if id < 0 || int(id) >= len(in.byID) {
		return Method{}, false
	}
	return in.byID[id].Method, true
}

// Lookup returns the matched method a module's MethodDef is, if any.
func (in *Instrumenter) Lookup(m profiler.ModuleID, method metadata.Token) (Method, bool) {
	if e := in.lookup(m, method); e != nil {
		in.mu.Lock()
		defer in.mu.Unlock()
		return e.Method, true
	}
	return Method{}, false
}

// ModuleLoadFinished finds the methods of the module that targets name.
// Methods of a precompiled (ReadyToRun) module are instrumented through
// ReJIT when Config.ReJIT is set, since their precompiled code is used
// without a JIT compilation.
func (in *Instrumenter) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	news, ngen, err := in.scanModule(m, -1, false)
	if err != nil {
		return err
	}
	if !ngen && in.cfg.Ready == nil {
		// Without Config.Ready, the helper counts as resolvable from the
		// load of the first module that is not precompiled (the app's,
		// normally): earlier, while the runtime starts, framework code
		// that ReJIT wrapped could not load it (.NET Core 2.1 failed to
		// start, or crashed unwinding the exception).
		defer in.HelperReady()
	}
	if ngen && in.cfg.ReJIT && len(news) > 0 {
		if !in.helperReady() {
			in.mu.Lock()
			if !in.ready { // else HelperReady came meanwhile (and took waiting)
				in.waiting[m] = append(in.waiting[m], news...)
				in.mu.Unlock()
				return nil
			}
			in.mu.Unlock()
		}
		in.reqs.Add(1)
		go func() {
			defer in.reqs.Done()
			in.requestReJIT(m, news)
		}()
	}
	return nil
}

// WaitReJIT waits until the runtime has accepted the ReJIT requests the
// Instrumenter made on goroutines of its own so far (at module loads and
// after HelperReady): from then on, the next call of those methods runs
// the wrapped code. Never call it from a profiler callback.
func (in *Instrumenter) WaitReJIT() {
	in.reqs.Wait()
}

func (in *Instrumenter) helperReady() bool {
	in.mu.Lock()
	r := in.ready
	in.mu.Unlock()
	if r {
		return true
	}
	if in.cfg.Ready == nil {
		return false // until the first module that is not precompiled loads
	}
	return in.cfg.Ready()
}

// HelperReady tells the Instrumenter that the helper assemblies can now be
// resolved (see Config.Ready): targets compiled before are instrumented
// through ReJIT (Config.ReJIT) or reported as failed, and the ReJIT of
// precompiled modules loaded before goes ahead. It returns at once (the
// ReJIT requests run on a goroutine of their own); any goroutine may call
// it, a profiler callback too.
func (in *Instrumenter) HelperReady() {
	in.mu.Lock()
	if in.ready {
		in.mu.Unlock()
		return
	}
	in.ready = true
	todo := in.waiting
	in.waiting = nil
	for _, e := range in.byID {
		if !e.early {
			continue
		}
		e.early = false
		if in.cfg.ReJIT {
			e.ReJIT = true
			if todo == nil {
				todo = map[profiler.ModuleID][]metadata.Token{}
			}
			todo[e.Module] = append(todo[e.Module], e.Token)
		} else if e.failed == "" {
			e.failed = "compiled before the helper assembly was loaded (set Config.ReJIT to instrument it later)"
		}
	}
	in.mu.Unlock()
	if len(todo) > 0 {
		in.reqs.Add(1)
		go func() {
			defer in.reqs.Done()
			for m, toks := range todo {
				in.requestReJIT(m, toks)
			}
		}()
	}
}

func (in *Instrumenter) assemblyOf(m profiler.ModuleID) (string, bool, error) {
	mi, err := in.info.GetModuleInfo2(m)
	if err != nil && mi.AssemblyID == 0 {
		return "", false, err
	}
	ai, err := in.info.GetAssemblyInfo(mi.AssemblyID)
	if err != nil {
		return "", false, err
	}
	return ai.Name, mi.ModuleFlags&profiler.ModuleNGen != 0, nil
}

// scanModule registers the methods of module m that the rules name (only
// rule onlyRule when >= 0). With rejit, new entries are instrumented
// through ReJIT. It returns the tokens of the new entries.
func (in *Instrumenter) scanModule(m profiler.ModuleID, onlyRule int, rejit bool) ([]metadata.Token, bool, error) {
	in.mu.Lock()
	mod := in.modules[m]
	rules := in.cfg.Rules
	in.mu.Unlock()
	if mod == nil {
		asm, ngen, err := in.assemblyOf(m)
		if err != nil {
			return nil, false, fmt.Errorf("instr: module %v: %w", m, err)
		}
		mod = &module{asm: asm, ngen: ngen, byRefLike: map[metadata.Token]bool{}}
		in.mu.Lock()
		if old := in.modules[m]; old != nil {
			mod = old
		} else {
			in.modules[m] = mod
		}
		in.mu.Unlock()
	}
	var refs []targetRef
	for ri, r := range rules {
		if onlyRule >= 0 && ri != onlyRule {
			continue
		}
		for ti, t := range r.Targets {
			if t.MatchesAssembly(mod.asm) {
				refs = append(refs, targetRef{ri, ti})
			}
		}
	}
	if len(refs) == 0 {
		return nil, mod.ngen, nil
	}
	for _, r := range rules {
		if strings.EqualFold(r.Integration.Assembly.Name, mod.asm) {
			in.mu.Lock()
			for _, tr := range refs {
				in.hits[tr]++ // reported here, not as unmatched
				in.failures = append(in.failures, Failure{rules[tr.rule].Targets[tr.target].String(),
					"the target is in the integration's own assembly, which is never instrumented"})
			}
			in.mu.Unlock()
			return nil, mod.ngen, nil
		}
	}
	imp, err := in.info.ModuleImport(m)
	if err != nil {
		return nil, mod.ngen, fmt.Errorf("instr: metadata of %s: %w", mod.asm, err)
	}
	defer imp.Release()
	tds, err := imp.TypeDefs()
	if err != nil {
		return nil, mod.ngen, fmt.Errorf("instr: types of %s: %w", mod.asm, err)
	}
	// <Module>, the global type, is TypeDef 1; TypeDefs leaves it out.
	tds = append([]metadata.Token{metadata.Token(0x02000001)}, tds...)
	var news []metadata.Token
	for _, td := range tds {
		tname, err := imp.TypeDefName(td)
		if err != nil || sdkType(tname) {
			continue
		}
		var trefs []targetRef
		for _, tr := range refs {
			if rules[tr.rule].Targets[tr.target].MatchesType(tname) {
				trefs = append(trefs, tr)
			}
		}
		if len(trefs) == 0 {
			continue
		}
		tinfo, err := imp.TypeDef(td)
		if err != nil {
			continue
		}
		valueTy := isValueType(imp, tinfo)
		gps, _ := imp.GenericParams(td)
		methods, err := imp.Methods(td)
		if err != nil {
			continue
		}
		for _, md := range methods {
			mi, err := imp.Method(md)
			if err != nil {
				continue
			}
			var params []string
			var sig *metadata.MethodSig
			name := target.Name(mod.asm, tname, mi.Name)
			var hit *targetRef
			for i, tr := range trefs {
				t := rules[tr.rule].Targets[tr.target]
				if t.Method != target.Any && t.Method != mi.Name {
					continue
				}
				if t.HasParams && params == nil {
					if sig == nil {
						if sig, err = metadata.ParseMethodSig(mi.Sig); err != nil {
							break
						}
					}
					params = paramNames(imp, sig)
				}
				if t.Matches(mod.asm, tname, mi.Name, params) {
					hit = &trefs[i]
					break
				}
			}
			if hit == nil {
				continue
			}
			t := rules[hit.rule].Targets[hit.target]
			in.mu.Lock()
			in.hits[*hit]++
			k := key{m, md}
			if in.entries[k] != nil {
				in.mu.Unlock()
				continue // an earlier rule has it
			}
			if mi.RVA == 0 || mi.Flags&(metadata.MdAbstract|metadata.MdPinvokeImpl) != 0 || mi.ImplFlags&metadata.MiCodeTypeMask != metadata.MiIL {
				if t.Method == target.Any {
					in.noBody++
				} else {
					in.failures = append(in.failures, Failure{name, "no IL body (abstract, extern, P/Invoke or runtime-implemented)"})
				}
				in.mu.Unlock()
				continue
			}
			if params == nil {
				if sig == nil {
					sig, _ = metadata.ParseMethodSig(mi.Sig)
				}
				if sig != nil {
					params = paramNames(imp, sig)
				}
			}
			e := &entry{Method: Method{ID: int32(len(in.byID)), Name: name, Params: params, Module: m, Token: md,
				Target: t, ReJIT: rejit || (mod.ngen && in.cfg.ReJIT)},
				integ: &in.cfg.Rules[hit.rule].Integration, typeTok: td, valueTy: valueTy, generic: len(gps),
				static: mi.Flags&metadata.MdStatic != 0, ngen: mod.ngen, goh: in.cfg.Rules[hit.rule].Go,
				atRet: in.cfg.Rules[hit.rule].EndAtReturn}
			in.entries[k] = e
			in.byID = append(in.byID, e)
			in.mu.Unlock()
			news = append(news, md)
		}
	}
	return news, mod.ngen, nil
}

// baseName is the name of the type t extends ("" for none, or a generic
// instantiation), read from its TypeRef or TypeDef without resolving it.
func baseName(imp *metadata.Import2, t metadata.TypeDefInfo) string {
	var base string
	switch metadata.TokenType(t.Extends.Table()) {
	case metadata.MdtTypeRef:
		base, _ = imp.TypeRefName(t.Extends)
	case metadata.MdtTypeDef:
		base, _ = imp.TypeDefName(t.Extends)
	}
	return base
}

// isValueType tells whether a TypeDef is a value type: it extends
// System.ValueType or System.Enum (and is not System.Enum itself).
func isValueType(imp *metadata.Import2, t metadata.TypeDefInfo) bool {
	if t.Extends.IsNil() {
		return false
	}
	base := baseName(imp, t)
	self := metadata.JoinTypeName(t.Namespace, t.Name)
	return (base == "System.ValueType" && self != "System.Enum") || base == "System.Enum"
}

// ModuleUnloadStarted forgets the module's methods (a module loaded later
// may get the same ModuleID); Report keeps what was done to them.
func (in *Instrumenter) ModuleUnloadStarted(m profiler.ModuleID) error {
	in.typeResolver().Forget(m)
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.modules, m)
	delete(in.waiting, m)
	for k := range in.entries {
		if k.module == m {
			delete(in.entries, k)
		}
	}
	for _, e := range in.byID {
		if e.Module == m && !e.Compiled && e.failed == "" {
			e.failed = "its module unloaded before it was compiled"
			if e.early {
				e.early = false
			}
		}
	}
	return nil
}

// JITCompilationStarted instruments a matched method at its first
// compilation (and runs Config.Prepare on every method).
func (in *Instrumenter) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	fi, err := in.info.GetFunctionInfo(f)
	if err != nil {
		return nil
	}
	k := key{fi.ModuleID, fi.Token}
	in.mu.Lock()
	e := in.entries[k]
	in.mu.Unlock()
	if e == nil && (in.cfg.Prepare == nil || (in.cfg.Preparing != nil && !in.cfg.Preparing())) {
		return nil
	}
	if err := in.rw.Rewrite(fi.ModuleID, fi.Token); err != nil && e != nil {
		in.fail(e, err.Error())
	}
	return nil
}

func (in *Instrumenter) fail(e *entry, reason string) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if e.failed == "" {
		e.failed = reason
		e.Compiled = false
	}
}

func (in *Instrumenter) lookup(m profiler.ModuleID, tok metadata.Token) *entry {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.entries[key{m, tok}]
}

func (in *Instrumenter) rewriteFirstJIT(m *ilrw.Method) (bool, error) {
	changed := false
	if in.cfg.Prepare != nil {
		c, err := in.cfg.Prepare(m)
		if err != nil {
			return false, err
		}
		changed = c
	}
	e := in.lookup(m.ModuleID, m.Token)
	if e == nil || e.ReJIT {
		return changed, nil
	}
	if e.ngen {
		// A method of a precompiled module compiled by the JIT is either
		// missing from the image or being recompiled by tiered
		// compilation, which cannot be told apart here, and a body set
		// at a recompilation is not reliably used (seen on 3.1: reported
		// wrapped, never ran wrapped). Precompiled modules take ReJIT;
		// Report says so.
		return changed, nil
	}
	if e.goh == nil && !in.helperReady() {
		in.mu.Lock()
		e.early = true
		in.mu.Unlock()
		return changed, nil
	}
	return in.instrument(m, e) || changed, nil
}

func (in *Instrumenter) rewriteReJIT(m *ilrw.Method) (bool, error) {
	e := in.lookup(m.ModuleID, m.Token)
	if e == nil {
		return false, nil
	}
	if d := in.cfg.delivery; d != nil && !in.helperReady() {
		// A first ReJIT, before the helpers exist: the loader's call
		// only (rejitModules); HelperReady brings the wrap.
		return d.injectReJIT(m)
	}
	return in.instrument(m, e), nil
}

// instrument wraps m's body for e; on failure it records why and leaves
// the body as it was.
func (in *Instrumenter) instrument(m *ilrw.Method, e *entry) bool {
	if alreadyWrapped(m, e) {
		return false
	}
	saved, err := m.Body.Encode()
	if err != nil {
		in.fail(e, "encoding the original body: "+err.Error())
		return false
	}
	err = in.wrapMethod(m, e)
	if err != nil {
		if orig, derr := ilrw.Decode(saved); derr == nil {
			*m.Body = *orig
		}
		in.fail(e, err.Error())
		return false
	}
	in.mu.Lock()
	e.Compiled, e.failed = true, ""
	in.mu.Unlock()
	return true
}

// alreadyWrapped tells a body this package wrapped before (the runtime
// may hand the rewritten IL back): it calls the integration's Begin with
// the entry's id first.
func alreadyWrapped(m *ilrw.Method, e *entry) bool {
	if len(m.Body.Clauses) == 0 {
		return false
	}
	for _, in := range m.Body.Instructions {
		if in.Op == ilrw.OpCall || in.Op == ilrw.OpCallvirt || in.Op == ilrw.OpNewobj {
			name := m.Module.TokenName(in.Token)
			if e.goh != nil {
				// A Go rule's wrap calls either entry (a Deferred rule's
				// runtime-async methods get the synchronous one), after
				// the getters of the members it reads.
				if strings.HasSuffix(name, goHooksType+"::Enter") || strings.HasSuffix(name, goHooksQType+"::Enter") {
					return true
				}
				if len(e.goh.Members) > 0 {
					continue
				}
				return false
			}
			return strings.HasSuffix(name, e.integ.Type+"::"+e.integ.Begin)
		}
	}
	return false
}

func (in *Instrumenter) wrapMethod(m *ilrw.Method, e *entry) error {
	if e.goh != nil {
		return in.wrapGo(m, e)
	}
	ns, name := metadata.SplitTypeName(e.integ.Type)
	begin, err := m.Module.ExternalMethod(e.integ.Assembly, ns, name, e.integ.Begin, beginSig)
	if err != nil {
		return err
	}
	end, err := m.Module.ExternalMethod(e.integ.Assembly, ns, name, e.integ.End, endSig)
	if err != nil {
		return err
	}
	sig, err := m.ILSig() // a runtime-async method's return unwrapped
	if err != nil {
		return err
	}
	w := &wrapper{body: m.Body, sig: sig, em: m.Module, id: e.ID, args: e.integ.Args, typeTok: e.typeTok, valueTy: e.valueTy,
		generic: e.generic, static: e.static}
	if s := in.cfg.Errors; s != nil {
		ns, name := metadata.SplitTypeName(s.Type)
		if w.sink, err = m.Module.ExternalMethod(s.Assembly, ns, name, s.Method, sinkSig); err != nil {
			return err
		}
	}
	w.byRefLike = func(tok metadata.Token) bool { return in.isByRefLike(m, tok) }
	if w.async, err = planAsync(m, e); err != nil {
		return err
	}
	if w.async != nil {
		// DoneN: End(id, state, result, exception), the state in ldarg.1.
		err := w.async.defineDone(m, w, func(w2 *wrapper, ex ilrw.Exit, exc int) ([]*ilrw.Instruction, error) {
			return w2.endCall(ex, end, ilrw.I(ilrw.OpLdarg1), exc)
		})
		if err != nil {
			return err
		}
	}
	return w.wrap(begin, end)
}

// byRefLikeRefs are the byref-like types of the framework a TypeRef may
// name (a TypeDef is checked for IsByRefLikeAttribute).
var byRefLikeRefs = map[string]bool{
	"System.Span`1": true, "System.ReadOnlySpan`1": true, "System.TypedReference": true,
	"System.ArgIterator": true, "System.RuntimeArgumentHandle": true,
	"System.Runtime.CompilerServices.DefaultInterpolatedStringHandler": true,
	"System.Text.ValueStringBuilder":                                   true,
}

func (in *Instrumenter) isByRefLike(m *ilrw.Method, tok metadata.Token) bool {
	in.mu.Lock()
	mod := in.modules[m.ModuleID]
	if mod != nil {
		if v, ok := mod.byRefLike[tok]; ok {
			in.mu.Unlock()
			return v
		}
	}
	in.mu.Unlock()
	imp := m.Module.Import
	v := false
	switch metadata.TokenType(tok.Table()) {
	case metadata.MdtTypeDef:
		_, found, err := imp.CustomAttributeByName(tok, "System.Runtime.CompilerServices.IsByRefLikeAttribute")
		v = found || err != nil
	case metadata.MdtTypeRef:
		n, err := imp.TypeRefName(tok)
		v = err != nil || byRefLikeRefs[n]
	default:
		v = true // unknown: never box it
	}
	if mod != nil {
		in.mu.Lock()
		mod.byRefLike[tok] = v
		in.mu.Unlock()
	}
	return v
}

// JITInlining refuses to inline a matched method into its callers, so
// that every call runs the wrapped code. With Config.ReJIT on a runtime
// without RequestReJITWithInliners (before .NET Core 3.0), it also
// remembers which callers inlined which methods, so that a method
// instrumented later through ReJIT has those callers recompiled too.
func (in *Instrumenter) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	fi, err := in.info.GetFunctionInfo(callee)
	if err != nil {
		return true, nil
	}
	k := key{fi.ModuleID, fi.Token}
	if in.lookup(k.module, k.token) != nil {
		return false, nil
	}
	if in.cfg.ReJIT && in.info.Version() < 10 {
		if ci, err := in.info.GetFunctionInfo(caller); err == nil {
			ck := key{ci.ModuleID, ci.Token}
			in.mu.Lock()
			if in.inlined == nil {
				in.inlined = map[key][]key{}
			}
			if l := in.inlined[k]; len(l) == 0 || l[len(l)-1] != ck {
				in.inlined[k] = append(l, ck)
			}
			in.mu.Unlock()
		}
	}
	return true, nil
}

// GetReJITParameters hands the runtime the wrapped body of a method
// instrumented through ReJIT.
func (in *Instrumenter) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	err := in.rw.GetReJITParameters(m, tok, fc)
	if err != nil {
		if e := in.lookup(m, tok); e != nil {
			in.fail(e, err.Error())
		}
	}
	return err
}

// ReJITError records a failed ReJIT of a matched method.
func (in *Instrumenter) ReJITError(m profiler.ModuleID, tok metadata.Token, _ profiler.FunctionID, hr profiler.HRESULT) error {
	if e := in.lookup(m, tok); e != nil {
		in.fail(e, "ReJIT failed: "+hr.Error())
	}
	return nil
}

// withInliners tells whether RequestReJITWithInliners is used: where the
// runtime has it (ICorProfilerInfo10, .NET Core 3.0 and later), except,
// before .NET 7 (ICorProfilerInfo13), for precompiled modules: there the
// runtime reads the ReadyToRun inlining table into method descriptors of
// methods not loaded yet and crashes (fixed by dotnet/runtime#69634;
// seen on 3.1.23).
func withInliners(infoVersion int, precompiled bool) bool {
	return infoVersion >= 13 || (infoVersion >= 10 && !precompiled)
}

// requestReJIT asks the runtime to recompile methods of a module with
// their wrapped bodies: with RequestReJITWithInliners (inlining blocked)
// where it works (see withInliners), so that callers that inlined them
// are recompiled too, and RequestReJIT otherwise.
func (in *Instrumenter) requestReJIT(m profiler.ModuleID, toks []metadata.Token) error {
	var err error
	in.mu.Lock()
	ngen := in.modules[m] != nil && in.modules[m].ngen
	in.mu.Unlock()
	if withInliners(in.info.Version(), ngen) {
		err = in.rw.RequestReJITWithInliners(profiler.ReJITBlockInlining, m, toks, in.rewriteReJIT, in.rewriteReJIT)
	} else {
		err = in.rw.RequestReJIT(m, toks, in.rewriteReJIT)
		// Callers seen inlining them (JITInlining): recompiled too, with
		// their own IL (or wrapped, if they are targets themselves); now
		// JITInlining refuses the inlining.
		in.mu.Lock()
		callers := map[profiler.ModuleID][]metadata.Token{}
		seen := map[key]bool{}
		for _, t := range toks {
			for _, c := range in.inlined[key{m, t}] {
				if !seen[c] {
					seen[c] = true
					callers[c.module] = append(callers[c.module], c.token)
				}
			}
			delete(in.inlined, key{m, t})
		}
		in.mu.Unlock()
		for cm, ctoks := range callers {
			if cerr := in.rw.RequestReJIT(cm, ctoks, in.rewriteReJIT); cerr != nil && err == nil {
				err = cerr
			}
		}
	}
	if err != nil {
		in.mu.Lock()
		for _, t := range toks {
			if e := in.entries[key{m, t}]; e != nil && e.failed == "" {
				e.failed = "ReJIT request failed: " + err.Error()
			}
		}
		in.mu.Unlock()
	}
	return err
}

// AddRule adds a rule at run time: methods it names in modules loaded
// later are instrumented as usual, and those of modules already loaded
// through ReJIT (Config.ReJIT must be set). Call it from a goroutine of
// your own, never from a profiler callback.
func (in *Instrumenter) AddRule(r Rule) error {
	if err := checkRule(&r); err != nil {
		return err
	}
	if !in.cfg.ReJIT {
		return errors.New("instr: AddRule needs Config.ReJIT")
	}
	in.mu.Lock()
	in.cfg.Rules = append(in.cfg.Rules, r)
	ri := len(in.cfg.Rules) - 1
	mods := make([]profiler.ModuleID, 0, len(in.modules))
	for id := range in.modules {
		mods = append(mods, id)
	}
	in.mu.Unlock()
	return in.rejitModules(mods, ri)
}

// InstrumentLoaded scans every module loaded so far (after an attach, the
// runtime delivers no ModuleLoadFinished for them) and instruments what
// the rules name through ReJIT (Config.ReJIT must be set). Call it from a
// goroutine of your own, never from a profiler callback.
func (in *Instrumenter) InstrumentLoaded() error {
	if !in.cfg.ReJIT {
		return errors.New("instr: InstrumentLoaded needs Config.ReJIT")
	}
	en, err := in.info.EnumModules()
	if err != nil {
		return err
	}
	defer en.Release()
	var mods []profiler.ModuleID
	for {
		ids, err := en.Next()
		if err != nil || len(ids) == 0 {
			break
		}
		mods = append(mods, ids...)
	}
	return in.rejitModules(mods, -1)
}

func (in *Instrumenter) rejitModules(mods []profiler.ModuleID, rule int) error {
	var errs []error
	for _, id := range mods {
		news, _, err := in.scanModule(id, rule, true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if d := in.cfg.delivery; d != nil && len(news) > 0 && !in.helperReady() {
			// The helpers are not loaded (after an attach, no method
			// may be compiled for the first time again to host the
			// loader): the targets wait for HelperReady, and those of
			// a module that can host the loader are recompiled with
			// its call first (deliver_rejit.go).
			in.mu.Lock()
			late := in.ready // HelperReady came meanwhile
			if !late {
				in.waiting[id] = append(in.waiting[id], news...)
			}
			in.mu.Unlock()
			if late {
				if err := in.requestReJIT(id, news); err != nil {
					errs = append(errs, err)
				}
				continue
			}
			if ok, err := d.hostReJIT(id); err != nil {
				errs = append(errs, err)
			} else if ok {
				if err := in.requestReJIT(id, news); err != nil {
					errs = append(errs, err)
				}
			}
			continue
		}
		if len(news) > 0 {
			if err := in.requestReJIT(id, news); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// Report returns what the Instrumenter did so far.
func (in *Instrumenter) Report() Report {
	in.mu.Lock()
	defer in.mu.Unlock()
	r := Report{Failed: append([]Failure(nil), in.failures...), WithoutBody: in.noBody}
	for _, e := range in.byID {
		for _, a := range e.absent {
			r.Absent = append(r.Absent, Failure{e.Name, a})
		}
		switch {
		case e.failed != "":
			r.Failed = append(r.Failed, Failure{e.Name, e.failed})
		case e.Compiled:
			r.Instrumented = append(r.Instrumented, e.Method)
		case e.early:
			r.Failed = append(r.Failed, Failure{e.Name, "compiled before the helper assembly was loaded (waiting for HelperReady)"})
		case e.ngen && !e.ReJIT:
			r.Failed = append(r.Failed, Failure{e.Name, "in a precompiled (ReadyToRun) module, which is instrumented through ReJIT only: set Config.ReJIT"})
		default:
			r.Pending = append(r.Pending, e.Method)
		}
	}
	for ri, rule := range in.cfg.Rules {
		for ti, t := range rule.Targets {
			if in.hits[targetRef{ri, ti}] == 0 {
				r.Unmatched = append(r.Unmatched, t)
			}
		}
	}
	sort.Slice(r.Failed, func(i, j int) bool { return r.Failed[i].Method < r.Failed[j].Method })
	return r
}

// sdkType tells a type the SDK defined in a module (the loader, the Go
// hooks' P/Invokes, the async continuations): never a target, even of a
// wildcard, when a module is scanned again (AddRule, InstrumentLoaded).
func sdkType(name string) bool {
	return strings.HasPrefix(name, "<clrprof>") || name == goHooksType || name == goHooksQType
}
