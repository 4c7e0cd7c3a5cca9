package idmap

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// ErrUnknownID matches errors for IDs that a [Map] has not seen or has
// dropped because their module, class or AppDomain went away: passing such
// an ID back to the runtime could crash it, so the map never does.
var ErrUnknownID = errors.New("clrprof: ID not known to be loaded")

// ModuleEntry is what a [Map] knows about a module.
type ModuleEntry struct {
	// ID is the module this entry describes (the map's key).
	ID   profiler.ModuleID
	Name string // file path, or the name of a dynamic module
	// Assembly is the assembly the module belongs to.
	Assembly profiler.AssemblyID
	// AppDomain is the app domain the assembly was loaded in.
	AppDomain profiler.AppDomainID
}

// ClassEntry is what a [Map] knows about a class.
type ClassEntry struct {
	// ID is the class this entry describes (the map's key).
	ID profiler.ClassID
	// Module is the module that defines it.
	Module profiler.ModuleID
	Token  metadata.Token // the TypeDef (0 for arrays and other types without one)
	// TypeArgs are the type arguments of a generic instantiation.
	TypeArgs []profiler.ClassID
}

// FunctionEntry is what a [Map] knows about a function.
type FunctionEntry struct {
	// ID is the function this entry describes (the map's key).
	ID profiler.FunctionID
	// Module is the module that defines it.
	Module   profiler.ModuleID
	Token    metadata.Token     // the MethodDef
	Class    profiler.ClassID   // may be 0 (shared generic code seen without frame info)
	TypeArgs []profiler.ClassID // the method's own type arguments
}

// deps is what a class or function stands on: the classes it is built
// from (type arguments, array element types, a function's class and
// method type arguments — recursively) and their modules. Framework code
// instantiated over an unloaded assembly's types (List<T[]>,
// Array.IndexOf<T>) goes away with that assembly although its own module
// stays.
type deps struct {
	modules []profiler.ModuleID
	classes []profiler.ClassID
}

// maxDepDepth bounds the walk through nested type arguments.
const maxDepDepth = 16

type modTok struct {
	m  profiler.ModuleID
	tk metadata.Token
}

// Map maps the runtime's IDs to (module, token) as they are seen, with
// reverse lookups, and forgets them when the runtime says they are gone:
// ModuleUnloadStarted drops a module with its classes and functions,
// ClassUnloadStarted a class with its functions, AppDomainShutdownStarted
// every module of the domain. With a class go the classes and functions
// built on it, wherever their code lives: List<T>, List<T[]> and
// Array.IndexOf<T> leave with T's collectible assembly. Lookups only ever
// return IDs that are still valid, so nothing stale is handed back to the
// runtime.
//
// An ID a lookup returns can go stale right after it is returned when
// another thread is unloading its module. To hand an ID to the runtime
// outside a callback about that ID (from a goroutine, or from a callback
// about something else), do it inside [Map.UseClass],
// [Map.UseFunction] or [Map.UseModule]: the unload callback that would
// drop the ID waits until the use is over, so the runtime cannot free what
// the ID points to while it is in use.
//
// Feed it from your callbacks (the method names are the callbacks'):
//
//	func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
//		return p.ids.ModuleLoadFinished(m, hr)
//	}
//
// and ask the runtime for the matching notifications: MonitorModuleLoads,
// MonitorClassLoads, MonitorAppDomainLoads, MonitorJITCompilation (for
// functions). All methods are safe for concurrent use.
type Map struct {
	info *profiler.Info

	mu        sync.RWMutex
	modules   map[profiler.ModuleID]ModuleEntry
	classes   map[profiler.ClassID]ClassEntry
	functions map[profiler.FunctionID]FunctionEntry
	classOf   map[modTok]map[profiler.ClassID]struct{}
	funcOf    map[modTok]map[profiler.FunctionID]struct{}
	classDeps map[profiler.ClassID]deps
	funcDeps  map[profiler.FunctionID]deps

	// Uses in progress, counted per epoch; a drop moves the epoch on and
	// waits for the previous one's uses to end (see enter and quiesce).
	// Uses never block, so they nest and never wait for a drop.
	epoch  atomic.Uint64
	inUse  [2]atomic.Int64
	dropMu sync.Mutex // one quiesce at a time
}

