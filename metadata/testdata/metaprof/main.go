// Command metaprof is the profiler of package metadata's integration tests.
// It prints, on stderr, lines starting "metaprof: ":
//
//   - for every module that loads: how many signatures of each kind it
//     decoded and re-encoded byte-identical, and any that did not;
//   - for the test app's module (metaapp.exe): the token-based names of its
//     methods, fields, method specs and member refs;
//   - for every function of the app the JIT compiles: its runtime name;
//   - when the app throws in Gen.Shared: the names of the frames on the
//     stack with and without their COR_PRF_FRAME_INFO;
//   - at the app's Checkpoint: how each TypeRef of the app's modules
//     resolved;
//   - when alclib.dll unloads: what the ID map held for it before and after;
//   - at Shutdown: the signature totals.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/idmap"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/typeref"
)

// kinds of signatures counted, in print order.
var kinds = []string{"method", "field", "property", "local", "standalone-method", "memberref-method", "memberref-field", "typespec", "methodspec"}

type counts map[string]int

type metaprof struct {
	profiler.Base
	info *profiler.Info
	ids  *idmap.Map

	mu       sync.Mutex
	total    counts
	failures int
	appMods  map[profiler.ModuleID]string
	alcMods  map[profiler.ModuleID]string
	alcSeen  map[profiler.FunctionID]bool
	frames   []string
	inSnap   bool
}

func (p *metaprof) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "metaprof: "+format+"\n", args...)
}

func (p *metaprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.ids = idmap.New(info)
	p.total = counts{}
	p.appMods = map[profiler.ModuleID]string{}
	p.alcMods = map[profiler.ModuleID]string{}
	p.alcSeen = map[profiler.FunctionID]bool{}
	return info.SetEventMask(profiler.MonitorModuleLoads | profiler.MonitorClassLoads | profiler.MonitorJITCompilation |
		profiler.MonitorAppDomainLoads | profiler.MonitorExceptions | profiler.EnableStackSnapshot | profiler.EnableFrameInfo)
}

func (p *metaprof) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	if hr < 0 {
		return nil
	}
	e, err := p.ids.AddModule(m)
	if err != nil {
		p.logf("module %#x: %v", uint64(m), err)
		return nil
	}
	base := filepath.Base(e.Name)
	imp, err := p.info.ModuleImport(m)
	if err != nil {
		p.logf("module %s: no metadata: %v", base, err)
		return nil
	}
	defer imp.Release()
	c, bad := checkSignatures(imp)
	p.mu.Lock()
	for k, v := range c {
		p.total[k] += v
	}
	p.failures += len(bad)
	switch strings.ToLower(base) {
	case "metaapp.exe", "fwda.dll", "fwdb.dll":
		p.appMods[m] = base
	case "alclib.dll":
		p.alcMods[m] = base
	}
	p.mu.Unlock()
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, c[k]))
	}
	p.logf("sigs %s: %s failures=%d", base, strings.Join(parts, " "), len(bad))
	for i, b := range bad {
		if i == 20 {
			p.logf("sig failure: ... %d more", len(bad)-i)
			break
		}
		p.logf("sig failure in %s: %s", base, b)
	}
	if strings.EqualFold(base, "metaapp.exe") {
		p.printTokenNames(imp)
		p.apiChecks(m, imp)
	}
	return nil
}

// roundTrip decodes blob with parse and checks that it encodes back to the
// same bytes.
func roundTrip[S interface{ Encode() ([]byte, error) }](blob []byte, parse func([]byte) (S, error)) error {
	s, err := parse(blob)
	if err != nil {
		return err
	}
	enc, err := s.Encode()
	if err != nil {
		return err
	}
	if !bytes.Equal(enc, blob) {
		return fmt.Errorf("re-encoded as %x", enc)
	}
	return nil
}

