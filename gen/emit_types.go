package gen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/dave/jennifer/jen"
)

const enumfmtPkg = "github.com/clrprof/clrprof/internal/enumfmt"

// isFlagEnum reports whether an enum is a set of bit flags: at least three
// single-bit values, and every value zero, a single bit, or a union of the
// single bits present.
func isFlagEnum(e *Enum) bool {
	var all uint64
	single := 0
	for _, v := range e.Values {
		if v.Value > 0 && bits.OnesCount64(uint64(v.Value)) == 1 {
			all |= uint64(v.Value)
			single++
		}
	}
	if single < 3 {
		return false
	}
	// Mostly single bits, the rest combinations of them; a combination may
	// carry a bit no single value names (COR_PRF_MONITOR_REMOTING_COOKIE is
	// 0x4000 with MONITOR_REMOTING) as long as such values are rare.
	multi, foreign := 0, 0
	for _, v := range e.Values {
		if v.Value < 0 || strings.Contains(strings.ToLower(v.Name), "mask") {
			// A mask means multi-bit fields (tdVisibilityMask: 3 is
			// tdNestedPrivate, not tdPublic|tdNestedPublic).
			return false
		}
		if v.Value > 0 && bits.OnesCount64(uint64(v.Value)) > 1 {
			multi++
			if uint64(v.Value)&^all != 0 {
				foreign++
			}
		}
	}
	return foreign == 0 || foreign*4 <= single && multi <= single
}

// emitEnums writes each enum as a named Go type with typed constants and a
// String method. It returns an error on Go name collisions.
func emitEnums(f *jen.File, tm *TypeMapper, enums []*Enum, used map[string]string) error {
	for _, e := range enums {
		goType := tm.goTypeName(e.Name)
		if prev, ok := used[goType]; ok {
			return errorf(e.Pos, "Go name %s of enum %s collides with %s", goType, e.Name, prev)
		}
		used[goType] = e.Name
		basic := enumBasic(e)
		flagsEnum := isFlagEnum(e) && !tm.ValueEnums[e.Name]
		kind := "a set of flags: combine them with |; String names each"
		if !flagsEnum {
			kind = "one value of a list; String names it"
		}
		if t := tm.Docs.text(e.Name); t != "" {
			commentLines(f, wrap(goType+" "+t))
			f.Comment("")
		}
		commentLines(f, wrap(fmt.Sprintf("%s is the runtime's %s, %s.", goType, e.Name, kind)))
		f.Type().Id(goType).Id(basic)
		var consts []jen.Code
		var names []jen.Code
		seenVal := map[int64]bool{}
		for _, v := range e.Values {
			gn := tm.goTypeName(v.Name)
			if prev, ok := used[gn]; ok {
				gn = goType + gn
				if prev2, ok := used[gn]; ok {
					return errorf(v.Pos, "Go name %s of %s collides with %s and %s", gn, v.Name, prev, prev2)
				}
			}
			used[gn] = v.Name
			var val *jen.Statement
			if basic == "uint32" {
				val = jen.Lit(int(uint32(v.Value)))
			} else {
				val = jen.Lit(int(int32(v.Value)))
			}
			consts = append(consts, lineComments(constDoc(tm.Docs, gn, goType, v, flagsEnum))...)
			consts = append(consts, jen.Id(gn).Id(goType).Op("=").Add(val))
			if !seenVal[v.Value] {
				seenVal[v.Value] = true
				names = append(names, jen.Values(jen.Dict{jen.Id("V"): jen.Lit(uint64(uint32(v.Value))), jen.Id("N"): jen.Lit(gn)}))
			}
		}
		f.Const().Defs(consts...)
		f.Line()
		flags := flagsEnum
		tbl := "names" + goType
		f.Var().Id(tbl).Op("=").Index().Qual(enumfmtPkg, "Name").Values(names...)
		f.Commentf("String returns the constant's Go name%s.", map[bool]string{true: ", or the names of its flags joined by |", false: ""}[flags])
		f.Func().Params(jen.Id("v").Id(goType)).Id("String").Params().String().Block(
			jen.Return(jen.Qual(enumfmtPkg, "Format").Call(jen.Uint64().Call(jen.Uint32().Call(jen.Id("v"))), jen.Id(tbl), jen.Lit(flags), jen.Lit(goType))))
		f.Line()
	}
	return nil
}

