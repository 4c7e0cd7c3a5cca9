package profiler

import (
	"sync"

	"github.com/clrprof/clrprof/metadata"
)

// The names (FunctionName, FunctionNameParts, ClassName, FunctionFullName)
// read a module's metadata several times per call (the function, its
// class, each type argument) and are called on hot paths (samplers, ELT
// recorders). Instead of opening the module's reader (GetModuleMetaData
// and a QueryInterface) and releasing it for each part, they share one
// reader per module, kept until the module unloads.
//
// A cached reader is only correct as long as its ModuleID names the same
// module: the runtime reuses the ID of an unloaded module. So the cache is
// used only while the event mask has MonitorModuleLoads (the SDK then sees
// every ModuleUnloadStarted, even when the profiler does not implement
// it, and drops that module's reader); SetEventMask and SetEventMask2 turn
// it on and off (off drops every reader: unloads may go unseen from then
// on). Shutdown and a detach drop every reader too. A reader in use when
// its module is dropped is released by its last user.

type importCache struct {
	mu      sync.Mutex
	watched bool // the event mask has MonitorModuleLoads
	gen     uint64
	byID    map[ModuleID]*sharedImport
}

type sharedImport struct {
	imp     *metadata.Import2
	release func()
	users   int
	dead    bool
}

// sharedModuleImport returns the metadata reader of module m and the
// function to call when done with it (instead of Release).
func (x *Info) sharedModuleImport(m ModuleID) (*metadata.Import2, func(), error) {
	return cacheOf(x).get(m, func() (*metadata.Import2, func(), error) {
		imp, err := x.ModuleImport(m)
		if err != nil {
			return nil, nil, err
		}
		return imp, imp.Release, nil
	})
}

// get returns m's cached reader, or opens one with open (which also says
// how to release it) and caches it when unloads are watched.
func (c *importCache) get(m ModuleID, open func() (*metadata.Import2, func(), error)) (*metadata.Import2, func(), error) {
	c.mu.Lock()
	if e := c.byID[m]; e != nil && c.watched {
		e.users++
		c.mu.Unlock()
		return e.imp, func() { c.done(e) }, nil
	}
	watched, gen := c.watched, c.gen
	c.mu.Unlock()

	imp, release, err := open()
	if err != nil {
		return nil, nil, err
	}
	if !watched {
		return imp, release, nil
	}
	c.mu.Lock()
	if !c.watched || c.gen != gen {
		// A module was dropped (perhaps this one) or unloads stopped being
		// seen while the reader was opened: use it once, do not keep it.
		c.mu.Unlock()
		return imp, release, nil
	}
	if e := c.byID[m]; e != nil {
		// Another goroutine cached one meanwhile.
		e.users++
		c.mu.Unlock()
		release()
		return e.imp, func() { c.done(e) }, nil
	}
	e := &sharedImport{imp: imp, release: release, users: 1}
	if c.byID == nil {
		c.byID = map[ModuleID]*sharedImport{}
	}
	c.byID[m] = e
	c.mu.Unlock()
	return imp, func() { c.done(e) }, nil
}

func (c *importCache) done(e *sharedImport) {
	c.mu.Lock()
	e.users--
	release := e.dead && e.users == 0
	c.mu.Unlock()
	if release {
		e.release()
	}
}

// drop forgets module m's reader (ModuleUnloadStarted).
func (c *importCache) drop(m ModuleID) {
	c.mu.Lock()
	c.gen++
	e := c.byID[m]
	delete(c.byID, m)
	release := false
	if e != nil {
		e.dead = true
		release = e.users == 0
	}
	c.mu.Unlock()
	if release {
		e.release()
	}
}

// setWatched records whether module unloads are reported; when they stop
// being, every reader is dropped.
func (c *importCache) setWatched(on bool) {
	c.mu.Lock()
	c.watched = on
	var free []func()
	if !on {
		c.gen++
		for id, e := range c.byID {
			e.dead = true
			if e.users == 0 {
				free = append(free, e.release)
			}
			delete(c.byID, id)
		}
	}
	c.mu.Unlock()
	for _, release := range free {
		release()
	}
}

// dropImports drops every cached reader of x for good (Shutdown, detach).
func dropImports(x *Info) {
	if x == nil {
		return
	}
	cacheOf(x).setWatched(false)
}

// SetEventMask sets the events the runtime reports (ICorProfilerInfo::
// SetEventMask): Monitor flags, see their docs for which ones can only be
// set in Initialize. It replaces the whole mask.
func (x *Info) SetEventMask(events Monitor) error {
	if err := x.checkNotificationMask("SetEventMask", events, 0); err != nil {
		return err
	}
	if err := x.setEventMask(events); err != nil {
		return err
	}
	x.watchMask(events)
	return nil
}

// watchMask tells the caches whether module and class unloads are
// reported (SetEventMask and SetEventMask2 call it after the runtime took
// the mask).
func (x *Info) watchMask(low Monitor) {
	cacheOf(x).setWatched(low&MonitorModuleLoads != 0)
	canonOf(x).setWatched(low&MonitorClassLoads != 0 && sharedNames())
}

// unloadHook is the dispatcher's view of the user's Callback: it drops a
// module's cached reader before the user hears of its unload, and keeps
// the canonical instantiations of generic classes (canonical.go).
type unloadHook struct {
	Callback
	info func() *Info
}

func (u unloadHook) ModuleUnloadStarted(m ModuleID) error {
	if x := u.info(); x != nil {
		cacheOf(x).drop(m)
		canonOf(x).moduleUnloading(m)
	}
	return u.Callback.ModuleUnloadStarted(m)
}

// ClassLoadFinished records canonical instantiations (canonical.go).
func (u unloadHook) ClassLoadFinished(c ClassID, hr HRESULT) error {
	if x := u.info(); x != nil && hr >= 0 {
		x.classLoaded(c)
	}
	return u.Callback.ClassLoadFinished(c, hr)
}

// ClassUnloadStarted forgets a canonical instantiation.
func (u unloadHook) ClassUnloadStarted(c ClassID) error {
	if x := u.info(); x != nil {
		canonOf(x).classUnloading(c)
	}
	return u.Callback.ClassUnloadStarted(c)
}
