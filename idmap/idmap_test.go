package idmap

import (
	"errors"
	"testing"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// put records entries without asking a runtime (the Add methods do that
// with real IDs in the integration tests of package metadata).
func (m *Map) put(mods []ModuleEntry, classes []ClassEntry, funcs []FunctionEntry) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range mods {
		m.modules[e.ID] = e
	}
	for _, e := range classes {
		m.classes[e.ID] = e
		addTo(m.classOf, modTok{e.Module, e.Token}, e.ID)
	}
	for _, e := range funcs {
		m.functions[e.ID] = e
		addTo(m.funcOf, modTok{e.Module, e.Token}, e.ID)
	}
}

func TestMapInvalidation(t *testing.T) {
	m := New(nil)
	const (
		modA, modB = profiler.ModuleID(0xA0), profiler.ModuleID(0xB0)
		dom1, dom2 = profiler.AppDomainID(1), profiler.AppDomainID(2)
	)
	m.put(
		[]ModuleEntry{{ID: modA, AppDomain: dom1}, {ID: modB, AppDomain: dom2}},
		[]ClassEntry{
			{ID: 0xA1, Module: modA, Token: 0x02000002},
			{ID: 0xA2, Module: modA, Token: 0x02000003},
			{ID: 0xB1, Module: modB, Token: 0x02000002},
			// List<A2> lives in module B but is instantiated over A's class.
			{ID: 0xB2, Module: modB, Token: 0x02000004, TypeArgs: []profiler.ClassID{0xA2}},
		},
		[]FunctionEntry{
			{ID: 0xF1, Module: modA, Token: 0x06000001, Class: 0xA1},
			{ID: 0xF2, Module: modB, Token: 0x06000001, Class: 0xB2},
			{ID: 0xF3, Module: modB, Token: 0x06000002, Class: 0xB1},
		},
	)
	if got := m.FunctionsOf(modB, 0x06000001); len(got) != 1 || got[0] != 0xF2 {
		t.Errorf("FunctionsOf = %v", got)
	}
	if got := m.ClassesOf(modA, 0x02000002); len(got) != 1 || got[0] != 0xA1 {
		t.Errorf("ClassesOf = %v", got)
	}
	// Unloading class A2 takes B2 (instantiated over it) and B2's function.
	m.ClassUnloadStarted(0xA2)
	for _, c := range []profiler.ClassID{0xA2, 0xB2} {
		if _, ok := m.Class(c); ok {
			t.Errorf("class %#x still mapped", c)
		}
	}
	if _, ok := m.Function(0xF2); ok {
		t.Error("function of an unloaded class still mapped")
	}
	if len(m.FunctionsOf(modB, 0x06000001)) != 0 {
		t.Error("reverse index keeps an unloaded function")
	}
	// Unloading module A takes its classes and functions.
	m.ModuleUnloadStarted(modA)
	if _, ok := m.Module(modA); ok {
		t.Error("module A still mapped")
	}
	if _, ok := m.Function(0xF1); ok {
		t.Error("function of module A still mapped")
	}
	if c, f := m.ModuleCounts(modA); c != 0 || f != 0 {
		t.Errorf("module A: %d classes, %d functions left", c, f)
	}
	// Token to ID only for loaded classes: module A is gone, so no call to
	// the runtime is made (the map has no profiler.Info to make it with).
	if _, err := m.ClassFromToken(modA, 0x02000002); !errors.Is(err, ErrUnknownID) {
		t.Errorf("ClassFromToken on an unloaded module: %v", err)
	}
	if _, err := m.ClassFromToken(modB, metadata.Token(0x02000009)); !errors.Is(err, ErrUnknownID) {
		t.Errorf("ClassFromToken of a class never loaded: %v", err)
	}
	// AppDomain shutdown takes the domain's modules.
	m.AppDomainShutdownStarted(dom2)
	if mods, classes, funcs := m.Counts(); mods+classes+funcs != 0 {
		t.Errorf("after shutdown: %d modules, %d classes, %d functions", mods, classes, funcs)
	}
}
