package typeref

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

// ErrUnresolved matches the error of [Resolver.Resolve] when no
// loaded module defines the type (its assembly is not loaded, or nothing
// there has the name).
var ErrUnresolved = errors.New("clrprof: type reference not resolved in the loaded modules")

// ErrNotLoaded matches the error of [Resolver.Resolve] and
// [Resolver.FindType] when no loaded module is of the assembly named (the
// error matches [ErrUnresolved] too).
var ErrNotLoaded = errors.New("clrprof: assembly not loaded")

// maxForwards bounds the chain of type forwarders followed for one type.
const maxForwards = 8

// Location is where a type is defined: a loaded module and its TypeDef.
type Location struct {
	// Module is the module that defines the type; TypeDef its token there.
	Module profiler.ModuleID
	// TypeDef: see Module.
	TypeDef metadata.Token
}

// Resolver finds the module and TypeDef that a TypeRef names, among the
// modules the runtime has loaded, without IMetaDataImport::ResolveTypeRef
// (which the runtime's metadata does not implement for profilers). For a
// TypeRef scoped to an AssemblyRef it looks at the loaded modules whose
// assembly has the referenced name, preferring one whose public key token
// matches, and among those one whose version matches (name, then public
// key token, then version); it finds the type by name there
// (FindTypeDefByName) and, when the assembly only forwards it, follows the
// ExportedType to the assembly it names. Nested TypeRefs resolve their
// enclosing type first.
//
// A resolver caches what it reads about modules; call Forget from
// ModuleUnloadStarted (or use one resolver per question). Safe for
// concurrent use.
type Resolver struct {
	info *profiler.Info
	// Modules lists the loaded modules to consider; nil means all the
	// runtime reports (ICorProfilerInfo3::EnumModules).
	Modules func() ([]profiler.ModuleID, error)

	mu    sync.Mutex
	cache map[profiler.ModuleID]*moduleAssembly
}

type moduleAssembly struct {
	ok      bool // has a readable manifest
	name    string
	version metadata.Version
	pkt     []byte
}

// New returns a resolver over the runtime's loaded modules.
func New(info *profiler.Info) *Resolver {
	return &Resolver{info: info, cache: map[profiler.ModuleID]*moduleAssembly{}}
}

// Forget drops what the resolver knows about a module.
func (r *Resolver) Forget(m profiler.ModuleID) {
	r.mu.Lock()
	delete(r.cache, m)
	r.mu.Unlock()
}

func (r *Resolver) modules() ([]profiler.ModuleID, error) {
	if r.Modules != nil {
		return r.Modules()
	}
	e, err := r.info.EnumModules()
	if err != nil {
		return nil, err
	}
	defer e.Release()
	var all []profiler.ModuleID
	for {
		batch, err := e.Next()
		if err != nil {
			return all, err
		}
		if len(batch) == 0 {
			return all, nil
		}
		all = append(all, batch...)
		if len(all) > 1<<20 {
			return all, fmt.Errorf("clrprof: more than %d modules", 1<<20)
		}
	}
}

func (r *Resolver) assemblyOf(m profiler.ModuleID) *moduleAssembly {
	r.mu.Lock()
	a := r.cache[m]
	r.mu.Unlock()
	if a != nil {
		return a
	}
	a = &moduleAssembly{}
	if unk, err := r.info.GetModuleMetaData(m, metadata.OfRead, metadata.IIDAssemblyImport); err == nil {
		if ai, err := metadata.QueryAssemblyImport(unk); err == nil {
			if info, err := ai.Assembly(); err == nil {
				a.ok, a.name, a.version, a.pkt = true, info.Name, info.Version, info.PublicKeyToken()
			}
			ai.Release()
		}
		unk.Release()
	}
	r.mu.Lock()
	r.cache[m] = a
	r.mu.Unlock()
	return a
}

// Resolve finds the definition of TypeRef tr of module m.
func (r *Resolver) Resolve(m profiler.ModuleID, tr metadata.Token) (Location, error) {
	imp, err := r.info.ModuleImport(m)
	if err != nil {
		return Location{}, err
	}
	defer imp.Release()
	return r.resolve(m, imp, tr, 0)
}

// FindType finds the top-level type fullName ("Namespace.Name") in the
// loaded modules of the assembly named assembly (any version or key),
// following type forwarders.
func (r *Resolver) FindType(assembly, fullName string) (Location, error) {
	return r.findInAssembly(metadata.AssemblyRefInfo{Name: assembly}, fullName, 0)
}

func (r *Resolver) resolve(m profiler.ModuleID, imp *metadata.Import2, tr metadata.Token, depth int) (Location, error) {
	if depth > maxForwards+metadata.MaxSigDepth {
		return Location{}, fmt.Errorf("clrprof: type reference %v: resolution deeper than %d", tr, depth)
	}
	ref, err := imp.TypeRef(tr)
	if err != nil {
		return Location{}, fmt.Errorf("clrprof: type reference %v: %w", tr, err)
	}
	full := metadata.JoinTypeName(ref.Namespace, ref.Name)
	scope := ref.Scope
	switch metadata.TokenType(scope.Table()) {
	case metadata.MdtTypeRef:
		if scope.IsNil() {
			break
		}
		outer, err := r.resolve(m, imp, scope, depth+1)
		if err != nil {
			return Location{}, err
		}
		return r.findNested(outer, full)
	case metadata.MdtModule:
		return r.findIn(m, full, depth)
	case metadata.MdtModuleRef:
		// Another module of the same assembly: look in every loaded module
		// of this module's assembly.
		return r.findInAssemblyOf(m, full)
	case metadata.MdtAssemblyRef:
		asm, err := metadata.QueryAssemblyImport(imp)
		if err != nil {
			return Location{}, err
		}
		defer asm.Release()
		ar, err := asm.AssemblyRef(scope)
		if err != nil {
			return Location{}, fmt.Errorf("clrprof: assembly reference %v: %w", scope, err)
		}
		return r.findInAssembly(ar, full, depth)
	}
	// A nil scope means an ExportedType row holds the answer; a module's
	// own scope token also lands here.
	return r.findIn(m, full, depth)
}

