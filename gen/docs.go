package gen

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/clrprof/clrprof/idl"
	"github.com/dave/jennifer/jen"
)

// methodDocs are the first lines of the docs of the methods a profiler
// author uses most, in the project's words (the generated line that names
// the COM method follows). Keyed by "Interface.Method".
var methodDocs = map[string]string{
	"ICorProfilerInfo2.GetFunctionInfo2": `GetFunctionInfo2 says which function a FunctionID is: its class, module,
MethodDef token and the type arguments of a generic method. For code
shared by several instantiations the runtime names the class only with
the frame info of an ELT hook (frameInfo 0 gives ClassID 0 for a shared
generic class); FunctionName and FunctionFullName format all this.`,
	"ICorProfilerInfo2.GetClassIDInfo2": `GetClassIDInfo2 says which class a ClassID is: its module, TypeDef
token, parent class and type arguments. Arrays have no TypeDef: ask
IsArrayClass first (ClassName does both).`,
	"ICorProfilerInfo.GetModuleMetaData": `GetModuleMetaData opens a module's metadata as the interface iid
(metadata.IIDImport2, ...). ModuleImport and ModuleEmit return the typed
readers and writers; prefer them.`,
	"ICorProfilerInfo.GetTokenAndMetaDataFromFunction": `GetTokenAndMetaDataFromFunction returns a function's MethodDef token and
its module's metadata as the interface iid; FunctionImport returns the
typed reader.`,
	"ICorProfilerInfo.GetFunctionFromIP": `GetFunctionFromIP returns the managed function whose native code holds
the instruction pointer ip; an error for an address outside managed code.`,
	"ICorProfilerInfo.GetCurrentThreadID": `GetCurrentThreadID returns the runtime's ID of the calling thread; an
error on a thread the runtime does not know (a goroutine's thread that
never ran managed code).`,
	"ICorProfilerInfo.GetClassFromObject": `GetClassFromObject returns the class of an object; valid while the
object does not move (inside the callback that reported it).`,
	"ICorProfilerInfo.GetEventMask": `GetEventMask returns the events the runtime reports to this profiler
(SetEventMask's low half).`,
	"ICorProfilerInfo4.GetObjectSize2": `GetObjectSize2 returns an object's size in bytes, arrays and strings
included.`,
	"ICorProfilerInfo2.GetCodeInfo2": `GetCodeInfo2 returns the native code ranges of a function's current
body (hot and cold parts).`,
	"ICorProfilerInfo.GetILFunctionBody": `GetILFunctionBody returns a copy of a method's IL, header included: the
body its first JIT compiles (the metadata's, or one installed with
SetILFunctionBody; never a ReJIT body). ilrw.Decode reads it.`,
	"ICorProfilerInfo.GetFunctionFromToken": `GetFunctionFromToken returns the FunctionID of a non-generic method
once the runtime has created it; generic methods need
GetFunctionFromTokenAndTypeArgs.`,
	"ICorProfilerInfo.GetClassFromToken": `GetClassFromToken returns the ClassID of a loaded non-generic TypeDef;
generic types need GetClassFromTokenAndTypeArgs (which loads the
instantiation if needed).`,
	"ICorProfilerInfo.GetAssemblyInfo": `GetAssemblyInfo returns an assembly's name, app domain and manifest
module.`,
	"ICorProfilerInfo4.GetRuntimeInformation": `GetRuntimeInformation says which runtime this is: its type (CoreCLR),
version numbers and build.`,
	"IMetaDataImport.FindTypeDefByName": `FindTypeDefByName finds a TypeDef by its namespace-qualified name
("System.String"), nested in enclosingClass (0 for a top-level type); the
error matches ErrNotFound when there is none.`,
	"IMetaDataImport.FindMethod": `FindMethod finds a method of td by name and, unless sigBlob is empty,
signature; the error matches ErrNotFound when there is none.`,
	"IMetaDataImport.FindMemberRef": `FindMemberRef finds the MemberRef of name and, unless sigBlob is empty,
signature on parent td; Emit2.EnsureMemberRef finds or defines one.`,
	"IMetaDataImport.FindTypeRef": `FindTypeRef finds the TypeRef to a namespace-qualified name in a
resolution scope; Emit2.EnsureTypeRef finds or defines one.`,
	"IMetaDataImport.GetUserString": `GetUserString returns the string an ldstr token names.`,
	"IMetaDataImport.GetScopeProps": `GetScopeProps returns the module's name and MVID.`,
	"IMetaDataEmit.DefineMemberRef": `DefineMemberRef defines a reference to a method or field of another
type (a TypeRef, TypeSpec or ModuleRef) with its signature blob, without
looking for an existing one (Emit2.EnsureMemberRef does).`,
	"IMetaDataEmit.GetTokenFromSig": `GetTokenFromSig returns the StandAloneSig token of a signature blob (a
local-variable or call-site signature), defining it if needed.`,
	"IMetaDataEmit.DefineTypeRefByName": `DefineTypeRefByName defines a TypeRef to a namespace-qualified name in a
resolution scope (an AssemblyRef, a ModuleRef, or the TypeRef of the
enclosing type).`,
	"IMetaDataEmit.DefineUserString": `DefineUserString defines a string for ldstr and returns its token.`,
}