// New returns an empty map that asks info about the IDs it is given.
func New(info *profiler.Info) *Map {
	return &Map{
		info:      info,
		modules:   map[profiler.ModuleID]ModuleEntry{},
		classes:   map[profiler.ClassID]ClassEntry{},
		functions: map[profiler.FunctionID]FunctionEntry{},
		classOf:   map[modTok]map[profiler.ClassID]struct{}{},
		funcOf:    map[modTok]map[profiler.FunctionID]struct{}{},
		classDeps: map[profiler.ClassID]deps{},
		funcDeps:  map[profiler.FunctionID]deps{},
	}
}

// addDeps adds class c and what it stands on to d: its module and,
// recursively, its type arguments; for an array, its element type.
func (m *Map) addDeps(d *deps, c profiler.ClassID, depth int) {
	if c == 0 || depth > maxDepDepth || slices.Contains(d.classes, c) {
		return
	}
	d.classes = append(d.classes, c)
	if ci, err := m.info.GetClassIDInfo2(c); err == nil {
		if ci.ModuleID != 0 && !slices.Contains(d.modules, ci.ModuleID) {
			d.modules = append(d.modules, ci.ModuleID)
		}
		for _, a := range ci.TypeArgs {
			m.addDeps(d, a, depth+1)
		}
		return
	}
	if ai, isArray, err := m.info.IsArrayClass(c); err == nil && isArray {
		m.addDeps(d, ai.BaseClassID, depth+1)
	}
}

func (d deps) hasModule(id profiler.ModuleID) bool { return slices.Contains(d.modules, id) }
func (d deps) hasClass(id profiler.ClassID) bool   { return slices.Contains(d.classes, id) }

// AddModule records a loaded module.
func (m *Map) AddModule(id profiler.ModuleID) (ModuleEntry, error) {
	mi, err := m.info.GetModuleInfo(id)
	if err != nil {
		return ModuleEntry{}, fmt.Errorf("clrprof: module %#x: %w", uint64(id), err)
	}
	e := ModuleEntry{ID: id, Name: mi.Name, Assembly: mi.AssemblyID}
	if mi.AssemblyID != 0 {
		if ai, err := m.info.GetAssemblyInfo(mi.AssemblyID); err == nil {
			e.AppDomain = ai.AppDomainID
		}
	}
	m.mu.Lock()
	m.modules[id] = e
	m.mu.Unlock()
	return e, nil
}

// AddClass records a loaded class (and its module, if new).
func (m *Map) AddClass(id profiler.ClassID) (ClassEntry, error) {
	ci, err := m.info.GetClassIDInfo2(id)
	if err != nil {
		return ClassEntry{}, fmt.Errorf("clrprof: class %#x: %w", uint64(id), err)
	}
	e := ClassEntry{ID: id, Module: ci.ModuleID, Token: ci.TypeDefToken, TypeArgs: append([]profiler.ClassID(nil), ci.TypeArgs...)}
	if err := m.ensureModule(ci.ModuleID); err != nil {
		return e, err
	}
	var d deps
	for _, a := range ci.TypeArgs {
		m.addDeps(&d, a, 1)
	}
	m.mu.Lock()
	m.classes[id] = e
	m.classDeps[id] = d
	if e.Module != 0 {
		addTo(m.classOf, modTok{e.Module, e.Token}, id)
	}
	m.mu.Unlock()
	return e, nil
}

// AddFunction records a function (and its module, if new).
func (m *Map) AddFunction(id profiler.FunctionID) (FunctionEntry, error) {
	fi, err := m.info.GetFunctionInfo2(id, 0)
	if err != nil {
		return FunctionEntry{}, fmt.Errorf("clrprof: function %#x: %w", uint64(id), err)
	}
	e := FunctionEntry{ID: id, Module: fi.ModuleID, Token: fi.Token, Class: fi.ClassID, TypeArgs: append([]profiler.ClassID(nil), fi.TypeArgs...)}
	if err := m.ensureModule(fi.ModuleID); err != nil {
		return e, err
	}
	var d deps
	m.addDeps(&d, fi.ClassID, 1)
	for _, a := range fi.TypeArgs {
		m.addDeps(&d, a, 1)
	}
	m.mu.Lock()
	m.functions[id] = e
	m.funcDeps[id] = d
	addTo(m.funcOf, modTok{e.Module, e.Token}, id)
	m.mu.Unlock()
	return e, nil
}

func (m *Map) ensureModule(id profiler.ModuleID) error {
	if id == 0 {
		return nil
	}
	m.mu.RLock()
	_, ok := m.modules[id]
	m.mu.RUnlock()
	if ok {
		return nil
	}
	_, err := m.AddModule(id)
	return err
}