// checkSignatures decodes and re-encodes every signature of a module.
func checkSignatures(imp *metadata.Import2) (counts, []string) {
	c := counts{}
	var bad []string
	check := func(kind string, tk metadata.Token, blob []byte, err error, rt func([]byte) error) {
		if err == nil {
			err = rt(blob)
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s %v %x: %v", kind, tk, blob, err))
			return
		}
		c[kind]++
	}
	// Method and local signatures are decoded a second time through one
	// reused SigDecoder, whose memory held the signature before.
	var dec metadata.SigDecoder
	methodRT := func(b []byte) error {
		if err := roundTrip(b, metadata.ParseMethodSig); err != nil {
			return err
		}
		if err := roundTrip(b, dec.ParseMethodSig); err != nil {
			return fmt.Errorf("through a SigDecoder: %w", err)
		}
		return nil
	}
	tds, err := imp.TypeDefs()
	if err != nil {
		bad = append(bad, fmt.Sprintf("TypeDefs: %v", err))
	}
	for _, td := range append([]metadata.Token{0x02000001}, tds...) {
		mds, err := imp.Methods(td)
		if err != nil {
			bad = append(bad, fmt.Sprintf("Methods(%v): %v", td, err))
		}
		for _, md := range mds {
			m, err := imp.Method(md)
			check("method", md, m.Sig, err, methodRT)
		}
		fds, err := imp.Fields(td)
		if err != nil {
			bad = append(bad, fmt.Sprintf("Fields(%v): %v", td, err))
		}
		for _, fd := range fds {
			f, err := imp.Field(fd)
			check("field", fd, f.Sig, err, func(b []byte) error { return roundTrip(b, metadata.ParseFieldSig) })
		}
		props, err := imp.Properties(td)
		if err != nil {
			bad = append(bad, fmt.Sprintf("Properties(%v): %v", td, err))
		}
		for _, pr := range props {
			info, err := imp.Property(pr)
			check("property", pr, info.Sig, err, methodRT)
		}
	}
	sigs, err := imp.Signatures()
	if err != nil {
		bad = append(bad, fmt.Sprintf("Signatures: %v", err))
	}
	for _, st := range sigs {
		blob, err := imp.StandAloneSig(st)
		kind := "standalone-method"
		if len(blob) > 0 && metadata.CallingConvention(blob[0]) == metadata.ImageCeeCsCallconvLocalSig {
			kind = "local"
		}
		check(kind, st, blob, err, func(b []byte) error {
			if err := roundTrip(b, metadata.ParseSignature); err != nil || kind != "local" {
				return err
			}
			if err := roundTrip(b, dec.ParseLocalVarSig); err != nil {
				return fmt.Errorf("through a SigDecoder: %w", err)
			}
			return nil
		})
	}
	mrs, err := imp.AllMemberRefs()
	if err != nil {
		bad = append(bad, fmt.Sprintf("MemberRefs: %v", err))
	}
	for _, mr := range mrs {
		info, err := imp.MemberRef(mr)
		kind := "memberref-method"
		if len(info.Sig) > 0 && metadata.CallingConvention(info.Sig[0]) == metadata.ImageCeeCsCallconvField {
			kind = "memberref-field"
		}
		check(kind, mr, info.Sig, err, func(b []byte) error { return roundTrip(b, metadata.ParseSignature) })
	}
	tss, err := imp.TypeSpecs()
	if err != nil {
		bad = append(bad, fmt.Sprintf("TypeSpecs: %v", err))
	}
	for _, ts := range tss {
		blob, err := imp.TypeSpec(ts)
		check("typespec", ts, blob, err, func(b []byte) error { return roundTrip(b, metadata.ParseTypeSpec) })
	}
	mss, err := imp.AllMethodSpecs()
	if err != nil {
		bad = append(bad, fmt.Sprintf("MethodSpecs: %v", err))
	}
	for _, ms := range mss {
		info, err := imp.MethodSpec(ms)
		check("methodspec", ms, info.Sig, err, func(b []byte) error { return roundTrip(b, metadata.ParseMethodSpec) })
	}
	return c, bad
}

