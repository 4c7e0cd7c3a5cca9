// Command dispprof is the profiler of metadata's dispenser test. When the
// app's module has loaded it takes the runtime's dispenser
// (profiler.MetaDataDispenser) and, with it, opens the app's file by path
// (MethodImpls, the tables, the assembly), sets and reads an option, and
// builds a new scope in memory with the Emit calls (type, fields with
// constants, method, parameter, property, event, references), saves it and
// reads the saved image back. It reports on stderr, lines starting
// "dispprof: ".
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

type prof struct {
	profiler.Base
	info *profiler.Info
	done bool
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "dispprof: "+format+"\n", args...)
}

func (p *prof) Initialize(info *profiler.Info) error {
	p.info = info
	return info.SetEventMask(profiler.MonitorModuleLoads)
}

func (p *prof) ModuleLoadFinished(m profiler.ModuleID, _ profiler.HRESULT) error {
	r, err := p.info.ModuleInfoOf(m, profiler.ModuleFieldName)
	if err != nil || !strings.HasSuffix(r.Name, "DApp.exe") || p.done {
		return nil
	}
	p.done = true
	d, err := profiler.MetaDataDispenser()
	if err != nil {
		logf("dispenser ERROR %v", err)
		return nil
	}
	defer d.Release()
	logf("dispenser ok")
	readApp(d, r.Name)
	options(d)
	emit(d)
	return nil
}

func readApp(d *metadata.DispenserEx, path string) {
	imp, err := d.OpenImport(path)
	if err != nil {
		logf("open ERROR %v", err)
		return
	}
	defer imp.Release()
	td, err := imp.FindTypeDef("DApp.Impl", 0)
	if err != nil {
		logf("find Impl ERROR %v", err)
		return
	}
	impls, err := imp.MethodImpls(td)
	if err != nil {
		logf("methodimpls ERROR %v", err)
	}
	for _, mi := range impls {
		body, err1 := imp.MethodName(mi.Body)
		decl, err2 := imp.MethodName(mi.Decl)
		logf("methodimpl %s implements %s%s%s", body, decl, errSuffix(err1), errSuffix(err2))
	}

	tables, err := metadata.QueryTables2(imp)
	if err != nil {
		logf("tables ERROR %v", err)
		return
	}
	defer tables.Release()
	const typeDefTable, nameColumn = 2, 1
	ti, err := tables.TableInfo(typeDefTable)
	logf("table %d name=%s rows=%d columns=%d%s", typeDefTable, ti.Name, ti.Rows, ti.Columns, errSuffix(err))
	ci, err := tables.ColumnInfo(typeDefTable, nameColumn)
	logf("column %d.%d name=%s size=%d%s", typeDefTable, nameColumn, ci.Name, ci.Size, errSuffix(err))
	// The Name column of Impl's row is an index into #Strings: the name
	// read through the tables must be the one the import reports.
	ix, err := tables.GetColumn(typeDefTable, nameColumn, td.RID())
	if err != nil {
		logf("column value ERROR %v", err)
	}
	s, err := tables.String(ix)
	logf("typedef %v name via tables=%s%s", td, s, errSuffix(err))
	name, kinds, err := tables.CodedTokenInfo(0)
	logf("coded token 0 name=%s kinds=%v%s", name, kinds, errSuffix(err))
	g, err := tables.GUID(1)
	scope, err2 := imp.GetScopeProps()
	logf("guid 1 equals mvid=%v%s%s", err == nil && err2 == nil && g == scope.MVID, errSuffix(err), errSuffix(err2))
	sname, data, err := tables.MetaDataStream(0)
	logf("stream 0 name=%s bytes>0=%v%s", sname, len(data) > 0, errSuffix(err))

	ai, err := d.OpenAssemblyImport(path)
	if err != nil {
		logf("assembly ERROR %v", err)
		return
	}
	defer ai.Release()
	a, err := ai.Assembly()
	logf("assembly name=%s%s", a.Name, errSuffix(err))
	found, err := ai.FindAssembliesByName("", "", "DApp")
	logf("find assemblies by name: %d%s", len(found), errSuffix(err))
	for _, f := range found {
		f.Release()
	}
}

