package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// CallbackSlot is one method of the callback vtable after IUnknown's three.
type CallbackSlot struct {
	Index   int
	Version int
	Iface   *Interface
	Plan    *Plan
	Special string // "initialize", "initializeForAttach", "shutdown", "detachSucceeded" or ""
	// Raw is the Go basic type in which package comobj hands each C
	// parameter over ("" for a pointer: unsafe.Pointer).
	Raw []string
}

var specialCallbacks = map[string]string{
	"Initialize":          "initialize",
	"InitializeForAttach": "initializeForAttach",
	"Shutdown":            "shutdown",
	// After a detach the runtime never calls the profiler again: the
	// dispatcher lets go of its Info.
	"ProfilerDetachSucceeded": "detachSucceeded",
}

// callbackVersion extracts N from ICorProfilerCallbackN (1 for none).
func interfaceVersion(name, base string) int {
	s := strings.TrimPrefix(name, base)
	if s == "" {
		return 1
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// goCallbackSignature returns the parameters and results of the user-facing
// Go method for a callback.
func goCallbackSignature(s *CallbackSlot) (params, results []jen.Code) {
	switch s.Special {
	case "initialize":
		return []jen.Code{jen.Id("info").Op("*").Id("Info")}, []jen.Code{jen.Error()}
	case "initializeForAttach":
		return []jen.Code{jen.Id("info").Op("*").Id("Info"), jen.Id("clientData").Index().Byte()}, []jen.Code{jen.Error()}
	}
	for _, in := range s.Plan.Inputs {
		params = append(params, jen.Id(in.GoName).Add(goParamType(in, false)))
	}
	for _, out := range s.Plan.Outputs {
		results = append(results, jen.Id(ParamName(out.P.Name)).Add(goResultType(out)))
	}
	if len(results) > 0 {
		results = append(results, jen.Id("err").Error())
	} else {
		results = append(results, jen.Error())
	}
	return params, results
}

// emitCallbacksGo writes the Go side of the callback interfaces: one Go
// interface per version, the no-op Base, the binding struct, the slot table
// and the cgo exports the C thunks call.
func emitCallbacksGo(f *jen.File, docs *Docs, slots []*CallbackSlot, maxVersion int) {
	byVersion := map[int][]*CallbackSlot{}
	for _, s := range slots {
		byVersion[s.Version] = append(byVersion[s.Version], s)
	}
	for v := 1; v <= maxVersion; v++ {
		name := callbackGoName(v)
		var members []jen.Code
		if v > 1 {
			members = append(members, jen.Id(callbackGoName(v-1)))
		}
		for _, s := range byVersion[v] {
			params, results := goCallbackSignature(s)
			members = append(members, lineComments(callbackDoc(docs, s))...)
			members = append(members, jen.Id(s.Plan.M.Name).Params(params...).Params(results...))
		}
		f.Commentf("%s is the Go form of %s (IID %s): implement it, usually by embedding Base and overriding what you need.", name, ifaceNameForVersion(slots, v), ifaceIIDForVersion(slots, v))
		f.Type().Id(name).Interface(members...)
		f.Line()
	}

	f.Comment("Base implements every callback as a no-op that returns nil. Embed it in")
	f.Comment("your profiler type and override only the callbacks you need: methods")
	f.Comment("promoted from Base are answered in C and never enter Go.")
	f.Type().Id("Base").Struct()
	f.Line()
	for _, s := range slots {
		params, results := goCallbackSignature(s)
		var named []jen.Code
		for _, out := range s.Plan.Outputs {
			if s.Special != "" {
				break
			}
			named = append(named, jen.Id(ParamName(out.P.Name)).Add(goResultType(out)))
		}
		commentLines(f, baseDoc(docs, s))
		// Unnamed parameters: Base ignores them.
		for i := range params {
			params[i] = jen.Id("_").Add(paramTypeOnly(s, i))
		}
		if len(named) > 0 {
			named = append(named, jen.Id("err").Error())
			f.Func().Params(jen.Id("Base")).Id(s.Plan.M.Name).Params(params...).Params(named...).Block(jen.Return())
		} else {
			f.Func().Params(jen.Id("Base")).Id(s.Plan.M.Name).Params(params...).Params(results...).Block(jen.Return(jen.Nil()))
		}
	}
	f.Line()

	var fields []jen.Code
	var binds []jen.Code
	for v := 1; v <= maxVersion; v++ {
		fields = append(fields, jen.Id(fmt.Sprintf("cb%d", v)).Id(callbackGoName(v)))
		if v == 1 {
			// impl is a Callback already.
			binds = append(binds, jen.Id("c").Dot("cb1").Op("=").Id("impl"))
		} else {
			binds = append(binds, jen.Id("c").Dot(fmt.Sprintf("cb%d", v)).Op(",").Id("_").Op("=").Id("impl").Assert(jen.Id(callbackGoName(v))))
		}
	}
	f.Comment("callbacks holds the user's implementation once per interface version it satisfies.")
	f.Type().Id("callbacks").Struct(fields...)
	f.Line()
	f.Comment("bind records impl under every callback version it implements.")
	f.Func().Params(jen.Id("c").Op("*").Id("callbacks")).Id("bind").Params(jen.Id("impl").Id("Callback")).Block(binds...)
	f.Line()

	var rows []jen.Code
	for _, s := range slots {
		rows = append(rows, jen.Values(jen.Lit(s.Plan.M.Name), jen.Lit(s.Version)))
	}
	f.Comment("callbackMethods names each callback vtable slot (after IUnknown) and its interface version.")
	f.Var().Id("callbackMethods").Op("=").Index(jen.Lit(len(slots))).Struct(
		jen.Id("Name").String(), jen.Id("Version").Int()).Values(rows...)
	f.Line()

	// methodByName: reflect's MethodByName called with each name as a
	// constant. The linker keeps every exported method of every type a
	// program converts to an interface when it calls MethodByName with a
	// name it cannot see (reflect could ask for any of them); with
	// constants it keeps only methods of those names.
	var cases []jen.Code
	seen := map[string]bool{}
	for _, s := range slots {
		if seen[s.Plan.M.Name] {
			continue
		}
		seen[s.Plan.M.Name] = true
		cases = append(cases, jen.Case(jen.Lit(s.Plan.M.Name)).Block(
			jen.Return(jen.Id("t").Dot("MethodByName").Call(jen.Lit(s.Plan.M.Name)))))
	}
	cases = append(cases, jen.Default().Block(jen.Return(jen.Qual("reflect", "Method").Values(), jen.False())))
	f.Comment("methodByName is t.MethodByName(name) for the name of a callback (any")
	f.Comment("other name: not found). Each call passes its name as a constant, so")
	f.Comment("that the linker keeps only the methods of those names; a call with a")
	f.Comment("name it cannot see makes it keep every exported method of every type")
	f.Comment("converted to an interface (2.9 MB of a profiler's library).")
	f.Func().Id("methodByName").Params(jen.Id("t").Qual("reflect", "Type"), jen.Id("name").String()).Params(jen.Qual("reflect", "Method"), jen.Bool()).Block(
		jen.Switch(jen.Id("name")).Block(cases...))
	f.Line()

	f.Comment("objectHost is the dispatcher's side of package comobj: the object's C")
	f.Comment("calls its methods (comobj.Callbacks, generated below) and those of")
	f.Comment("shim.go through comobj's exports. It is installed by an init")
	f.Comment("function (shim.go).")
	f.Type().Id("objectHost").Struct()
	f.Line()
	for _, s := range slots {
		emitCallbackHostMethod(f, s)
	}
}

func paramTypeOnly(s *CallbackSlot, i int) *jen.Statement {
	switch s.Special {
	case "initialize":
		return jen.Op("*").Id("Info")
	case "initializeForAttach":
		if i == 0 {
			return jen.Op("*").Id("Info")
		}
		return jen.Index().Byte()
	}
	return goParamType(s.Plan.Inputs[i], false)
}

func callbackGoName(v int) string {
	if v == 1 {
		return "Callback"
	}
	return fmt.Sprintf("Callback%d", v)
}

func ifaceNameForVersion(slots []*CallbackSlot, v int) string {
	for _, s := range slots {
		if s.Version == v {
			return s.Iface.Name
		}
	}
	return ""
}

func ifaceIIDForVersion(slots []*CallbackSlot, v int) string {
	for _, s := range slots {
		if s.Version == v {
			return s.Iface.IID.String()
		}
	}
	return ""
}

func exportName(m *Method) string { return "clrprofGo" + m.Name }

// exportParamType is the cgo type of a raw C argument in an export: scalars
// keep their C type, pointers become unsafe.Pointer.
func exportParamType(pp *PlannedParam) *jen.Statement {
	if isPointerParam(pp) {
		return jen.Qual("unsafe", "Pointer")
	}
	return cType(pp.T.Name)
}

func isPointerParam(pp *PlannedParam) bool {
	return pp.T.Indirections() > 0 || pp.P.Type.Indirections() > 0
}

// rawParamType is the Go type in which package comobj hands a C argument of
// a callback over to package profiler: a pointer as unsafe.Pointer, a scalar
// as the Go basic type of its C type (the IDs as uintptr, BOOL and HRESULT
// as int32), so that comobj needs none of profiler's types.
func rawParamType(s *CallbackSlot, i int) *jen.Statement {
	if s.Raw[i] == "" {
		return jen.Qual("unsafe", "Pointer")
	}
	return jen.Id(s.Raw[i])
}

// rawBasics computes CallbackSlot.Raw.
func rawBasics(tm *TypeMapper, s *CallbackSlot) error {
	s.Raw = make([]string, len(s.Plan.Params))
	for i, pp := range s.Plan.Params {
		if isPointerParam(pp) {
			continue
		}
		ti := tm.Info(pp.T.Name)
		if ti.GoBasic == "" {
			return fmt.Errorf("%s.%s: parameter %s (%s) has no Go basic type to hand over", s.Iface.Name, s.Plan.M.Name, pp.P.Name, pp.T.Name)
		}
		s.Raw[i] = ti.GoBasic
	}
	return nil
}

// emitComobjGo writes package comobj's Go half of the callback thunks: the
// Callbacks interface (one method per callback slot, over raw types), a
// no-op implementation (what the object answers before package profiler
// installs its host), and the cgo exports the generated C thunks call,
// each one interface call into the host.
func emitComobjGo(f *jen.File, slots []*CallbackSlot) {
	f.Comment("Callbacks is what the object's callback thunks call in Go, one method")
	f.Comment("per ICorProfilerCallbackN method with the cgo.Handle of the object")
	f.Comment("(h) and the runtime's arguments in raw form: pointers as")
	f.Comment("unsafe.Pointer, IDs as uintptr, BOOL and HRESULT as int32. Each")
	f.Comment("returns the HRESULT for the runtime. Package profiler's dispatcher")
	f.Comment("implements it (see Host).")
	var members []jen.Code
	for _, s := range slots {
		members = append(members, jen.Comment(fmt.Sprintf("%s is %s::%s.", s.Plan.M.Name, s.Iface.Name, s.Plan.M.Name)))
		params := []jen.Code{jen.Id("h").Uintptr()}
		for i, pp := range s.Plan.Params {
			params = append(params, jen.Id("a_"+LocalName(pp.P.Name)).Add(rawParamType(s, i)))
		}
		members = append(members, jen.Id(s.Plan.M.Name).Params(params...).Int32())
	}
	f.Type().Id("Callbacks").Interface(members...)
	f.Line()
	f.Comment("nopCallbacks answers every callback S_OK without doing anything.")
	f.Type().Id("nopCallbacks").Struct()
	f.Line()
	for _, s := range slots {
		params := []jen.Code{jen.Uintptr()}
		for i := range s.Plan.Params {
			params = append(params, rawParamType(s, i))
		}
		f.Func().Params(jen.Id("nopCallbacks")).Id(s.Plan.M.Name).Params(params...).Int32().Block(jen.Return(jen.Lit(0)))
	}
	f.Line()
	for _, s := range slots {
		m := s.Plan.M
		params := []jen.Code{jen.Id("h").Qual("C", "uintptr_t")}
		args := []jen.Code{jen.Uintptr().Call(jen.Id("h"))}
		for i, pp := range s.Plan.Params {
			a := jen.Id("a_" + LocalName(pp.P.Name))
			params = append(params, a.Clone().Add(exportParamType(pp)))
			if s.Raw[i] == "" {
				args = append(args, a)
			} else {
				args = append(args, jen.Id(s.Raw[i]).Call(a))
			}
		}
		f.Comment("//export " + exportName(m))
		f.Func().Id(exportName(m)).Params(params...).Qual("C", "HRESULT").Block(
			jen.Return(jen.Qual("C", "HRESULT").Call(jen.Id("host").Dot(m.Name).Call(args...))))
		f.Line()
	}
}

// fromRaw converts a scalar argument handed over by package comobj (its Go
// basic type) to its Go form in package profiler.
func fromRaw(pp *PlannedParam, v *jen.Statement) *jen.Statement {
	if pp.Elem.Kind == KindBool {
		return v.Op("!=").Lit(0)
	}
	return pp.Elem.Code().Call(v)
}

// emitCallbackHostMethod writes package profiler's implementation of one
// method of comobj.Callbacks: it finds the dispatcher behind the object's
// handle, converts the raw arguments to the public types and calls the
// user's callback, recovering a panic into E_FAIL.
func emitCallbackHostMethod(f *jen.File, s *CallbackSlot) {
	m := s.Plan.M
	params := []jen.Code{jen.Id("h").Uintptr()}
	for i, pp := range s.Plan.Params {
		params = append(params, jen.Id("a_"+LocalName(pp.P.Name)).Add(rawParamType(s, i)))
	}
	var body []jen.Code
	body = append(body,
		jen.Id("d").Op(":=").Id("dispatcherOf").Call(jen.Id("h")),
		jen.If(jen.Id("d").Op("==").Nil()).Block(jen.Return(jen.Lit(0))),
		jen.Defer().Id("d").Dot("recoverTo").Call(jen.Lit(m.Name), jen.Op("&").Id("hr")),
	)
	arg := func(pp *PlannedParam) jen.Code {
		a := jen.Id("a_" + LocalName(pp.P.Name))
		switch pp.Role {
		case RoleIn:
			return fromRaw(pp, a)
		case RoleInGUID:
			return jen.Qual(cgoutilPkg, "GUIDAt").Call(a)
		case RoleInString:
			return jen.Qual(cgoutilPkg, "UTF16Z").Call(a)
		case RoleInWString:
			return jen.Qual(cgoutilPkg, "UTF16").Call(a, jen.Int().Call(jen.Id("a_"+LocalName(pp.Count.P.Name))))
		case RoleInBytes:
			return jen.Qual(cgoutilPkg, "Bytes").Call(a, jen.Int().Call(jen.Id("a_"+LocalName(pp.Count.P.Name))))
		case RoleInSlice:
			n := jen.Int().Call(jen.Id("a_" + LocalName(pp.Count.P.Name)))
			if pp.Elem.Kind == KindBool {
				return jen.Qual(cgoutilPkg, "Bools").Call(a, n)
			}
			return jen.Qual(cgoutilPkg, "Slice").Types(pp.Elem.Code()).Call(a, n)
		case RoleInIface:
			return wrapIface(pp, false, a)
		}
		if isPointerParam(pp) {
			return jen.Id("Address").Call(a)
		}
		return jen.Uintptr().Call(a)
	}
	ret := func(v jen.Code) jen.Code { return jen.Return(jen.Id("toHRESULT").Call(v)) }
	switch s.Special {
	case "initialize":
		body = append(body, ret(jen.Id("d").Dot("initialize").Call(jen.Id("a_"+LocalName(m.Params[0].Name)))))
	case "initializeForAttach":
		body = append(body, ret(jen.Id("d").Dot("initializeForAttach").Call(
			jen.Id("a_"+LocalName(m.Params[0].Name)),
			jen.Qual(cgoutilPkg, "Bytes").Call(jen.Id("a_"+LocalName(m.Params[1].Name)), jen.Int().Call(jen.Id("a_"+LocalName(m.Params[2].Name)))))))
	case "shutdown", "detachSucceeded":
		body = append(body, ret(jen.Id("d").Dot(s.Special).Call()))
	default:
		var callArgs []jen.Code
		for _, in := range s.Plan.Inputs {
			callArgs = append(callArgs, arg(in))
		}
		target := jen.Id("d").Dot(fmt.Sprintf("cb%d", s.Version))
		body = append(body, jen.If(target.Clone().Op("==").Nil()).Block(jen.Return(jen.Lit(0))))
		call := target.Clone().Dot(m.Name).Call(callArgs...)
		if len(s.Plan.Outputs) == 0 {
			body = append(body, ret(call))
		} else {
			var lhs []jen.Code
			for i := range s.Plan.Outputs {
				lhs = append(lhs, jen.Id(fmt.Sprintf("r%d", i)))
			}
			lhs = append(lhs, jen.Id("err"))
			body = append(body, jen.List(lhs...).Op(":=").Add(call))
			body = append(body, jen.If(jen.Id("err").Op("!=").Nil()).Block(ret(jen.Id("err"))))
			for i, out := range s.Plan.Outputs {
				a := "a_" + LocalName(out.P.Name)
				v := jen.Id(fmt.Sprintf("r%d", i))
				basic := out.Elem.GoBasic // what the C pointee holds (BOOL: int32)
				var cv jen.Code = jen.Id(basic).Call(v)
				if out.Elem.Kind == KindBool {
					cv = jen.Qual(cgoutilPkg, "Bool").Call(v)
				}
				body = append(body, jen.If(jen.Id(a).Op("!=").Nil()).Block(
					jen.Op("*").Parens(jen.Op("*").Id(basic)).Call(jen.Id(a)).Op("=").Add(cv)))
			}
			body = append(body, jen.Return(jen.Lit(0)))
		}
	}
	f.Commentf("%s is %s::%s from the object's C (comobj.Callbacks).", m.Name, s.Iface.Name, m.Name)
	f.Func().Params(jen.Id("objectHost")).Id(m.Name).Params(params...).Params(jen.Id("hr").Int32()).Block(body...)
	f.Line()
}

// emitCallbacksC writes the C vtable of the callback object (package
// internal/comobj): IUnknown slots forward to the hand-written object.c, every other slot answers S_OK in C unless
// the user implements it, in which case it enters Go through the guard.
func emitCallbacksC(cmdline string, top *Interface, slots []*CallbackSlot, allCallbackIfaces []*Interface, infoIfaces []*Interface) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by comgen. DO NOT EDIT.\n// %s\n\n#include \"object.h\"\n#include \"guard.h\"\n#include \"_cgo_export.h\"\n\n", cmdline)
	self := top.Name + " *self"
	fmt.Fprintf(&b, "static HRESULT STDMETHODCALLTYPE clrprof_cb_QueryInterface(%s, REFIID riid, void **ppv) {\n    return clrprof_QueryInterface(self, riid, ppv);\n}\n", self)
	fmt.Fprintf(&b, "static ULONG STDMETHODCALLTYPE clrprof_cb_AddRef(%s) {\n    return clrprof_AddRef(self);\n}\n", self)
	fmt.Fprintf(&b, "static ULONG STDMETHODCALLTYPE clrprof_cb_Release(%s) {\n    return clrprof_Release(self);\n}\n\n", self)
	for _, s := range slots {
		m := s.Plan.M
		var args []string
		for _, pp := range s.Plan.Params {
			if pp.T.Indirections() > 0 || pp.P.Type.Indirections() > 0 {
				args = append(args, "(void *)"+pp.P.Name)
			} else {
				args = append(args, pp.P.Name)
			}
		}
		fmt.Fprintf(&b, "static HRESULT STDMETHODCALLTYPE clrprof_cb_%s(%s) {\n", m.Name, cParams(m.Params, self))
		fmt.Fprintf(&b, "    if (!clrprof_impl[CLRPROF_CB_%s]) return S_OK;\n", m.Name)
		b.WriteString("    clrprof_guard g;\n    clrprof_go_enter(&g);\n")
		fmt.Fprintf(&b, "    HRESULT hr = %s(((clrprof_object *)self)->handle%s);\n", exportName(m), prefixComma(strings.Join(args, ", ")))
		b.WriteString("    clrprof_go_leave(&g);\n    return hr;\n}\n")
	}
	fmt.Fprintf(&b, "\nconst %sVtbl clrprof_callback_vtbl = {\n", top.Name)
	b.WriteString("    clrprof_cb_QueryInterface,\n    clrprof_cb_AddRef,\n    clrprof_cb_Release,\n")
	for _, s := range slots {
		fmt.Fprintf(&b, "    clrprof_cb_%s,\n", s.Plan.M.Name)
	}
	b.WriteString("};\n\n")
	writeIIDTable(&b, "clrprof_callback_iids", allCallbackIfaces)
	writeIIDTable(&b, "clrprof_info_iids", infoIfaces)
	return []byte(b.String())
}

func writeIIDTable(b *strings.Builder, name string, ifaces []*Interface) {
	fmt.Fprintf(b, "const GUID %s[] = {\n", name)
	for _, it := range ifaces {
		u := it.IID
		fmt.Fprintf(b, "    {0x%02x%02x%02x%02x, 0x%02x%02x, 0x%02x%02x, {0x%02x, 0x%02x, 0x%02x, 0x%02x, 0x%02x, 0x%02x, 0x%02x, 0x%02x}}, // %s\n",
			u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15], it.Name)
	}
	fmt.Fprintf(b, "};\nconst int %s_count = %d;\n\n", strings.TrimSuffix(name, "s"), len(ifaces))
}

