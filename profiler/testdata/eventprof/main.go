// Command eventprof is the profiler of the callback-count and exception
// tests. It asks for module, assembly, class, JIT and exception events,
// resolves the name of what each one is about, and at Shutdown prints on
// stderr how many events of each kind named something with the prefix
// "Ev" (the events app's own namespaces) and how many exceptions of each
// class were thrown, plus the raw totals:
//
//	eventprof: assembly EvLib 1
//	eventprof: class EvLib.Loaded1 1
//	...
//	eventprof: totals modules=.. assemblies=.. classes=.. jits=.. throws=.. catches=..
//
// EVENTPROF_EXCEPTIONS=0 leaves exception events out of the mask;
// EVENTPROF_SLOW_SHUTDOWN=<duration> makes Shutdown wait that long first
// (events that arrive meanwhile and afterwards are counted as late).
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type eventprof struct {
	profiler.Base
	info *profiler.Info

	mu     sync.Mutex
	named  map[string]int // "kind name" → count, for names starting with Ev
	errors map[string]int

	modules, assemblies, classes, jits, throws, catches atomic.Int64

	shuttingDown atomic.Bool
	late         atomic.Int64 // events delivered while Shutdown runs
}

func (p *eventprof) Initialize(info *profiler.Info) error {
	p.info = info
	mask := profiler.MonitorModuleLoads | profiler.MonitorAssemblyLoads | profiler.MonitorClassLoads |
		profiler.MonitorJITCompilation | profiler.MonitorExceptions
	if os.Getenv("EVENTPROF_EXCEPTIONS") == "0" {
		mask &^= profiler.MonitorExceptions
	}
	return info.SetEventMask(mask)
}

func (p *eventprof) note(kind, name string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err != nil {
		p.errors[kind+": "+err.Error()]++
		return
	}
	if strings.HasPrefix(name, "Ev") || kind == "throw" {
		p.named[kind+" "+name]++
	}
}

func (p *eventprof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	p.modules.Add(1)
	mi, err := p.info.GetModuleInfo(m)
	p.note("module", strings.TrimSuffix(filepath.Base(mi.Name), filepath.Ext(mi.Name)), err)
	return nil
}

func (p *eventprof) AssemblyLoadFinished(a profiler.AssemblyID, hr profiler.HRESULT) error {
	p.assemblies.Add(1)
	ai, err := p.info.GetAssemblyInfo(a)
	p.note("assembly", ai.Name, err)
	return nil
}

func (p *eventprof) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	p.classes.Add(1)
	name, err := p.info.ClassName(c)
	p.note("class", name, err)
	return nil
}

func (p *eventprof) JITCompilationFinished(f profiler.FunctionID, hr profiler.HRESULT, safeToBlock bool) error {
	p.jits.Add(1)
	name, err := p.info.FunctionName(f)
	p.note("jit", name, err)
	return nil
}

func (p *eventprof) ExceptionThrown(o profiler.ObjectID) error {
	p.throws.Add(1)
	if p.shuttingDown.Load() {
		p.late.Add(1)
	}
	c, err := p.info.GetClassFromObject(o)
	name := ""
	if err == nil {
		name, err = p.info.ClassName(c)
	}
	p.note("throw", name, err)
	return nil
}

func (p *eventprof) ExceptionCatcherEnter(f profiler.FunctionID, o profiler.ObjectID) error {
	p.catches.Add(1)
	name, err := p.info.FunctionName(f)
	p.note("catch", name, err)
	return nil
}

func (p *eventprof) Shutdown() error {
	if d, err := time.ParseDuration(os.Getenv("EVENTPROF_SLOW_SHUTDOWN")); err == nil {
		p.shuttingDown.Store(true)
		time.Sleep(d)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	var lines []string
	for k, n := range p.named {
		lines = append(lines, fmt.Sprintf("eventprof: %s %d", k, n))
	}
	for k, n := range p.errors {
		lines = append(lines, fmt.Sprintf("eventprof: error %s (%d times)", k, n))
	}
	sort.Strings(lines)
	// gom is how many Ms the Go runtime has made (its threadcreate
	// profile): its own threads and those it keeps for callbacks from
	// threads it did not start.
	lines = append(lines, fmt.Sprintf("eventprof: totals modules=%d assemblies=%d classes=%d jits=%d throws=%d catches=%d late=%d gom=%d",
		p.modules.Load(), p.assemblies.Load(), p.classes.Load(), p.jits.Load(), p.throws.Load(), p.catches.Load(), p.late.Load(),
		pprof.Lookup("threadcreate").Count()))
	fmt.Fprintln(os.Stderr, strings.Join(lines, "\n"))
	return nil
}

func init() {
	profiler.Register("{3B9F6A21-5C4D-4E8F-A1B2-7C6D5E4F3A29}", &eventprof{named: map[string]int{}, errors: map[string]int{}})
}

func main() {}