// Docs is idl/docs.txt: what the project says a runtime method, callback,
// result or constant means for a Go user, and which runtime brings each
// interface version. The generator joins it to the facts it knows (the
// IDL's parameter roles and the overlay) in every generated doc comment.
//
//	since Interface  runtime that first has it
//	doc   Key        one line of text (Key: Interface.Method,
//	                 Interface.Method.param, or a C constant or type name)
type Docs struct {
	Since map[string]string
	Text  map[string]string
	used  map[string]bool // keys the generator asked for
}

// Unused lists the keys of doc and since records no generated
// declaration asked for (a typo, or a method that is gone), sorted.
func (d *Docs) Unused() []string {
	var out []string
	for k := range d.Text {
		if !d.used[k] {
			out = append(out, "doc "+k)
		}
	}
	for k := range d.Since {
		if !d.used["since "+k] {
			out = append(out, "since "+k)
		}
	}
	sort.Strings(out)
	return out
}

// ParseDocs reads the text form of Docs.
func ParseDocs(name string, src []byte) (*Docs, error) {
	d := &Docs{Since: map[string]string{}, Text: map[string]string{}, used: map[string]bool{}}
	for _, rec := range idl.Records(src) {
		f := rec.Fields
		pos := Pos{File: name, Line: rec.Line, Col: 1}
		if len(f) < 3 {
			return nil, errorf(pos, "%s needs a key and text", f[0])
		}
		text := strings.Join(f[2:], " ")
		switch f[0] {
		case "since":
			d.Since[f[1]] = text
		case "doc":
			if _, dup := d.Text[f[1]]; dup {
				return nil, errorf(pos, "doc %s given twice", f[1])
			}
			d.Text[f[1]] = text
		default:
			return nil, errorf(pos, "unknown record %q", f[0])
		}
	}
	return d, nil
}

// since returns the runtime that brings iface, or "".
func (d *Docs) since(iface string) string {
	if d == nil {
		return ""
	}
	if _, ok := d.Since[iface]; ok {
		d.used["since "+iface] = true
	}
	return d.Since[iface]
}

// text returns the doc of key, or "".
func (d *Docs) text(key string) string {
	if d == nil {
		return ""
	}
	if _, ok := d.Text[key]; ok {
		d.used[key] = true
	}
	return d.Text[key]
}

// wrap breaks text into lines of at most 72 columns.
func wrap(text string) string {
	var b strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		if n > 0 && n+1+len(w) > 72 {
			b.WriteByte('\n')
			n = 0
		} else if n > 0 {
			b.WriteByte(' ')
			n++
		}
		b.WriteString(w)
		n += len(w)
	}
	return b.String()
}

// versionOf returns N of ICorProfilerInfoN / ICorProfilerCallbackN (1 for
// the unnumbered one), or 0 for another interface.
func versionOf(iface string) int {
	for _, p := range []string{"ICorProfilerInfo", "ICorProfilerCallback"} {
		if rest, ok := strings.CutPrefix(iface, p); ok {
			if rest == "" {
				return 1
			}
			if n, err := strconv.Atoi(rest); err == nil {
				return n
			}
		}
	}
	return 0
}

// sinceSentence says which runtime brings iface, from the since records.
func (d *Docs) sinceSentence(iface string, info bool) string {
	s := d.since(iface)
	if s == "" {
		return ""
	}
	if strings.HasPrefix(s, "every supported runtime") {
		return fmt.Sprintf("It is a method of %s, which every supported runtime has.", iface)
	}
	if info && versionOf(iface) > 1 {
		return fmt.Sprintf("It needs %s (%s); on an older runtime it returns an error matching ErrNotAvailable without calling the runtime.", iface, s)
	}
	return fmt.Sprintf("%s: %s.", iface, s)
}

// outputsPhrase names a plan's Go results by their runtime names.
func outputsPhrase(pl *Plan, resultName string) string {
	var names []string
	for _, o := range pl.Outputs {
		names = append(names, o.P.Name)
	}
	switch {
	case len(pl.Outputs) == 1:
		return fmt.Sprintf("It returns the runtime's %s output, as %s.", names[0], goTypeString(pl.Outputs[0]))
	case len(pl.Outputs) > 1:
		return fmt.Sprintf("It returns the runtime's outputs %s as the fields of %s.", strings.Join(names, ", "), resultName)
	}
	return ""
}

