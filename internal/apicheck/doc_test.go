package apicheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// documented are the packages whose every exported identifier must carry a
// doc comment of its own (the manual, issue 27).
var documented = []string{
	"github.com/clrprof/clrprof/profiler",
	"github.com/clrprof/clrprof/metadata",
	"github.com/clrprof/clrprof/ilrw",
	"github.com/clrprof/clrprof/pprofbuild",
	"github.com/clrprof/clrprof/diag",
	"github.com/clrprof/clrprof/clrevents",
	"github.com/clrprof/clrprof/idmap",
	"github.com/clrprof/clrprof/typeref",
	"github.com/clrprof/clrprof/elt",
	"github.com/clrprof/clrprof/alloc",
	"github.com/clrprof/clrprof/heapwalk",
}

func loadDocumented(t *testing.T) []*packages.Package {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedTypesInfo | packages.NeedSyntax, Dir: "../.."}
	pkgs, err := packages.Load(cfg, documented...)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("%s: %v", p.PkgPath, e)
		}
	}
	sort.Slice(pkgs, func(i, j int) bool { return pkgs[i].PkgPath < pkgs[j].PkgPath })
	return pkgs
}

// docIndex maps the position of every declared name of a package's syntax
// to the doc comment that go doc shows for it: a declaration's own comment,
// the comment of its group (const/var/type blocks), or a trailing line
// comment (struct fields, interface methods, constants).
func docIndex(fset *token.FileSet, files []*ast.File) map[token.Position]string {
	idx := map[token.Position]string{}
	put := func(id *ast.Ident, docs ...*ast.CommentGroup) {
		for _, d := range docs {
			if d != nil {
				if s := strings.TrimSpace(d.Text()); s != "" {
					idx[fset.Position(id.Pos())] = s
					return
				}
			}
		}
		idx[fset.Position(id.Pos())] = ""
	}
	// A field without a comment of its own is documented by the comment
	// of the field group above it, or by its struct's doc, when that
	// comment names it ("Lengths and LowerBounds have one entry per
	// dimension").
	fields := func(fl *ast.FieldList, typeDoc string) {
		if fl == nil {
			return
		}
		group := ""
		for _, f := range fl.List {
			own := ""
			for _, d := range []*ast.CommentGroup{f.Doc, f.Comment} {
				if d != nil && strings.TrimSpace(d.Text()) != "" {
					own = strings.TrimSpace(d.Text())
					break
				}
			}
			if own != "" {
				group = own
			}
			for _, n := range f.Names {
				switch {
				case own != "":
					idx[fset.Position(n.Pos())] = own
				case mentions(group, n.Name):
					idx[fset.Position(n.Pos())] = group
				case mentions(typeDoc, n.Name):
					idx[fset.Position(n.Pos())] = typeDoc
				default:
					idx[fset.Position(n.Pos())] = ""
				}
			}
		}
	}
	typeExpr := func(e ast.Expr, typeDoc string) {
		switch t := e.(type) {
		case *ast.StructType:
			fields(t.Fields, typeDoc)
		case *ast.InterfaceType:
			fields(t.Methods, typeDoc)
		}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				put(d.Name, d.Doc)
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if d.Lparen.IsValid() {
							put(s.Name, s.Doc, s.Comment)
						} else {
							put(s.Name, s.Doc, d.Doc)
						}
						typeExpr(s.Type, idx[fset.Position(s.Name.Pos())])
					case *ast.ValueSpec:
						for _, n := range s.Names {
							put(n, s.Doc, s.Comment, d.Doc)
						}
					}
				}
			}
		}
	}
	return idx
}

// mentions reports whether doc names name as a word.
func mentions(doc, name string) bool {
	return doc != "" && regexp.MustCompile(`\b`+regexp.QuoteMeta(name)+`\b`).MatchString(doc)
}

