//go:build cgo

package instr

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/typeref"
)

// Members and actions through types of other modules. A path's types are
// looked up where they are defined: the target's module, another loaded
// module (a TypeRef resolved by package typeref, type forwarders
// followed), or, for a static member's type whose assembly is not loaded
// yet, the framework's file of that name beside System.Private.CoreLib.
// A member found outside the target's module is called through a
// MemberRef of the target's module: the TypeRef of its declaring type
// (with the AssemblyRef it needs) and its signature, whose types are
// translated into TypeRefs of the target's module. Only public members of
// public types are used there (the JIT checks access across assemblies
// when it compiles the wrap; an internal member would make the whole
// method fail to compile).

// memberScope is the metadata a type's members are read from.
type memberScope struct {
	id     profiler.ModuleID // 0 for a file opened by its path
	target *ilrw.Module      // the target's module (its Import may be replaced when opened for writing)
	imp    *metadata.Import2 // another module's, owned
	name   string            // for messages
	asm    *metadata.AssemblyName
}

func (s *memberScope) im() *metadata.Import2 {
	if s.target != nil {
		return s.target.Import
	}
	return s.imp
}

// typeLoc is a type where it is defined.
type typeLoc struct {
	sc *memberScope
	td metadata.Token
}

// memberResolver resolves the paths of one wrap. Release it when done.
type memberResolver struct {
	self   *memberScope
	info   *profiler.Info    // nil: other modules are not searched
	types  *typeref.Resolver // with info
	scopes map[profiler.ModuleID]*memberScope
	files  map[string]*memberScope
	// known maps TypeRefs of the target (defined here, or resolved) to
	// the types they name.
	known map[metadata.Token]typeLoc
}

func newMemberResolver(info *profiler.Info, types *typeref.Resolver, target *ilrw.Module) *memberResolver {
	self := &memberScope{id: target.ID, target: target, name: "the target's module"}
	return &memberResolver{self: self, info: info, types: types,
		scopes: map[profiler.ModuleID]*memberScope{target.ID: self}, files: map[string]*memberScope{},
		known: map[metadata.Token]typeLoc{}}
}

func (r *memberResolver) release() {
	for _, s := range r.scopes {
		if s.imp != nil {
			s.imp.Release()
		}
	}
	for _, s := range r.files {
		s.imp.Release()
	}
}

// scope opens module m's metadata.
func (r *memberResolver) scope(m profiler.ModuleID) (*memberScope, error) {
	if s, ok := r.scopes[m]; ok {
		return s, nil
	}
	imp, err := r.info.ModuleImport(m)
	if err != nil {
		return nil, fmt.Errorf("metadata of module %#x: %w", uint64(m), err)
	}
	s := &memberScope{id: m, imp: imp, name: fmt.Sprintf("module %#x", uint64(m))}
	if mi, err := r.info.GetModuleInfo(m); err == nil && mi.Name != "" {
		s.name = filepath.Base(mi.Name)
	}
	r.scopes[m] = s
	return s, nil
}

// assembly returns the name the target references s's assembly by.
func (r *memberResolver) assembly(s *memberScope) (metadata.AssemblyName, error) {
	if s.asm != nil {
		return *s.asm, nil
	}
	ai, err := metadata.QueryAssemblyImport(s.im())
	if err != nil {
		return metadata.AssemblyName{}, fmt.Errorf("%s: no manifest: %w", s.name, err)
	}
	defer ai.Release()
	info, err := ai.Assembly()
	if err != nil {
		return metadata.AssemblyName{}, fmt.Errorf("%s: no assembly: %w", s.name, err)
	}
	a := info.NameOf()
	s.asm = &a
	return a, nil
}