func options(d *metadata.DispenserEx) {
	old, err := d.GetOption(metadata.OptionCheckDuplicatesFor)
	if err != nil {
		logf("option ERROR %v", err)
		return
	}
	const all = 0xffffffff
	err = d.SetOption(metadata.OptionCheckDuplicatesFor, all)
	now, err2 := d.GetOption(metadata.OptionCheckDuplicatesFor)
	logf("option check duplicates: changed=%v set=%v%s%s", old != now, now == all, errSuffix(err), errSuffix(err2))
	if err := d.SetOption(metadata.OptionCheckDuplicatesFor, old); err != nil {
		logf("option restore ERROR %v", err)
	}
}

func emit(d *metadata.DispenserEx) {
	unk, err := d.DefineScope(metadata.CLSIDCorMetaDataRuntime, metadata.IIDEmit2)
	if err != nil {
		logf("define scope ERROR %v", err)
		return
	}
	e, err := metadata.QueryEmit2(unk)
	unk.Release()
	if err != nil {
		logf("emit ERROR %v", err)
		return
	}
	defer e.Release()
	fail := func(what string, err error) bool {
		if err != nil {
			logf("emit %s ERROR %v", what, err)
			return true
		}
		return false
	}
	if fail("module", e.SetModuleProps("Gen.dll")) {
		return
	}
	corlib, err := e.EnsureAssemblyRef(metadata.AssemblyName{Name: "System.Runtime", Version: metadata.Version{Major: 4},
		PublicKeyToken: []byte{0xb0, 0x3f, 0x5f, 0x7f, 0x11, 0xd5, 0x0a, 0x3a}})
	if fail("assembly ref", err) {
		return
	}
	corlib2, err := e.EnsureAssemblyRef(metadata.AssemblyName{Name: "system.runtime"})
	if fail("assembly ref again", err) {
		return
	}
	object, err := e.EnsureTypeRef(corlib, "System", "Object")
	if fail("type ref", err) {
		return
	}
	object2, err := e.EnsureTypeRef(corlib, "System", "Object")
	if fail("type ref again", err) {
		return
	}
	logf("emit reuse: assemblyref=%v typeref=%v", corlib == corlib2, object == object2)
	td, err := e.DefineTypeDef("Gen.Thing", metadata.TdPublic|metadata.TdClass, object, nil)
	if fail("typedef", err) {
		return
	}
	i4 := []byte{0x06, byte(metadata.ElementTypeI4)}      // FIELD int32
	str := []byte{0x06, byte(metadata.ElementTypeString)} // FIELD string
	lit := metadata.FdPublic | metadata.FdStatic | metadata.FdLiteral | metadata.FdHasDefault
	if _, err := e.DefineField(td, "Answer", lit, i4, metadata.Int32Constant(42)); fail("field", err) {
		return
	}
	if _, err := e.DefineField(td, "Greeting", lit, str, metadata.StringConstant("héllo")); fail("field", err) {
		return
	}
	if _, err := e.DefineField(td, "Bad", lit, i4, &metadata.Constant{Type: metadata.ElementTypeI4, Value: []byte{1}}); err == nil {
		logf("emit bad constant accepted")
	} else {
		logf("emit bad constant refused: %v", err)
	}
	getter, err := e.DefineMethod(td, "get_Size", metadata.MdPublic|metadata.MdSpecialName|metadata.MdStatic,
		[]byte{0x00, 0x01, byte(metadata.ElementTypeI4), byte(metadata.ElementTypeI4)}, 0, 0)
	if fail("method", err) {
		return
	}
	if _, err := e.DefineParam(getter, 1, "scale", metadata.PdIn, nil); fail("param", err) {
		return
	}
	if _, err := e.DefineProperty(td, "Size", []byte{0x28, 0x00, byte(metadata.ElementTypeI4)}, metadata.PropertyDef{Getter: getter}); fail("property", err) {
		return
	}
	if _, err := e.DefineEvent(td, "Changed", metadata.EventDef{Type: object, AddOn: getter}); fail("event", err) {
		return
	}
	box, err := e.DefineTypeDef("Gen.Box`1", metadata.TdPublic|metadata.TdClass, object, nil)
	if fail("generic typedef", err) {
		return
	}
	if _, err := e.DefineGenericParam(box, 0, 0, "T", nil); fail("generic param", err) {
		return
	}
	ae, err := metadata.QueryAssemblyEmit(e)
	if fail("assembly emit", err) {
		return
	}
	_, err = ae.DefineAssembly(metadata.AssemblyName{Name: "Gen", Version: metadata.Version{Major: 1, Minor: 2, Build: 3, Revision: 4}, Culture: "en-US"}, nil, 0x8004, 0)
	ae.Release()
	if fail("assembly", err) {
		return
	}
	img, err := e.SaveToMemory()
	if fail("save", err) {
		return
	}
	logf("emit saved %d bytes", len(img))

	unk, err = d.OpenScopeOnMemory(img, metadata.OfRead, metadata.IIDImport2)
	if fail("reopen", err) {
		return
	}
	imp, err := metadata.QueryImport2(unk)
	unk.Release()
	if fail("reopen import", err) {
		return
	}
	defer imp.Release()
	clear(img) // the runtime copied the image
	back, err := imp.FindTypeDef("Gen.Thing", 0)
	if fail("reopen find", err) {
		return
	}
	fields, err := imp.Fields(back)
	if fail("reopen fields", err) {
		return
	}
	for _, f := range fields {
		fi, err := imp.Field(f)
		if fail("reopen field", err) {
			return
		}
		logf("saved field %s type=%v default=%x", fi.Name, fi.DefaultType, fi.Default)
	}
	props, err := imp.Properties(back)
	for _, pr := range props {
		pi, err := imp.Property(pr)
		if fail("reopen property", err) {
			return
		}
		g, _ := imp.Method(pi.Getter)
		logf("saved property %s getter=%s", pi.Name, g.Name)
	}
	evs, err := imp.Events(back)
	for _, ev := range evs {
		ei, err := imp.Event(ev)
		if fail("reopen event", err) {
			return
		}
		logf("saved event %s", ei.Name)
	}
	methods, _ := imp.Methods(back)
	for _, md := range methods {
		ps, _ := imp.Params(md)
		for _, pd := range ps {
			pi, err := imp.Param(pd)
			logf("saved param %d %s in=%v%s", pi.Sequence, pi.Name, pi.Flags&metadata.PdIn != 0, errSuffix(err))
		}
	}
	if boxTd, err := imp.FindTypeDef("Gen.Box`1", 0); err == nil {
		names, err := imp.GenericParamNames(boxTd)
		short, err2 := imp.NameFromToken(back)
		logf("saved generic params %v; name from token %s%s%s", names, short, errSuffix(err), errSuffix(err2))
	} else {
		logf("saved generic type ERROR %v", err)
	}
	ai, err := metadata.QueryAssemblyImport(imp)
	if fail("reopen assembly import", err) {
		return
	}
	defer ai.Release()
	if asm, err := ai.Assembly(); err == nil {
		logf("saved assembly %s %v", asm.Name, asm.Version)
	} else {
		logf("saved assembly ERROR %v", err)
	}
	refs, _ := ai.AssemblyRefs()
	for _, r := range refs {
		ri, err := ai.AssemblyRef(r)
		logf("saved assembly ref %s %v token=%x%s", ri.Name, ri.Version, ri.PublicKeyToken(), errSuffix(err))
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " ERROR " + err.Error()
}

func init() {
	profiler.Register("{8D2C4B6A-1E3F-4A5B-9C7D-2E4F6A8B0C1D}", &prof{})
}

func main() {}
