// Command alcprof is the profiler of the collectible-unload stress test
// (TestALCUnloadCycles). It keeps every module, class and function ID the
// runtime reports (ModuleLoadFinished, ClassLoadFinished,
// JITCompilationFinished) in an idmap.Map and keeps handing them back
// to the runtime — GetModuleInfo, GetClassIDInfo2, GetFunctionInfo2 — from
// inside every such callback (the most recent IDs and those of the last
// unload) and from a goroutine that sweeps, over and over, on threads the
// runtime does not know, every ID seen that is alive or died in one of the
// last three unloads. Each use goes through the
// map (idmap.Map.UseClass and friends): the map decides whether the ID may
// still be used.
//
// Beside the map, alcprof keeps its own record of which IDs are alive: for
// each ID, every module it depends on (its own module, the modules of its
// type arguments, array element types and, for a function, its class and
// method type arguments, recursively). When a module unloads, every ID
// depending on it is dead. A use that the map lets through for a dead ID
// is counted as stale and not passed to the runtime; the test wants none.
//
// Lines on stderr, prefixed "alcprof: ":
//
//	unload n=K module=0x.. held=C/F after=known:false,0/0 map=M/C/F->M/C/F dead=D refused=R
//	totals alcloads=.. alcunloads=.. tracked=.. dropped=.. uses=.. calls=.. refused=.. refused_dead=.. stale=.. leaked=.. ...
//	stale <kind> 0x..                 (the first few stale uses, if any)
//
// ALCPROF_BYPASS=1 is the negative control: uses skip the map and go
// straight to the runtime, so IDs of unloaded modules are used (the record
// above catches them first and counts them as stale).
package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/idmap"
	"github.com/clrprof/clrprof/profiler"
)

// kind is what an ID names.
type kind int

const (
	kModule kind = iota
	kClass
	kFunction
	nKinds
)

var kindNames = [nKinds]string{"module", "class", "function"}

// record is alcprof's own view of which IDs are alive: for every live ID,
// the modules it depends on.
type record struct {
	mu   sync.RWMutex
	live [nKinds]map[uint64][]profiler.ModuleID
}

func newRecord() *record {
	r := &record{}
	for k := range r.live {
		r.live[k] = map[uint64][]profiler.ModuleID{}
	}
	return r
}

func (r *record) add(k kind, id uint64, deps []profiler.ModuleID) {
	r.mu.Lock()
	r.live[k][id] = deps
	for _, m := range deps {
		if _, ok := r.live[kModule][uint64(m)]; !ok {
			r.live[kModule][uint64(m)] = []profiler.ModuleID{m}
		}
	}
	r.mu.Unlock()
}

// kill forgets every ID that depends on module m and returns them.
func (r *record) kill(m profiler.ModuleID) [nKinds][]uint64 {
	var dead [nKinds][]uint64
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.live {
		for id, deps := range r.live[k] {
			for _, d := range deps {
				if d == m {
					dead[k] = append(dead[k], id)
					delete(r.live[k], id)
					break
				}
			}
		}
	}
	return dead
}

// with calls f while id is known to be alive (and holds off kill), or
// reports false without calling f.
func (r *record) with(k kind, id uint64, f func()) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if _, ok := r.live[k][id]; !ok {
		return false
	}
	f()
	return true
}

// seenIDs is every ID reported, per kind, in order of first report, less
// those that died more than keepDead unloads ago (so that the profiler's
// own bookkeeping does not grow with the cycles).
type seenIDs struct {
	mu  sync.Mutex
	ids [nKinds][]uint64
	set [nKinds]map[uint64]bool
}

func (s *seenIDs) add(k kind, id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.set[k] == nil {
		s.set[k] = map[uint64]bool{}
	}
	if !s.set[k][id] {
		s.set[k][id] = true
		s.ids[k] = append(s.ids[k], id)
	}
}

// last returns up to n of the most recently first-seen IDs of a kind.
func (s *seenIDs) last(k kind, n int) []uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := s.ids[k]
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return append([]uint64(nil), l...)
}

func (s *seenIDs) all(k kind) []uint64 { return s.last(k, int(^uint(0)>>1)) }

// forget drops the given IDs unless keep says otherwise.
func (s *seenIDs) forget(k kind, ids []uint64, keep func(uint64) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, id := range ids {
		if s.set[k][id] && !keep(id) {
			delete(s.set[k], id)
			n++
		}
	}
	if n == 0 {
		return
	}
	l := s.ids[k][:0]
	for _, id := range s.ids[k] {
		if s.set[k][id] {
			l = append(l, id)
		}
	}
	s.ids[k] = l
}

// keepDead is how many unloads' dead IDs stay in the sweeps.
const keepDead = 3

