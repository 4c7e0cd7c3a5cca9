package profiler

import (
	"errors"
	"fmt"
	"sync"

	"github.com/clrprof/clrprof/metadata"
)

// ErrUnknownID matches errors for IDs that an [IDMap] has not seen or has
// dropped because their module, class or AppDomain went away: passing such
// an ID back to the runtime could crash it, so the map never does.
var ErrUnknownID = errors.New("clrprof: ID not known to be loaded")

// ModuleEntry is what an [IDMap] knows about a module.
type ModuleEntry struct {
	ID        ModuleID
	Name      string // file path, or the name of a dynamic module
	Assembly  AssemblyID
	AppDomain AppDomainID
}

// ClassEntry is what an [IDMap] knows about a class.
type ClassEntry struct {
	ID       ClassID
	Module   ModuleID
	Token    metadata.Token // the TypeDef (0 for arrays and other types without one)
	TypeArgs []ClassID
}

// FunctionEntry is what an [IDMap] knows about a function.
type FunctionEntry struct {
	ID     FunctionID
	Module ModuleID
	Token  metadata.Token // the MethodDef
	Class  ClassID        // may be 0 (shared generic code seen without frame info)
}

type modTok struct {
	m  ModuleID
	tk metadata.Token
}

// IDMap maps the runtime's IDs to (module, token) as they are seen, with
// reverse lookups, and forgets them when the runtime says they are gone:
// ModuleUnloadStarted drops a module with its classes and functions,
// ClassUnloadStarted a class with its functions, AppDomainShutdownStarted
// every module of the domain. Lookups only ever return IDs that are still
// valid, so nothing stale is handed back to the runtime.
//
// Feed it from your callbacks (the method names are the callbacks'):
//
//	func (p *prof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
//		return p.ids.ModuleLoadFinished(m, hr)
//	}
//
// and ask the runtime for the matching notifications: MonitorModuleLoads,
// MonitorClassLoads, MonitorAppdomainLoads, MonitorJITCompilation (for
// functions). All methods are safe for concurrent use.
type IDMap struct {
	info *Info

	mu        sync.RWMutex
	modules   map[ModuleID]ModuleEntry
	classes   map[ClassID]ClassEntry
	functions map[FunctionID]FunctionEntry
	classOf   map[modTok]map[ClassID]struct{}
	funcOf    map[modTok]map[FunctionID]struct{}
}

// NewIDMap returns an empty map that asks info about the IDs it is given.
func NewIDMap(info *Info) *IDMap {
	return &IDMap{
		info:      info,
		modules:   map[ModuleID]ModuleEntry{},
		classes:   map[ClassID]ClassEntry{},
		functions: map[FunctionID]FunctionEntry{},
		classOf:   map[modTok]map[ClassID]struct{}{},
		funcOf:    map[modTok]map[FunctionID]struct{}{},
	}
}

