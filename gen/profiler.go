package gen

import (
	"bytes"
	"fmt"
	"github.com/google/uuid"
	"sort"
	"strings"

	"github.com/dave/jennifer/jen"
	"golang.org/x/tools/imports"
)

const profilerPkg = "github.com/clrprof/clrprof/profiler"

// Stats counts what was read and emitted.
type Stats struct {
	Interfaces, Methods, Enums, EnumValues, Structs, Consts, HRESULTs int
	CallbackSlots, WrappedMethods, RawParams                          int
	// ExportedRawParams counts the raw parameters (C pointers) of the
	// wrapper methods that are exported; the others are unexported raw
	// calls hand-written methods build on.
	ExportedRawParams, ExportedMethods int
}

func (s Stats) String() string {
	return fmt.Sprintf("interfaces=%d methods=%d enums=%d enum_values=%d structs=%d consts=%d hresults=%d callback_slots=%d wrapped_methods=%d raw_params=%d exported_methods=%d exported_raw_params=%d",
		s.Interfaces, s.Methods, s.Enums, s.EnumValues, s.Structs, s.Consts, s.HRESULTs, s.CallbackSlots, s.WrappedMethods, s.RawParams,
		s.ExportedMethods, s.ExportedRawParams)
}

// pointerIDs are pointer typedefs that Go treats as opaque named values
// (like the UINT_PTR IDs) rather than pointers.
var pointerIDs = []string{"ObjectHandleID"}

// profilerMapper builds the type mapper for package profiler.
func profilerMapper(u *Universe, prof *File, ov *Overlay) *TypeMapper {
	tm := &TypeMapper{U: u, Pkg: profilerPkg, IDs: map[string]bool{}, Tokens: map[string]bool{}, Renames: ov.Types, Unexported: ov.Unexported["profiler"], Docs: ov.Docs, ValueEnums: ov.ValueEnums}
	for _, td := range prof.Typedefs {
		if strings.HasPrefix(td.Name, "md") && td.Type.Ptr == 0 {
			tm.Tokens[td.Name] = true
			continue
		}
		r := u.Resolve(TypeRef{Name: td.Name})
		if r.Ptr == 0 && !r.Array && (r.Name == "UINT_PTR" || r.Name == "UINT64") {
			tm.IDs[td.Name] = true
		}
	}
	tm.Tokens["mdToken"] = true
	// Handles typed as pointers in C are opaque values in Go.
	for _, h := range pointerIDs {
		if _, ok := u.Typedefs[h]; ok {
			tm.IDs[h] = true
		}
	}
	return tm
}