type alcprof struct {
	profiler.Base
	info   *profiler.Info
	ids    *idmap.Map
	rec    *record
	seen   seenIDs
	bypass bool

	// changing: held shared by every change to the map and the record
	// (an ID added, an unload), exclusively by Shutdown's count of the
	// dead IDs left, which reads both and must see them agree (callbacks
	// of the runtime's other threads still arrive during Shutdown).
	changing sync.RWMutex

	mu        sync.Mutex
	alcMods   map[profiler.ModuleID]bool
	lastDead  [nKinds][]uint64   // the IDs the last unload killed
	deadQ     [][nKinds][]uint64 // the IDs the last keepDead unloads killed
	staleLogs int
	names     map[uint64]string // names of classes and functions that depend on AlcColl.dll, for the stale lines

	alcLoads, alcUnloads, unloadsOther                      atomic.Int64
	tracked, addErrors, dropped                             atomic.Int64
	uses, calls, refused, refusedDead, stale                atomic.Int64
	callErrors                                              [nKinds]atomic.Int64
	callbackUses, sweepUses, sweeps, classUnloads, notAfter atomic.Int64
	killed                                                  atomic.Int64
	unloading, overlap                                      atomic.Int64 // unload callbacks in progress; runtime calls made meanwhile
	addsInUnload                                            atomic.Int64 // IDs added to the map while an unload callback ran

	stop chan struct{}
	done chan struct{}
}

func (p *alcprof) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "alcprof: "+format+"\n", args...)
}

func (p *alcprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.ids = idmap.New(info)
	p.rec = newRecord()
	p.alcMods = map[profiler.ModuleID]bool{}
	p.names = map[uint64]string{}
	p.bypass = os.Getenv("ALCPROF_BYPASS") == "1"
	p.stop = make(chan struct{})
	p.done = make(chan struct{})
	if err := info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorClassLoads |
		profiler.MonitorJITCompilation | profiler.MonitorAppDomainLoads); err != nil {
		return err
	}
	go p.sweep()
	return nil
}

// sweep uses every ID ever seen, again and again, until Shutdown.
func (p *alcprof) sweep() {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		for k := range nKinds {
			for _, id := range p.seen.all(k) {
				p.use(k, id)
				p.sweepUses.Add(1)
			}
		}
		p.sweeps.Add(1)
		time.Sleep(time.Millisecond)
	}
}

// use hands id to the runtime if the map still holds it (or, with
// ALCPROF_BYPASS=1, whatever the map says).
func (p *alcprof) use(k kind, id uint64) (refused bool) {
	p.uses.Add(1)
	var err error
	switch {
	case p.bypass:
		p.touch(k, id)
	case k == kModule:
		err = p.ids.UseModule(profiler.ModuleID(id), func(idmap.ModuleEntry) error { p.touch(k, id); return nil })
	case k == kClass:
		err = p.ids.UseClass(profiler.ClassID(id), func(idmap.ClassEntry) error { p.touch(k, id); return nil })
	case k == kFunction:
		err = p.ids.UseFunction(profiler.FunctionID(id), func(idmap.FunctionEntry) error { p.touch(k, id); return nil })
	}
	if errors.Is(err, idmap.ErrUnknownID) {
		p.refused.Add(1)
		p.rec.mu.RLock()
		_, alive := p.rec.live[k][id]
		p.rec.mu.RUnlock()
		if !alive {
			p.refusedDead.Add(1)
		}
	}
	return errors.Is(err, idmap.ErrUnknownID)
}

// touch calls the runtime with id, unless the record says it is dead:
// then the use is stale, counted, and the runtime never sees the ID.
func (p *alcprof) touch(k kind, id uint64) {
	ok := p.rec.with(k, id, func() {
		p.calls.Add(1)
		if p.unloading.Load() != 0 {
			p.overlap.Add(1)
		}
		var err error
		switch k {
		case kModule:
			_, err = p.info.GetModuleInfo(profiler.ModuleID(id))
		case kClass:
			_, err = p.info.GetClassIDInfo2(profiler.ClassID(id))
		case kFunction:
			_, err = p.info.GetFunctionInfo2(profiler.FunctionID(id), 0)
		}
		if err != nil {
			p.callErrors[k].Add(1)
		}
	})
	if !ok {
		p.stale.Add(1)
		p.mu.Lock()
		if p.staleLogs < 10 {
			p.staleLogs++
			p.logf("stale %s %#x %s", kindNames[k], id, p.names[id])
		}
		p.mu.Unlock()
	}
}

// useRecent is what every load callback does: use the latest IDs of each
// kind and every ID the last unload killed.
func (p *alcprof) useRecent() {
	p.mu.Lock()
	dead := p.lastDead
	p.mu.Unlock()
	for k := range nKinds {
		for _, id := range p.seen.last(k, 32) {
			p.use(k, id)
			p.callbackUses.Add(1)
		}
		for _, id := range dead[k] {
			p.use(k, id)
			p.callbackUses.Add(1)
		}
	}
}

