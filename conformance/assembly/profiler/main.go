// Command profiler is the assembly scenario's profiler: with assembly load
// events on, while the app runs an assembly twice in collectible contexts
// that it unloads, every AssemblyUnloadStarted must be matched by an
// AssemblyUnloadFinished (upstream's check), both unloads of the test
// assembly must be reported, every load started must finish, and both
// loads of the test assembly must be seen.
package main

import (
	"fmt"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

const testAssembly = "ConfTestFile"

type assembly struct {
	profiler.Base
	info *profiler.Info

	mu                            sync.Mutex
	loadStarted, loadFinished     int
	testLoads                     int
	unloadStarted, unloadFinished int
}

func (p *assembly) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask(profiler.MonitorAssemblyLoads); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *assembly) count(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
}

func (p *assembly) AssemblyLoadStarted(profiler.AssemblyID) error {
	p.count(func() { p.loadStarted++ })
	return nil
}

func (p *assembly) AssemblyLoadFinished(a profiler.AssemblyID, hr profiler.HRESULT) error {
	ai, err := p.info.GetAssemblyInfo(a)
	p.count(func() {
		p.loadFinished++
		if err == nil && ai.Name == testAssembly {
			p.testLoads++
		}
	})
	return nil
}

func (p *assembly) AssemblyUnloadStarted(profiler.AssemblyID) error {
	p.count(func() { p.unloadStarted++ })
	return nil
}

func (p *assembly) AssemblyUnloadFinished(profiler.AssemblyID, profiler.HRESULT) error {
	p.count(func() { p.unloadFinished++ })
	return nil
}

func (p *assembly) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	if p.unloadStarted != p.unloadFinished {
		final = append(final, fmt.Sprintf("AssemblyUnloadStarted %d times but AssemblyUnloadFinished %d times", p.unloadStarted, p.unloadFinished))
	}
	if p.loadStarted != p.loadFinished {
		final = append(final, fmt.Sprintf("AssemblyLoadStarted %d times but AssemblyLoadFinished %d times", p.loadStarted, p.loadFinished))
	}
	if p.unloadStarted < 2 {
		final = append(final, fmt.Sprintf("%d assembly unloads reported, want at least the test assembly's 2", p.unloadStarted))
	}
	if p.testLoads != 2 {
		final = append(final, fmt.Sprintf("%s loaded %d times, want 2", testAssembly, p.testLoads))
	}
	check.Logf("assembly: %d assemblies loaded (%s twice), %d unloads reported", p.loadFinished, testAssembly, p.unloadFinished)
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{5D9F3A12-7E4B-4C86-B2A1-9F0E6D3C8B15}", &assembly{})
}

func main() {}