// printTokenNames prints the metadata names of the app's members.
func (p *metaprof) printTokenNames(imp *metadata.Import2) {
	tds, _ := imp.TypeDefs()
	for _, td := range tds {
		tn, err := imp.TypeDefName(td)
		if err != nil || !strings.HasPrefix(tn, "Meta.Test.") {
			continue
		}
		mds, _ := imp.Methods(td)
		for _, md := range mds {
			n, err := imp.MethodName(md)
			p.logf("token method: %s%s", n, errSuffix(err))
		}
		fds, _ := imp.Fields(td)
		for _, fd := range fds {
			n, err := imp.FieldName(fd)
			t, err2 := imp.FieldTypeName(fd)
			p.logf("token field: %s : %s%s", n, t, errSuffix(errors.Join(err, err2)))
		}
	}
	mss, _ := imp.AllMethodSpecs()
	for _, ms := range mss {
		n, err := imp.MethodName(ms)
		p.logf("token methodspec: %s%s", n, errSuffix(err))
	}
	mrs, _ := imp.AllMemberRefs()
	for _, mr := range mrs {
		info, err := imp.MemberRef(mr)
		if err != nil || metadata.TokenType(info.Parent.Table()) != metadata.MdtTypeSpec {
			continue
		}
		n, err := imp.MethodName(mr)
		p.logf("token memberref: %s%s", n, errSuffix(err))
	}
}

