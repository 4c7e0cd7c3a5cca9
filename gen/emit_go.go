package gen

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

const (
	cgoutilPkg = "github.com/clrprof/clrprof/internal/cgoutil"
	uuidPkg    = "github.com/google/uuid"
)

// cType is the cgo reference to a C type name (C.FunctionID, C.ULONG).
func cType(name string) *jen.Statement {
	switch name {
	case "int":
		return jen.Qual("C", "int")
	case "unsigned int", "unsigned", "unsigned long":
		return jen.Qual("C", "uint")
	case "void":
		return jen.Qual("unsafe", "Pointer")
	}
	return jen.Qual("C", strings.ReplaceAll(name, " ", "_"))
}

// cPointee is the cgo type that a pointer parameter of depth ind-1 holds:
// for T** it is *C.T, for void** it is unsafe.Pointer.
func cPointee(t TypeRef) *jen.Statement {
	ind := t.Indirections()
	if t.Name == "void" {
		if ind <= 1 {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Op(strings.Repeat("*", ind-2)).Qual("unsafe", "Pointer")
	}
	return jen.Op(strings.Repeat("*", ind-1)).Add(cType(t.Name))
}

// declaredCType is the cgo type of a parameter exactly as the C thunk
// declares it (typedef names kept), so arguments can be converted to it.
func declaredCType(p *Param) *jen.Statement {
	ind := p.Type.Indirections()
	if p.Type.Name == "void" {
		if ind <= 1 {
			return jen.Qual("unsafe", "Pointer")
		}
		return jen.Op(strings.Repeat("*", ind-1)).Qual("unsafe", "Pointer")
	}
	return jen.Op(strings.Repeat("*", ind)).Add(cType(p.Type.Name))
}

// asDeclared converts a pointer-valued expression to the declared C type.
func asDeclared(p *Param, expr jen.Code) *jen.Statement {
	return jen.Parens(declaredCType(p)).Call(jen.Qual("unsafe", "Pointer").Call(expr))
}

// goElemType is the Go type of the pointed-to element for slices and results.
func goElemType(pp *PlannedParam) *jen.Statement {
	if pp.Elem.Kind == KindIface {
		return jen.Op("*").Id(pp.Elem.GoName)
	}
	if pp.Elem.Kind == KindVoid {
		return jen.Uintptr()
	}
	return pp.Elem.Code()
}

// wrapIface wraps the raw interface pointer p in its Go wrapper, owning the
// reference (results of calls) or borrowing it (callback arguments).
func wrapIface(pp *PlannedParam, owned bool, p jen.Code) *jen.Statement {
	name := ifaceGoName(pp)
	if name == "Unknown" {
		if owned {
			return jen.Qual(comPkg, "OwnUnknown").Call(p)
		}
		return jen.Qual(comPkg, "BorrowUnknown").Call(p)
	}
	if owned {
		return jen.Id("own" + name).Call(p)
	}
	return jen.Id("borrow" + name).Call(p)
}

// fromC converts a cgo value v of the element type to its Go form.
func fromC(pp *PlannedParam, v *jen.Statement, owned bool) *jen.Statement {
	switch pp.Elem.Kind {
	case KindBool:
		return v.Op("!=").Lit(0)
	case KindGUID:
		return jen.Qual(cgoutilPkg, "FromGUID").Call(jen.Op("*").Parens(jen.Op("*").Qual(cgoutilPkg, "GUID")).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Add(v))))
	case KindStruct:
		return jen.Op("*").Parens(jen.Op("*").Id(pp.Elem.GoName)).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Add(v)))
	case KindIface:
		return wrapIface(pp, owned, jen.Qual("unsafe", "Pointer").Call(v))
	case KindVoid:
		return jen.Uintptr().Call(v)
	case KindID:
		if pp.Elem.PtrTypedef {
			return pp.Elem.Code().Call(jen.Qual("unsafe", "Pointer").Call(v))
		}
	case KindAddr:
		if pp.T.Indirections() >= 2 {
			return pp.Elem.Code().Call(jen.Qual("unsafe", "Pointer").Call(v))
		}
	}
	return pp.Elem.Code().Call(v)
}

