package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// GenerateMetadata emits package metadata from the interfaces of cor.h and
// the enums of corhdr.h. Keys of the result are file names in metadata/.
func GenerateMetadata(cmdline string, cor, corhdr *File, ov *Overlay, st *Stats) (map[string][]byte, error) {
	u := NewUniverse(corhdr, cor)
	tm := &TypeMapper{U: u, Pkg: tokenPkg, IDs: map[string]bool{}, Tokens: map[string]bool{}, Renames: ov.Types, Unexported: ov.Unexported["metadata"], Docs: ov.Docs, ValueEnums: ov.ValueEnums}
	for _, f := range []*File{corhdr, cor} {
		for _, td := range f.Typedefs {
			if strings.HasPrefix(td.Name, "md") && td.Type.Ptr == 0 && !td.Type.Array {
				tm.Tokens[td.Name] = true
			}
		}
	}
	tm.Tokens["mdToken"] = true

	// Only the declarations the interfaces need go into the C header, so
	// that nothing unrelated in the headers has to compile.
	need := neededDecls(u, cor.Interfaces)
	filtered := func(f *File) *File {
		nf := &File{Name: f.Name}
		for _, td := range f.Typedefs {
			if need[td.Name] {
				nf.Typedefs = append(nf.Typedefs, td)
			}
		}
		for _, s := range f.Structs {
			if need[s.Name] {
				nf.Structs = append(nf.Structs, s)
			}
		}
		for _, e := range f.Enums {
			if need[e.Name] {
				nf.Enums = append(nf.Enums, e)
			}
		}
		for _, ft := range f.FuncTypes {
			if need[ft.Name] {
				nf.FuncTypes = append(nf.FuncTypes, ft)
			}
		}
		nf.Interfaces = f.Interfaces
		return nf
	}
	hfiles := []*File{filtered(corhdr), filtered(cor)}
	out := map[string][]byte{}
	hdr, err := CHeader(cmdline, "CLRPROF_COR_GEN_H", u, hfiles, nil)
	if err != nil {
		return nil, err
	}
	out["cor_gen.h"] = hdr
	out["thunks_gen.h"] = CThunks(cmdline, "CLRPROF_MD_THUNKS_GEN_H", "cor_gen.h", cor.Interfaces)

	used := map[string]string{"Token": "mdToken", "EnumHandle": "HCORENUM", "HRESULT": "HRESULT", "Unknown": "IUnknown"}
	// types_gen.go is pure Go (the signature codec and names build without
	// cgo); the struct size checks, which need cgo, go to sizes_gen.go.
	tf := newGoFile("metadata", cmdline, "")
	sf := newGoFile("metadata", cmdline, `#include "cor_gen.h"`)
	if err := emitEnums(tf, tm, corhdr.Enums, used); err != nil {
		return nil, err
	}
	for _, e := range corhdr.Enums {
		st.Enums++
		st.EnumValues += len(e.Values)
	}
	var consts []jen.Code
	for _, c := range corhdr.Consts {
		if c.Kind != ConstInt {
			continue
		}
		gn := ExportedName(c.Name)
		if _, ok := used[gn]; ok {
			continue
		}
		used[gn] = c.Name
		consts = append(consts, jen.Comment(fmt.Sprintf("%s is %s (%s).", gn, c.Name, c.Expr)), jen.Id(gn).Op("=").Lit(int(c.Value)))
		st.Consts++
	}
	if len(consts) > 0 {
		tf.Const().Defs(consts...)
		tf.Line()
	}
	var structs []*Struct
	for _, f := range hfiles {
		structs = append(structs, f.Structs...)
	}
	if err := emitStructs(tf, sf, tm, structs, used, nil); err != nil {
		return nil, err
	}
	for _, s := range structs {
		if !s.Union {
			st.Structs++
		}
	}
	emitIIDs(tf, cor.Interfaces)
	if out["types_gen.go"], err = render(tf); err != nil {
		return nil, err
	}
	if out["sizes_gen.go"], err = render(sf); err != nil {
		return nil, err
	}

	wf := newGoFile("metadata", cmdline, `#include "thunks_gen.h"`)
	resultNames := map[string]string{}
	for _, it := range cor.Interfaces {
		st.Interfaces++
		st.Methods += len(it.Methods)
		if err := emitObjectWrapper(wf, tm, it, ov, st, resultNames); err != nil {
			return nil, err
		}
		// Inherited methods forward to the embedded base wrapper.
		if it.Base != "" && it.Base != "IUnknown" {
			base := u.Interfaces[it.Base]
			inherited, err := u.AllMethods(base)
			if err != nil {
				return nil, err
			}
			for _, m := range inherited {
				pl, err := planMethod(tm, m, false, ov.Params[base.Name+"."+m.Name])
				if err != nil {
					return nil, err
				}
				pl.SFalse = ov.SFalse[base.Name+"."+m.Name]
				pl.HandWritten = ov.HandWritten[base.Name+"."+m.Name]
				rn := resultNames[m.Name+"@"+base.Name]
				doc := ""
				if pl.Exported() {
					doc = fmt.Sprintf("%s is %s.%s, which %s inherits.\n\n", pl.GoName(), InterfaceGoName(base.Name), pl.GoName(), InterfaceGoName(it.Name)) + methodDoc(ov.Docs, pl, base.Name, rn, false)
				}
				emitForwarder(wf, pl, InterfaceGoName(it.Name), rn, doc)
			}
			wf.Line()
		}
	}
	if out["wrappers_gen.go"], err = render(wf); err != nil {
		return nil, err
	}
	return out, nil
}

// MetadataStructs names the structs that GenerateMetadata mirrors in Go.
func MetadataStructs(cor, corhdr *File) map[string]bool {
	u := NewUniverse(corhdr, cor)
	need := neededDecls(u, cor.Interfaces)
	out := map[string]bool{}
	for name := range need {
		if s, ok := u.Structs[name]; ok && !s.Union {
			out[name] = true
		}
	}
	return out
}

// neededDecls returns the names of the typedefs, structs, enums and function
// types reachable from the interfaces' method signatures.
func neededDecls(u *Universe, ifaces []*Interface) map[string]bool {
	need := map[string]bool{}
	var visit func(name string, depth int)
	visit = func(name string, depth int) {
		if depth > 64 || need[name] {
			return
		}
		need[name] = true
		if td, ok := u.Typedefs[name]; ok {
			visit(td.Type.Name, depth+1)
		}
		if s, ok := u.Structs[name]; ok {
			for _, f := range s.Fields {
				visit(f.Type.Name, depth+1)
			}
		}
		if ft, ok := u.FuncTypes[name]; ok {
			visit(ft.Ret.Name, depth+1)
			for _, p := range ft.Params {
				visit(p.Type.Name, depth+1)
			}
		}
	}
	for _, it := range ifaces {
		for _, m := range it.Methods {
			visit(m.Ret.Name, 0)
			for _, p := range m.Params {
				visit(p.Type.Name, 0)
			}
		}
	}
	return need
}
