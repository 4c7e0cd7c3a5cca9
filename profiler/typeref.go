package profiler

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/metadata"
)

// ErrTypeRefUnresolved matches the error of [TypeResolver.Resolve] when no
// loaded module defines the type (its assembly is not loaded, or nothing
// there has the name).
var ErrTypeRefUnresolved = errors.New("clrprof: type reference not resolved in the loaded modules")

// maxForwards bounds the chain of type forwarders followed for one type.
const maxForwards = 8

// TypeLocation is where a type is defined: a loaded module and its TypeDef.
type TypeLocation struct {
	// Module is the module that defines the type; TypeDef its token there.
	Module ModuleID
	// TypeDef: see Module.
	TypeDef metadata.Token
}

// TypeResolver finds the module and TypeDef that a TypeRef names, among the
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
type TypeResolver struct {
	info *Info
	// Modules lists the loaded modules to consider; nil means all the
	// runtime reports (ICorProfilerInfo3::EnumModules).
	Modules func() ([]ModuleID, error)

	mu    sync.Mutex
	cache map[ModuleID]*moduleAssembly
}

type moduleAssembly struct {
	ok      bool // has a readable manifest
	name    string
	version metadata.Version
	pkt     []byte
}

// NewTypeResolver returns a resolver over the runtime's loaded modules.
func NewTypeResolver(info *Info) *TypeResolver {
	return &TypeResolver{info: info, cache: map[ModuleID]*moduleAssembly{}}
}

// Forget drops what the resolver knows about a module.
func (r *TypeResolver) Forget(m ModuleID) {
	r.mu.Lock()
	delete(r.cache, m)
	r.mu.Unlock()
}

func (r *TypeResolver) modules() ([]ModuleID, error) {
	if r.Modules != nil {
		return r.Modules()
	}
	e, err := r.info.EnumModules()
	if err != nil {
		return nil, err
	}
	defer e.Release()
	var all []ModuleID
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

func (r *TypeResolver) assemblyOf(m ModuleID) *moduleAssembly {
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
func (r *TypeResolver) Resolve(m ModuleID, tr metadata.Token) (TypeLocation, error) {
	imp, err := r.info.ModuleImport(m)
	if err != nil {
		return TypeLocation{}, err
	}
	defer imp.Release()
	return r.resolve(m, imp, tr, 0)
}

func (r *TypeResolver) resolve(m ModuleID, imp *metadata.Import2, tr metadata.Token, depth int) (TypeLocation, error) {
	if depth > maxForwards+metadata.MaxSigDepth {
		return TypeLocation{}, fmt.Errorf("clrprof: type reference %v: resolution deeper than %d", tr, depth)
	}
	ref, err := imp.TypeRef(tr)
	if err != nil {
		return TypeLocation{}, fmt.Errorf("clrprof: type reference %v: %w", tr, err)
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
			return TypeLocation{}, err
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
			return TypeLocation{}, err
		}
		defer asm.Release()
		ar, err := asm.AssemblyRef(scope)
		if err != nil {
			return TypeLocation{}, fmt.Errorf("clrprof: assembly reference %v: %w", scope, err)
		}
		return r.findInAssembly(ar, full, depth)
	}
	// A nil scope means an ExportedType row holds the answer; a module's
	// own scope token also lands here.
	return r.findIn(m, full, depth)
}

func (r *TypeResolver) findNested(outer TypeLocation, name string) (TypeLocation, error) {
	imp, err := r.info.ModuleImport(outer.Module)
	if err != nil {
		return TypeLocation{}, err
	}
	defer imp.Release()
	td, err := imp.FindTypeDef(name, outer.TypeDef)
	if err != nil {
		return TypeLocation{}, fmt.Errorf("clrprof: nested type %s in %v: %w (%w)", name, outer.TypeDef, ErrTypeRefUnresolved, err)
	}
	return TypeLocation{outer.Module, td}, nil
}

// candidates returns the loaded modules of the assembly named by ar, best
// match first (see rankModules).
func (r *TypeResolver) candidates(ar metadata.AssemblyRefInfo) ([]ModuleID, error) {
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
func rankModules(ar metadata.AssemblyRefInfo, mods []ModuleID, asms []*moduleAssembly) []ModuleID {
	pkt := ar.PublicKeyToken()
	var best [3][]ModuleID
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

func (r *TypeResolver) findInAssembly(ar metadata.AssemblyRefInfo, full string, depth int) (TypeLocation, error) {
	cands, err := r.candidates(ar)
	if err != nil {
		return TypeLocation{}, err
	}
	if len(cands) == 0 {
		return TypeLocation{}, fmt.Errorf("clrprof: %s: assembly %s %v not loaded: %w", full, ar.Name, ar.Version, ErrTypeRefUnresolved)
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
	return TypeLocation{}, firstErr
}

func (r *TypeResolver) findInAssemblyOf(m ModuleID, full string) (TypeLocation, error) {
	mi, err := r.info.GetModuleInfo(m)
	if err != nil {
		return TypeLocation{}, err
	}
	mods, err := r.modules()
	if err != nil {
		return TypeLocation{}, err
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
	return TypeLocation{}, fmt.Errorf("clrprof: %s in the modules of assembly %#x: %w", full, uint64(mi.AssemblyID), ErrTypeRefUnresolved)
}

// findIn looks for a top-level type in module m, following a forwarder in
// its manifest.
func (r *TypeResolver) findIn(m ModuleID, full string, depth int) (TypeLocation, error) {
	imp, err := r.info.ModuleImport(m)
	if err != nil {
		return TypeLocation{}, err
	}
	defer imp.Release()
	td, err := imp.FindTypeDef(full, 0)
	if err == nil {
		return TypeLocation{m, td}, nil
	}
	if !errors.Is(err, metadata.ErrNotFound) {
		return TypeLocation{}, fmt.Errorf("clrprof: %s in module %#x: %w", full, uint64(m), err)
	}
	if depth >= maxForwards {
		return TypeLocation{}, fmt.Errorf("clrprof: %s: more than %d type forwarders: %w", full, maxForwards, ErrTypeRefUnresolved)
	}
	asm, err := metadata.QueryAssemblyImport(imp)
	if err != nil {
		return TypeLocation{}, fmt.Errorf("clrprof: %s not in module %#x: %w", full, uint64(m), ErrTypeRefUnresolved)
	}
	defer asm.Release()
	et, err := asm.FindExportedTypeByName(full, 0)
	if err != nil {
		return TypeLocation{}, fmt.Errorf("clrprof: %s not in module %#x: %w", full, uint64(m), ErrTypeRefUnresolved)
	}
	info, err := asm.ExportedType(et)
	if err != nil {
		return TypeLocation{}, err
	}
	if metadata.TokenType(info.Implementation.Table()) != metadata.MdtAssemblyRef {
		// Implemented in another file of the same assembly.
		return r.findInAssemblyOf(m, full)
	}
	ar, err := asm.AssemblyRef(info.Implementation)
	if err != nil {
		return TypeLocation{}, err
	}
	return r.findInAssembly(ar, full, depth+1)
}