// toC converts a Go value to the cgo scalar type named cname.
func toC(ti TypeInfo, cname string, v *jen.Statement) *jen.Statement {
	if ti.Kind == KindBool {
		return cType(cname).Call(jen.Qual(cgoutilPkg, "Bool").Call(v))
	}
	if ti.PtrTypedef {
		return jen.Op("*").Parens(jen.Op("*").Add(cType(cname))).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Add(v)))
	}
	return cType(cname).Call(v)
}

// goParamType is the Go type of an input parameter in a wrapper (toC=true) or
// a callback (toC=false).
func goParamType(pp *PlannedParam, wrapper bool) *jen.Statement {
	switch pp.Role {
	case RoleIn:
		return pp.Elem.Code()
	case RoleInGUID:
		return jen.Qual(uuidPkg, "UUID")
	case RoleInString, RoleInWString:
		return jen.String()
	case RoleInSlice:
		return jen.Index().Add(pp.Elem.Code())
	case RoleInBytes:
		return jen.Index().Byte()
	case RoleInIface:
		return jen.Op("*").Id(ifaceGoName(pp))
	case RoleInAddr:
		return pp.Elem.Code()
	case RoleEnumHandle:
		if pp.T.Indirections() == 0 {
			return jen.Id("EnumHandle")
		}
		return jen.Op("*").Id("EnumHandle")
	}
	if wrapper || pp.P.Type.Indirections() == 0 && pp.T.Indirections() == 0 {
		if !wrapper {
			return jen.Uintptr()
		}
		return jen.Qual("unsafe", "Pointer")
	}
	// A pointer the runtime hands a callback: an address in its memory.
	return jen.Id("Address") // callbacks live in package profiler
}

func ifaceGoName(pp *PlannedParam) string {
	if pp.Elem.GoName == "" {
		return "Unknown"
	}
	return pp.Elem.GoName
}

// goResultType is the Go type of an output.
func goResultType(pp *PlannedParam) *jen.Statement {
	switch pp.Role {
	case RoleOutString:
		return jen.String()
	case RoleOutSlice:
		return jen.Index().Add(goElemType(pp))
	case RoleOutBlob:
		return jen.Index().Byte()
	}
	return goElemType(pp)
}

// WrapperOpts parameterises emitWrapperMethod.
type WrapperOpts struct {
	Recv       string         // receiver type name
	Self       *jen.Statement // expression of the C interface pointer (unsafe.Pointer)
	Guard      []jen.Code     // statements before the call (availability checks)
	CIface     string         // C interface type that declares the method
	Thunk      string         // C thunk name
	ResultName string         // name of the result struct type, when several outputs
	Doc        string
	// Partial: on CORPROF_E_DATAINCOMPLETE the outputs the runtime did fill
	// are returned together with the error (the profiling API's "part of
	// the answer is not known yet", as inside ModuleLoadStarted).
	Partial bool
}

// dataIncomplete is CORPROF_E_DATAINCOMPLETE.
const dataIncomplete = -2146233519