// classDeps adds to deps the modules class c depends on.
func (p *alcprof) classDeps(c profiler.ClassID, depth int, deps map[profiler.ModuleID]bool) {
	if c == 0 || depth > 12 {
		return
	}
	if ci, err := p.info.GetClassIDInfo2(c); err == nil {
		if ci.ModuleID != 0 {
			deps[ci.ModuleID] = true
		}
		for _, a := range ci.TypeArgs {
			p.classDeps(a, depth+1, deps)
		}
		return
	}
	if ai, isArray, err := p.info.IsArrayClass(c); err == nil && isArray {
		p.classDeps(ai.BaseClassID, depth+1, deps)
	}
}

// noteName remembers the name of an ID that depends on AlcColl.dll.
func (p *alcprof) noteName(id uint64, deps map[profiler.ModuleID]bool, name func() (string, error)) {
	p.mu.Lock()
	alc := false
	for m := range deps {
		alc = alc || p.alcMods[m]
	}
	p.mu.Unlock()
	if !alc {
		return
	}
	n, err := name()
	if err != nil {
		n = err.Error()
	}
	p.mu.Lock()
	p.names[id] = n
	p.mu.Unlock()
}

func depList(deps map[profiler.ModuleID]bool) []profiler.ModuleID {
	out := make([]profiler.ModuleID, 0, len(deps))
	for m := range deps {
		out = append(out, m)
	}
	return out
}

func (p *alcprof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	// The record first, then the map: the map never holds an ID the
	// record thinks dead (an ID may be reused by a new load).
	p.changing.RLock()
	p.rec.add(kModule, uint64(m), []profiler.ModuleID{m})
	e, err := p.ids.AddModule(m)
	if err != nil {
		p.changing.RUnlock()
		p.addErrors.Add(1)
		return nil
	}
	p.added()
	if strings.EqualFold(filepath.Base(e.Name), "AlcColl.dll") {
		p.mu.Lock()
		p.alcMods[m] = true
		p.mu.Unlock()
		p.alcLoads.Add(1)
	}
	p.seen.add(kModule, uint64(m))
	p.changing.RUnlock()
	p.useRecent()
	return nil
}

// added counts an ID the map took, and whether an unload callback was
// running meanwhile.
func (p *alcprof) added() {
	p.tracked.Add(1)
	if p.unloading.Load() > 0 {
		p.addsInUnload.Add(1)
	}
}

func (p *alcprof) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	deps := map[profiler.ModuleID]bool{}
	p.classDeps(c, 0, deps)
	p.noteName(uint64(c), deps, func() (string, error) { return p.info.ClassName(c) })
	p.changing.RLock()
	p.rec.add(kClass, uint64(c), depList(deps))
	if _, err := p.ids.AddClass(c); err != nil {
		p.addErrors.Add(1) // arrays: GetClassIDInfo2 refuses them
	} else {
		p.added()
		p.seen.add(kClass, uint64(c))
	}
	p.changing.RUnlock()
	p.useRecent()
	return nil
}

func (p *alcprof) JITCompilationFinished(f profiler.FunctionID, hr profiler.HRESULT, _ bool) error {
	if hr < 0 {
		return nil
	}
	deps := map[profiler.ModuleID]bool{}
	if fi, err := p.info.GetFunctionInfo2(f, 0); err == nil {
		deps[fi.ModuleID] = true
		p.classDeps(fi.ClassID, 0, deps)
		for _, a := range fi.TypeArgs {
			p.classDeps(a, 0, deps)
		}
	}
	p.noteName(uint64(f), deps, func() (string, error) { return p.info.FunctionName(f) })
	p.changing.RLock()
	p.rec.add(kFunction, uint64(f), depList(deps))
	if _, err := p.ids.AddFunction(f); err != nil {
		p.addErrors.Add(1)
	} else {
		p.added()
		p.seen.add(kFunction, uint64(f))
	}
	p.changing.RUnlock()
	p.useRecent()
	return nil
}

