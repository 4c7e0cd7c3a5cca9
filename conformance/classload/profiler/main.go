// Command profiler is the classload scenario's profiler: with class load
// events on, it counts ClassLoadStarted, ClassLoadFinished,
// ClassUnloadStarted and ClassUnloadFinished for the classes whose name
// contains UnloadLibrary.TestClass. The app loads that class into a
// collectible context and unloads it; at shutdown started must match
// finished, and seven classes must have been loaded: the class itself,
// List<TestClass> and List's five generic interfaces over it (IEnumerable,
// ICollection, IList, IReadOnlyCollection, IReadOnlyList).
//
// Upstream wants the seven unloaded too. Before .NET 10 the runtime does
// not call ClassUnloadStarted/Finished for generic instantiations whose
// loader allocator is not their defining module's (dotnet/runtime#114068,
// fixed by dotnet/runtime#114107): there only UnloadLibrary.TestClass
// itself is unloaded, and the profiler checks exactly that (it says which
// it expects: "unloads expected: 7" or "unloads expected: 1").
//
// .NET 11 also reports array classes (dotnet/runtime#120796, followed up in
// #120799): UnloadLibrary.TestClass[] (the List's backing array) is loaded
// with ClassLoadStarted/Finished, and 11.0.0 reports no unload for it. Array
// classes are counted apart: on 11 one load is expected, on earlier
// runtimes none, and at most as many unloads as loads (the count is
// printed, so a runtime that starts reporting the unload shows).
package main

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

const loads = 7

type classload struct {
	profiler.Base
	info                                       *profiler.Info
	wantUnloads                                int64
	loadStarted, loadFinished                  atomic.Int64
	unloadStarted, unloadFinished, nameFailure atomic.Int64
	wantArrays                                 int64
	arrayLoads, arrayUnloads                   atomic.Int64
}

func (p *classload) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(profiler.MonitorClassLoads, 0); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	ri, err := info.GetRuntimeInformation()
	if err != nil {
		check.Failf("GetRuntimeInformation: %v", err)
		return err
	}
	// .NET Core reports 4.0.30319 here; .NET 5 and later their version.
	p.wantUnloads = loads
	if ri.MajorVersion < 10 {
		p.wantUnloads = 1 // dotnet/runtime#114068
	}
	check.Logf("unloads expected: %d", p.wantUnloads)
	if ri.MajorVersion >= 11 {
		p.wantArrays = 1 // dotnet/runtime#120796
	}
	return nil
}

// ours says whether the class is one of the library's, printing it when
// print is set.
func (p *classload) ours(event string, class profiler.ClassID, print bool) bool {
	name, err := p.info.ClassName(class)
	if err != nil {
		p.nameFailure.Add(1)
		return false
	}
	if !strings.Contains(name, "UnloadLibrary.TestClass") {
		return false
	}
	if print {
		check.Logf("%s: %s", event, name)
	}
	if strings.HasSuffix(name, "[]") {
		switch event {
		case "ClassLoadStarted":
			p.arrayLoads.Add(1)
		case "ClassUnloadStarted":
			p.arrayUnloads.Add(1)
		}
		return false
	}
	return true
}

func (p *classload) ClassLoadStarted(class profiler.ClassID) error {
	if p.ours("ClassLoadStarted", class, true) {
		p.loadStarted.Add(1)
	}
	return nil
}

func (p *classload) ClassLoadFinished(class profiler.ClassID, status profiler.HRESULT) error {
	if p.ours("ClassLoadFinished", class, false) {
		p.loadFinished.Add(1)
	}
	return nil
}

func (p *classload) ClassUnloadStarted(class profiler.ClassID) error {
	if p.ours("ClassUnloadStarted", class, true) {
		if p.unloadStarted.Add(1) == 1 && p.wantUnloads == 1 {
			name, _ := p.info.ClassName(class)
			check.That(name == "UnloadLibrary.TestClass", "before .NET 10 the one class unloaded should be UnloadLibrary.TestClass, not %s", name)
		}
	}
	return nil
}

func (p *classload) ClassUnloadFinished(class profiler.ClassID, status profiler.HRESULT) error {
	if p.ours("ClassUnloadFinished", class, false) {
		p.unloadFinished.Add(1)
	}
	return nil
}

func (p *classload) Shutdown() error {
	ls, lf, us, uf := p.loadStarted.Load(), p.loadFinished.Load(), p.unloadStarted.Load(), p.unloadFinished.Load()
	counts := fmt.Sprintf("load started %d, finished %d; unload started %d, finished %d (names not known: %d)", ls, lf, us, uf, p.nameFailure.Load())
	al, au := p.arrayLoads.Load(), p.arrayUnloads.Load()
	check.Logf("%s", counts)
	check.Logf("array classes: loads %d (want %d), unloads %d", al, p.wantArrays, au)
	var final string
	switch {
	case ls != lf || ls != loads || us != uf || us != p.wantUnloads:
		final = fmt.Sprintf("want %d loads and %d unloads: %s", loads, p.wantUnloads, counts)
	case al != p.wantArrays || au > al:
		final = fmt.Sprintf("want %d array class loads and no more unloads: loads %d, unloads %d", p.wantArrays, al, au)
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{A1B2C3D4-E5F6-7890-1234-56789ABCDEF0}", &classload{})
}

func main() {}