// emitWrapperMethod emits an exported Go method that calls a COM method
// through its C thunk and maps parameters according to the plan.
func emitWrapperMethod(f *jen.File, pl *Plan, o WrapperOpts) {
	hresult := pl.M.Ret.Name == "HRESULT" && pl.M.Ret.Ptr == 0
	var params []jen.Code
	for _, in := range pl.Inputs {
		params = append(params, jen.Id(in.GoName).Add(goParamType(in, true)))
	}
	var results []jen.Code
	var zero *jen.Statement
	multi := len(pl.Outputs) > 1
	switch {
	case multi:
		results = append(results, jen.Id(o.ResultName))
		zero = jen.Id("res")
	case len(pl.Outputs) == 1:
		results = append(results, goResultType(pl.Outputs[0]))
		zero = jen.Id("res")
	}
	var retInfo TypeInfo
	if !hresult && pl.M.Ret.Name != "void" {
		retInfo = pl.Addr
		if pl.M.Ret.Ptr == 0 {
			// BOOL, ULONG and friends
			retInfo = TypeInfoFor(pl.M.Ret.Name)
		}
	}
	sfalse := hresult && pl.SFalse
	if sfalse {
		results = append(results, jen.Bool())
	}
	if hresult {
		results = append(results, jen.Error())
	} else if pl.M.Ret.Name != "void" && len(pl.Outputs) == 0 {
		results = append(results, retInfo.Code())
	}
	retList := func(zero *jen.Statement, err *jen.Statement) []jen.Code {
		var l []jen.Code
		if zero != nil {
			l = append(l, zero)
		}
		if sfalse {
			if err.GoString() == "nil" {
				l = append(l, jen.Id("hr").Op("==").Lit(0))
			} else {
				l = append(l, jen.False())
			}
		}
		return append(l, err)
	}

	var body []jen.Code
	if zero != nil {
		if multi {
			body = append(body, jen.Var().Id("res").Id(o.ResultName))
		} else {
			body = append(body, jen.Var().Id("res").Add(goResultType(pl.Outputs[0])))
		}
	}
	body = append(body, o.Guard...)
	// Input preparation.
	var args []jen.Code
	args = append(args, jen.Parens(jen.Op("*").Qual("C", o.CIface)).Call(o.Self))
	var bufs []*PlannedParam
	for _, pp := range pl.Params {
		name := LocalName(pp.P.Name)
		switch pp.Role {
		case RoleIn:
			if pp.Elem.Kind == KindFunc {
				// A function type passed by value is a C function pointer.
				if pp.Elem.Func != nil && pp.Elem.Func.Pointer {
					args = append(args, jen.Parens(jen.Op("*").Index(jen.Lit(0)).Byte()).Call(jen.Id(pp.GoName)))
				} else {
					args = append(args, jen.Parens(jen.Op("*").Add(cType(pp.T.Name))).Call(jen.Id(pp.GoName)))
				}
				break
			}
			args = append(args, toC(pp.Elem, pp.T.Name, jen.Id(pp.GoName)))
		case RoleInGUID:
			body = append(body, jen.Id("g_"+name).Op(":=").Qual(cgoutilPkg, "ToGUID").Call(jen.Id(pp.GoName)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("g_"+name)))
		case RoleInString:
			body = append(body, jen.Id("s_"+name).Op(":=").Qual(cgoutilPkg, "EncodeUTF16Z").Call(jen.Id(pp.GoName)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("s_"+name).Index(jen.Lit(0))))
		case RoleInWString:
			body = append(body, jen.Id("s_"+name).Op(":=").Qual(cgoutilPkg, "EncodeUTF16").Call(jen.Id(pp.GoName)))
			args = append(args, asDeclared(pp.P, jen.Qual("unsafe", "SliceData").Call(jen.Id("s_"+name))))
		case RoleInSlice, RoleInBytes:
			src := jen.Id(pp.GoName)
			if pp.Elem.Kind == KindBool {
				body = append(body, jen.Id("b_"+name).Op(":=").Make(jen.Index().Int32(), jen.Len(jen.Id(pp.GoName))),
					jen.For(jen.List(jen.Id("i"), jen.Id("v")).Op(":=").Range().Id(pp.GoName)).Block(
						jen.Id("b_"+name).Index(jen.Id("i")).Op("=").Qual(cgoutilPkg, "Bool").Call(jen.Id("v"))))
				src = jen.Id("b_" + name)
			}
			args = append(args, asDeclared(pp.P, jen.Qual("unsafe", "SliceData").Call(src)))
		case RoleInIface:
			args = append(args, asDeclared(pp.P, jen.Id(pp.GoName).Dot("Raw").Call()))
		case RoleInAddr:
			// The address's bits, reinterpreted as the C pointer they are
			// (runtime memory, never Go memory).
			args = append(args, jen.Op("*").Parens(jen.Op("*").Add(declaredCType(pp.P))).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id(pp.GoName))))
		case RoleHidden:
			if pp.P.Type.Indirections() > 0 || pp.T.Indirections() > 0 {
				args = append(args, jen.Nil())
			} else {
				args = append(args, cType(pp.T.Name).Call(jen.Lit(0)))
			}
		case RoleEnumHandle:
			if pp.T.Indirections() == 0 {
				// The handle's bits, reinterpreted as the C pointer they are.
				args = append(args, jen.Op("*").Parens(jen.Op("*").Add(cType(pp.T.Name))).Call(jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id(pp.GoName))))
				break
			}
			args = append(args, asDeclared(pp.P, jen.Id(pp.GoName)))
		case RoleInPtr, RoleRaw:
			if pp.T.Indirections() == 0 {
				args = append(args, jen.Op("*").Parens(jen.Op("*").Add(cType(pp.T.Name))).Call(jen.Id(pp.GoName)))
			} else {
				args = append(args, asDeclared(pp.P, jen.Id(pp.GoName)))
			}
		case RoleCount:
			// The count of an in slice, or the capacity of an out buffer.
			owner := countOwner(pl, pp)
			if owner == nil {
				args = append(args, cType(pp.T.Name).Call(jen.Lit(0)))
				break
			}
			src := jen.Id(owner.GoName)
			switch owner.Role {
			case RoleInWString:
				src = jen.Id("s_" + LocalName(owner.P.Name))
			case RoleOutString, RoleOutSlice:
				src = jen.Id("b_" + LocalName(owner.P.Name))
			}
			args = append(args, cType(pp.T.Name).Call(jen.Len(src)))
		case RoleOut:
			body = append(body, jen.Var().Id("o_"+name).Add(cPointee(pp.T)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("o_"+name)))
		case RoleOutString, RoleOutSlice:
			elem := jen.Uint16()
			initial := 256
			if pp.Role == RoleOutSlice {
				elem = goElemType(pp)
				initial = 32
			}
			body = append(body, jen.Id("b_"+name).Op(":=").Make(jen.Index().Add(elem), jen.Lit(initial)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("b_"+name).Index(jen.Lit(0))))
			bufs = append(bufs, pp)
		case RoleOutLen, RoleOutBlobLen:
			body = append(body, jen.Var().Id("l_"+name).Add(cPointee(pp.T)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("l_"+name)))
		case RoleOutBlob:
			body = append(body, jen.Var().Id("o_"+name).Add(cPointee(pp.T)))
			args = append(args, asDeclared(pp.P, jen.Op("&").Id("o_"+name)))
		}
	}
	call := jen.Qual("C", o.Thunk).Call(args...)
	switch {
	case hresult && len(bufs) > 0:
		// Fill caller-sized buffers, growing them when the runtime reports
		// a larger length (at most twice).
		var grow []jen.Code
		var cond jen.Code
		for _, b := range bufs {
			n := LocalName(b.P.Name)
			l := "l_" + LocalName(b.Len.P.Name)
			c := jen.Int().Call(jen.Id(l)).Op(">").Len(jen.Id("b_" + n))
			if cond == nil {
				cond = c
			} else {
				cond = jen.Add(cond).Op("||").Add(c)
			}
			grow = append(grow, jen.If(jen.Int().Call(jen.Id(l)).Op(">").Len(jen.Id("b_"+n))).Block(
				jen.Id("b_"+n).Op("=").Make(jen.Index().Add(goBufElem(b)), jen.Int().Call(jen.Id(l)))))
		}
		retryable := jen.Id("hr").Op(">=").Lit(0).Op("||").Id("hr").Op("==").Qual(comPkg, "InsufficientBuffer")
		if o.Partial {
			retryable = retryable.Op("||").Id("hr").Op("==").Lit(dataIncomplete)
		}
		body = append(body, jen.Var().Id("hr").Qual("C", "HRESULT"),
			jen.For(jen.Id("attempt").Op(":=").Lit(0), jen.Empty(), jen.Id("attempt").Op("++")).Block(
				append([]jen.Code{
					jen.Id("hr").Op("=").Add(call),
					jen.If(jen.Id("attempt").Op("==").Lit(2).Op("||").Op("!").Parens(retryable).Op("||").Op("!").Parens(cond)).Block(jen.Break()),
				}, grow...)...,
			))
	case hresult:
		body = append(body, jen.Id("hr").Op(":=").Add(call))
	case pl.M.Ret.Name == "void":
		body = append(body, call)
	default:
		body = append(body, jen.Id("ret").Op(":=").Add(call))
	}
	partial := hresult && o.Partial && len(pl.Outputs) > 0
	if partial {
		body = append(body, jen.If(jen.Id("hr").Op("<").Lit(0).Op("&&").Id("hr").Op("!=").Lit(dataIncomplete)).Block(
			jen.Return(retList(zero, jen.Qual(comPkg, "HRESULT").Call(jen.Id("hr")))...)))
	} else if hresult {
		body = append(body, jen.If(jen.Id("hr").Op("<").Lit(0)).Block(
			jen.Return(retList(zero, jen.Qual(comPkg, "HRESULT").Call(jen.Id("hr")))...)))
	}
	for _, out := range pl.Outputs {
		n := LocalName(out.P.Name)
		dst := jen.Id("res")
		if multi {
			dst = jen.Id("res").Dot(out.GoName)
		}
		var val *jen.Statement
		switch out.Role {
		case RoleOut:
			val = fromC(out, jen.Id("o_"+n), true)
		case RoleOutString:
			l := "l_" + LocalName(out.Len.P.Name)
			val = jen.Qual(cgoutilPkg, "DecodeUTF16").Call(jen.Id("b_"+n).Index(jen.Empty(), jen.Min(jen.Int().Call(jen.Id(l)), jen.Len(jen.Id("b_"+n)))))
		case RoleOutSlice:
			l := "l_" + LocalName(out.Len.P.Name)
			val = jen.Id("b_"+n).Index(jen.Empty(), jen.Min(jen.Int().Call(jen.Id(l)), jen.Len(jen.Id("b_"+n))))
		case RoleOutBlob:
			l := "l_" + LocalName(out.Len.P.Name)
			val = jen.Qual(cgoutilPkg, "Bytes").Call(jen.Qual("unsafe", "Pointer").Call(jen.Id("o_"+n)), jen.Int().Call(jen.Id(l)))
		}
		body = append(body, dst.Op("=").Add(val))
	}
	if partial {
		body = append(body, jen.If(jen.Id("hr").Op("<").Lit(0)).Block(
			jen.Return(retList(zero, jen.Qual(comPkg, "HRESULT").Call(jen.Id("hr")))...)))
	}
	switch {
	case hresult:
		body = append(body, jen.Return(retList(zero, jen.Nil())...))
	case len(pl.Outputs) > 0:
		body = append(body, jen.Return(jen.Id("res")))
	case pl.M.Ret.Name != "void":
		if retInfo.Kind == KindBool {
			body = append(body, jen.Return(jen.Id("ret").Op("!=").Lit(0)))
		} else if pl.M.Ret.Ptr > 0 {
			body = append(body, jen.Return(retInfo.Code().Call(jen.Qual("unsafe", "Pointer").Call(jen.Id("ret")))))
		} else {
			body = append(body, jen.Return(retInfo.Code().Call(jen.Id("ret"))))
		}
	}
	if o.Doc != "" {
		commentLines(f, o.Doc)
	}
	f.Func().Params(jen.Id("x").Op("*").Id(o.Recv)).Id(pl.GoName()).Params(params...).Params(results...).Block(body...)
	f.Line()
}

