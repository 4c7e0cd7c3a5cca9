// Package apicheck holds a test over the exported API of the SDK's packages:
// no unsafe.Pointer and no uintptr in an exported signature, except on the
// allowlist below, each entry with its reason.
package apicheck

import (
	"fmt"
	"go/types"
	"os"
	"os/exec"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// checked are the packages a profiler author programs against.
var checked = []string{
	"github.com/clrprof/clrprof/profiler",
	"github.com/clrprof/clrprof/metadata",
	"github.com/clrprof/clrprof/ilrw",
	"github.com/clrprof/clrprof/clrevents",
	"github.com/clrprof/clrprof/pprofbuild",
	"github.com/clrprof/clrprof/instr",
	"github.com/clrprof/clrprof/instr/target",
	"github.com/clrprof/clrprof/idmap",
	"github.com/clrprof/clrprof/typeref",
	"github.com/clrprof/clrprof/elt",
	"github.com/clrprof/clrprof/alloc",
	"github.com/clrprof/clrprof/heapwalk",
}

// allowlist names the exported places (as reported by surface) where an
// unsafe.Pointer or uintptr stays, and why. A key ending in ".*.Name"
// matches method Name of every type of that package.
var allowlist = map[string]string{
	// The escape hatch of every COM wrapper (metadata.Import, profiler.
	// FunctionControl, ...): the interface pointer, for passing to C code of
	// the user's own (a cgo package that calls a method the SDK does not
	// wrap), and what Query* functions need to call QueryInterface on an
	// object of another package. It adds no reference and is documented so.
	"metadata.*.Raw": "COM interface pointer: the documented escape hatch to C",
	"profiler.*.Raw": "COM interface pointer: the documented escape hatch to C",
}

// allowed reports whether id (pkg.Type.Method) is on the allowlist, and
// under which key.
func allowed(id string) (string, bool) {
	if _, ok := allowlist[id]; ok {
		return id, true
	}
	parts := strings.Split(id, ".")
	if len(parts) == 3 {
		k := parts[0] + ".*." + parts[2]
		if _, ok := allowlist[k]; ok {
			return k, true
		}
	}
	return "", false
}

func load(t *testing.T) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: "../.."}
	pkgs, err := packages.Load(cfg, checked...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
	}
	return pkgs
}

// rawIn reports whether t mentions unsafe.Pointer or uintptr (unnamed, or
// through an alias), looking through pointers, slices, arrays, maps,
// channels, signatures and unnamed structs but not into named types.
func rawIn(t types.Type, depth int) bool { return rawKindIn(t, depth, false) }

// unsafeIn is rawIn for unsafe.Pointer alone.
func unsafeIn(t types.Type) bool { return rawKindIn(t, 0, true) }

func rawKindIn(t types.Type, depth int, unsafeOnly bool) bool {
	if depth > 8 {
		return false
	}
	rawIn := func(t types.Type, depth int) bool { return rawKindIn(t, depth, unsafeOnly) }
	rawInTuple := func(tu *types.Tuple, depth int) bool {
		for i := 0; i < tu.Len(); i++ {
			if rawIn(tu.At(i).Type(), depth+1) {
				return true
			}
		}
		return false
	}
	switch t := types.Unalias(t).(type) {
	case *types.Basic:
		return t.Kind() == types.UnsafePointer || !unsafeOnly && t.Kind() == types.Uintptr
	case *types.Pointer:
		return rawIn(t.Elem(), depth+1)
	case *types.Slice:
		return rawIn(t.Elem(), depth+1)
	case *types.Array:
		return rawIn(t.Elem(), depth+1)
	case *types.Map:
		return rawIn(t.Key(), depth+1) || rawIn(t.Elem(), depth+1)
	case *types.Chan:
		return rawIn(t.Elem(), depth+1)
	case *types.Signature:
		return rawInTuple(t.Params(), depth) || rawInTuple(t.Results(), depth)
	case *types.Struct:
		for i := 0; i < t.NumFields(); i++ {
			if t.Field(i).Exported() && rawIn(t.Field(i).Type(), depth+1) {
				return true
			}
		}
	}
	return false
}

