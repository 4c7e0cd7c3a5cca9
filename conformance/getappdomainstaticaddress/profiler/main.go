// Command profiler is the getappdomainstaticaddress scenario's profiler. It
// remembers every class that finishes loading (arrays aside) with the
// AppDomain of the thread that loaded it, and forgets it when the class, its
// module, or the module of one of its type arguments unloads. A goroutine
// of its own forces a collection (ForceGC) after every module load and
// unload, once managed code runs. At the end of every collection, for every
// remembered class, it reads the class's fields from its module's metadata
// and asks GetAppDomainStaticAddress for every AppDomain static field
// (GetStaticFieldInfo): that must succeed, or answer CORPROF_E_DATAINCOMPLETE
// (not initialised yet). At shutdown there must have been no failure, a
// collection, and addresses of statics both in the collectible library
// (UnloadLibrary.dll) and elsewhere.
package main

import (
	"errors"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type staticaddr struct {
	profiler.Base
	info *profiler.Info

	jitted                                   atomic.Int64
	shutdown                                 atomic.Bool
	gcRequests                               chan struct{}
	collections, collectible, nonCollectible atomic.Int64

	mu      sync.Mutex
	classes map[profiler.ClassID]profiler.AppDomainID
}

func (p *staticaddr) Initialize(info *profiler.Info) error {
	p.info = info
	p.classes = map[profiler.ClassID]profiler.AppDomainID{}
	p.gcRequests = make(chan struct{}, 1)
	err := info.SetEventMask2(profiler.MonitorGC|profiler.MonitorClassLoads|profiler.MonitorModuleLoads|
		profiler.MonitorJITCompilation|profiler.DisableAllNGenImages, 0)
	if err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	go p.forceGCs()
	return nil
}

// forceGCs runs on a thread of its own, which never runs managed code, as
// ForceGC wants.
func (p *staticaddr) forceGCs() {
	runtime.LockOSThread()
	if err := p.info.InitializeCurrentThread(); err != nil {
		check.Failf("InitializeCurrentThread: %v", err)
	}
	for range p.gcRequests {
		if p.jitted.Load() == 0 {
			continue // no managed code runs yet
		}
		if p.shutdown.Load() {
			return // the Info is not to be used after Shutdown
		}
		if err := p.info.ForceGC(); err != nil {
			check.Failf("ForceGC: %v", err)
		}
	}
}

func (p *staticaddr) requestGC() {
	select {
	case p.gcRequests <- struct{}{}:
	default: // one is pending already
	}
}

func (p *staticaddr) JITCompilationFinished(f profiler.FunctionID, status profiler.HRESULT, safeToBlock bool) error {
	p.jitted.Add(1)
	return nil
}

func (p *staticaddr) ModuleLoadFinished(m profiler.ModuleID, status profiler.HRESULT) error {
	if _, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName); err != nil {
		check.Failf("GetModuleInfo2 in ModuleLoadFinished: %v", err)
	}
	p.requestGC()
	return nil
}

func (p *staticaddr) ModuleUnloadStarted(m profiler.ModuleID) error {
	p.requestGC()
	p.mu.Lock()
	defer p.mu.Unlock()
	for class := range p.classes {
		ci, err := p.info.GetClassIDInfo2(class)
		if err != nil && !errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
			check.Failf("GetClassIDInfo2 in ModuleUnloadStarted: %v", err)
			return nil
		}
		gone := ci.ModuleID == m
		for _, arg := range ci.TypeArgs {
			argInfo, err := p.info.GetClassIDInfo(arg)
			if err != nil {
				check.Failf("GetClassIDInfo of a type argument: %v", err)
				return nil
			}
			gone = gone || argInfo.ModuleID == m
		}
		if gone {
			delete(p.classes, class)
		}
	}
	return nil
}