// emitForwarder writes a method of a derived wrapper that calls the same
// method of its embedded base through base(), keeping nil receivers safe.
func emitForwarder(f *jen.File, pl *Plan, recv, resultName, doc string) {
	var params, args []jen.Code
	for _, in := range pl.Inputs {
		params = append(params, jen.Id(in.GoName).Add(goParamType(in, true)))
		args = append(args, jen.Id(in.GoName))
	}
	var results []jen.Code
	switch {
	case len(pl.Outputs) > 1:
		results = append(results, jen.Id(resultName))
	case len(pl.Outputs) == 1:
		results = append(results, goResultType(pl.Outputs[0]))
	}
	hresult := pl.M.Ret.Name == "HRESULT" && pl.M.Ret.Ptr == 0
	if hresult && pl.SFalse {
		results = append(results, jen.Bool())
	}
	if hresult {
		results = append(results, jen.Error())
	} else if pl.M.Ret.Name != "void" && len(pl.Outputs) == 0 {
		if pl.M.Ret.Ptr > 0 {
			results = append(results, pl.Addr.Code())
		} else {
			results = append(results, TypeInfoFor(pl.M.Ret.Name).Code())
		}
	}
	call := jen.Id("x").Dot("base").Call().Dot(pl.GoName()).Call(args...)
	body := jen.Return(call)
	if len(results) == 0 {
		body = call
	}
	if doc != "" {
		commentLines(f, doc)
	}
	f.Func().Params(jen.Id("x").Op("*").Id(recv)).Id(pl.GoName()).Params(params...).Params(results...).Block(body)
}