// callbackDoc is the doc of a callback interface method: the project's
// words from idl/docs.txt, the meaning of each result, the runtime that
// brings it and the runtime's name.
func callbackDoc(d *Docs, s *CallbackSlot) string {
	key := s.Iface.Name + "." + s.Plan.M.Name
	var parts []string
	if t := d.text(key); t != "" {
		parts = append(parts, s.Plan.M.Name+" "+t)
	} else {
		parts = append(parts, fmt.Sprintf("The runtime calls %s for the event its name says.", s.Plan.M.Name))
	}
	for _, o := range s.Plan.Outputs {
		n := ParamName(o.P.Name)
		if t := d.text(key + "." + o.P.Name); t != "" {
			parts = append(parts, fmt.Sprintf("Return %s: %s.", n, t))
		} else {
			parts = append(parts, fmt.Sprintf("Return %s is the runtime's %s.", n, o.P.Name))
		}
	}
	if s.Version > 1 {
		if since := d.since(s.Iface.Name); since != "" {
			parts = append(parts, fmt.Sprintf("Only a profiler that implements Callback%d gets it (%s).", s.Version, since))
		}
	}
	parts = append(parts, "A non-nil error is returned to the runtime as its HRESULT (E_FAIL unless it wraps one).")
	return wrap(strings.Join(parts, " ")) + "\n\n" + fmt.Sprintf("It is %s::%s.", s.Iface.Name, s.Plan.M.Name)
}

// baseDoc is the doc of Base's no-op form of a callback.
func baseDoc(d *Docs, s *CallbackSlot) string {
	name := s.Plan.M.Name
	if len(s.Plan.Outputs) > 0 && s.Special == "" {
		var ns []string
		for _, o := range s.Plan.Outputs {
			ns = append(ns, ParamName(o.P.Name))
		}
		r := strings.Join(ns, ", ")
		return wrap(fmt.Sprintf("%s is the no-op form. When a profiler does not declare %s itself, the C shim answers the runtime S_OK without entering Go and leaves %s at the runtime's default; this Go method, reached only by calling it, returns the zero %s and nil (%s::%s).",
			name, name, r, r, s.Iface.Name, name))
	}
	return wrap(fmt.Sprintf("%s does nothing and returns nil. When a profiler does not declare %s itself, the C shim answers the runtime S_OK without entering Go (%s::%s).",
		name, name, s.Iface.Name, name))
}
