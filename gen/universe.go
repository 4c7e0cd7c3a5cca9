package gen

import "sort"

// Universe is the merged view of several parsed files: every named
// declaration, looked up by name.
type Universe struct {
	Files      []*File
	Interfaces map[string]*Interface
	Enums      map[string]*Enum
	Structs    map[string]*Struct
	Typedefs   map[string]*Typedef
	FuncTypes  map[string]*FuncType
	Consts     map[string]*Const
}

// NewUniverse indexes files. Later files do not override earlier
// declarations of the same name.
func NewUniverse(files ...*File) *Universe {
	u := &Universe{
		Files:      files,
		Interfaces: map[string]*Interface{},
		Enums:      map[string]*Enum{},
		Structs:    map[string]*Struct{},
		Typedefs:   map[string]*Typedef{},
		FuncTypes:  map[string]*FuncType{},
		Consts:     map[string]*Const{},
	}
	for _, f := range files {
		if f == nil {
			continue
		}
		for _, x := range f.Interfaces {
			if _, ok := u.Interfaces[x.Name]; !ok {
				u.Interfaces[x.Name] = x
			}
		}
		for _, x := range f.Enums {
			if _, ok := u.Enums[x.Name]; !ok && x.Name != "" {
				u.Enums[x.Name] = x
			}
		}
		for _, x := range f.Structs {
			if _, ok := u.Structs[x.Name]; !ok && x.Name != "" {
				u.Structs[x.Name] = x
			}
		}
		for _, x := range f.Typedefs {
			if _, ok := u.Typedefs[x.Name]; !ok {
				u.Typedefs[x.Name] = x
			}
		}
		for _, x := range f.FuncTypes {
			if _, ok := u.FuncTypes[x.Name]; !ok {
				u.FuncTypes[x.Name] = x
			}
		}
		for _, x := range f.Consts {
			if _, ok := u.Consts[x.Name]; !ok {
				u.Consts[x.Name] = x
			}
		}
	}
	return u
}

// AllMethods returns the methods of an interface in vtable order, including
// inherited ones but not IUnknown's three.
func (u *Universe) AllMethods(it *Interface) ([]*Method, error) {
	var chain []*Interface
	seen := map[string]bool{}
	for x := it; x != nil; {
		if seen[x.Name] {
			return nil, errorf(x.Pos, "interface %s inherits from itself", x.Name)
		}
		seen[x.Name] = true
		chain = append(chain, x)
		if x.Base == "" || x.Base == "IUnknown" {
			break
		}
		b, ok := u.Interfaces[x.Base]
		if !ok {
			return nil, errorf(x.Pos, "interface %s: unknown base %s", x.Name, x.Base)
		}
		x = b
	}
	var out []*Method
	for i := len(chain) - 1; i >= 0; i-- {
		out = append(out, chain[i].Methods...)
	}
	return out, nil
}

// Resolve follows typedefs from t until it reaches a name that is not a
// plain typedef (a base type, enum, struct, interface or function type),
// adding the pointer depth of each step.
func (u *Universe) Resolve(t TypeRef) TypeRef {
	for i := 0; i < 32; i++ {
		if _, ok := u.Enums[t.Name]; ok {
			return t
		}
		if _, ok := u.Structs[t.Name]; ok {
			return t
		}
		td, ok := u.Typedefs[t.Name]
		if !ok || td.Type.Name == t.Name {
			return t
		}
		nt := td.Type
		nt.Ptr += t.Ptr
		nt.Array = t.Array
		nt.ArrayLen = t.ArrayLen
		nt.Const = nt.Const || t.Const
		t = nt
	}
	return t
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
