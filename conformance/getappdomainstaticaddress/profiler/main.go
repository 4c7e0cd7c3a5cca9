// Command profiler is the getappdomainstaticaddress scenario's profiler:
// it remembers every non-array class loaded (with the app domain of the
// thread that loaded it) and forgets those whose module or type arguments
// unload; after every collection it asks, for each remembered class, the
// static field info of its static fields and the address of every app
// domain static. No call may fail (CORPROF_E_DATAINCOMPLETE, for a class or
// module not ready or going away, is allowed), and addresses must come back
// for statics of the collectible library as well as of other modules. A
// goroutine forces a collection after each module load and unload, as
// upstream's helper thread does.
package main

import (
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// collectibleLib is the file name of the library the app loads into a
// collectible context.
const collectibleLib = "ConfUnloadLib.dll"

type statics struct {
	profiler.Base
	info *profiler.Info

	jitted                      atomic.Int64
	gcs                         chan struct{}
	collectible, nonCollectible atomic.Int64
	gcsChecked                  atomic.Int64

	mu      sync.Mutex
	classes map[profiler.ClassID]profiler.AppDomainID
}

func (p *statics) Initialize(info *profiler.Info) error {
	p.info = info
	p.classes = map[profiler.ClassID]profiler.AppDomainID{}
	p.gcs = make(chan struct{}, 1)
	err := info.SetEventMask(profiler.MonitorGC | profiler.MonitorClassLoads | profiler.MonitorModuleLoads |
		profiler.MonitorJITCompilation | profiler.DisableAllNGenImages)
	if err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	go p.collector()
	return nil
}

// collector forces a collection each time it is asked to, once managed code
// runs, from a thread of its own that the runtime does not run code on.
func (p *statics) collector() {
	runtime.LockOSThread()
	initialized := false
	for range p.gcs {
		if p.jitted.Load() == 0 {
			continue
		}
		if !initialized {
			if err := p.info.InitializeCurrentThread(); err != nil {
				check.Failf("InitializeCurrentThread: %v", err)
			}
			initialized = true
		}
		if err := p.info.ForceGC(); err != nil {
			check.Failf("ForceGC: %v", err)
		}
	}
}

func (p *statics) askGC() {
	select {
	case p.gcs <- struct{}{}:
	default: // one is pending already
	}
}

func (p *statics) JITCompilationFinished(profiler.FunctionID, profiler.HRESULT, bool) error {
	p.jitted.Add(1)
	return nil
}

func (p *statics) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if _, err := p.info.GetModuleInfo2(m); err != nil {
		check.Failf("GetModuleInfo2(%#x): %v", m, err)
	}
	p.askGC()
	return nil
}

func (p *statics) ModuleUnloadStarted(m profiler.ModuleID) error {
	p.askGC()
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.classes {
		ci, err := p.info.GetClassIDInfo2(c)
		if err != nil {
			check.Failf("GetClassIDInfo2(%#x) at module unload: %v", c, err)
			delete(p.classes, c)
			continue
		}
		gone := ci.ModuleID == m
		for _, a := range ci.TypeArgs {
			if am, err := p.info.GetClassIDInfo(a); err == nil && am.ModuleID == m {
				gone = true
			}
		}
		if gone {
			delete(p.classes, c)
		}
	}
	return nil
}

func (p *statics) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	if _, isArray, err := p.info.IsArrayClass(c); err != nil || isArray {
		return nil
	}
	t, err := p.info.GetCurrentThreadID()
	if err != nil {
		check.Failf("GetCurrentThreadID: %v", err)
		return nil
	}
	ad, err := p.info.GetThreadAppDomain(t)
	if err != nil {
		check.Failf("GetThreadAppDomain(%#x): %v", t, err)
		return nil
	}
	p.mu.Lock()
	p.classes[c] = ad
	p.mu.Unlock()
	return nil
}

func (p *statics) ClassUnloadStarted(c profiler.ClassID) error {
	p.mu.Lock()
	delete(p.classes, c)
	p.mu.Unlock()
	return nil
}

func incomplete(err error) bool { return errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) }

func (p *statics) GarbageCollectionFinished() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	imports := map[profiler.ModuleID]*metadata.Import2{}
	defer func() {
		for _, imp := range imports {
			if imp != nil {
				imp.Release()
			}
		}
	}()
	for c, ad := range p.classes {
		ci, err := p.info.GetClassIDInfo2(c)
		if incomplete(err) {
			continue
		}
		if err != nil {
			check.Failf("GetClassIDInfo2(%#x): %v", c, err)
			continue
		}
		imp, seen := imports[ci.ModuleID]
		if !seen {
			imp, err = p.info.ModuleImport(ci.ModuleID)
			if err != nil && !incomplete(err) {
				check.Failf("ModuleImport(%#x): %v", ci.ModuleID, err)
			}
			imports[ci.ModuleID] = imp // nil when the module is going away
		}
		if imp == nil {
			continue
		}
		fields, err := imp.Fields(ci.TypeDefToken)
		if err != nil {
			check.Failf("Fields(%v): %v", ci.TypeDefToken, err)
			continue
		}
		for _, fd := range fields {
			f, err := imp.Field(fd)
			if err != nil {
				check.Failf("Field(%v): %v", fd, err)
				continue
			}
			if f.Flags&metadata.FdStatic == 0 || f.Flags&metadata.FdLiteral != 0 {
				continue
			}
			kind, err := p.info.GetStaticFieldInfo(c, fd)
			if err != nil {
				check.Failf("GetStaticFieldInfo(%#x, %s): %v", c, f.Name, err)
				continue
			}
			if kind&profiler.FieldAppDomainStatic == 0 {
				continue
			}
			_, err = p.info.GetAppDomainStaticAddress(c, fd, ad)
			switch {
			case incomplete(err):
			case err != nil:
				check.Failf("GetAppDomainStaticAddress(%#x, %s): %v", c, f.Name, err)
			default:
				if mi, err := p.info.GetModuleInfo(ci.ModuleID); err == nil && filepath.Base(mi.Name) == collectibleLib {
					p.collectible.Add(1)
				} else {
					p.nonCollectible.Add(1)
				}
			}
		}
	}
	p.gcsChecked.Add(1)
	return nil
}

func (p *statics) Shutdown() error {
	var final []string
	if p.gcsChecked.Load() == 0 {
		final = append(final, "no collection finished")
	}
	if p.collectible.Load() == 0 {
		final = append(final, "no app domain static of the collectible library got an address")
	}
	if p.nonCollectible.Load() == 0 {
		final = append(final, "no app domain static of another module got an address")
	}
	check.Logf("getappdomainstaticaddress: %d collections checked, %d collectible and %d other static addresses",
		p.gcsChecked.Load(), p.collectible.Load(), p.nonCollectible.Load())
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{4C7E2A95-3F6B-4D18-9E2C-5A8B1D3F6E08}", &statics{})
}

func main() {}