// GenerateProfiler emits package profiler from corprof.idl (and the HRESULTs
// of corerror.h when given), with the C it shares: the interface header
// (internal/include), the profiler object's callback thunks and their Go
// exports (internal/comobj) and the chain's forwarding vtable
// (internal/chain).
// Keys of the result are paths relative to profiler/.
// Structs named in shared are declared by package metadata and aliased here.
func GenerateProfiler(cmdline string, prof, errs *File, ov *Overlay, shared map[string]bool, st *Stats) (map[string][]byte, error) {
	u := NewUniverse(prof)
	tm := profilerMapper(u, prof, ov)
	out := map[string][]byte{}

	var callbacks, infos, others []*Interface
	for _, it := range prof.Interfaces {
		switch {
		case interfaceVersion(it.Name, "ICorProfilerCallback") > 0:
			callbacks = append(callbacks, it)
		case interfaceVersion(it.Name, "ICorProfilerInfo") > 0:
			infos = append(infos, it)
		default:
			others = append(others, it)
		}
		st.Interfaces++
		st.Methods += len(it.Methods)
	}
	sort.SliceStable(callbacks, func(i, j int) bool {
		return interfaceVersion(callbacks[i].Name, "ICorProfilerCallback") < interfaceVersion(callbacks[j].Name, "ICorProfilerCallback")
	})
	sort.SliceStable(infos, func(i, j int) bool {
		return interfaceVersion(infos[i].Name, "ICorProfilerInfo") < interfaceVersion(infos[j].Name, "ICorProfilerInfo")
	})
	if len(callbacks) == 0 || len(infos) == 0 {
		return nil, fmt.Errorf("%s: no ICorProfilerCallback or ICorProfilerInfo interfaces", prof.Name)
	}
	for i, it := range callbacks {
		if interfaceVersion(it.Name, "ICorProfilerCallback") != i+1 {
			return nil, errorf(it.Pos, "callback interface versions are not contiguous at %s", it.Name)
		}
	}
	for i, it := range infos {
		if interfaceVersion(it.Name, "ICorProfilerInfo") != i+1 {
			return nil, errorf(it.Pos, "info interface versions are not contiguous at %s", it.Name)
		}
	}
	top := callbacks[len(callbacks)-1]

	// Callback slots.
	var slots []*CallbackSlot
	for _, it := range callbacks {
		v := interfaceVersion(it.Name, "ICorProfilerCallback")
		for _, m := range it.Methods {
			pl, err := planMethod(tm, m, true, ov.Params[it.Name+"."+m.Name])
			if err != nil {
				return nil, err
			}
			st.RawParams += pl.Raw
			s := &CallbackSlot{Index: len(slots), Version: v, Iface: it, Plan: pl, Special: specialCallbacks[m.Name]}
			if err := rawBasics(tm, s); err != nil {
				return nil, err
			}
			slots = append(slots, s)
		}
	}
	st.CallbackSlots = len(slots)

	// corprof_gen.h
	hdr, err := CHeader(cmdline, "CLRPROF_CORPROF_GEN_H", u, []*File{prof}, func(b *bytes.Buffer) {
		fmt.Fprintf(b, "#define CLRPROF_CALLBACK_SLOTS %d\n", len(slots))
		fmt.Fprintf(b, "#define CLRPROF_INFO_VERSIONS %d\n", len(infos))
		fmt.Fprintf(b, "#define CLRPROF_CALLBACK_VERSIONS %d\n\nenum {\n", len(callbacks))
		for _, s := range slots {
			fmt.Fprintf(b, "    CLRPROF_CB_%s = %d,\n", s.Plan.M.Name, s.Index)
		}
		b.WriteString("};\n\n")
		b.WriteString("// Internal to the profiler library: not exported from the .so.\n#pragma GCC visibility push(hidden)\n")
		fmt.Fprintf(b, "extern const %sVtbl clrprof_callback_vtbl;\n", top.Name)
		fmt.Fprintf(b, "extern const GUID clrprof_callback_iids[%d];\nextern const int clrprof_callback_iid_count;\n", len(callbacks))
		fmt.Fprintf(b, "extern const GUID clrprof_info_iids[%d];\nextern const int clrprof_info_iid_count;\n", len(infos))
		b.WriteString("#pragma GCC visibility pop\n")
	})
	if err != nil {
		return nil, err
	}
	// corprof_gen.h is shared by the C of profiler and internal/chain, so it
	// lives in internal/include; the keys of out are relative to profiler/.
	out["../internal/include/corprof_gen.h"] = hdr
	out["thunks_gen.h"] = CThunks(cmdline, "CLRPROF_THUNKS_GEN_H", "corprof_gen.h", append(append([]*Interface(nil), infos...), others...))
	// The profiler object's C and the exports it calls are package
	// internal/comobj's (a C file calls only its own package's exports).
	out["../internal/comobj/callbacks_gen.c"] = emitCallbacksC(cmdline, top, slots, callbacks, infos)
	of := newGoFile("comobj", cmdline, "#include \"object.h\"")
	emitComobjGo(of, slots)
	if out["../internal/comobj/callbacks_gen.go"], err = render(of); err != nil {
		return nil, err
	}
	chain, err := emitChainC(cmdline, top, slots)
	if err != nil {
		return nil, err
	}
	out["../internal/chain/chain_gen.c"] = chain

	// types_gen.go
	used := map[string]string{}
	tf := newGoFile("profiler", cmdline, `#include "corprof_gen.h"`)
	if err := emitIDs(tf, tm, prof.Typedefs, used); err != nil {
		return nil, err
	}
	if err := emitEnums(tf, tm, prof.Enums, used); err != nil {
		return nil, err
	}
	for _, e := range prof.Enums {
		st.Enums++
		st.EnumValues += len(e.Values)
	}
	aliases := map[string]bool{}
	for c := range shared {
		if !ov.Unexported["metadata"][c] {
			aliases[c] = true
		}
	}
	if err := emitStructs(tf, tf, tm, prof.Structs, used, aliases); err != nil {
		return nil, err
	}
	for _, s := range prof.Structs {
		if !s.Union {
			st.Structs++
		}
	}
	emitIIDs(tf, prof.Interfaces)
	if out["types_gen.go"], err = render(tf); err != nil {
		return nil, err
	}

	// callbacks_gen.go
	cf := newGoFile("profiler", cmdline, "")
	emitCallbacksGo(cf, ov.Docs, slots, len(callbacks))
	if out["callbacks_gen.go"], err = render(cf); err != nil {
		return nil, err
	}

	// compose_gen.go: the fan-out of Composite.
	kf := newGoFile("profiler", cmdline, "")
	if err := emitComposeGo(kf, slots); err != nil {
		return nil, err
	}
	if out["compose_gen.go"], err = render(kf); err != nil {
		return nil, err
	}

	// info_gen.go: Info and the other interfaces.
	wf := newGoFile("profiler", cmdline, `#include "thunks_gen.h"`)
	emitInfoType(wf, infos)
	resultNames := map[string]string{}
	for _, it := range infos {
		v := interfaceVersion(it.Name, "ICorProfilerInfo")
		for _, m := range it.Methods {
			pl, err := planMethod(tm, m, false, ov.Params[it.Name+"."+m.Name])
			if err != nil {
				return nil, err
			}
			pl.SFalse = ov.SFalse[it.Name+"."+m.Name]
			pl.HandWritten = ov.HandWritten[it.Name+"."+m.Name]
			st.RawParams += pl.Raw
			if pl.Exported() {
				st.ExportedMethods++
				st.ExportedRawParams += pl.Raw
			}
			st.WrappedMethods++
			rn, err := resultTypeName(wf, ov.Docs, pl, "", resultNames, it)
			if err != nil {
				return nil, err
			}
			emitWrapperMethod(wf, pl, WrapperOpts{
				Recv:       "Info",
				Self:       jen.Id("self"),
				Guard:      infoGuard(v, it.Name, m.Name, len(pl.Outputs) > 0, pl.SFalse),
				CIface:     it.Name,
				Thunk:      thunkName(it, m),
				ResultName: rn,
				Doc:        infoDoc(ov.Docs, pl, it, rn),
				Partial:    true,
			})
		}
	}
	for _, it := range others {
		if err := emitObjectWrapper(wf, tm, it, ov, st, resultNames); err != nil {
			return nil, err
		}
	}
	if out["info_gen.go"], err = render(wf); err != nil {
		return nil, err
	}

	// hresult_gen.go
	hf := newGoFile("profiler", cmdline, "")
	nf := newGoFile("com", cmdline, "")
	n := emitHRESULTs(hf, nf, errs)
	st.HRESULTs += n
	if out["hresult_gen.go"], err = render(hf); err != nil {
		return nil, err
	}
	if out["../internal/com/names_gen.go"], err = render(nf); err != nil {
		return nil, err
	}
	return out, nil
}

