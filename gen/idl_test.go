package gen

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateIDL = flag.Bool("update-idl", false, "rewrite gen/testdata/idl/*.golden")

func TestParseIDLGolden(t *testing.T) {
	src, err := os.ReadFile("testdata/idl/small.idl")
	if err != nil {
		t.Fatal(err)
	}
	f, err := ParseIDL("small.idl", src)
	if err != nil {
		t.Fatal(err)
	}
	got := renderFile(f)
	golden := "testdata/idl/small.golden"
	if *updateIDL {
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("parse of small.idl differs from %s:\n%s", golden, got)
	}
	// The mapping decisions on the same fixture.
	u := NewUniverse(f)
	tm := &TypeMapper{U: u, IDs: map[string]bool{"WidgetID": true}, Tokens: map[string]bool{}}
	it := f.Interface("IWidgetInfo")
	roles := map[string]Role{}
	for _, m := range it.Methods {
		pl, err := planMethod(tm, m, false, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, pp := range pl.Params {
			roles[m.Name+"."+pp.P.Name] = pp.Role
		}
	}
	for k, want := range map[string]Role{
		"GetName.szName": RoleOutString, "GetName.cchName": RoleCount, "GetName.pcchName": RoleOutLen,
		"GetIDs.ids": RoleOutSlice, "SetIDs.ids": RoleInSlice, "SetIDs.cIds": RoleCount,
		"Lookup.szName": RoleInString, "Lookup.pId": RoleOut, "GetName.id": RoleIn,
	} {
		if roles[k] != want {
			t.Errorf("%s: role %d, want %d", k, roles[k], want)
		}
	}
}

func TestParseIDLErrorPositions(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"interface I : IUnknown {\n  HRESULT M([in] ULONG x;\n};", "t.idl:2:"},
		{"typedef enum { A = , B } E;", "t.idl:1:"},
		{"[object, uuid(nope)] interface I : IUnknown {};", "t.idl:1:"},
		{"#if 1\ntypedef ULONG X;\n", "t.idl:1:1"},
		{"typedef ULONG X;\n  @", "t.idl:2:3"},
	} {
		_, err := ParseIDL("t.idl", []byte(c.src))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("%q: error %v is not a *gen.Error", c.src, err)
			continue
		}
		if !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%q: error %q, want position %s", c.src, err, c.want)
		}
	}
}

func FuzzParseIDL(f *testing.F) {
	for _, p := range []string{"testdata/idl/small.idl"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	if dir := os.Getenv("CLRPROF_IDL"); dir != "" {
		if b, err := os.ReadFile(filepath.Join(dir, "corprof.idl")); err == nil {
			f.Add(b[:min(len(b), 20000)])
		}
	}
	f.Add([]byte("interface I : IUnknown { HRESULT M([in, size_is(n)] ULONG x[], [out] ULONG *n); };"))
	f.Add([]byte("typedef enum { A = 1 << 70, B = 1 / 0 } E;"))
	f.Fuzz(func(t *testing.T, src []byte) {
		f, err := ParseIDL("fuzz.idl", src)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *gen.Error", err)
			}
			return
		}
		// Whatever parses must also survive planning.
		u := NewUniverse(f)
		tm := &TypeMapper{U: u, IDs: map[string]bool{}, Tokens: map[string]bool{}}
		for _, it := range f.Interfaces {
			if _, err := u.AllMethods(it); err != nil {
				continue
			}
			for _, m := range it.Methods {
				if _, err := planMethod(tm, m, false, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}