// apiChecks exercises the property readers not used above and the emit
// helpers, printing "api: " lines.
func (p *metaprof) apiChecks(m profiler.ModuleID, imp *metadata.Import2) {
	fail := func(what string, err error) { p.logf("api: %s ERROR %v", what, err) }
	shapes, err := imp.FindTypeDef("Meta.Test.Shapes", 0)
	if err != nil {
		fail("FindTypeDef", err)
		return
	}
	if _, err := imp.FindTypeDef("Meta.Test.NoSuchType", 0); !errors.Is(err, metadata.ErrNotFound) {
		fail("FindTypeDef of a missing type", err)
	}
	evs, err := imp.Events(shapes)
	for _, ev := range evs {
		e, err := imp.Event(ev)
		if err != nil {
			fail("Event", err)
			continue
		}
		add, _ := imp.Method(e.AddOn)
		remove, _ := imp.Method(e.RemoveOn)
		typ, _ := imp.TypeName(e.Type, nil)
		p.logf("api: event %s type=%s add=%s remove=%s", e.Name, typ, add.Name, remove.Name)
	}
	if err != nil {
		fail("Events", err)
	}
	tryGet, err := imp.MethodsWithName(shapes, "TryGet")
	if err != nil || len(tryGet) != 1 {
		fail("MethodsWithName", err)
		return
	}
	params, err := imp.Params(tryGet[0])
	for _, pd := range params {
		pi, err := imp.Param(pd)
		if err != nil {
			fail("Param", err)
			continue
		}
		p.logf("api: param %d %s out=%v", pi.Sequence, pi.Name, pi.Flags&metadata.PdOut != 0)
	}
	if err != nil {
		fail("Params", err)
	}
	legacy, err := imp.FindTypeDef("Meta.Test.Legacy", 0)
	if err != nil {
		fail("FindTypeDef Legacy", err)
		return
	}
	v, ok, err := imp.CustomAttributeByName(legacy, "System.ObsoleteAttribute")
	p.logf("api: Legacy ObsoleteAttribute found=%v blob=%x%s", ok, v, errSuffix(err))
	cas, err := imp.CustomAttributes(legacy, 0)
	for _, ca := range cas {
		info, err := imp.CustomAttribute(ca)
		if err != nil {
			fail("CustomAttribute", err)
			continue
		}
		ctor, err := imp.MethodName(info.Ctor)
		p.logf("api: custom attribute on Legacy: %s value=%x%s", ctor, info.Value, errSuffix(err))
	}
	if err != nil {
		fail("CustomAttributes", err)
	}
	props, _ := imp.Properties(legacy)
	for _, pr := range props {
		info, err := imp.Property(pr)
		getter, _ := imp.Method(info.Getter)
		setter, _ := imp.Method(info.Setter)
		p.logf("api: property %s get=%s set=%s%s", info.Name, getter.Name, setter.Name, errSuffix(err))
	}
	asm, err := metadata.QueryAssemblyImport(imp)
	if err != nil {
		fail("QueryAssemblyImport", err)
		return
	}
	defer asm.Release()
	self, err := asm.Assembly()
	p.logf("api: assembly %s %v%s", self.Name, self.Version, errSuffix(err))
	refs, _ := asm.AssemblyRefs()
	// Where System.Console is: mscorlib for an app mcs compiled against
	// Mono's framework, System.Console for one Roslyn compiled against
	// .NET 10's or 11's reference assemblies.
	var consoleAsm metadata.Token
	for _, ar := range refs {
		info, err := asm.AssemblyRef(ar)
		if err != nil {
			fail("AssemblyRef", err)
			continue
		}
		p.logf("api: assembly ref %s %v token=%x", info.Name, info.Version, info.PublicKeyToken())
		if info.Name == "mscorlib" || info.Name == "System.Console" {
			consoleAsm = ar
		}
	}
	if consoleAsm == 0 {
		fail("AssemblyRefs", errors.New("no reference to mscorlib or System.Console"))
		return
	}
	strs, _ := imp.UserStrings()
	found := false
	for _, us := range strs {
		if s, err := imp.UserString(us); err == nil && s == "forwarded: " {
			found = true
		}
	}
	p.logf("api: user strings=%d has %q=%v", len(strs), "forwarded: ", found)

	// Emit: new references, an instantiation, a signature and a string,
	// read back through the import interface.
	emit, err := p.info.ModuleEmit(m)
	if err != nil {
		fail("ModuleEmit", err)
		return
	}
	defer emit.Release()
	console, err := emit.DefineTypeRef(consoleAsm, "System", "Console")
	if err != nil {
		fail("DefineTypeRef", err)
		return
	}
	writeLine := &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid),
		Params: []*metadata.Type{metadata.Primitive(metadata.ElementTypeString)}}
	blob, _ := writeLine.Encode()
	mr, err := emit.DefineMemberRef(console, "WriteLine", blob)
	if err != nil {
		fail("DefineMemberRef", err)
		return
	}
	n, err := imp.MethodName(mr)
	p.logf("api: defined member ref %s%s", n, errSuffix(err))
	gen, err := imp.FindTypeDef("Meta.Test.Gen", 0)
	if err != nil {
		fail("FindTypeDef Gen", err)
		return
	}
	id, err := imp.MethodsWithName(gen, "Id")
	if err != nil || len(id) != 1 {
		fail("MethodsWithName Id", err)
		return
	}
	spec := &metadata.MethodSpecSig{Args: []*metadata.Type{metadata.SZArrayOf(metadata.Primitive(metadata.ElementTypeI8))}}
	blob, _ = spec.Encode()
	ms, err := emit.DefineMethodSpec(id[0], blob)
	if err != nil {
		fail("DefineMethodSpec", err)
		return
	}
	n, err = imp.MethodName(ms)
	p.logf("api: defined method spec %s%s", n, errSuffix(err))
	locals := &metadata.LocalVarSig{Locals: []*metadata.Type{metadata.Primitive(metadata.ElementTypeI4), metadata.ClassType(console)}}
	blob, _ = locals.Encode()
	st, err := emit.GetTokenFromSig(blob)
	if err != nil {
		fail("GetTokenFromSig", err)
		return
	}
	back, err := imp.StandAloneSig(st)
	if err == nil {
		var sig *metadata.LocalVarSig
		if sig, err = metadata.ParseLocalVarSig(back); err == nil {
			var names []string
			for _, l := range sig.Locals {
				s, _ := imp.FormatType(l, nil, metadata.ILAsm)
				names = append(names, s)
			}
			p.logf("api: defined local signature (%s) same bytes=%v", strings.Join(names, ", "), bytes.Equal(back, blob))
		}
	}
	if err != nil {
		fail("StandAloneSig", err)
	}
	ts := metadata.GenericInst(metadata.ClassType(console), metadata.Primitive(metadata.ElementTypeI4))
	blob, _ = ts.Encode()
	tst, err := emit.GetTokenFromTypeSpec(blob)
	if err == nil {
		n, err = imp.TypeName(tst, nil)
		p.logf("api: defined type spec %s", n)
	}
	if err != nil {
		fail("GetTokenFromTypeSpec", err)
	}
	us, err := emit.DefineUserString("héllo, wörld ✓")
	if err == nil {
		var s string
		s, err = imp.UserString(us)
		p.logf("api: defined user string %q", s)
	}
	if err != nil {
		fail("DefineUserString", err)
	}
}