// infoDoc is the doc comment of a generated Info method.
func infoDoc(d *Docs, pl *Plan, it *Interface, resultName string) string {
	if !pl.Exported() {
		s := fmt.Sprintf("%s calls %s::%s.", pl.GoName(), it.Name, pl.M.Name)
		if len(pl.Outputs) > 0 && pl.M.Ret.Name == "HRESULT" && pl.M.Ret.Ptr == 0 {
			s += "\nWhen the runtime answers CORPROF_E_DATAINCOMPLETE (part of the answer\nis not known yet), the outputs it did fill are returned with that error."
		}
		return s
	}
	return methodDoc(d, pl, it.Name, resultName, true)
}

func infoGuard(version int, iface, method string, hasRes, sfalse bool) []jen.Code {
	ret := []jen.Code{jen.Id("notAvailable").Call(jen.Lit(iface+"::"+method), jen.Lit(version), jen.Id("x").Dot("Version").Call())}
	if sfalse {
		ret = append([]jen.Code{jen.False()}, ret...)
	}
	if hasRes {
		ret = append([]jen.Code{jen.Id("res")}, ret...)
	}
	return []jen.Code{
		jen.Id("self").Op(":=").Id("x").Dot("ptr").Call(jen.Lit(version)),
		jen.If(jen.Id("self").Op("==").Nil()).Block(jen.Return(ret...)),
	}
}