func addTo[ID comparable](idx map[modTok]map[ID]struct{}, k modTok, id ID) {
	s := idx[k]
	if s == nil {
		s = map[ID]struct{}{}
		idx[k] = s
	}
	s[id] = struct{}{}
}

func removeFrom[ID comparable](idx map[modTok]map[ID]struct{}, k modTok, id ID) {
	if s := idx[k]; s != nil {
		delete(s, id)
		if len(s) == 0 {
			delete(idx, k)
		}
	}
}

// Module returns a module that is still loaded.
func (m *Map) Module(id profiler.ModuleID) (ModuleEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.modules[id]
	return e, ok
}

// Class returns a class that is still loaded.
func (m *Map) Class(id profiler.ClassID) (ClassEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.classes[id]
	return e, ok
}

// Function returns a function that is still loaded.
func (m *Map) Function(id profiler.FunctionID) (FunctionEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.functions[id]
	return e, ok
}

// enter registers a use in the current epoch and returns its slot.
func (m *Map) enter() int {
	for {
		e := m.epoch.Load()
		slot := int(e & 1)
		m.inUse[slot].Add(1)
		if m.epoch.Load() == e {
			return slot
		}
		m.inUse[slot].Add(-1)
	}
}

func (m *Map) leave(slot int) { m.inUse[slot].Add(-1) }

// quiesce waits until every use that began before it was called has ended.
// Called after entries were removed (under mu), it guarantees that nobody
// still holds them: uses that begin later do not find them.
func (m *Map) quiesce() {
	m.dropMu.Lock()
	defer m.dropMu.Unlock()
	slot := int(m.epoch.Add(1)-1) & 1
	warned := false
	start := time.Now()
	for spins := 0; m.inUse[slot].Load() != 0; spins++ {
		if spins < 100 {
			runtime.Gosched()
			continue
		}
		if !warned && time.Since(start) > 2*time.Second {
			warned = true
			profiler.Logger().Warn("clrprof: an unload callback is waiting for an Map use to end (a Use function that blocks holds up the runtime)")
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// UseClass calls f with the class's entry if the map holds the class, and
// until f returns keeps the class from being dropped — and so holds up the
// runtime's unload of it, whose callback drops it. Without the class it
// returns an error matching ErrUnknownID and does not call f; otherwise
// it returns f's error. f should be short (the unload waits for it) and
// must not call the map's unload methods (it would wait for itself); it may
// look things up and call the other Use methods.
func (m *Map) UseClass(id profiler.ClassID, f func(ClassEntry) error) error {
	return use(m, "class", id, m.Class, f)
}

// UseFunction is [Map.UseClass] for a function.
func (m *Map) UseFunction(id profiler.FunctionID, f func(FunctionEntry) error) error {
	return use(m, "function", id, m.Function, f)
}

// UseModule is [Map.UseClass] for a module.
func (m *Map) UseModule(id profiler.ModuleID, f func(ModuleEntry) error) error {
	return use(m, "module", id, m.Module, f)
}

// use holds off unloads while it looks id up and calls f with its entry.
func use[ID ~uintptr, E any](m *Map, kind string, id ID, lookup func(ID) (E, bool), f func(E) error) error {
	slot := m.enter()
	defer m.leave(slot)
	e, ok := lookup(id)
	if !ok {
		return fmt.Errorf("clrprof: %s %#x: %w", kind, uint64(id), ErrUnknownID)
	}
	return f(e)
}

// ClassesOf returns the loaded classes of a TypeDef (one per
// instantiation of a generic type).
func (m *Map) ClassesOf(module profiler.ModuleID, td metadata.Token) []profiler.ClassID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []profiler.ClassID
	for id := range m.classOf[modTok{module, td}] {
		out = append(out, id)
	}
	return out
}

// FunctionsOf returns the functions seen for a MethodDef (one per
// instantiation that has its own code).
func (m *Map) FunctionsOf(module profiler.ModuleID, md metadata.Token) []profiler.FunctionID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []profiler.FunctionID
	for id := range m.funcOf[modTok{module, md}] {
		out = append(out, id)
	}
	return out
}

// ClassFromToken converts a non-generic TypeDef to its profiler.ClassID, only when
// the map has seen that class loaded and its module is still loaded (the
// runtime's GetClassFromToken would load it, or fail, or crash on an
// unloaded module). It fails with an error matching ErrUnknownID
// otherwise.
func (m *Map) ClassFromToken(module profiler.ModuleID, td metadata.Token) (profiler.ClassID, error) {
	slot := m.enter() // the module must not unload between the check and the call
	defer m.leave(slot)
	m.mu.RLock()
	_, modOK := m.modules[module]
	var found profiler.ClassID
	for id := range m.classOf[modTok{module, td}] {
		if len(m.classes[id].TypeArgs) == 0 {
			found = id
		}
	}
	m.mu.RUnlock()
	if !modOK || found == 0 {
		return 0, fmt.Errorf("clrprof: class %v of module %#x: %w", td, uint64(module), ErrUnknownID)
	}
	id, err := m.info.GetClassFromToken(module, td)
	if err != nil {
		return 0, err
	}
	return id, nil
}

// Counts returns how many modules, classes and functions the map holds.
func (m *Map) Counts() (modules, classes, functions int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.modules), len(m.classes), len(m.functions)
}