func errSuffix(err error) string {
	if err == nil {
		return ""
	}
	return " ERROR " + err.Error()
}

func (p *metaprof) ClassLoadFinished(c profiler.ClassID, hr profiler.HRESULT) error {
	_ = p.ids.ClassLoadFinished(c, hr) // arrays have no TypeDef: not an error here
	return nil
}

func (p *metaprof) isApp(m profiler.ModuleID) (string, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n, ok := p.appMods[m]; ok {
		return n, true
	}
	n, ok := p.alcMods[m]
	return n, ok
}

func (p *metaprof) JITCompilationStarted(f profiler.FunctionID, _ bool) error {
	e, err := p.ids.AddFunction(f)
	if err != nil {
		return nil
	}
	if _, ok := p.isApp(e.Module); !ok {
		return nil
	}
	name, err := p.info.FunctionFullName(f, 0)
	p.logf("jit: %s%s", name, errSuffix(err))
	switch {
	case strings.HasPrefix(name, "Meta.Test.Program.Checkpoint("):
		p.resolveTypeRefs()
	case strings.HasPrefix(name, "Meta.Test.Program.AfterUnload("):
		p.reportAlc("after-unload")
	}
	return nil
}

func (p *metaprof) ExceptionThrown(profiler.ObjectID) error {
	p.mu.Lock()
	if p.inSnap {
		p.mu.Unlock()
		return nil
	}
	p.inSnap = true
	p.frames = nil
	p.mu.Unlock()
	err := p.info.WalkStack(0, func(fr profiler.StackFrame) bool {
		p.frame(fr.Function, fr.Frame)
		return true
	})
	p.mu.Lock()
	frames := p.frames
	p.inSnap = false
	p.mu.Unlock()
	if err != nil {
		p.logf("snapshot: %v", err)
		return nil
	}
	for _, f := range frames {
		p.logf("%s", f)
	}
	return nil
}

// frame records the names of one frame of the app, with and without its
// frame info.
func (p *metaprof) frame(f profiler.FunctionID, frameInfo profiler.FrameInfo) {
	if f == 0 {
		return
	}
	fi, err := p.info.GetFunctionInfo2(f, 0)
	if err != nil {
		return
	}
	if _, ok := p.isApp(fi.ModuleID); !ok {
		return
	}
	with, err1 := p.info.FunctionFullName(f, frameInfo)
	without, err2 := p.info.FunctionFullName(f, 0)
	line := fmt.Sprintf("frame: %s%s | without frame info: %s%s", with, errSuffix(err1), without, errSuffix(err2))
	p.mu.Lock()
	p.frames = append(p.frames, line)
	p.mu.Unlock()
}

// resolveTypeRefs resolves every TypeRef of the app's modules.
func (p *metaprof) resolveTypeRefs() {
	r := typeref.New(p.info)
	p.mu.Lock()
	mods := make([]profiler.ModuleID, 0, len(p.appMods))
	for m := range p.appMods {
		mods = append(mods, m)
	}
	p.mu.Unlock()
	sort.Slice(mods, func(i, j int) bool { return mods[i] < mods[j] })
	resolved, notLoaded, failed := 0, 0, 0
	for _, m := range mods {
		base, _ := p.isApp(m)
		imp, err := p.info.ModuleImport(m)
		if err != nil {
			p.logf("typeref: %s: %v", base, err)
			failed++
			continue
		}
		trs, _ := imp.TypeRefs()
		for _, tr := range trs {
			want, err := imp.TypeRefName(tr)
			if err != nil {
				p.logf("typeref: %s %v: %v", base, tr, err)
				failed++
				continue
			}
			loc, err := r.Resolve(m, tr)
			if errors.Is(err, typeref.ErrUnresolved) && strings.Contains(err.Error(), "not loaded") {
				notLoaded++
				p.logf("typeref: %s %s -> not loaded (%v)", base, want, err)
				continue
			}
			if err != nil {
				failed++
				p.logf("typeref: %s %s -> ERROR %v", base, want, err)
				continue
			}
			got, where := p.defName(loc)
			if got != want {
				failed++
				p.logf("typeref: %s %s -> %s in %s: WRONG NAME", base, want, got, where)
				continue
			}
			resolved++
			p.logf("typeref: %s %s -> %s %v", base, want, where, loc.TypeDef)
		}
		imp.Release()
	}
	p.logf("typerefs: resolved=%d notloaded=%d failed=%d", resolved, notLoaded, failed)
}