func goBufElem(b *PlannedParam) *jen.Statement {
	if b.Role == RoleOutString {
		return jen.Uint16()
	}
	return goElemType(b)
}

// countOwner finds the slice or buffer whose count or capacity cp is.
func countOwner(pl *Plan, cp *PlannedParam) *PlannedParam {
	for _, pp := range pl.Params {
		if pp.Count == cp {
			return pp
		}
	}
	return nil
}

// TypeInfoFor maps a scalar return type name without a universe.
func TypeInfoFor(name string) TypeInfo {
	if name == "BOOL" {
		return TypeInfo{Kind: KindBool, CName: "BOOL"}
	}
	if name == "HRESULT" {
		return TypeInfo{Kind: KindHRESULT, GoName: "HRESULT"}
	}
	if b, ok := basicNumbers[name]; ok {
		return TypeInfo{Kind: KindNumber, GoName: b}
	}
	return TypeInfo{Kind: KindNumber, GoName: "uintptr"}
}

// thunkName is the C function that calls method m of interface it.
func thunkName(it *Interface, m *Method) string {
	return fmt.Sprintf("clrprof_%s_%s", it.Name, m.Name)
}

// CThunks renders static inline C functions that call each method of the
// given interfaces through its vtable (cgo cannot call function pointers).
func CThunks(cmdline, guard, header string, ifaces []*Interface) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "// Code generated by comgen. DO NOT EDIT.\n// %s\n\n#ifndef %s\n#define %s\n\n#include \"%s\"\n\n", cmdline, guard, guard, header)
	for _, it := range ifaces {
		for _, m := range it.Methods {
			ret := "return "
			if m.Ret.Name == "void" && m.Ret.Ptr == 0 {
				ret = ""
			}
			fmt.Fprintf(&b, "static inline %s %s(%s) {\n    %sself->lpVtbl->%s(self%s);\n}\n",
				cTypeString(m.Ret), thunkName(it, m), cParams(m.Params, it.Name+" *self"), ret, m.Name, prefixComma(cArgNames(m.Params)))
		}
	}
	fmt.Fprintf(&b, "\n#endif // %s\n", guard)
	return []byte(b.String())
}

func prefixComma(s string) string {
	if s == "" {
		return ""
	}
	return ", " + s
}