// objectGuard answers a method called on a nil or released wrapper: an
// error for HRESULT methods, the zero value (or nothing) for the others.
func objectGuard(ret TypeRef, hasRes bool, iface string) []jen.Code {
	var vals []jen.Code
	switch {
	case ret.Name == "HRESULT" && ret.Ptr == 0:
		vals = append(vals, jen.Qual(comPkg, "NilObject").Call(jen.Lit(iface)))
		if hasRes {
			vals = append([]jen.Code{jen.Id("res")}, vals...)
		}
	case hasRes:
		vals = []jen.Code{jen.Id("res")}
	case ret.Name == "void" && ret.Ptr == 0:
	case ret.Ptr == 0 && TypeInfoFor(ret.Name).Kind == KindBool:
		vals = []jen.Code{jen.False()}
	default:
		vals = []jen.Code{jen.Lit(0)}
	}
	return []jen.Code{jen.If(jen.Id("x").Op("==").Nil().Op("||").Id("x").Dot("p").Op("==").Nil()).Block(jen.Return(vals...))}
}

// resultTypeName declares the struct type for a method with several outputs.
func resultTypeName(f *jen.File, docs *Docs, pl *Plan, prefix string, used map[string]string, it *Interface) (string, error) {
	if len(pl.Outputs) < 2 {
		return "", nil
	}
	name := prefix + strings.TrimPrefix(pl.M.Name, "Get") + "Result"
	if prev, ok := used[name]; ok {
		return "", errorf(pl.M.Pos, "result type %s of %s.%s collides with %s", name, it.Name, pl.M.Name, prev)
	}
	used[name] = it.Name + "." + pl.M.Name
	used[pl.M.Name+"@"+it.Name] = name // lets forwarders of derived wrappers name it
	var fields []jen.Code
	for _, o := range pl.Outputs {
		fields = append(fields, lineComments(fieldDoc(docs, it.Name, pl.M.Name, o))...)
		fields = append(fields, jen.Id(o.GoName).Add(goResultType(o)))
	}
	f.Commentf("%s holds the outputs of %s::%s.", name, it.Name, pl.M.Name)
	f.Comment("")
	f.Commentf("%s returns it; its fields are the runtime's outputs in the order", pl.GoName())
	f.Comment("the runtime declares them.")
	f.Type().Id(name).Struct(fields...)
	f.Line()
	return name, nil
}