// goTypeString renders the Go type of a result for prose.
func goTypeString(o *PlannedParam) string {
	s := fmt.Sprintf("%#v", goResultType(o))
	s = strings.ReplaceAll(s, "github.com/clrprof/clrprof/", "")
	s = strings.ReplaceAll(s, "github.com/google/uuid.", "uuid.")
	return s
}

// inputsPhrase names the inputs that are flag sets or slices.
func inputsPhrase(pl *Plan) string {
	var names []string
	for _, in := range pl.Inputs {
		if in.GoName == in.P.Name {
			names = append(names, in.GoName)
		} else {
			names = append(names, in.GoName+" ("+in.P.Name+")")
		}
	}
	if len(names) == 0 {
		return ""
	}
	return fmt.Sprintf("Its arguments, with the runtime's names where they differ: %s.", strings.Join(names, ", "))
}

// methodDoc is the doc of a generated exported method: the project's own
// words (methodDocs or idl/docs.txt) or a summary from the plan, then the
// facts: its arguments and results by the runtime's names, which runtime
// brings it, how S_FALSE and failures show, and the runtime's name.
func methodDoc(d *Docs, pl *Plan, iface, resultName string, info bool) string {
	key := iface + "." + pl.M.Name
	var parts []string
	if t := d.text(key); t != "" {
		parts = append(parts, wrap(pl.GoName()+" "+t))
	} else if t, ok := methodDocs[key]; ok {
		parts = append(parts, t)
	}
	var facts []string
	if s := inputsPhrase(pl); s != "" {
		facts = append(facts, s)
	}
	if s := outputsPhrase(pl, resultName); s != "" {
		facts = append(facts, s)
	}
	for _, in := range pl.Inputs {
		if in.Role == RoleEnumHandle && in.T.Indirections() == 1 {
			facts = append(facts, fmt.Sprintf("It is one step of an enumeration: %s starts as a zero EnumHandle and is passed again on every call; each call returns at most 32 items and an empty slice at the end; CloseEnum frees the handle. Import2's slice methods (TypeDefs, Methods, Fields, ...) run the whole enumeration.", in.GoName))
			break
		}
	}
	if pl.SFalse {
		s := "The bool is true when the runtime answers S_OK and false when it answers S_FALSE"
		if t := d.text(key + ".S_FALSE"); t != "" {
			s += " (" + t + ")"
		}
		facts = append(facts, s+".")
	}
	if s := d.sinceSentence(iface, info); s != "" {
		facts = append(facts, s)
	}
	if pl.M.Ret.Name == "HRESULT" && pl.M.Ret.Ptr == 0 {
		if strings.HasPrefix(iface, "ICorProfiler") {
			facts = append(facts, "A failure is the runtime's HRESULT as the error (errors.Is compares it with E_INVALIDARG, CORPROF_E_NOT_MANAGED_THREAD, ...).")
		} else {
			facts = append(facts, "A failure is the runtime's HRESULT as the error (errors.Is compares it with E_INVALIDARG, CLDB_E_RECORD_NOTFOUND, ...).")
		}
	}
	if len(parts) == 0 {
		parts = append(parts, wrap(strings.Join(facts, " ")))
	} else {
		parts = append(parts, wrap(strings.Join(facts, " ")))
	}
	line := fmt.Sprintf("It calls %s::%s.", iface, pl.M.Name)
	if info && len(pl.Outputs) > 0 && pl.M.Ret.Name == "HRESULT" && pl.M.Ret.Ptr == 0 {
		line += "\nWhen the runtime answers CORPROF_E_DATAINCOMPLETE (part of the answer\nis not known yet), the outputs it did fill are returned with that error."
	}
	parts = append(parts, line)
	return strings.Join(parts, "\n\n")
}

// fieldDoc is the doc of a result struct's field.
func fieldDoc(d *Docs, iface, method string, o *PlannedParam) string {
	s := fmt.Sprintf("%s is the runtime's %s output of %s::%s.", o.GoName, o.P.Name, iface, method)
	if t := d.text(iface + "." + method + "." + o.P.Name); t != "" {
		if !strings.HasPrefix(t, "is ") {
			t = "is " + t
		}
		s = o.GoName + " " + t + " (the runtime's " + o.P.Name + ")."
	}
	return wrap(s)
}

// lineComments renders text as // comment lines (jennifer writes a
// multi-line Comment as a /* */ block).
func lineComments(text string) []jen.Code {
	var out []jen.Code
	for _, l := range strings.Split(text, "\n") {
		out = append(out, jen.Comment(l))
	}
	return out
}

// commentLines writes text to f as // comment lines.
func commentLines(f *jen.File, text string) {
	for _, l := range strings.Split(text, "\n") {
		f.Comment(l)
	}
}
