// Command profiler is the classload scenario's profiler: with class load
// events on, it counts the load and unload callbacks of the classes that
// involve the collectible library's TestClass (the class itself and the
// instantiations List<TestClass> brings with it: the list and its generic
// interfaces). Every load started must finish, every unload started must
// finish, and every such class loaded must be unloaded again once the
// collectible context is collected: as upstream, seven of them.
package main

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

// wantClasses is how many classes involve TestClass: TestClass, List<T> and
// the five generic interfaces List<T> implements (IList, ICollection,
// IEnumerable, IReadOnlyList, IReadOnlyCollection).
const wantClasses = 7

type classload struct {
	profiler.Base
	info *profiler.Info

	mu                            sync.Mutex
	names                         map[profiler.ClassID]string
	loadStarted, loadFinished     int
	unloadStarted, unloadFinished int
	loaded                        map[string]bool
}

func (p *classload) Initialize(info *profiler.Info) error {
	p.info = info
	p.names, p.loaded = map[profiler.ClassID]string{}, map[string]bool{}
	if err := info.SetEventMask(profiler.MonitorClassLoads); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

// ours names the class if it involves TestClass, else "". A class being
// unloaded is named from what was learnt at its load.
func (p *classload) ours(c profiler.ClassID) string {
	p.mu.Lock()
	name, known := p.names[c]
	p.mu.Unlock()
	if known {
		return name
	}
	n, err := p.info.ClassName(c)
	if err != nil || !strings.Contains(n, "ConfClassLib.TestClass") {
		n = ""
	}
	p.mu.Lock()
	p.names[c] = n
	p.mu.Unlock()
	return n
}

func (p *classload) ClassLoadStarted(c profiler.ClassID) error {
	if n := p.ours(c); n != "" {
		check.Logf("ClassLoadStarted: %s", n)
		p.mu.Lock()
		p.loadStarted++
		p.loaded[n] = true
		p.mu.Unlock()
	}
	return nil
}

func (p *classload) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	if p.ours(c) != "" {
		p.mu.Lock()
		p.loadFinished++
		p.mu.Unlock()
	}
	return nil
}

func (p *classload) ClassUnloadStarted(c profiler.ClassID) error {
	if n := p.ours(c); n != "" {
		check.Logf("ClassUnloadStarted: %s", n)
		p.mu.Lock()
		p.unloadStarted++
		p.mu.Unlock()
	}
	return nil
}

func (p *classload) ClassUnloadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	if p.ours(c) != "" {
		p.mu.Lock()
		p.unloadFinished++
		p.mu.Unlock()
	}
	return nil
}

func (p *classload) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	var final []string
	if p.loadStarted != p.loadFinished || p.unloadStarted != p.unloadFinished ||
		p.loadStarted != wantClasses || p.unloadStarted != wantClasses {
		var names []string
		for n := range p.loaded {
			names = append(names, n)
		}
		sort.Strings(names)
		final = append(final, fmt.Sprintf("class loads started %d, finished %d; unloads started %d, finished %d; want %d of each (classes: %s)",
			p.loadStarted, p.loadFinished, p.unloadStarted, p.unloadFinished, wantClasses, strings.Join(names, ", ")))
	}
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{3B8E1F6A-4C2D-4B97-8E05-A1D6C9F3B713}", &classload{})
}

func main() {}