func (p *metaprof) defName(loc typeref.Location) (string, string) {
	e, ok := p.ids.Module(loc.Module)
	where := fmt.Sprintf("module %#x", uint64(loc.Module))
	if ok {
		where = filepath.Base(e.Name)
	}
	imp, err := p.info.ModuleImport(loc.Module)
	if err != nil {
		return "", where
	}
	defer imp.Release()
	n, _ := imp.TypeDefName(loc.TypeDef)
	return n, where
}

// reportAlc prints what the ID map holds for alclib.dll.
func (p *metaprof) reportAlc(when string) {
	p.mu.Lock()
	mods := make([]profiler.ModuleID, 0, len(p.alcMods))
	for m := range p.alcMods {
		mods = append(mods, m)
	}
	seen := len(p.alcSeen)
	stale := 0
	for f := range p.alcSeen {
		if _, ok := p.ids.Function(f); ok {
			stale++
		}
	}
	p.mu.Unlock()
	for _, m := range mods {
		_, known := p.ids.Module(m)
		c, f := p.ids.ModuleCounts(m)
		p.logf("idmap %s: alclib module known=%v classes=%d functions=%d", when, known, c, f)
	}
	p.logf("idmap %s: alclib functions seen=%d still mapped=%d", when, seen, stale)
}

func (p *metaprof) ModuleUnloadStarted(m profiler.ModuleID) error {
	base, ok := p.isApp(m)
	if ok && base == "alclib.dll" {
		c, f := p.ids.ModuleCounts(m)
		p.mu.Lock()
		for _, fid := range p.functionsOf(m) {
			p.alcSeen[fid] = true
		}
		p.mu.Unlock()
		p.logf("idmap unload: alclib module before: classes=%d functions=%d", c, f)
	}
	_ = p.ids.ModuleUnloadStarted(m)
	if ok && base == "alclib.dll" {
		c, f := p.ids.ModuleCounts(m)
		_, known := p.ids.Module(m)
		p.logf("idmap unload: alclib module after: known=%v classes=%d functions=%d", known, c, f)
	}
	return nil
}

// functionsOf lists the mapped functions of a module's methods (p.mu held).
func (p *metaprof) functionsOf(m profiler.ModuleID) []profiler.FunctionID {
	imp, err := p.info.ModuleImport(m)
	if err != nil {
		return nil
	}
	defer imp.Release()
	var out []profiler.FunctionID
	tds, _ := imp.TypeDefs()
	for _, td := range tds {
		mds, _ := imp.Methods(td)
		for _, md := range mds {
			out = append(out, p.ids.FunctionsOf(m, md)...)
		}
	}
	return out
}

func (p *metaprof) ClassUnloadStarted(c profiler.ClassID) error { return p.ids.ClassUnloadStarted(c) }

func (p *metaprof) AppDomainShutdownStarted(a profiler.AppDomainID) error {
	return p.ids.AppDomainShutdownStarted(a)
}

func (p *metaprof) Shutdown() error {
	p.reportAlc("shutdown")
	p.mu.Lock()
	defer p.mu.Unlock()
	var parts []string
	for _, k := range kinds {
		parts = append(parts, fmt.Sprintf("%s=%d", k, p.total[k]))
	}
	p.logf("sigs total: %s failures=%d", strings.Join(parts, " "), p.failures)
	return nil
}

func init() {
	profiler.Register("{3F0E2C9A-61B4-4E57-9D2B-7A1C5E8F4B60}", &metaprof{}, profiler.WithSharedGenericNames())
}

func main() {}
