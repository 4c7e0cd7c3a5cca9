// Command profiler is the metadatagetdispenser scenario's profiler: at
// every ModuleLoadStarted the runtime's exported MetaDataGetDispenser must
// give a dispenser (profiler.MetaDataDispenser), the module's path must be
// known (GetModuleInfo2 asked for the name only) and the dispenser must
// open that file for reading. At shutdown at least the app's module and
// the core library must have been opened.
package main

import (
	"path/filepath"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type dispenser struct {
	profiler.Base
	info *profiler.Info

	mu     sync.Mutex
	opened map[string]bool // base names of the files opened
}

func (p *dispenser) Initialize(info *profiler.Info) error {
	p.info = info
	p.opened = map[string]bool{}
	if err := info.SetEventMask2(profiler.MonitorModuleLoads, 0); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	return nil
}

func (p *dispenser) ModuleLoadStarted(m profiler.ModuleID) error {
	d, err := profiler.MetaDataDispenser()
	if err != nil {
		check.Failf("module %#x: MetaDataDispenser: %v", uint64(m), err)
		return nil
	}
	defer d.Release()
	mi, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName)
	if err != nil || mi.Name == "" {
		check.Failf("module %#x: GetModuleInfo2 gave no path (%q): %v", uint64(m), mi.Name, err)
		return nil
	}
	imp, err := d.OpenImport(mi.Name)
	if err != nil {
		check.Failf("module %s: the dispenser cannot open it: %v", mi.Name, err)
		return nil
	}
	imp.Release()
	p.mu.Lock()
	p.opened[strings.ToLower(filepath.Base(mi.Name))] = true
	p.mu.Unlock()
	return nil
}

func (p *dispenser) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	for _, want := range []string{"system.private.corelib.dll", "app.exe"} {
		if !p.opened[want] {
			final = append(final, "never opened "+want+" through the dispenser")
		}
	}
	check.Logf("opened %d module files through the runtime's dispenser", len(p.opened))
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{7198FF3E-50E8-4AD1-9B89-CB15A1D6E740}", &dispenser{})
}

func main() {}