// emitInfoType writes the Info type: one interface pointer per
// ICorProfilerInfoN version the runtime answered.
func emitInfoType(f *jen.File, infos []*Interface) {
	n := len(infos)
	var iids []jen.Code
	for _, it := range infos {
		iids = append(iids, jen.Id("IID"+InterfaceGoName(it.Name)))
	}
	f.Comment("Info is the runtime's ICorProfilerInfo, in every version it supports.")
	f.Comment("A method of a version the runtime lacks returns an error matching")
	f.Comment("ErrNotAvailable instead of calling into the runtime.")
	f.Type().Id("Info").Struct(
		jen.Id("p").Index(jen.Lit(n+1)).Qual("unsafe", "Pointer"),
		jen.Id("version").Int(),
		jen.Line().Comment("state is what the SDK keeps per Info (infostate.go, hand-written):"),
		jen.Comment("the metadata reader cache, the canonical instantiations, whether"),
		jen.Comment("the object was loaded as a notification profiler."),
		jen.Id("state").Id("infoState"),
	)
	f.Line()
	f.Comment("newInfo queries unk for every ICorProfilerInfoN.")
	f.Func().Id("newInfo").Params(jen.Id("unk").Qual("unsafe", "Pointer")).Params(jen.Op("*").Id("Info"), jen.Error()).Block(
		jen.If(jen.Id("unk").Op("==").Nil()).Block(jen.Return(jen.Nil(), jen.Id("E_POINTER"))),
		jen.Id("x").Op(":=").Op("&").Id("Info").Values(),
		jen.For(jen.List(jen.Id("i"), jen.Id("iid")).Op(":=").Range().Index().Qual(uuidPkg, "UUID").Values(iids...)).Block(
			jen.Id("v").Op(":=").Id("i").Op("+").Lit(1),
			jen.List(jen.Id("out"), jen.Id("err")).Op(":=").Qual(comPkg, "QueryRaw").Call(jen.Id("unk"), jen.Id("iid")),
			jen.If(jen.Id("err").Op("==").Nil().Op("&&").Id("out").Op("!=").Nil()).Block(
				jen.Id("x").Dot("p").Index(jen.Id("v")).Op("=").Id("out"),
				jen.Id("x").Dot("version").Op("=").Id("v"),
			),
		),
		jen.If(jen.Id("x").Dot("p").Index(jen.Lit(1)).Op("==").Nil()).Block(jen.Return(jen.Nil(), jen.Id("E_NOINTERFACE"))),
		jen.Return(jen.Id("x"), jen.Nil()),
	)
	f.Line()
	f.Comment("Version is the highest ICorProfilerInfoN the runtime supports.")
	f.Func().Params(jen.Id("x").Op("*").Id("Info")).Id("Version").Params().Int().Block(
		jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.Lit(0))),
		jen.Return(jen.Id("x").Dot("version")))
	f.Line()
	f.Comment("ptr returns the ICorProfilerInfoN pointer, or nil when unsupported.")
	f.Func().Params(jen.Id("x").Op("*").Id("Info")).Id("ptr").Params(jen.Id("v").Int()).Qual("unsafe", "Pointer").Block(
		jen.If(jen.Id("x").Op("==").Nil().Op("||").Id("v").Op("<").Lit(1).Op("||").Id("v").Op(">").Lit(n)).Block(jen.Return(jen.Nil())),
		jen.Return(jen.Id("x").Dot("p").Index(jen.Id("v"))))
	f.Line()
	f.Comment("release drops the references newInfo took.")
	f.Func().Params(jen.Id("x").Op("*").Id("Info")).Id("release").Params().Block(
		jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return()),
		jen.For(jen.Id("v").Op(":=").Range().Id("x").Dot("p")).Block(
			jen.If(jen.Id("x").Dot("p").Index(jen.Id("v")).Op("!=").Nil()).Block(
				jen.Qual(comPkg, "ReleaseRaw").Call(jen.Id("x").Dot("p").Index(jen.Id("v"))),
				jen.Id("x").Dot("p").Index(jen.Id("v")).Op("=").Nil(),
			)),
		jen.Id("x").Dot("version").Op("=").Lit(0))
	f.Line()
}

// emitObjectWrapper writes the wrapper type of a COM interface (other than
// the callbacks and Info) and a Go method for each of its own methods.
func emitObjectWrapper(wf *jen.File, tm *TypeMapper, it *Interface, ov *Overlay, st *Stats, resultNames map[string]string) error {
	emitIfaceType(wf, it)
	for _, m := range it.Methods {
		pl, err := planMethod(tm, m, false, ov.Params[it.Name+"."+m.Name])
		if err != nil {
			return err
		}
		pl.SFalse = ov.SFalse[it.Name+"."+m.Name]
		pl.HandWritten = ov.HandWritten[it.Name+"."+m.Name]
		st.RawParams += pl.Raw
		if pl.Exported() {
			st.ExportedMethods++
			st.ExportedRawParams += pl.Raw
		}
		st.WrappedMethods++
		rn, err := resultTypeName(wf, ov.Docs, pl, InterfaceGoName(it.Name), resultNames, it)
		if err != nil {
			return err
		}
		emitWrapperMethod(wf, pl, WrapperOpts{
			Recv:       InterfaceGoName(it.Name),
			Self:       jen.Id("x").Dot("p"),
			Guard:      objectGuard(m.Ret, len(pl.Outputs) > 0, it.Name),
			CIface:     it.Name,
			Thunk:      thunkName(it, m),
			ResultName: rn,
			Doc:        objectDoc(ov.Docs, pl, it.Name, m.Name, rn),
		})
	}
	return nil
}