// AddModule records a loaded module.
func (m *IDMap) AddModule(id ModuleID) (ModuleEntry, error) {
	mi, err := m.info.GetModuleInfo(id, nil)
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
func (m *IDMap) AddClass(id ClassID) (ClassEntry, error) {
	ci, err := m.info.GetClassIDInfo2(id)
	if err != nil {
		return ClassEntry{}, fmt.Errorf("clrprof: class %#x: %w", uint64(id), err)
	}
	e := ClassEntry{ID: id, Module: ci.ModuleID, Token: ci.TypeDefToken, TypeArgs: append([]ClassID(nil), ci.TypeArgs...)}
	if err := m.ensureModule(ci.ModuleID); err != nil {
		return e, err
	}
	m.mu.Lock()
	m.classes[id] = e
	if e.Module != 0 {
		addTo(m.classOf, modTok{e.Module, e.Token}, id)
	}
	m.mu.Unlock()
	return e, nil
}

// AddFunction records a function (and its module, if new).
func (m *IDMap) AddFunction(id FunctionID) (FunctionEntry, error) {
	fi, err := m.info.GetFunctionInfo2(id, 0)
	if err != nil {
		return FunctionEntry{}, fmt.Errorf("clrprof: function %#x: %w", uint64(id), err)
	}
	e := FunctionEntry{ID: id, Module: fi.ModuleID, Token: fi.Token, Class: fi.ClassID}
	if err := m.ensureModule(fi.ModuleID); err != nil {
		return e, err
	}
	m.mu.Lock()
	m.functions[id] = e
	addTo(m.funcOf, modTok{e.Module, e.Token}, id)
	m.mu.Unlock()
	return e, nil
}

func (m *IDMap) ensureModule(id ModuleID) error {
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
func (m *IDMap) Module(id ModuleID) (ModuleEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.modules[id]
	return e, ok
}

// Class returns a class that is still loaded.
func (m *IDMap) Class(id ClassID) (ClassEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.classes[id]
	return e, ok
}

// Function returns a function that is still loaded.
func (m *IDMap) Function(id FunctionID) (FunctionEntry, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.functions[id]
	return e, ok
}

// ClassesOf returns the loaded classes of a TypeDef (one per
// instantiation of a generic type).
func (m *IDMap) ClassesOf(module ModuleID, td metadata.Token) []ClassID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []ClassID
	for id := range m.classOf[modTok{module, td}] {
		out = append(out, id)
	}
	return out
}

// FunctionsOf returns the functions seen for a MethodDef (one per
// instantiation that has its own code).
func (m *IDMap) FunctionsOf(module ModuleID, md metadata.Token) []FunctionID {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []FunctionID
	for id := range m.funcOf[modTok{module, md}] {
		out = append(out, id)
	}
	return out
}

// ClassFromToken converts a non-generic TypeDef to its ClassID, only when
// the map has seen that class loaded and its module is still loaded (the
// runtime's GetClassFromToken would load it, or fail, or crash on an
// unloaded module). It fails with an error matching ErrUnknownID
// otherwise.
func (m *IDMap) ClassFromToken(module ModuleID, td metadata.Token) (ClassID, error) {
	m.mu.RLock()
	_, modOK := m.modules[module]
	var found ClassID
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
func (m *IDMap) Counts() (modules, classes, functions int) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.modules), len(m.classes), len(m.functions)
}

// ModuleLoadFinished records the module (if it loaded).
func (m *IDMap) ModuleLoadFinished(id ModuleID, hr HRESULT) error {
	if hr < 0 {
		return nil
	}
	_, err := m.AddModule(id)
	return err
}

// ClassLoadFinished records the class (if it loaded).
func (m *IDMap) ClassLoadFinished(id ClassID, hr HRESULT) error {
	if hr < 0 {
		return nil
	}
	_, err := m.AddClass(id)
	return err
}

// JITCompilationStarted records the function.
func (m *IDMap) JITCompilationStarted(id FunctionID, _ bool) error {
	_, err := m.AddFunction(id)
	return err
}

// ModuleUnloadStarted drops the module, its classes and its functions.
func (m *IDMap) ModuleUnloadStarted(id ModuleID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropModuleLocked(id)
	return nil
}

func (m *IDMap) dropModuleLocked(id ModuleID) {
	delete(m.modules, id)
	for cid, c := range m.classes {
		if c.Module == id {
			m.dropClassLocked(cid)
		}
	}
	for fid, f := range m.functions {
		if f.Module == id {
			delete(m.functions, fid)
			removeFrom(m.funcOf, modTok{f.Module, f.Token}, fid)
		}
	}
}

func (m *IDMap) dropClassLocked(id ClassID) {
	c, ok := m.classes[id]
	if !ok {
		return
	}
	delete(m.classes, id)
	removeFrom(m.classOf, modTok{c.Module, c.Token}, id)
	for fid, f := range m.functions {
		if f.Class == id {
			delete(m.functions, fid)
			removeFrom(m.funcOf, modTok{f.Module, f.Token}, fid)
		}
	}
	// A class instantiated over the dropped one goes with it.
	for oid, o := range m.classes {
		for _, a := range o.TypeArgs {
			if a == id {
				m.dropClassLocked(oid)
				break
			}
		}
	}
}

// ClassUnloadStarted drops the class and its functions.
func (m *IDMap) ClassUnloadStarted(id ClassID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.dropClassLocked(id)
	return nil
}

// AppDomainShutdownStarted drops every module of the domain.
func (m *IDMap) AppDomainShutdownStarted(id AppDomainID) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for mid, e := range m.modules {
		if e.AppDomain == id {
			m.dropModuleLocked(mid)
		}
	}
	return nil
}

// ModuleCounts returns how many classes and functions of a module the map
// holds.
func (m *IDMap) ModuleCounts(module ModuleID) (classes, functions int) {
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
