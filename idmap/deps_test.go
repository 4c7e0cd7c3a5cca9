package idmap

import (
	"testing"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

// TestMapDropsWhatIsBuiltOnAModule: framework classes and functions
// instantiated over an unloaded module's types leave with it, also when
// the link is an array element type or a method type argument (the cases
// TestALCUnloadCycles found on real runtimes).
func TestMapDropsWhatIsBuiltOnAModule(t *testing.T) {
	m := New(nil)
	const (
		corelib, coll = profiler.ModuleID(0xC0), profiler.ModuleID(0xA0)
		cell          = profiler.ClassID(0xA1) // AlcColl.Cell
		cellArr       = profiler.ClassID(0xA2) // Cell[]: an array, not in the map
		listOfArr     = profiler.ClassID(0xC1) // List<Cell[]>
		array         = profiler.ClassID(0xC2) // System.Array
		listInt       = profiler.ClassID(0xC3) // List<int>
		indexOf       = profiler.FunctionID(0xF1)
		listAdd       = profiler.FunctionID(0xF2)
		plain         = profiler.FunctionID(0xF3)
	)
	m.put(
		[]ModuleEntry{{ID: corelib}, {ID: coll}},
		[]ClassEntry{
			{ID: cell, Module: coll, Token: 0x02000002},
			{ID: listOfArr, Module: corelib, Token: 0x02000010, TypeArgs: []profiler.ClassID{cellArr}},
			{ID: array, Module: corelib, Token: 0x02000011},
			{ID: listInt, Module: corelib, Token: 0x02000010, TypeArgs: []profiler.ClassID{0xC9}},
		},
		[]FunctionEntry{
			{ID: indexOf, Module: corelib, Token: 0x06000001, Class: array, TypeArgs: []profiler.ClassID{cell}},
			{ID: listAdd, Module: corelib, Token: 0x06000002, Class: listOfArr},
			{ID: plain, Module: corelib, Token: 0x06000003, Class: array},
		},
	)
	// What AddClass and AddFunction work out with the runtime's help.
	m.classDeps[listOfArr] = deps{modules: []profiler.ModuleID{coll}, classes: []profiler.ClassID{cellArr, cell}}
	m.funcDeps[indexOf] = deps{modules: []profiler.ModuleID{corelib, coll}, classes: []profiler.ClassID{array, cell}}
	m.funcDeps[listAdd] = deps{modules: []profiler.ModuleID{corelib, coll}, classes: []profiler.ClassID{listOfArr, cellArr, cell}}

	m.ModuleUnloadStarted(coll)
	if _, ok := m.Class(listOfArr); ok {
		t.Error("List<Cell[]> outlived Cell's module")
	}
	for _, f := range []profiler.FunctionID{indexOf, listAdd} {
		if _, ok := m.Function(f); ok {
			t.Errorf("function %#x outlived Cell's module", f)
		}
	}
	if len(m.classDeps)+len(m.funcDeps) != 0 {
		t.Errorf("dependency records left: %d classes, %d functions", len(m.classDeps), len(m.funcDeps))
	}
	for _, c := range []profiler.ClassID{array, listInt} {
		if _, ok := m.Class(c); !ok {
			t.Errorf("class %#x went with a module it does not depend on", c)
		}
	}
	if _, ok := m.Function(plain); !ok {
		t.Error("a function that does not depend on the module went with it")
	}

	// ClassUnloadStarted alone: a method instantiated over the class goes.
	m.put(nil, []ClassEntry{{ID: cell, Module: coll, Token: 0x02000002}},
		[]FunctionEntry{{ID: indexOf, Module: corelib, Token: 0x06000001, Class: array, TypeArgs: []profiler.ClassID{cell}}})
	m.ClassUnloadStarted(cell)
	if _, ok := m.Function(indexOf); ok {
		t.Error("Array.IndexOf<Cell> outlived Cell")
	}
}

// TestMapUseHoldsOffUnload: an unload waits for a use in progress, and a
// use that begins after the unload does not find the ID.
func TestMapUseHoldsOffUnload(t *testing.T) {
	m := New(nil)
	const mod, cls = profiler.ModuleID(0xA0), profiler.ClassID(0xA1)
	m.put([]ModuleEntry{{ID: mod}}, []ClassEntry{{ID: cls, Module: mod, Token: 0x02000002}}, nil)
	inUse, release, unloaded := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		_ = m.UseClass(cls, func(ClassEntry) error {
			close(inUse)
			<-release
			// Uses nest without blocking, even with an unload waiting.
			return m.UseModule(mod, func(ModuleEntry) error { return nil })
		})
	}()
	<-inUse
	go func() {
		m.ModuleUnloadStarted(mod)
		close(unloaded)
	}()
	// The class is already gone for new uses while the unload waits.
	for {
		if _, ok := m.Class(cls); !ok {
			break
		}
	}
	time.Sleep(50 * time.Millisecond) // time for an unload that does not wait to finish
	select {
	case <-unloaded:
		t.Fatal("the unload did not wait for the use in progress")
	default:
	}
	if err := m.UseClass(cls, func(ClassEntry) error { t.Error("use of a dropped class"); return nil }); err == nil {
		t.Error("UseClass of a dropped class succeeded")
	}
	close(release)
	<-unloaded
}