// classLoc finds the definition of t, a class, given in the target's
// token space.
func (r *memberResolver) classLoc(t *metadata.Type) (typeLoc, error) {
	inner, _, _ := t.Unwrap()
	if inner == nil {
		return typeLoc{}, fmt.Errorf("no type")
	}
	name := ParamName(r.self.im(), inner)
	if inner.Kind != metadata.ElementTypeClass {
		return typeLoc{}, fmt.Errorf("type %s is not a class (a struct, a generic instantiation, a by-ref, an array or a primitive has no members the SDK reads)", name)
	}
	switch metadata.TokenType(inner.Token.Table()) {
	case metadata.MdtTypeDef:
		return typeLoc{r.self, inner.Token}, nil
	case metadata.MdtTypeRef:
		return r.refLoc(r.self, inner.Token, name)
	}
	return typeLoc{}, fmt.Errorf("type %s: token %v not resolved", name, inner.Token)
}

// refLoc resolves TypeRef tr of scope s.
func (r *memberResolver) refLoc(s *memberScope, tr metadata.Token, name string) (typeLoc, error) {
	if s == r.self {
		if l, ok := r.known[tr]; ok {
			return l, nil
		}
	}
	if r.info == nil || s.id == 0 {
		return typeLoc{}, fmt.Errorf("type %s is defined in another module (not resolved)", name)
	}
	loc, err := r.types.Resolve(s.id, tr)
	if err != nil {
		return typeLoc{}, fmt.Errorf("type %s: %w", name, err)
	}
	sc, err := r.scope(loc.Module)
	if err != nil {
		return typeLoc{}, err
	}
	l := typeLoc{sc, loc.TypeDef}
	if s == r.self {
		r.known[tr] = l
	}
	return l, nil
}

// staticLoc finds the type "Namespace.Name, Assembly" (Member.Type): in
// the loaded modules of the assembly, else in the framework's file of
// that name (the directory of System.Private.CoreLib), else, with no
// assembly named, in the target's module.
func (r *memberResolver) staticLoc(spec string) (typeLoc, error) {
	full, asm, _ := strings.Cut(spec, ",")
	full, asm = strings.TrimSpace(full), strings.TrimSpace(asm)
	if full == "" {
		return typeLoc{}, fmt.Errorf("no type named (Member.Type is \"Namespace.Name, Assembly\")")
	}
	if i := strings.IndexByte(asm, ','); i >= 0 {
		asm = strings.TrimSpace(asm[:i]) // version, culture, key: not compared
	}
	if asm == "" {
		td, err := r.self.im().FindTypeDef(full, 0)
		if err != nil {
			return typeLoc{}, fmt.Errorf("type %s not in the target's module: %w", full, err)
		}
		return typeLoc{r.self, td}, nil
	}
	if r.info == nil {
		return typeLoc{}, fmt.Errorf("type %s of %s: other modules are not searched", full, asm)
	}
	loc, err := r.types.FindType(asm, full)
	if err == nil {
		sc, err := r.scope(loc.Module)
		if err != nil {
			return typeLoc{}, err
		}
		return typeLoc{sc, loc.TypeDef}, nil
	}
	if !errors.Is(err, typeref.ErrNotLoaded) {
		return typeLoc{}, err
	}
	sc, err := r.frameworkFile(asm)
	if err != nil {
		return typeLoc{}, fmt.Errorf("type %s: assembly %s is not loaded, and %w", full, asm, err)
	}
	td, err := sc.imp.FindTypeDef(full, 0)
	if err != nil {
		return typeLoc{}, fmt.Errorf("type %s not in %s: %w", full, sc.name, err)
	}
	return typeLoc{sc, td}, nil
}

// frameworkFile opens asm.dll beside System.Private.CoreLib.
func (r *memberResolver) frameworkFile(asm string) (*memberScope, error) {
	if s, ok := r.files[asm]; ok {
		return s, nil
	}
	core, err := r.types.FindType("System.Private.CoreLib", "System.Object")
	if err != nil {
		return nil, fmt.Errorf("System.Private.CoreLib not found: %w", err)
	}
	mi, err := r.info.GetModuleInfo(core.Module)
	if err != nil || mi.Name == "" {
		return nil, fmt.Errorf("System.Private.CoreLib has no path (%v)", err)
	}
	path := filepath.Join(filepath.Dir(mi.Name), asm+".dll")
	d, err := profiler.MetaDataDispenser()
	if err != nil {
		return nil, err
	}
	defer d.Release()
	imp, err := d.OpenImport(path)
	if err != nil {
		return nil, fmt.Errorf("the framework has no %s: %w", filepath.Base(path), err)
	}
	s := &memberScope{imp: imp, name: filepath.Base(path)}
	r.files[asm] = s
	return s, nil
}

