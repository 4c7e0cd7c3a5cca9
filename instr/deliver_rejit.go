package instr

import (
	"errors"
	"fmt"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// Delivery through ReJIT. After an attach, the application may never
// JIT-compile a suitable method for the first time again (everything it
// runs is compiled already), so Prepare never sees a host. Then the
// Instrumenter (InstrumentLoaded, AddRule) asks the Delivery to host the
// loader in the targets themselves: the loader type is defined in the
// targets' module (outside any callback), and a first ReJIT gives each
// target its original body plus the guarded call of the loader (no
// reference to the helpers: it compiles before they exist). At the next
// call of one of them the loader runs, the helpers load, HelperReady
// follows, and a second ReJIT gives the targets their wrap.

// rejitLoader is the loader defined in a module for hosts recompiled by
// ReJIT.
type rejitLoader struct {
	run, object metadata.Token
}

// suitableModule reports whether module id may host the loader (see
// Prepare): on disk, not dynamic, not resources only, not the framework's.
func (d *Delivery) suitableModule(id profiler.ModuleID) bool {
	mi, err := d.info.GetModuleInfo2(id)
	if err != nil || mi.ModuleFlags&(profiler.ModuleDynamic|profiler.ModuleResource) != 0 {
		return false
	}
	ai, err := d.info.GetAssemblyInfo(mi.AssemblyID)
	return err == nil && ai.Name != "" && !frameworkAssembly(ai.Name) && ai.Name != "Clrprof.Instr.Loader"
}

// hostReJIT defines the loader in module id, so that the methods of id
// recompiled by ReJIT while the helpers are not loaded call it at their
// entry (injectReJIT). It reports whether id now has the loader. Call it
// outside profiler callbacks.
func (d *Delivery) hostReJIT(id profiler.ModuleID) (bool, error) {
	if d.off || d.loaded.Load() {
		return false, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.rejitHosts[id]; ok {
		return true, nil
	}
	if !d.suitableModule(id) {
		return false, nil
	}
	mod, err := ilrw.OpenModule(d.info, id, true)
	if err != nil {
		return false, err
	}
	defer mod.Release()
	run, object, err := d.defineLoader(mod, id)
	if err == nil {
		// Metadata added after ModuleLoadFinished must be applied before
		// it is used; TypeDefs and MethodDefs may be added so since .NET
		// Core 3.0 (ICorProfilerInfo7::ApplyMetaData), which attach needs
		// anyway.
		if aerr := d.info.ApplyMetaData(id); aerr != nil {
			err = fmt.Errorf("ApplyMetaData: %w", aerr)
		}
	}
	if err != nil {
		err = fmt.Errorf("instr: defining the helper loader for ReJIT: %w", err)
		if !d.injected {
			d.err = err
		}
		return false, err
	}
	if d.rejitHosts == nil {
		d.rejitHosts = map[profiler.ModuleID]rejitLoader{}
	}
	d.rejitHosts[id] = rejitLoader{run, object}
	return true, nil
}

// injectReJIT adds the loader's call at the entry of m, a method being
// recompiled by ReJIT in a module hostReJIT prepared; false elsewhere.
func (d *Delivery) injectReJIT(m *ilrw.Method) (bool, error) {
	if d.off || d.loaded.Load() {
		return false, nil
	}
	d.mu.Lock()
	h, ok := d.rejitHosts[m.ModuleID]
	d.mu.Unlock()
	if !ok {
		return false, nil
	}
	if err := callAtEntry(m.Body, h.run, h.object); err != nil {
		return false, fmt.Errorf("instr: the helper loader's call in %s: %w", m.Name(), err)
	}
	d.mu.Lock()
	if d.host == "" {
		d.host, d.hostMod, d.hostTok = hostName(m.Name()), m.ModuleID, m.Token
	}
	if d.err == nil {
		d.err = errors.New("instr: helper loader injected by ReJIT into " + hostName(m.Name()) + " but not run yet")
	}
	d.mu.Unlock()
	return true, nil
}