func (p *alcprof) ModuleUnloadStarted(m profiler.ModuleID) error {
	p.changing.RLock()
	defer p.changing.RUnlock()
	p.mu.Lock()
	alc := p.alcMods[m]
	delete(p.alcMods, m)
	p.mu.Unlock()
	p.unloading.Add(1)
	defer p.unloading.Add(-1)
	heldC, heldF := p.ids.ModuleCounts(m)
	m0, c0, f0 := p.ids.Counts()
	_ = p.ids.ModuleUnloadStarted(m) // drops, and waits for uses in progress
	m1, c1, f1 := p.ids.Counts()
	p.dropped.Add(int64(m0 + c0 + f0 - m1 - c1 - f1))
	dead := p.rec.kill(m)
	_, known := p.ids.Module(m)
	afterC, afterF := p.ids.ModuleCounts(m)
	// Right after the unload, every ID that died must be refused.
	n, refused := 0, 0
	for k := range nKinds {
		for _, id := range dead[k] {
			if p.use(k, id) {
				refused++
			}
			n++
		}
	}
	p.killed.Add(int64(n))
	if known || afterC != 0 || afterF != 0 {
		p.notAfter.Add(1)
	}
	p.mu.Lock()
	p.lastDead = dead
	p.deadQ = append(p.deadQ, dead)
	var old [nKinds][]uint64
	prune := len(p.deadQ) > keepDead
	if prune {
		old = p.deadQ[0]
		p.deadQ = p.deadQ[1:]
		for k := range nKinds {
			for _, id := range old[k] {
				delete(p.names, id)
			}
		}
	}
	p.mu.Unlock()
	if prune {
		// A value the runtime has handed out again since is alive: keep it.
		for k := range nKinds {
			p.seen.forget(k, old[k], func(id uint64) bool {
				p.rec.mu.RLock()
				defer p.rec.mu.RUnlock()
				_, alive := p.rec.live[k][id]
				return alive
			})
		}
	}
	if !alc {
		p.unloadsOther.Add(1)
		p.logf("unload of another module %#x: dead=%d", uint64(m), n)
		return nil
	}
	k := p.alcUnloads.Add(1)
	p.logf("unload n=%d module=%#x held=%d/%d after=known:%v,%d/%d map=%d/%d/%d->%d/%d/%d dead=%d refused=%d",
		k, uint64(m), heldC, heldF, known, afterC, afterF, m0, c0, f0, m1, c1, f1, n, refused)
	return nil
}

func (p *alcprof) ClassUnloadStarted(c profiler.ClassID) error {
	p.classUnloads.Add(1)
	p.changing.RLock()
	defer p.changing.RUnlock()
	return p.ids.ClassUnloadStarted(c)
}

func (p *alcprof) AppDomainShutdownStarted(a profiler.AppDomainID) error {
	p.changing.RLock()
	defer p.changing.RUnlock()
	return p.ids.AppDomainShutdownStarted(a)
}

func (p *alcprof) Shutdown() error {
	close(p.stop)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		p.logf("sweeper did not stop")
	}
	// No ID added or dropped while the map and the record are compared.
	p.changing.Lock()
	mods, classes, funcs := p.ids.Counts()
	// What the map still holds that the record knows to be dead: the map's
	// size less the live IDs it holds (every live ID is among the seen).
	heldAlive := 0
	for k := range nKinds {
		for _, id := range p.seen.all(k) {
			var held bool
			switch k {
			case kModule:
				_, held = p.ids.Module(profiler.ModuleID(id))
			case kClass:
				_, held = p.ids.Class(profiler.ClassID(id))
			case kFunction:
				_, held = p.ids.Function(profiler.FunctionID(id))
			}
			p.rec.mu.RLock()
			_, alive := p.rec.live[k][id]
			p.rec.mu.RUnlock()
			if held && alive {
				heldAlive++
			}
		}
	}
	leaked := mods + classes + funcs - heldAlive
	p.changing.Unlock()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p.logf("totals alcloads=%d alcunloads=%d otherunloads=%d tracked=%d adderrors=%d dropped=%d killed=%d "+
		"uses=%d calls=%d refused=%d refused_dead=%d stale=%d callerrors=%d/%d/%d "+
		"callback_uses=%d sweep_uses=%d sweeps=%d classunloads=%d notdropped=%d map=%d/%d/%d leaked=%d overlap=%d addsinunload=%d goheapkb=%d gosyskb=%d bypass=%v",
		p.alcLoads.Load(), p.alcUnloads.Load(), p.unloadsOther.Load(), p.tracked.Load(), p.addErrors.Load(),
		p.dropped.Load(), p.killed.Load(),
		p.uses.Load(), p.calls.Load(), p.refused.Load(), p.refusedDead.Load(), p.stale.Load(),
		p.callErrors[kModule].Load(), p.callErrors[kClass].Load(), p.callErrors[kFunction].Load(),
		p.callbackUses.Load(), p.sweepUses.Load(), p.sweeps.Load(), p.classUnloads.Load(), p.notAfter.Load(),
		mods, classes, funcs, leaked, p.overlap.Load(), p.addsInUnload.Load(), ms.HeapAlloc>>10, ms.Sys>>10, p.bypass)
	return nil
}

func init() {
	profiler.Register("{03D49378-392C-492B-ACA4-EBFA32CD1299}", &alcprof{})
}

func main() {}
