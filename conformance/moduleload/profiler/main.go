// Command profiler is the moduleload scenario's profiler: with module and
// assembly load events on, every ModuleLoadStarted must be followed by a
// ModuleLoadFinished for the same module, every AssemblyLoadStarted by an
// AssemblyLoadFinished for the same assembly, there must be some of each,
// and the app's dynamic assembly must be among them. It also answers
// LoadAsNotificationOnly with true, as upstream's does: a runtime that asks
// (ICorProfilerCallback11, .NET 5 and later; TestAPIs shows .NET 8 asking)
// then loads it as a notification-only profiler, to which the events it
// checks are allowed.
package main

import (
	"fmt"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type moduleload struct {
	profiler.Base
	info *profiler.Info

	mu                   sync.Mutex
	modules, asms        map[uintptr]int // started minus finished, per ID
	modStarts, asmStarts int
	dynamicSeen          bool
}

func (p *moduleload) Initialize(info *profiler.Info) error {
	p.info = info
	p.modules, p.asms = map[uintptr]int{}, map[uintptr]int{}
	if err := info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorAssemblyLoads); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *moduleload) LoadAsNotificationOnly() (bool, error) { return true, nil }

func (p *moduleload) ModuleLoadStarted(m profiler.ModuleID) error {
	p.mu.Lock()
	p.modules[uintptr(m)]++
	p.modStarts++
	p.mu.Unlock()
	return nil
}

func (p *moduleload) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	p.mu.Lock()
	p.modules[uintptr(m)]--
	p.mu.Unlock()
	return nil
}

func (p *moduleload) AssemblyLoadStarted(a profiler.AssemblyID) error {
	p.mu.Lock()
	p.asms[uintptr(a)]++
	p.asmStarts++
	p.mu.Unlock()
	return nil
}

func (p *moduleload) AssemblyLoadFinished(a profiler.AssemblyID, hr profiler.HRESULT) error {
	if info, err := p.info.GetAssemblyInfo(a); err == nil && info.Name == "ConfDynamicAssembly" {
		p.mu.Lock()
		p.dynamicSeen = true
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.asms[uintptr(a)]--
	p.mu.Unlock()
	return nil
}

func (p *moduleload) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	if p.modStarts == 0 || p.asmStarts == 0 {
		final = append(final, fmt.Sprintf("%d module loads and %d assembly loads started, want some of each", p.modStarts, p.asmStarts))
	}
	for id, n := range p.modules {
		if n != 0 {
			final = append(final, fmt.Sprintf("module %#x: %d more ModuleLoadStarted than ModuleLoadFinished", id, n))
		}
	}
	for id, n := range p.asms {
		if n != 0 {
			final = append(final, fmt.Sprintf("assembly %#x: %d more AssemblyLoadStarted than AssemblyLoadFinished", id, n))
		}
	}
	if !p.dynamicSeen {
		final = append(final, "the dynamic assembly ConfDynamicAssembly was not reported loaded")
	}
	check.Logf("moduleload: %d modules, %d assemblies", p.modStarts, p.asmStarts)
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{2E6F4A83-7D1B-4C59-A0E2-8B3C5D7F9A06}", &moduleload{})
}

func main() {}