// emitIDs writes the named scalar types (FunctionID and friends).
func emitIDs(f *jen.File, tm *TypeMapper, tds []*Typedef, used map[string]string) error {
	for _, td := range tds {
		if !tm.IDs[td.Name] {
			continue
		}
		goName := tm.goTypeName(td.Name)
		if prev, ok := used[goName]; ok {
			return errorf(td.Pos, "Go name %s of %s collides with %s", goName, td.Name, prev)
		}
		used[goName] = td.Name
		basic := basicNumbers[tm.U.Resolve(TypeRef{Name: td.Name}).Name]
		if basic == "" {
			basic = "uintptr" // a pointer typedef (pointerIDs)
		}
		f.Commentf("%s is the runtime's %s (%s).", goName, td.Name, td.Type.Name)
		f.Type().Id(goName).Id(basic)
	}
	f.Line()
	return nil
}

// structFieldType maps a C struct field to a layout-identical Go type.
func structFieldType(tm *TypeMapper, t TypeRef) *jen.Statement {
	nt := tm.Norm(t)
	var base *jen.Statement
	if nt.Ptr > 0 {
		base = tm.addressInfo("void").Code()
	} else {
		ti := tm.Info(nt.Name)
		switch ti.Kind {
		case KindBool:
			base = jen.Int32()
		case KindGUID:
			base = jen.Qual(cgoutilPkg, "GUID")
		case KindIface, KindFunc, KindUnknown, KindVoid:
			base = tm.addressInfo(nt.Name).Code()
		default:
			base = ti.Code()
		}
	}
	if nt.Array {
		return jen.Index(jen.Id(nt.ArrayLen)).Add(base)
	}
	return base
}

// emitStructs writes layout-identical Go mirrors of C structs, each with a
// compile-time check that its size equals the C size. Structs named in
// aliases are declared by package metadata (corprof.idl repeats cor.h's) and
// become aliases of its mirror, so each C struct has one Go type (the caller
// leaves out of aliases the structs package metadata does not export).
//
// The checks need cgo: they go to checkFile, which may be f itself or a
// separate cgo file so that f builds without cgo.
func emitStructs(f, checkFile *jen.File, tm *TypeMapper, structs []*Struct, used map[string]string, aliases map[string]bool) error {
	var checks []jen.Code
	for _, s := range structs {
		if s.Union || s.Name == "" {
			continue
		}
		goName := tm.goTypeName(s.Name)
		if prev, ok := used[goName]; ok {
			return errorf(s.Pos, "Go name %s of struct %s collides with %s", goName, s.Name, prev)
		}
		used[goName] = s.Name
		if aliases[s.Name] {
			f.Commentf("%s is the C struct %s, as package metadata declares it.", goName, s.Name)
			f.Type().Id(goName).Op("=").Qual(tokenPkg, tm.exportedTypeName(s.Name))
			f.Line()
		} else {
			var fields []jen.Code
			names := structFieldNames(s.Fields)
			for i, fl := range s.Fields {
				typ := structFieldType(tm, fl.Type)
				if lengthField(tm, fl) {
					typ = jen.Uint64()
				}
				fd := fmt.Sprintf("%s is the runtime's %s.%s (%s).", names[i], s.Name, fl.Name, cTypeString(fl.Type))
				if t := tm.Docs.text(s.Name + "." + fl.Name); t != "" {
					fd = names[i] + " " + t + " (" + s.Name + "." + fl.Name + ")."
				}
				fields = append(fields, lineComments(wrap(fd))...)
				fields = append(fields, jen.Id(names[i]).Add(typ))
			}
			if t := tm.Docs.text(s.Name); t != "" {
				commentLines(f, wrap(goName+" "+t))
				f.Comment("")
			}
			f.Commentf("%s mirrors the C struct %s, field by field.", goName, s.Name)
			f.Type().Id(goName).Struct(fields...)
			f.Line()
		}
		checks = append(checks, jen.Id("_").Op("=").Index(jen.Lit(1)).Struct().Values().Index(
			jen.Qual("unsafe", "Sizeof").Call(jen.Qual("C", s.Name).Values()).Op("-").Qual("unsafe", "Sizeof").Call(jen.Id(goName).Values())))
		checks = append(checks, jen.Id("_").Op("=").Index(jen.Lit(1)).Struct().Values().Index(
			jen.Qual("unsafe", "Sizeof").Call(jen.Id(goName).Values()).Op("-").Qual("unsafe", "Sizeof").Call(jen.Qual("C", s.Name).Values())))
	}
	if len(checks) > 0 {
		checkFile.Comment("The Go mirrors of the C structs must have exactly the size of their C")
		checkFile.Comment("structs; a mismatch is a compile error here.")
		checkFile.Func().Id("_").Params().Block(checks...)
	}
	return nil
}