func (p *staticaddr) ClassLoadFinished(class profiler.ClassID, status profiler.HRESULT) error {
	if _, isArray, err := p.info.IsArrayClass(class); err == nil && isArray {
		return nil
	}
	thread, err := p.info.GetCurrentThreadID()
	if err != nil {
		check.Failf("GetCurrentThreadID: %v", err)
		return nil
	}
	ad, err := p.info.GetThreadAppDomain(thread)
	if err != nil {
		check.Failf("GetThreadAppDomain(%#x): %v", uint64(thread), err)
		return nil
	}
	if _, err := p.info.GetClassIDInfo2(class); err != nil && !errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
		check.Failf("GetClassIDInfo2 in ClassLoadFinished: %v", err)
	}
	p.mu.Lock()
	p.classes[class] = ad
	p.mu.Unlock()
	return nil
}

func (p *staticaddr) ClassUnloadStarted(class profiler.ClassID) error {
	gone, err := p.info.GetClassIDInfo2(class)
	if err != nil && !errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
		check.Failf("GetClassIDInfo2 in ClassUnloadStarted: %v", err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.classes {
		if c == class {
			delete(p.classes, c)
			continue
		}
		// Other instantiations of the same generic class go with it.
		if ci, err := p.info.GetClassIDInfo2(c); err == nil && ci.TypeDefToken == gone.TypeDefToken && ci.ModuleID == gone.ModuleID {
			delete(p.classes, c)
		}
	}
	return nil
}

func (p *staticaddr) GarbageCollectionFinished() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	imports := map[profiler.ModuleID]*metadata.Import2{}
	defer func() {
		for _, imp := range imports {
			imp.Release()
		}
	}()
	collectible := map[profiler.ModuleID]bool{}
	for class, ad := range p.classes {
		ci, err := p.info.GetClassIDInfo2(class)
		if errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
			continue // still loading: cannot be inspected yet
		}
		if err != nil {
			check.Failf("GetClassIDInfo2(%#x): %v", uint64(class), err)
			continue
		}
		imp, ok := imports[ci.ModuleID]
		if !ok {
			imp, err = p.info.ModuleImport(ci.ModuleID)
			if errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE) {
				continue // the module is unloading
			}
			if err != nil {
				check.Failf("metadata of module %#x: %v", uint64(ci.ModuleID), err)
				continue
			}
			imports[ci.ModuleID] = imp
			mi, err := p.info.ModuleInfoOf(ci.ModuleID, profiler.ModuleFieldName)
			collectible[ci.ModuleID] = err == nil && strings.HasSuffix(strings.ToLower(mi.Name), "unloadlibrary.dll")
		}
		fields, err := imp.Fields(ci.TypeDefToken)
		if err != nil {
			check.Failf("fields of %#x: %v", uint32(ci.TypeDefToken), err)
			continue
		}
		for _, fd := range fields {
			f, err := imp.Field(fd)
			if err != nil {
				check.Failf("field %#x: %v", uint32(fd), err)
				continue
			}
			if f.Flags&metadata.FdStatic == 0 || f.Flags&metadata.FdLiteral != 0 {
				continue
			}
			kind, err := p.info.GetStaticFieldInfo(class, fd)
			if err != nil {
				check.Failf("GetStaticFieldInfo(%s): %v", f.Name, err)
				continue
			}
			if kind&profiler.FieldAppDomainStatic == 0 {
				continue
			}
			_, err = p.info.GetAppDomainStaticAddress(class, fd, ad)
			switch {
			case errors.Is(err, profiler.CORPROF_E_DATAINCOMPLETE):
			case err != nil:
				check.Failf("GetAppDomainStaticAddress(%s): %v", f.Name, err)
			case collectible[ci.ModuleID]:
				p.collectible.Add(1)
			default:
				p.nonCollectible.Add(1)
			}
		}
	}
	p.collections.Add(1)
	return nil
}

func (p *staticaddr) Shutdown() error {
	p.shutdown.Store(true)
	check.Logf("%d collections; static addresses: %d in the collectible library, %d elsewhere",
		p.collections.Load(), p.collectible.Load(), p.nonCollectible.Load())
	var final []string
	if p.collections.Load() == 0 {
		final = append(final, "no collection")
	}
	if p.collectible.Load() == 0 || p.nonCollectible.Load() == 0 {
		final = append(final, "want static addresses both in the collectible library and elsewhere")
	}
	check.Done(final...)
	return nil
}

func init() {
	profiler.Register("{604D76F0-2AF2-48E0-B196-80C972F6AFB7}", &staticaddr{})
}

func main() {}
