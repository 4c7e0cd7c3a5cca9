package idmap_test

import (
	"errors"
	"fmt"
	"os"

	"github.com/clrprof/clrprof/idmap"
	"github.com/clrprof/clrprof/profiler"
)

// jitByModule counts the functions compiled per module file, remembering
// them in an idmap.Map that forgets each module when the runtime unloads it.
type jitByModule struct {
	profiler.Base
	info *profiler.Info
	ids  *idmap.Map
}

func (p *jitByModule) Initialize(info *profiler.Info) error {
	p.info = info
	p.ids = idmap.New(info)
	return info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorClassLoads | profiler.MonitorJITCompilation)
}

// The map is fed from the callbacks of the same name.
func (p *jitByModule) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.ids.ModuleLoadFinished(m, hr)
}

func (p *jitByModule) ModuleUnloadStarted(m profiler.ModuleID) error {
	// Before the map forgets the module: how many of its functions it saw.
	_, functions := p.ids.ModuleCounts(m)
	if mi, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName); err == nil {
		fmt.Fprintf(os.Stderr, "%s unloads after %d compiled functions\n", mi.Name, functions)
	}
	return p.ids.ModuleUnloadStarted(m)
}

func (p *jitByModule) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	return p.ids.ClassLoadFinished(c, hr)
}

func (p *jitByModule) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.ids.JITCompilationStarted(f, safe)
}

func (p *jitByModule) Shutdown() error {
	modules, classes, functions := p.ids.Counts()
	fmt.Fprintf(os.Stderr, "%d modules, %d classes, %d functions still loaded\n", modules, classes, functions)
	return nil
}

// A Map keeps (module, token) for the IDs a profiler sees, and drops
// them when the runtime unloads what they name, so a lookup never returns
// a stale ID.
func Example() {
	_ = profiler.Register("{5D3E1B29-8A47-4C6F-B0D2-7E91A3C5F864}", &jitByModule{})
}

// What a Map does without a runtime: a lookup of an ID it has not seen
// finds nothing, a Use of it fails with ErrUnknownID without calling f,
// and adding an ID fails, since only the runtime can say what the ID is
// (the package example shows the map fed from a profiler's callbacks).
func ExampleMap_UseFunction() {
	ids := idmap.New(nil) // in a profiler: idmap.New(info) in Initialize
	const f = profiler.FunctionID(0x7f00_1234)

	_, ok := ids.Function(f)
	fmt.Println("known:", ok)

	err := ids.UseFunction(f, func(e idmap.FunctionEntry) error {
		fmt.Println("never called for an unknown ID")
		return nil
	})
	fmt.Println(errors.Is(err, idmap.ErrUnknownID))

	_, err = ids.AddFunction(f)
	fmt.Println(errors.Is(err, profiler.ErrNotAvailable))
	fmt.Println(ids.Counts())
	// Output:
	// known: false
	// true
	// true
	// 0 0 0
}