// emitIIDs writes one uuid.UUID variable per interface.
func emitIIDs(f *jen.File, ifaces []*Interface) {
	var defs []jen.Code
	for _, it := range ifaces {
		var vals []jen.Code
		for _, b := range it.IID {
			vals = append(vals, jen.Lit(int(b)))
		}
		name := "IID" + InterfaceGoName(it.Name)
		defs = append(defs, jen.Comment(fmt.Sprintf("%s is the IID of %s, %s.", name, it.Name, it.IID)),
			jen.Id(name).Op("=").Qual(uuidPkg, "UUID").Values(vals...))
	}
	f.Var().Defs(defs...)
	f.Line()
}

// structFieldNames names a struct's fields as ResultName names results
// (without the Hungarian prefix: ulOffset → Offset, szLocale → Locale); a
// count or byte length whose name would then collide with its data's gets
// the suffix Len (cbLocale → LocaleLen, ulOS → OSLen).
func structFieldNames(fields []*Field) []string {
	names := make([]string, len(fields))
	seen := map[string]int{}
	for i, fl := range fields {
		names[i] = ResultName(fl.Name)
		seen[names[i]]++
	}
	for i, fl := range fields {
		if seen[names[i]] < 2 {
			continue
		}
		for _, pre := range []string{"cb", "cch", "ul", "c"} {
			if rest, ok := strings.CutPrefix(fl.Name, pre); ok && rest != "" && rest[0] >= 'A' && rest[0] <= 'Z' {
				names[i] += "Len"
				break
			}
		}
	}
	return names
}

// lengthField reports a length the C struct keeps in a pointer-sized
// integer (UINT_PTR rangeLength): a number of bytes, not an address, so a
// uint64 (the same size on the 64-bit platforms the SDK runs on; the
// generated size checks hold it to that).
func lengthField(tm *TypeMapper, fl *Field) bool {
	nt := tm.Norm(fl.Type)
	return nt.Ptr == 0 && !nt.Array && tm.Info(nt.Name).Kind == KindAddr && strings.Contains(strings.ToLower(fl.Name), "length")
}

// constDoc is the doc of an enum constant: the project's words when
// idl/docs.txt has them, and always the runtime's name and value.
func constDoc(d *Docs, gn, goType string, v *EnumValue, flags bool) string {
	what := "a value"
	if flags {
		what = "a flag"
		if x := uint64(uint32(v.Value)); x == 0 {
			what = "no flag: the empty set"
		} else if x&(x-1) != 0 {
			what = "a combination of flags"
		}
	}
	fact := fmt.Sprintf("%s is the runtime's %s (%#x), %s of %s.", gn, v.Name, uint32(v.Value), what, goType)
	if t := d.text(v.Name); t != "" {
		return wrap(gn + " " + t + " " + fact)
	}
	return wrap(fact)
}