// surface lists every exported identifier of pkg (package-level names,
// exported methods and exported struct fields of exported types) and, in
// raw, those whose type shows an unsafe.Pointer or uintptr.
func surface(pkg *types.Package, pred func(types.Type) bool) (ids, raw []string) {
	sc := pkg.Scope()
	short := pkg.Name()
	for _, name := range sc.Names() {
		obj := sc.Lookup(name)
		if !obj.Exported() {
			continue
		}
		id := short + "." + name
		ids = append(ids, id)
		switch o := obj.(type) {
		case *types.Func:
			if pred(o.Type()) {
				raw = append(raw, id)
			}
		case *types.Var:
			if pred(o.Type()) {
				raw = append(raw, id)
			}
		case *types.TypeName:
			if o.IsAlias() {
				if pred(o.Type()) {
					raw = append(raw, id)
				}
				continue
			}
			named, ok := o.Type().(*types.Named)
			if !ok {
				continue
			}
			// A named type whose underlying type is raw (type X uintptr) is
			// a named address or handle: that is what the API wants.
			if st, ok := named.Underlying().(*types.Struct); ok {
				for i := 0; i < st.NumFields(); i++ {
					f := st.Field(i)
					if !f.Exported() || f.Embedded() {
						continue
					}
					fid := id + "." + f.Name()
					ids = append(ids, fid)
					if pred(f.Type()) {
						raw = append(raw, fid)
					}
				}
			}
			if it, ok := named.Underlying().(*types.Interface); ok {
				for i := 0; i < it.NumExplicitMethods(); i++ {
					m := it.ExplicitMethod(i)
					mid := id + "." + m.Name()
					ids = append(ids, mid)
					if pred(m.Type()) {
						raw = append(raw, mid)
					}
				}
			}
			for i := 0; i < named.NumMethods(); i++ {
				m := named.Method(i)
				if !m.Exported() {
					continue
				}
				mid := id + "." + m.Name()
				ids = append(ids, mid)
				if pred(m.Type()) {
					raw = append(raw, mid)
				}
			}
		}
	}
	sort.Strings(ids)
	sort.Strings(raw)
	return ids, raw
}

// TestNoRawPointersInAPI fails on any exported signature, field or
// variable of profiler, metadata or ilrw that shows an unsafe.Pointer or a
// uintptr and is not on the allowlist.
func TestNoRawPointersInAPI(t *testing.T) {
	used := map[string]bool{}
	total := 0
	for _, p := range load(t) {
		ids, raw := surface(p.Types, func(t types.Type) bool { return rawIn(t, 0) })
		_, unsafeOnly := surface(p.Types, unsafeIn)
		total += len(raw)
		t.Logf("%s: %d exported identifiers, %d with unsafe.Pointer or uintptr (%d with unsafe.Pointer)", p.PkgPath, len(ids), len(raw), len(unsafeOnly))
		for _, r := range raw {
			if k, ok := allowed(r); ok {
				used[k] = true
				continue
			}
			t.Errorf("%s: unsafe.Pointer or uintptr in the exported API (give it a Go type, or allowlist it with a reason)", r)
		}
	}
	for k := range allowlist {
		if !used[k] {
			t.Errorf("allowlist entry %s matches nothing: remove it", k)
		}
	}
	if path := os.Getenv("CLRPROF_APICHECK_DUMP"); path != "" {
		var b strings.Builder
		for _, p := range load(t) {
			ids, raw := surface(p.Types, func(t types.Type) bool { return rawIn(t, 0) })
			fmt.Fprintf(&b, "# %s ids=%d raw=%d\n", p.PkgPath, len(ids), len(raw))
			for _, r := range raw {
				fmt.Fprintln(&b, "raw", r)
			}
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRawInFindsRawTypes pins the detector itself: the shapes it must see
// through, and named types (Address, IDs) it must let pass.
func TestRawInFindsRawTypes(t *testing.T) {
	up := types.Typ[types.UnsafePointer]
	uptr := types.Typ[types.Uintptr]
	named := types.NewNamed(types.NewTypeName(0, nil, "Address", nil), uptr, nil)
	tuple := func(ts ...types.Type) *types.Tuple {
		var vs []*types.Var
		for _, t := range ts {
			vs = append(vs, types.NewParam(0, nil, "", t))
		}
		return types.NewTuple(vs...)
	}
	for _, c := range []struct {
		name string
		t    types.Type
		want bool
	}{
		{"unsafe.Pointer", up, true},
		{"uintptr", uptr, true},
		{"*uintptr", types.NewPointer(uptr), true},
		{"[]unsafe.Pointer", types.NewSlice(up), true},
		{"func(uintptr) error", types.NewSignatureType(nil, nil, nil, tuple(uptr), tuple(types.Universe.Lookup("error").Type()), false), true},
		{"func() (int, unsafe.Pointer)", types.NewSignatureType(nil, nil, nil, nil, tuple(types.Typ[types.Int], up), false), true},
		{"Address", named, false},
		{"[]Address", types.NewSlice(named), false},
		{"func(Address) int", types.NewSignatureType(nil, nil, nil, tuple(named), tuple(types.Typ[types.Int]), false), false},
	} {
		if got := rawIn(c.t, 0); got != c.want {
			t.Errorf("rawIn(%s) = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestPureCodeWithoutCgo builds and runs the unit tests and fuzz seeds of
// the pure parts of metadata (signature codec, names) and ilrw (IL body
// codec), and clrevents (EventPipe payloads), with CGO_ENABLED=0: the runtime-bound parts (COM wrappers,
// install, ReJIT, Module) are the files built only with cgo.
func TestPureCodeWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "Test|Fuzz|Example",
		"github.com/clrprof/clrprof/metadata", "github.com/clrprof/clrprof/ilrw", "github.com/clrprof/clrprof/clrevents")
	cmd.Dir = "../.."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("CGO_ENABLED=0 go test metadata ilrw: %v\n%s", err, out)
	}
	t.Logf("CGO_ENABLED=0:\n%s", out)
}
