package apicheck

import (
	"go/types"
	"path/filepath"
	"sort"
	"testing"
)

// TestRawStructsUsed fails when a raw struct, the generator's Go mirror of a
// C struct (types_gen.go of profiler and metadata), is exported although no
// exported API of the checked packages uses it: a user would read it in the
// documentation and never meet it. The generator leaves such a struct
// unexported by an `unexported` rule in idl/overlay.txt.
func TestRawStructsUsed(t *testing.T) {
	pkgs := load(t)
	raw := map[*types.TypeName]bool{}
	for _, p := range pkgs {
		sc := p.Types.Scope()
		for _, name := range sc.Names() {
			tn, ok := sc.Lookup(name).(*types.TypeName)
			if !ok || !tn.Exported() || tn.IsAlias() {
				continue
			}
			if filepath.Base(p.Fset.Position(tn.Pos()).Filename) != "types_gen.go" {
				continue
			}
			if _, ok := tn.Type().Underlying().(*types.Struct); ok {
				raw[tn] = true
			}
		}
		// An exported alias of another package's raw struct is one too.
		for _, name := range sc.Names() {
			tn, ok := sc.Lookup(name).(*types.TypeName)
			if ok && tn.Exported() && tn.IsAlias() && filepath.Base(p.Fset.Position(tn.Pos()).Filename) == "types_gen.go" {
				raw[tn] = true
			}
		}
	}
	if len(raw) < 10 {
		t.Fatalf("only %d raw structs found: the test does not see types_gen.go", len(raw))
	}

	used := map[*types.TypeName]string{}
	var queue []*types.TypeName
	var walk func(typ types.Type, where string, seen map[types.Type]bool)
	walk = func(typ types.Type, where string, seen map[types.Type]bool) {
		if seen[typ] {
			return
		}
		seen[typ] = true
		switch x := typ.(type) {
		case *types.Alias:
			walk(types.Unalias(x), where, seen)
		case *types.Named:
			if raw[x.Obj()] {
				if _, ok := used[x.Obj()]; !ok {
					used[x.Obj()] = where
					queue = append(queue, x.Obj())
				}
			}
		case *types.Pointer:
			walk(x.Elem(), where, seen)
		case *types.Slice:
			walk(x.Elem(), where, seen)
		case *types.Array:
			walk(x.Elem(), where, seen)
		case *types.Map:
			walk(x.Key(), where, seen)
			walk(x.Elem(), where, seen)
		case *types.Chan:
			walk(x.Elem(), where, seen)
		case *types.Signature:
			for i := 0; i < x.Params().Len(); i++ {
				walk(x.Params().At(i).Type(), where, seen)
			}
			for i := 0; i < x.Results().Len(); i++ {
				walk(x.Results().At(i).Type(), where, seen)
			}
		case *types.Struct:
			for i := 0; i < x.NumFields(); i++ {
				if x.Field(i).Exported() || x.Field(i).Embedded() {
					walk(x.Field(i).Type(), where, seen)
				}
			}
		case *types.Interface:
			for i := 0; i < x.NumMethods(); i++ {
				if x.Method(i).Exported() {
					walk(x.Method(i).Type(), where, seen)
				}
			}
		}
	}
	methods := func(tn *types.TypeName, where string) {
		ms := types.NewMethodSet(types.NewPointer(tn.Type()))
		for i := 0; i < ms.Len(); i++ {
			if m := ms.At(i).Obj(); m.Exported() {
				walk(m.Type(), where+"."+m.Name(), map[types.Type]bool{})
			}
		}
	}
	// The roots: every exported function, variable and constant, and every
	// exported type that is not a raw struct, with its exported methods.
	for _, p := range pkgs {
		sc := p.Types.Scope()
		for _, name := range sc.Names() {
			o := sc.Lookup(name)
			if !o.Exported() {
				continue
			}
			where := p.Types.Name() + "." + name
			switch o := o.(type) {
			case *types.Func, *types.Var, *types.Const:
				walk(o.Type(), where, map[types.Type]bool{})
			case *types.TypeName:
				if raw[o] {
					continue
				}
				walk(o.Type().Underlying(), where, map[types.Type]bool{})
				if !o.IsAlias() {
					methods(o, where)
				} else {
					walk(o.Type(), where, map[types.Type]bool{})
				}
			}
		}
	}
	// Then what the used raw structs themselves show.
	for len(queue) > 0 {
		tn := queue[0]
		queue = queue[1:]
		where := tn.Pkg().Name() + "." + tn.Name()
		walk(tn.Type().Underlying(), where, map[types.Type]bool{})
		if !tn.IsAlias() {
			methods(tn, where)
		}
	}

	var unused []string
	for tn := range raw {
		if _, ok := used[tn]; !ok {
			unused = append(unused, tn.Pkg().Name()+"."+tn.Name())
		} else {
			t.Logf("%s.%s: used by %s", tn.Pkg().Name(), tn.Name(), used[tn])
		}
	}
	sort.Strings(unused)
	for _, n := range unused {
		t.Errorf("raw struct %s is exported, but no exported API uses it: give its C struct an `unexported` rule in idl/overlay.txt and regenerate", n)
	}
}
