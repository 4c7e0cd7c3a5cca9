package profiler

import (
	"sync"

	"github.com/clrprof/clrprof/metadata"
)

// Shared generic code. The JIT compiles one body for all instantiations
// of a generic class that differ only in reference-type arguments: the
// code of Pair<string,object> and Pair<object,string> is that of the
// canonical instantiation Pair<System.__Canon,System.__Canon>, and
// Pair<int,string>'s that of Pair<int,System.__Canon>. Without a frame,
// GetFunctionInfo2 names no class for such code (ClassID 0) before .NET 10;
// from 10 on it gives the canonical instantiation (dotnet/runtime#107753)
// and none of what follows is needed. The runtime
// does report the canonical instantiations as classes (ClassLoadFinished),
// and GetFunctionFromTokenAndTypeArgs maps a method of one of them to its
// FunctionID: so, while class loads are monitored, the SDK records each
// canonical instantiation the runtime loads (per module and TypeDef) and
// finds which one a shared function belongs to.
//
// Like the metadata readers (importcache.go), the records are only kept
// while the SDK sees every ClassUnloadStarted: the event mask must have
// MonitorClassLoads; turning it off drops them (a ClassID is only valid
// until its class unloads).

type canonKey struct {
	module ModuleID
	td     metadata.Token
}

type canonRegistry struct {
	mu      sync.Mutex
	watched bool
	canon   ClassID // System.__Canon, once seen
	byType  map[canonKey][]ClassID
	keyOf   map[ClassID]canonKey
}

func (r *canonRegistry) setWatched(on bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.watched = on
	if !on {
		r.byType = map[canonKey][]ClassID{}
		r.keyOf = map[ClassID]canonKey{}
	}
}

// classLoaded records c if it is a canonical instantiation (some type
// argument is System.__Canon).
func (x *Info) classLoaded(c ClassID) {
	r := canonOf(x)
	r.mu.Lock()
	watched, canon := r.watched, r.canon
	r.mu.Unlock()
	if !watched {
		return
	}
	ci, err := x.GetClassIDInfo2(c)
	if err != nil || len(ci.TypeArgs) == 0 {
		return
	}
	shared := false
	for _, a := range ci.TypeArgs {
		if canon == 0 {
			if n, err := x.className(a, maxNameDepth); err == nil && n == "System.__Canon" {
				canon = a
			}
		}
		if a == canon && canon != 0 {
			shared = true
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.canon == 0 {
		r.canon = canon
	}
	if !shared || !r.watched {
		return
	}
	if r.byType == nil {
		r.byType, r.keyOf = map[canonKey][]ClassID{}, map[ClassID]canonKey{}
	}
	k := canonKey{ci.ModuleID, ci.TypeDefToken}
	if _, dup := r.keyOf[c]; !dup {
		r.byType[k] = append(r.byType[k], c)
		r.keyOf[c] = k
	}
}

// classUnloading forgets c.
func (r *canonRegistry) classUnloading(c ClassID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	k, ok := r.keyOf[c]
	if !ok {
		return
	}
	delete(r.keyOf, c)
	list := r.byType[k]
	for i, id := range list {
		if id == c {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(r.byType, k)
	} else {
		r.byType[k] = list
	}
}

// moduleUnloading forgets the classes of module m.
func (r *canonRegistry) moduleUnloading(m ModuleID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for k, list := range r.byType {
		if k.module != m {
			continue
		}
		for _, c := range list {
			delete(r.keyOf, c)
		}
		delete(r.byType, k)
	}
}

// canonicalClass returns the canonical instantiation of class td (of
// module m) whose method token, with the method type arguments args, is
// the shared function f; 0 if it cannot tell.
func (x *Info) canonicalClass(f FunctionID, m ModuleID, td, token metadata.Token, args []ClassID) ClassID {
	r := canonOf(x)
	r.mu.Lock()
	var cands []ClassID
	if r.watched {
		cands = append(cands, r.byType[canonKey{m, td}]...)
	}
	r.mu.Unlock()
	for _, c := range cands {
		if g, err := x.GetFunctionFromTokenAndTypeArgs(m, token, c, args); err == nil && g == f {
			return c
		}
	}
	return 0
}

func dropCanon(x *Info) {
	if x == nil {
		return
	}
	r := canonOf(x)
	r.setWatched(false)
	r.mu.Lock()
	r.canon = 0
	r.mu.Unlock()
}