// emitIfaceType writes a wrapper type for a COM interface other than the
// callbacks and Info, with owning and borrowing constructors. An interface
// derived from another (IMetaDataImport2 : IMetaDataImport) embeds its base's
// wrapper, so the inherited methods, Raw and Release are promoted from it.
func emitIfaceType(f *jen.File, it *Interface) {
	name := InterfaceGoName(it.Name)
	derived := it.Base != "" && it.Base != "IUnknown"
	f.Commentf("%s wraps %s. Values returned by the runtime from a call are owned", name, it.Name)
	f.Comment("and must be released with Release; values passed into callbacks are")
	f.Comment("borrowed and valid only during the callback.")
	build := func(owned bool) *jen.Statement {
		fields := jen.Dict{jen.Id("p"): jen.Id("p")}
		if owned {
			fields[jen.Id("owned")] = jen.True()
		}
		if derived {
			return jen.Op("&").Id(name).Values(jen.Id(InterfaceGoName(it.Base)).Values(fields))
		}
		return jen.Op("&").Id(name).Values(fields)
	}
	if derived {
		f.Type().Id(name).Struct(jen.Id(InterfaceGoName(it.Base)))
	} else {
		f.Type().Id(name).Struct(jen.Id("p").Qual("unsafe", "Pointer"), jen.Id("owned").Bool())
	}
	f.Line()
	f.Func().Id("own"+name).Params(jen.Id("p").Qual("unsafe", "Pointer")).Op("*").Id(name).Block(
		jen.If(jen.Id("p").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Return(build(true)))
	f.Func().Id("borrow"+name).Params(jen.Id("p").Qual("unsafe", "Pointer")).Op("*").Id(name).Block(
		jen.If(jen.Id("p").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Return(build(false)))
	if it.IID != uuid.Nil {
		f.Commentf("Query%s asks obj (an Unknown or any interface wrapper) for %s.", name, it.Name)
		f.Comment("The result holds its own reference: release it with Release.")
		f.Func().Id("Query"+name).Params(jen.Id("obj").Id("Object")).Params(jen.Op("*").Id(name), jen.Error()).Block(
			jen.If(jen.Id("obj").Op("==").Nil()).Block(jen.Return(jen.Nil(), jen.Qual(comPkg, "NilObject").Call(jen.Lit("IUnknown")))),
			jen.List(jen.Id("p"), jen.Err()).Op(":=").Qual(comPkg, "QueryRaw").Call(jen.Id("obj").Dot("Raw").Call(), jen.Id("IID"+name)),
			jen.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err())),
			jen.Return(jen.Id("own"+name).Call(jen.Id("p")), jen.Nil()))
	}
	if derived {
		f.Comment("base returns the embedded base wrapper, nil for a nil value, so that")
		f.Comment("inherited methods called on nil answer with an error like the others.")
		f.Func().Params(jen.Id("x").Op("*").Id(name)).Id("base").Params().Op("*").Id(InterfaceGoName(it.Base)).Block(
			jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.Nil())),
			jen.Return(jen.Op("&").Id("x").Dot(InterfaceGoName(it.Base))))
		f.Line()
		return
	}
	f.Comment("Raw returns the COM interface pointer (nil for a nil value), for passing")
	f.Comment("to code outside this package; it does not add a reference.")
	f.Func().Params(jen.Id("x").Op("*").Id(name)).Id("Raw").Params().Qual("unsafe", "Pointer").Block(
		jen.If(jen.Id("x").Op("==").Nil()).Block(jen.Return(jen.Nil())),
		jen.Return(jen.Id("x").Dot("p")))
	f.Comment("Release drops the reference held by an owned value; it does nothing for")
	f.Comment("borrowed values and is safe to call twice.")
	f.Func().Params(jen.Id("x").Op("*").Id(name)).Id("Release").Params().Block(
		jen.If(jen.Id("x").Op("==").Nil().Op("||").Id("x").Dot("p").Op("==").Nil().Op("||").Op("!").Id("x").Dot("owned")).Block(jen.Return()),
		jen.Qual(comPkg, "ReleaseRaw").Call(jen.Id("x").Dot("p")),
		jen.Id("x").Dot("p").Op("=").Nil())
	f.Line()
}