// visible tells whether code of another assembly can use type td of s
// (public, or nested public in a visible type).
func visible(s *memberScope, td metadata.Token) bool {
	for depth := 0; depth < 64; depth++ {
		info, err := s.im().TypeDef(td)
		if err != nil {
			return false
		}
		switch info.Flags & metadata.TdVisibilityMask {
		case metadata.TdPublic:
			return true
		case metadata.TdNestedPublic:
			td = info.Enclosing
		default:
			return false
		}
	}
	return false
}

// accessible tells whether the target can use a member of loc whose
// access is one of public, internal (assem) and the others.
func (r *memberResolver) accessible(loc typeLoc, public, internal bool) error {
	if loc.sc == r.self {
		if public || internal {
			return nil
		}
		return errors.New("not public or internal")
	}
	if !public {
		return fmt.Errorf("not public (a member of %s, another assembly)", loc.sc.name)
	}
	if !visible(loc.sc, loc.td) {
		return fmt.Errorf("its type is not public (in %s, another assembly)", loc.sc.name)
	}
	return nil
}

// base returns the base type of loc when it can be searched.
func (r *memberResolver) base(loc typeLoc) (typeLoc, bool) {
	info, err := loc.sc.im().TypeDef(loc.td)
	if err != nil || info.Extends.IsNil() {
		return typeLoc{}, false
	}
	switch metadata.TokenType(info.Extends.Table()) {
	case metadata.MdtTypeDef:
		return typeLoc{loc.sc, info.Extends}, true
	case metadata.MdtTypeRef:
		l, err := r.refLoc(loc.sc, info.Extends, "")
		return l, err == nil
	}
	return typeLoc{}, false // a generic instantiation
}

func (r *memberResolver) typeName(loc typeLoc) string {
	n, err := loc.sc.im().TypeDefName(loc.td)
	if err != nil {
		return fmt.Sprintf("%v", loc.td)
	}
	return n
}

// ref returns the token the target uses for member tok (a MethodDef or
// FieldDef of loc) named name with signature blob sig (a MethodSig or a
// FieldSig in loc's token space, translated here).
func (r *memberResolver) ref(loc typeLoc, tok metadata.Token, name string, msig *metadata.MethodSig, fsig *metadata.FieldSig) (metadata.Token, error) {
	if loc.sc == r.self {
		return tok, nil
	}
	parent, err := r.typeToken(loc.sc, loc.td)
	if err != nil {
		return 0, err
	}
	var blob []byte
	if fsig != nil {
		t, err := r.translate(loc.sc, fsig.Type)
		if err != nil {
			return 0, err
		}
		blob, err = (&metadata.FieldSig{Type: t}).Encode()
		if err != nil {
			return 0, err
		}
	} else {
		s := *msig
		if s.Generic() {
			return 0, errors.New("a generic method")
		}
		if s.Return, err = r.translate(loc.sc, msig.Return); err != nil {
			return 0, err
		}
		s.Params = make([]*metadata.Type, len(msig.Params))
		for i, p := range msig.Params {
			if s.Params[i], err = r.translate(loc.sc, p); err != nil {
				return 0, err
			}
		}
		if blob, err = s.Encode(); err != nil {
			return 0, err
		}
	}
	return r.self.target.MemberRef(parent, name, blob)
}

