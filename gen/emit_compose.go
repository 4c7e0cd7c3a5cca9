package gen

import (
	"fmt"

	"github.com/dave/jennifer/jen"
)

// composeHandWritten are callbacks whose fan-out compose.go writes by hand:
// the SDK keeps per-Info caches up to date in them for every member.
var composeHandWritten = map[string]bool{
	"ModuleUnloadStarted": true,
	"ClassLoadFinished":   true,
	"ClassUnloadStarted":  true,
}

// emitComposeGo writes the fan-out of package profiler's Composite: one
// method per callback (the special ones, Initialize, InitializeForAttach,
// Shutdown and ProfilerDetachSucceeded, are hand-written in compose.go)
// that calls, in order, every member that implements the callback and whose
// event mask asks for it, each under its own recover. A bool the callback
// answers is the AND of the members' answers (true when none answers), with
// no error as soon as one member answered; otherwise the error is the first
// member's error.
func emitComposeGo(f *jen.File, slots []*CallbackSlot) error {
	for _, s := range slots {
		if s.Special != "" || composeHandWritten[s.Plan.M.Name] {
			continue
		}
		m := s.Plan.M
		for _, out := range s.Plan.Outputs {
			if out.Elem.Kind != KindBool {
				return fmt.Errorf("compose: %s.%s: output %s is not a bool: no rule combines two answers", s.Iface.Name, m.Name, out.P.Name)
			}
		}
		var params, args []jen.Code
		for _, in := range s.Plan.Inputs {
			params = append(params, jen.Id(in.GoName).Add(goParamType(in, false)))
			args = append(args, jen.Id(in.GoName))
		}
		var results, init, vs []jen.Code
		for i, out := range s.Plan.Outputs {
			results = append(results, jen.Id(fmt.Sprintf("r%d", i)).Add(goResultType(out)))
			init = append(init, jen.Id(fmt.Sprintf("r%d", i)).Op("=").True())
			vs = append(vs, jen.Id(fmt.Sprintf("v%d", i)))
		}
		results = append(results, jen.Id("err").Error())
		cb := jen.Id("m").Dot("cbs").Dot(fmt.Sprintf("cb%d", s.Version))
		var inner []jen.Code
		inner = append(inner, jen.Defer().Id("c").Dot("recoverMember").Call(jen.Id("i"), jen.Lit(m.Name), jen.Op("&").Id("err")))
		fail := jen.Id("c").Dot("fail").Call(jen.Id("i"), jen.Lit(m.Name), jen.Id("e"), jen.Op("&").Id("err"))
		if len(vs) == 0 {
			inner = append(inner, jen.If(jen.Id("e").Op(":=").Add(cb.Clone().Dot(m.Name).Call(args...)), jen.Id("e").Op("!=").Nil()).Block(fail))
		} else {
			lhs := append(append([]jen.Code{}, vs...), jen.Id("e"))
			inner = append(inner, jen.List(lhs...).Op(":=").Add(cb.Clone().Dot(m.Name).Call(args...)))
			inner = append(inner, jen.If(jen.Id("e").Op("!=").Nil()).Block(fail, jen.Return()))
			for i := range vs {
				r := jen.Id(fmt.Sprintf("r%d", i))
				inner = append(inner, r.Clone().Op("=").Add(r.Clone()).Op("&&").Id(fmt.Sprintf("v%d", i)))
			}
			inner = append(inner, jen.Id("answered").Op("=").True())
		}
		body := append([]jen.Code{}, init...)
		if len(vs) > 0 {
			body = append(body, jen.Id("answered").Op(":=").False())
		}
		body = append(body, jen.For(jen.Id("i").Op(":=").Range().Id("c").Dot("members")).Block(
			jen.Id("m").Op(":=").Op("&").Id("c").Dot("members").Index(jen.Id("i")),
			jen.If(cb.Clone().Op("==").Nil().Op("||").Op("!").Id("c").Dot("deliver").Call(jen.Id("i"), jen.Lit(s.Index))).Block(jen.Continue()),
			jen.Func().Params().Block(inner...).Call(),
		))
		if len(vs) > 0 {
			// One member's answer is the answer: the runtime ignores
			// the bool of a failed callback.
			body = append(body, jen.If(jen.Id("answered")).Block(jen.Id("err").Op("=").Nil()))
		}
		body = append(body, jen.Return())
		f.Commentf("%s delivers %s::%s to the members (see Compose).", m.Name, s.Iface.Name, m.Name)
		f.Func().Params(jen.Id("c").Op("*").Id("Composite")).Id(m.Name).Params(params...).Params(results...).Block(body...)
		f.Line()
	}
	return nil
}