func newGoFile(pkg, cmdline, preamble string) *jen.File {
	f := jen.NewFile(pkg)
	f.HeaderComment("Code generated by comgen. DO NOT EDIT.")
	f.HeaderComment(cmdline)
	if preamble != "" {
		f.CgoPreamble(preamble)
	}
	f.ImportName(cgoutilPkg, "cgoutil")
	f.ImportName(enumfmtPkg, "enumfmt")
	f.ImportName(uuidPkg, "uuid")
	f.ImportName(tokenPkg, "metadata")
	return f
}

// render formats a file through jennifer and then x/tools' imports, which
// groups and sorts the import block the way gofmt users expect.
func render(f *jen.File) ([]byte, error) {
	var b bytes.Buffer
	if err := f.Render(&b); err != nil {
		return nil, err
	}
	return imports.Process("gen.go", b.Bytes(), &imports.Options{Comments: true, TabIndent: true, TabWidth: 8, FormatOnly: true})
}

// emitHRESULTs writes the named HRESULT values: the alias and constants in
// the package (f), and the name table in internal/com (nf).
func emitHRESULTs(f, nf *jen.File, errs *File) int {
	common := []struct {
		name string
		v    uint32
	}{
		{"S_OK", 0}, {"S_FALSE", 1}, {"E_NOTIMPL", 0x80004001}, {"E_NOINTERFACE", 0x80004002},
		{"E_POINTER", 0x80004003}, {"E_ABORT", 0x80004004}, {"E_FAIL", 0x80004005}, {"E_UNEXPECTED", 0x8000FFFF},
		{"E_ACCESSDENIED", 0x80070005}, {"E_OUTOFMEMORY", 0x8007000E}, {"E_INVALIDARG", 0x80070057},
		{"CLASS_E_NOAGGREGATION", 0x80040110}, {"CLASS_E_CLASSNOTAVAILABLE", 0x80040111},
	}
	seen := map[string]bool{}
	var defs []jen.Code
	var names []jen.Code
	seenVal := map[int32]bool{}
	add := func(name string, v int32, doc string) {
		if seen[name] {
			return
		}
		seen[name] = true
		defs = append(defs, jen.Comment(doc), jen.Id(name).Id("HRESULT").Op("=").Lit(int(v)))
		if !seenVal[v] {
			seenVal[v] = true
			names = append(names, jen.Lit(int(v)).Op(":").Lit(name))
		}
	}
	for _, c := range common {
		add(c.name, int32(c.v), fmt.Sprintf("%s is the COM status %#08x.", c.name, c.v))
	}
	n := 0
	if errs != nil {
		for _, c := range errs.Consts {
			if c.Kind != ConstInt {
				continue
			}
			n++
			add(c.Name, int32(c.Value), fmt.Sprintf("%s is %#08x from %s.", c.Name, uint32(c.Value), errs.Name))
		}
	}
	f.Comment("HRESULT is a COM status code. Negative values are failures; HRESULT")
	f.Comment("implements error, and its named values work with errors.Is.")
	f.Type().Id("HRESULT").Op("=").Qual(comPkg, "HRESULT")
	f.Line()
	f.Const().Defs(defs...)
	nf.Var().Id("names").Op("=").Map(jen.Id("HRESULT")).String().Values(names...)
	return n
}

const comPkg = "github.com/clrprof/clrprof/internal/com"

func objectDoc(d *Docs, pl *Plan, iface, method, resultName string) string {
	if !pl.Exported() {
		return fmt.Sprintf("%s calls %s::%s.", pl.GoName(), iface, method)
	}
	return methodDoc(d, pl, iface, resultName, false)
}