// translate rewrites the tokens of t, a type in s's token space, into
// the target's.
func (r *memberResolver) translate(s *memberScope, t *metadata.Type) (*metadata.Type, error) {
	if t == nil || s == r.self {
		return t, nil
	}
	c := *t
	var err error
	switch t.Kind {
	case metadata.ElementTypeClass, metadata.ElementTypeValuetype, metadata.ElementTypeCmodReqd, metadata.ElementTypeCmodOpt:
		if c.Token, err = r.typeToken(s, t.Token); err != nil {
			return nil, err
		}
	case metadata.ElementTypeFnptr, metadata.ElementTypeInternal:
		return nil, errors.New("a function pointer type")
	}
	if c.Elem, err = r.translate(s, t.Elem); err != nil {
		return nil, err
	}
	if t.Args != nil {
		c.Args = make([]*metadata.Type, len(t.Args))
		for i, a := range t.Args {
			if c.Args[i], err = r.translate(s, a); err != nil {
				return nil, err
			}
		}
	}
	return &c, nil
}

// typeToken returns the target's token for type tok (TypeDef or TypeRef)
// of scope s.
func (r *memberResolver) typeToken(s *memberScope, tok metadata.Token) (metadata.Token, error) {
	if s == r.self {
		return tok, nil
	}
	imp := s.im()
	switch metadata.TokenType(tok.Table()) {
	case metadata.MdtTypeDef:
		info, err := imp.TypeDef(tok)
		if err != nil {
			return 0, err
		}
		var scope metadata.Token
		if info.IsNested() {
			if scope, err = r.typeToken(s, info.Enclosing); err != nil {
				return 0, err
			}
		} else {
			a, err := r.assembly(s)
			if err != nil {
				return 0, err
			}
			if scope, err = r.assemblyRef(a); err != nil {
				return 0, err
			}
			if scope.IsNil() { // the target's own assembly
				return r.self.im().FindTypeDef(metadata.JoinTypeName(info.Namespace, info.Name), 0)
			}
		}
		tr, err := r.self.target.TypeRef(scope, info.Namespace, info.Name)
		if err != nil {
			return 0, err
		}
		if _, ok := r.known[tr]; !ok {
			r.known[tr] = typeLoc{s, tok}
		}
		return tr, nil
	case metadata.MdtTypeRef:
		ref, err := imp.TypeRef(tok)
		if err != nil {
			return 0, err
		}
		var scope metadata.Token
		switch metadata.TokenType(ref.Scope.Table()) {
		case metadata.MdtTypeRef:
			if scope, err = r.typeToken(s, ref.Scope); err != nil {
				return 0, err
			}
		case metadata.MdtAssemblyRef:
			ai, err := metadata.QueryAssemblyImport(imp)
			if err != nil {
				return 0, err
			}
			ar, err := ai.AssemblyRef(ref.Scope)
			ai.Release()
			if err != nil {
				return 0, err
			}
			if scope, err = r.assemblyRef(metadata.AssemblyName{Name: ar.Name, Version: ar.Version, PublicKeyToken: ar.PublicKeyToken()}); err != nil {
				return 0, err
			}
			if scope.IsNil() {
				return r.self.im().FindTypeDef(metadata.JoinTypeName(ref.Namespace, ref.Name), 0)
			}
		case metadata.MdtModule:
			td, err := imp.FindTypeDef(metadata.JoinTypeName(ref.Namespace, ref.Name), 0)
			if err != nil {
				return 0, err
			}
			return r.typeToken(s, td)
		default:
			return 0, fmt.Errorf("type %s is referenced through a module reference", metadata.JoinTypeName(ref.Namespace, ref.Name))
		}
		return r.self.target.TypeRef(scope, ref.Namespace, ref.Name)
	}
	return 0, errors.New("a generic instantiation (TypeSpec)")
}

// assemblyRef returns the target's AssemblyRef to a, or a nil token when
// a is the target's own assembly.
func (r *memberResolver) assemblyRef(a metadata.AssemblyName) (metadata.Token, error) {
	own, err := r.assembly(r.self)
	if err == nil && strings.EqualFold(own.Name, a.Name) {
		return 0, nil
	}
	return r.self.target.AssemblyRef(a)
}