// boilerplate are the sentences a generator writes for any method or
// constant alike: they name the runtime's method but say nothing of what it
// means for a Go user. A doc made only of these (and the identifier's bare
// runtime name) counts as missing.
var boilerplate = []*regexp.Regexp{
	regexp.MustCompile(`^It calls [A-Za-z0-9_]+::[A-Za-z0-9_]+\.$`),
	regexp.MustCompile(`^When the runtime answers CORPROF_E_DATAINCOMPLETE \(part of the answer is not known yet\), the outputs it did fill are returned with that error\.$`),
	regexp.MustCompile(`^[A-Za-z0-9_]+ is (the )?[A-Za-z0-9_:]+\.$`),
	regexp.MustCompile(`^[A-Za-z0-9_]+ holds the outputs of [A-Za-z0-9_:]+\.$`),
	regexp.MustCompile(`^[A-Za-z0-9_]+ is [A-Za-z0-9_]+::[A-Za-z0-9_]+\.$`),
}

// sentences splits doc text into sentences: a '.', '!' or '?' followed by
// white space (or the end) closes one, unless it closes a common
// abbreviation ("e.g.", "i.e.", "etc.") or a version ("Core 3.1.").
func sentences(doc string) []string {
	doc = strings.Join(strings.Fields(doc), " ")
	var out []string
	start := 0
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		if c != '.' && c != '!' && c != '?' {
			continue
		}
		if i+1 < len(doc) && doc[i+1] != ' ' {
			continue
		}
		word := doc[start:i]
		if j := strings.LastIndexByte(word, ' '); j >= 0 {
			word = word[j+1:]
		}
		switch strings.ToLower(word) {
		case "e.g", "i.e", "etc", "vs", "cf":
			continue
		}
		if s := strings.TrimSpace(doc[start : i+1]); s != "" {
			out = append(out, s)
		}
		start = i + 1
	}
	if s := strings.TrimSpace(doc[start:]); s != "" {
		out = append(out, s)
	}
	return out
}

// meaningful returns the sentences of doc that are not generated
// boilerplate.
func meaningful(doc string) []string {
	var out []string
next:
	for _, s := range sentences(doc) {
		for _, re := range boilerplate {
			if re.MatchString(s) {
				continue next
			}
		}
		out = append(out, s)
	}
	return out
}

// docStats is one package's count.
type docStats struct {
	pkg                          string
	ids, withDoc, multi, bareDoc int
	missing                      []string
}

func collectDocs(p *packages.Package) docStats {
	idx := docIndex(p.Fset, p.Syntax)
	st := docStats{pkg: p.PkgPath}
	ids, _ := surface(p.Types, func(types.Type) bool { return false })
	objs := surfaceObjects(p.Types)
	for _, id := range ids {
		obj := objs[id]
		if obj == nil {
			continue
		}
		st.ids++
		doc, ok := idx[p.Fset.Position(obj.Pos())]
		if !ok {
			// Declared elsewhere (a generic instantiation, an alias's
			// target): judged where it is declared.
			st.withDoc++
			continue
		}
		m := meaningful(doc)
		switch {
		case doc == "":
			st.missing = append(st.missing, id+": no doc comment")
		case len(m) == 0:
			st.bareDoc++
			st.missing = append(st.missing, id+": only generated boilerplate: "+strings.Join(strings.Fields(doc), " "))
		default:
			st.withDoc++
			if len(m) > 1 {
				st.multi++
			}
		}
	}
	return st
}

// surfaceObjects maps surface's identifiers to their objects.
func surfaceObjects(pkg *types.Package) map[string]types.Object {
	out := map[string]types.Object{}
	sc := pkg.Scope()
	short := pkg.Name()
	for _, name := range sc.Names() {
		obj := sc.Lookup(name)
		if !obj.Exported() {
			continue
		}
		id := short + "." + name
		out[id] = obj
		tn, ok := obj.(*types.TypeName)
		if !ok || tn.IsAlias() {
			continue
		}
		named, ok := tn.Type().(*types.Named)
		if !ok {
			continue
		}
		if st, ok := named.Underlying().(*types.Struct); ok {
			for i := 0; i < st.NumFields(); i++ {
				if f := st.Field(i); f.Exported() && !f.Embedded() {
					out[id+"."+f.Name()] = f
				}
			}
		}
		if it, ok := named.Underlying().(*types.Interface); ok {
			for i := 0; i < it.NumExplicitMethods(); i++ {
				m := it.ExplicitMethod(i)
				out[id+"."+m.Name()] = m
			}
		}
		for i := 0; i < named.NumMethods(); i++ {
			if m := named.Method(i); m.Exported() {
				out[id+"."+m.Name()] = m
			}
		}
	}
	return out
}