func (r *Resolver) findNested(outer Location, name string) (Location, error) {
	imp, err := r.info.ModuleImport(outer.Module)
	if err != nil {
		return Location{}, err
	}
	defer imp.Release()
	td, err := imp.FindTypeDef(name, outer.TypeDef)
	if err != nil {
		return Location{}, fmt.Errorf("clrprof: nested type %s in %v: %w (%w)", name, outer.TypeDef, ErrUnresolved, err)
	}
	return Location{outer.Module, td}, nil
}

// candidates returns the loaded modules of the assembly named by ar, best
// match first (see rankModules).
func (r *Resolver) candidates(ar metadata.AssemblyRefInfo) ([]profiler.ModuleID, error) {
	mods, err := r.modules()
	if err != nil {
		return nil, err
	}
	asms := make([]*moduleAssembly, len(mods))
	for i, m := range mods {
		asms[i] = r.assemblyOf(m)
	}
	return rankModules(ar, mods, asms), nil
}

// rankModules keeps the modules whose assembly has ar's name (ignoring
// case) and orders them by how well they match: same public key token and
// version first, then same public key token, then the name alone; the
// runtime's order within each group.
func rankModules(ar metadata.AssemblyRefInfo, mods []profiler.ModuleID, asms []*moduleAssembly) []profiler.ModuleID {
	pkt := ar.PublicKeyToken()
	var best [3][]profiler.ModuleID
	for i, m := range mods {
		a := asms[i]
		if a == nil || !a.ok || !strings.EqualFold(a.name, ar.Name) {
			continue
		}
		switch {
		case bytes.Equal(a.pkt, pkt) && a.version == ar.Version:
			best[0] = append(best[0], m)
		case bytes.Equal(a.pkt, pkt):
			best[1] = append(best[1], m)
		default:
			best[2] = append(best[2], m)
		}
	}
	return append(append(best[0], best[1]...), best[2]...)
}

func (r *Resolver) findInAssembly(ar metadata.AssemblyRefInfo, full string, depth int) (Location, error) {
	cands, err := r.candidates(ar)
	if err != nil {
		return Location{}, err
	}
	if len(cands) == 0 {
		return Location{}, fmt.Errorf("clrprof: %s: assembly %s %v: %w (%w)", full, ar.Name, ar.Version, ErrNotLoaded, ErrUnresolved)
	}
	var firstErr error
	for _, m := range cands {
		loc, err := r.findIn(m, full, depth)
		if err == nil {
			return loc, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return Location{}, firstErr
}

func (r *Resolver) findInAssemblyOf(m profiler.ModuleID, full string) (Location, error) {
	mi, err := r.info.GetModuleInfo(m)
	if err != nil {
		return Location{}, err
	}
	mods, err := r.modules()
	if err != nil {
		return Location{}, err
	}
	for _, o := range mods {
		oi, err := r.info.GetModuleInfo(o)
		if err != nil || oi.AssemblyID != mi.AssemblyID || o == m {
			continue
		}
		if loc, err := r.findIn(o, full, maxForwards); err == nil {
			return loc, nil
		}
	}
	return Location{}, fmt.Errorf("clrprof: %s in the modules of assembly %#x: %w", full, uint64(mi.AssemblyID), ErrUnresolved)
}

// findIn looks for a top-level type in module m, following a forwarder in
// its manifest.
func (r *Resolver) findIn(m profiler.ModuleID, full string, depth int) (Location, error) {
	imp, err := r.info.ModuleImport(m)
	if err != nil {
		return Location{}, err
	}
	defer imp.Release()
	td, err := imp.FindTypeDef(full, 0)
	if err == nil {
		return Location{m, td}, nil
	}
	if !errors.Is(err, metadata.ErrNotFound) {
		return Location{}, fmt.Errorf("clrprof: %s in module %#x: %w", full, uint64(m), err)
	}
	if depth >= maxForwards {
		return Location{}, fmt.Errorf("clrprof: %s: more than %d type forwarders: %w", full, maxForwards, ErrUnresolved)
	}
	asm, err := metadata.QueryAssemblyImport(imp)
	if err != nil {
		return Location{}, fmt.Errorf("clrprof: %s not in module %#x: %w", full, uint64(m), ErrUnresolved)
	}
	defer asm.Release()
	et, err := asm.FindExportedTypeByName(full, 0)
	if err != nil {
		return Location{}, fmt.Errorf("clrprof: %s not in module %#x: %w", full, uint64(m), ErrUnresolved)
	}
	info, err := asm.ExportedType(et)
	if err != nil {
		return Location{}, err
	}
	if metadata.TokenType(info.Implementation.Table()) != metadata.MdtAssemblyRef {
		// Implemented in another file of the same assembly.
		return r.findInAssemblyOf(m, full)
	}
	ar, err := asm.AssemblyRef(info.Implementation)
	if err != nil {
		return Location{}, err
	}
	return r.findInAssembly(ar, full, depth+1)
}