// ModuleLoadFinished records the module (if it loaded).
func (m *Map) ModuleLoadFinished(id profiler.ModuleID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	_, err := m.AddModule(id)
	return err
}

// ClassLoadFinished records the class (if it loaded).
func (m *Map) ClassLoadFinished(id profiler.ClassID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	_, err := m.AddClass(id)
	return err
}

// JITCompilationStarted records the function.
func (m *Map) JITCompilationStarted(id profiler.FunctionID, _ bool) error {
	_, err := m.AddFunction(id)
	return err
}

// ModuleUnloadStarted drops the module, its classes and its functions,
// then waits for uses in progress (see [Map.UseClass]) to end.
func (m *Map) ModuleUnloadStarted(id profiler.ModuleID) error {
	m.mu.Lock()
	m.dropModuleLocked(id)
	m.mu.Unlock()
	m.quiesce()
	return nil
}

func (m *Map) dropModuleLocked(id profiler.ModuleID) {
	delete(m.modules, id)
	for cid, c := range m.classes {
		if c.Module == id || m.classDeps[cid].hasModule(id) {
			m.dropClassLocked(cid)
		}
	}
	for fid, f := range m.functions {
		if f.Module == id || m.funcDeps[fid].hasModule(id) {
			m.dropFunctionLocked(fid)
		}
	}
}

func (m *Map) dropFunctionLocked(id profiler.FunctionID) {
	f, ok := m.functions[id]
	if !ok {
		return
	}
	delete(m.functions, id)
	delete(m.funcDeps, id)
	removeFrom(m.funcOf, modTok{f.Module, f.Token}, id)
}

func (m *Map) dropClassLocked(id profiler.ClassID) {
	c, ok := m.classes[id]
	if !ok {
		return
	}
	delete(m.classes, id)
	delete(m.classDeps, id)
	removeFrom(m.classOf, modTok{c.Module, c.Token}, id)
	for fid, f := range m.functions {
		if f.Class == id || slices.Contains(f.TypeArgs, id) || m.funcDeps[fid].hasClass(id) {
			m.dropFunctionLocked(fid)
		}
	}
	// A class instantiated over the dropped one (or over an array of it)
	// goes with it.
	for oid, o := range m.classes {
		if slices.Contains(o.TypeArgs, id) || m.classDeps[oid].hasClass(id) {
			m.dropClassLocked(oid)
		}
	}
}

// ClassUnloadStarted drops the class and its functions, then waits for
// uses in progress to end.
func (m *Map) ClassUnloadStarted(id profiler.ClassID) error {
	m.mu.Lock()
	m.dropClassLocked(id)
	m.mu.Unlock()
	m.quiesce()
	return nil
}

// AppDomainShutdownStarted drops every module of the domain, then waits
// for uses in progress to end.
func (m *Map) AppDomainShutdownStarted(id profiler.AppDomainID) error {
	m.mu.Lock()
	for mid, e := range m.modules {
		if e.AppDomain == id {
			m.dropModuleLocked(mid)
		}
	}
	m.mu.Unlock()
	m.quiesce()
	return nil
}

// ModuleCounts returns how many classes and functions of a module the map
// holds.
func (m *Map) ModuleCounts(module profiler.ModuleID) (classes, functions int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, c := range m.classes {
		if c.Module == module {
			classes++
		}
	}
	for _, f := range m.functions {
		if f.Module == module {
			functions++
		}
	}
	return classes, functions
}