// TestEveryExportedIdentifierDocumented fails on any exported identifier
// of the manual's packages without a doc comment, or whose doc comment is
// only generated boilerplate ("It calls ICorProfilerInfo::X.", "X is
// COR_PRF_Y."). It logs, per package, the count of exported identifiers,
// of those documented, and of those whose doc has more than one sentence;
// CLRPROF_DOCCOUNT=path writes the same figures and the missing list to a
// file.
func TestEveryExportedIdentifierDocumented(t *testing.T) {
	var report strings.Builder
	for _, p := range loadDocumented(t) {
		st := collectDocs(p)
		line := fmt.Sprintf("%s: %d exported identifiers, %d documented, %d with more than one sentence, %d undocumented, %d boilerplate only",
			st.pkg, st.ids, st.withDoc, st.multi, len(st.missing)-st.bareDoc, st.bareDoc)
		t.Log(line)
		fmt.Fprintln(&report, line)
		for _, m := range st.missing {
			fmt.Fprintln(&report, "  ", m)
			if os.Getenv("CLRPROF_DOCCOUNT") == "" {
				t.Errorf("%s", m)
			}
		}
	}
	if path := os.Getenv("CLRPROF_DOCCOUNT"); path != "" {
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBoilerplateDetector pins what counts as boilerplate.
func TestBoilerplateDetector(t *testing.T) {
	for _, c := range []struct {
		doc  string
		want int
	}{
		{"It calls ICorProfilerInfo::GetCodeInfo.\nWhen the runtime answers CORPROF_E_DATAINCOMPLETE (part of the answer\nis not known yet), the outputs it did fill are returned with that error.", 0},
		{"MonitorAll is COR_PRF_MONITOR_ALL.", 0},
		{"JITInlining is ICorProfilerCallback::JITInlining.", 0},
		{"CodeInfoResult holds the outputs of ICorProfilerInfo::GetCodeInfo.", 0},
		{"GetCodeInfo returns where a function's native code starts and its size.\n\nIt calls ICorProfilerInfo::GetCodeInfo.", 1},
		{"MonitorAll asks for every callback, e.g. the GC ones (COR_PRF_MONITOR_ALL).", 1},
		{"Needs .NET Core 3.1. Fails on 2.1.", 2},
	} {
		if got := len(meaningful(c.doc)); got != c.want {
			t.Errorf("meaningful(%q) = %d sentences %q, want %d", c.doc, got, meaningful(c.doc), c.want)
		}
	}
}

// flagName matches the names of parameters that carry flags.
var flagName = regexp.MustCompile(`(?i)(flags?|mask\d?|events(low|high)?)$`)

// bareFlagParams lists the exported functions and methods whose parameter
// (or named result) is called like a flag set but typed as a bare integer.
func bareFlagParams(pkg *types.Package) []string {
	var out []string
	check := func(id string, sig *types.Signature) {
		for _, tu := range []*types.Tuple{sig.Params(), sig.Results()} {
			for i := 0; i < tu.Len(); i++ {
				v := tu.At(i)
				if !flagName.MatchString(v.Name()) {
					continue
				}
				if b, ok := types.Unalias(v.Type()).(*types.Basic); ok && b.Info()&types.IsInteger != 0 {
					out = append(out, fmt.Sprintf("%s: %s %s", id, v.Name(), b.Name()))
				}
			}
		}
	}
	objs := surfaceObjects(pkg)
	var ids []string
	for id := range objs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if f, ok := objs[id].(*types.Func); ok {
			check(id, f.Type().(*types.Signature))
		}
	}
	return out
}

// TestNoBareFlagParameters fails on an exported parameter or result named
// like a flag set (flags, ...Flags, mask) whose type is a bare integer: it
// must have its named flag type (metadata.CorOpenFlags, profiler.CodegenFlags, ...).
func TestNoBareFlagParameters(t *testing.T) {
	n := 0
	for _, p := range loadDocumented(t) {
		for _, b := range bareFlagParams(p.Types) {
			n++
			t.Errorf("%s: a flag parameter typed as a bare integer (give it its named type)", b)
		}
	}
	t.Logf("%d bare flag parameters", n)
}
