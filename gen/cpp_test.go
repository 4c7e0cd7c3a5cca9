package gen

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/uuid"
)

var update = flag.Bool("update", false, "rewrite the .golden files of the header parser tests")

// ---------------------------------------------------------------------------
// Helpers shared by the header parser tests.

// renderFile prints a File in a stable textual form for golden tests.
func renderFile(f *File) string {
	var b strings.Builder
	pos := func(p Pos) string { return fmt.Sprintf("@%d:%d", p.Line, p.Col) }
	typ := func(t TypeRef) string {
		s := t.String()
		if t.Array {
			s += "[" + t.ArrayLen + "]"
		}
		return s
	}
	param := func(indent string, p *Param) {
		fmt.Fprintf(&b, "%sparam %s %s %s", indent, p.Dir, typ(p.Type), p.Name)
		if p.Optional {
			b.WriteString(" optional")
		}
		if p.Retval {
			b.WriteString(" retval")
		}
		if p.SizeIs != "" {
			fmt.Fprintf(&b, " size_is=%q", p.SizeIs)
		}
		if p.LengthIs != "" {
			fmt.Fprintf(&b, " length_is=%q", p.LengthIs)
		}
		fmt.Fprintf(&b, " %s\n", pos(p.Pos))
	}
	// hex shows negative 32-bit values (HRESULTs) as their unsigned bits.
	hex := func(v int64) string {
		if v < 0 && v >= -1<<31 {
			return fmt.Sprintf("0x%08x", uint32(v))
		}
		return fmt.Sprintf("%#x", v)
	}
	var structBody func(indent string, s *Struct)
	structBody = func(indent string, s *Struct) {
		for _, fl := range s.Fields {
			ft := typ(fl.Type)
			if fl.Nested != nil && fl.Type.Name == "" {
				ft = "(nested)"
			}
			fmt.Fprintf(&b, "%sfield %s %q", indent, ft, fl.Name)
			if fl.Bits != 0 {
				fmt.Fprintf(&b, " bits=%d", fl.Bits)
			}
			fmt.Fprintf(&b, " %s\n", pos(fl.Pos))
			if fl.Nested != nil {
				kind := "struct"
				if fl.Nested.Union {
					kind = "union"
				}
				fmt.Fprintf(&b, "%s  nested %s tag=%q %s\n", indent, kind, fl.Nested.Tag, pos(fl.Nested.Pos))
				structBody(indent+"    ", fl.Nested)
			}
		}
	}
	fmt.Fprintf(&b, "file %s\n", f.Name)
	for _, g := range f.GUIDs {
		fmt.Fprintf(&b, "guid %s {%s} %s\n", g.Name, g.Value, pos(g.Pos))
	}
	for _, it := range f.Interfaces {
		fmt.Fprintf(&b, "interface %s base=%q iid={%s} source=%s %s\n", it.Name, it.Base, it.IID, it.Source, pos(it.Pos))
		for _, m := range it.Methods {
			fmt.Fprintf(&b, "  method %s %s %s\n", typ(m.Ret), m.Name, pos(m.Pos))
			for _, p := range m.Params {
				param("    ", p)
			}
		}
	}
	for _, e := range f.Enums {
		fmt.Fprintf(&b, "enum %s tag=%q %s\n", e.Name, e.Tag, pos(e.Pos))
		for _, v := range e.Values {
			fmt.Fprintf(&b, "  %s = %d (%s) expr=%q %s\n", v.Name, v.Value, hex(v.Value), v.Expr, pos(v.Pos))
		}
	}
	for _, s := range f.Structs {
		kind := "struct"
		if s.Union {
			kind = "union"
		}
		fmt.Fprintf(&b, "%s %s tag=%q %s\n", kind, s.Name, s.Tag, pos(s.Pos))
		structBody("  ", s)
	}
	for _, td := range f.Typedefs {
		fmt.Fprintf(&b, "typedef %s = %s %s\n", td.Name, typ(td.Type), pos(td.Pos))
	}
	for _, ft := range f.FuncTypes {
		fmt.Fprintf(&b, "functype %s pointer=%v ret=%s %s\n", ft.Name, ft.Pointer, typ(ft.Ret), pos(ft.Pos))
		for _, p := range ft.Params {
			param("  ", p)
		}
	}
	for _, k := range f.Consts {
		switch k.Kind {
		case ConstInt:
			fmt.Fprintf(&b, "const %s int %d (%s) expr=%q %s\n", k.Name, k.Value, hex(k.Value), k.Expr, pos(k.Pos))
		case ConstString:
			fmt.Fprintf(&b, "const %s string %q expr=%q %s\n", k.Name, k.Str, k.Expr, pos(k.Pos))
		}
	}
	return b.String()
}

// checkGolden parses every .h file under testdata/dir and compares the
// rendered result with the .golden file beside it (rewritten with -update).
func checkGolden(t *testing.T, dir string, parse func(string, []byte) (*File, error)) {
	t.Helper()
	inputs, err := filepath.Glob(filepath.Join("testdata", dir, "*.h"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) == 0 {
		t.Fatalf("no fixtures in testdata/%s", dir)
	}
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			f, err := parse(filepath.Base(in), src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			got := renderFile(f)
			golden := strings.TrimSuffix(in, ".h") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("%s differs from %s (run with -update to accept):\n%s", in, golden, lineDiff(string(want), got))
			}
		})
	}
}

// lineDiff shows the first lines where want and got differ.
func lineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, w, g)
			if shown++; shown == 10 {
				break
			}
		}
	}
	return b.String()
}

// errorCase is a malformed input and where its error must point.
type errorCase struct {
	name string
	src  string
	pos  string // "line:col"
	msg  string // substring of the message
}

func checkErrors(t *testing.T, parse func(string, []byte) (*File, error), cases []errorCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parse("bad.h", []byte(tc.src))
			if err == nil {
				t.Fatalf("no error; parsed:\n%s", renderFile(f))
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is a %T, not *Error", err, err)
			}
			if f != nil {
				t.Errorf("File returned with error %v", err)
			}
			if e.Pos.File != "bad.h" {
				t.Errorf("error %v names file %q", err, e.Pos.File)
			}
			if got := fmt.Sprintf("%d:%d", e.Pos.Line, e.Pos.Col); got != tc.pos {
				t.Errorf("error %v at %s, want %s", err, got, tc.pos)
			}
			if !strings.Contains(e.Msg, tc.msg) {
				t.Errorf("error %q does not mention %q", e.Msg, tc.msg)
			}
		})
	}
}

// checkFuzzResult checks what every parser promises for any input.
func checkFuzzResult(t *testing.T, f *File, err error) {
	t.Helper()
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			t.Fatalf("error %v is a %T, not *Error", err, err)
		}
		if strings.HasPrefix(e.Msg, "internal error") {
			t.Fatalf("parser panicked: %v", err)
		}
		if e.Pos.File != "fuzz.h" || e.Pos.Line < 1 || e.Pos.Col < 1 {
			t.Fatalf("error %v has no position in fuzz.h", err)
		}
		if f != nil {
			t.Fatalf("File returned with error %v", err)
		}
		return
	}
	if f == nil {
		t.Fatal("nil File without error")
	}
	_ = renderFile(f)
}

// seedFuzz adds the fixtures of testdata/dir and the error cases as seeds.
func seedFuzz(f *testing.F, dir string, cases []errorCase) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", dir, "*.h"))
	if len(inputs) == 0 {
		f.Fatalf("no fixtures in testdata/%s", dir)
	}
	for _, in := range inputs {
		src, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(src)
	}
	for _, tc := range cases {
		f.Add([]byte(tc.src))
	}
}

// inputDir is where the real generator inputs are: $CLRPROF_IDL, else
// ../../shared/idl from the package directory. The test is skipped only when
// that directory does not exist.
func inputDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("CLRPROF_IDL")
	if dir == "" {
		dir = filepath.Join("..", "..", "shared", "idl")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Skipf("generator inputs not found in %s (set CLRPROF_IDL): skipping the tests on real inputs", dir)
	}
	return dir
}

// inputVersions are the subdirectories of inputDir holding each runtime's files.
var inputVersions = []string{"", "v3.1"}

func readInput(t *testing.T, dir, version, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(filepath.Join(dir, version, name))
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func versionName(v string) string {
	if v == "" {
		return "current"
	}
	return v
}

// stripComments replaces C comments by a space, scanning left to right so
// that "//" and "/*" inside comments and string literals are not markers.
func stripComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			for i < len(s) && s[i] != '\n' {
				i++
			}
			b.WriteByte('\n')
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			b.WriteString(strings.Repeat("\n", strings.Count(s[i:i+2+end], "\n")) + " ")
			i += end + 3
		case s[i] == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' && s[j] != '\n' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				j = len(s) - 1
			}
			b.WriteString(s[i : j+1])
			i = j
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// ---------------------------------------------------------------------------
// ParseCppHeader

func TestParseCppHeaderGolden(t *testing.T) {
	checkGolden(t, "cpp", ParseCppHeader)
}

var cppErrorCases = []errorCase{
	{"lex", "typedef int A;\n  int `x;\n", "2:7", "unexpected character"},
	{"unclosed if", "#if 1\nint x;\n", "1:1", "#if without #endif"},
	{"interface member", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)() PURE;\n    int x;\n};\n", "4:5", "expected STDMETHOD"},
	{"interface not closed", "\nDECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)() PURE;\n", "2:1", "not closed"},
	{"missing semicolon", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)() PURE\n};\n", "4:1", `expected ";"`},
	{"missing base", "DECLARE_INTERFACE_(IFoo)\n{\n};\n", "1:24", `expected ","`},
	{"bad param", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(ULONG x y) PURE;\n};\n", "3:26", `expected ")"`},
	{"missing type", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(ULONG x, ) PURE;\n};\n", "3:27", "expected a type"},
	{"unknown SAL", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(_Out_writes_sometimes_(n) LPWSTR s) PURE;\n};\n", "3:18", "unknown SAL annotation _Out_writes_sometimes_"},
	{"SAL arity", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(_Out_writes_to_opt_(n) LPWSTR s) PURE;\n};\n", "3:18", "takes 2 argument(s)"},
	{"SAL no args", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(_In_reads_ LPWSTR s) PURE;\n};\n", "3:18", "needs arguments"},
	{"empty default", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(ULONG x = ) PURE;\n};\n", "3:26", "missing default value"},
	{"varargs", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)(ULONG x, ...) PURE;\n};\n", "3:27", "variable argument"},
	{"overload", "DECLARE_INTERFACE_(IFoo, IUnknown)\n{\n    STDMETHOD(A)() PURE;\n    STDMETHOD(A)(int x) PURE;\n};\n", "4:5", "declared twice"},
	{"interface twice", "DECLARE_INTERFACE(IFoo) { };\nDECLARE_INTERFACE(IFoo) { };\n", "2:1", "declared twice"},
	{"bad IID string", "DECLARE_INTERFACE_IID_(IFoo, IUnknown, \"{nope}\") { };\n", "1:40", "bad IID"},
	{"guid range", "EXTERN_GUID(IID_X, 0x1, 0x10000, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xb);\n", "1:25", "out of range"},
	{"guid short", "EXTERN_GUID(IID_X, 0x1, 0x2, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa);\n", "1:68", `expected ","`},
	{"guid empty", "DEFINE_GUID(IID_X, 0x1, , 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xb);\n", "1:25", "missing GUID component 2"},
	{"guid bad expr", "DEFINE_GUID(IID_X, 0x1, 0x2 +, 0x3, 0x4, 0x5, 0x6, 0x7, 0x8, 0x9, 0xa, 0xb);\n", "1:29", "unexpected end of expression"},
	{"guid redefined", "EXTERN_GUID(G, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);\nEXTERN_GUID(G, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12);\n", "2:1", "redefined"},
	{"enum syntax", "typedef enum\n{\n    A = 1,\n    B C,\n} E;\n", "4:7", "expected ',' or '}'"},
	{"enum empty value", "typedef enum\n{\n    A = ,\n} E;\n", "3:7", "missing value for A"},
	{"enum not closed", "typedef enum\n{\n    A = 1,\n", "2:1", "enum is not closed"},
	{"enumerator twice", "typedef enum { A } E1;\ntypedef enum { B, A } E2;\n", "2:19", "declared twice"},
	{"stray brace", "int x;\n}\n", "2:1", "unexpected '}'"},
	{"unterminated declaration", "int f(int x)\n", "1:1", "not terminated"},
	{"unbalanced", "int f(int x));\n", "1:13", "unbalanced"},
	{"extern C not closed", "extern \"C\" {\nint x;\n", "1:1", "not closed"},
	{"define redefined", "#define A 1\n#define B 2\n#define A 3\n", "3:9", "redefined"},
}

func TestParseCppHeaderErrors(t *testing.T) {
	checkErrors(t, ParseCppHeader, cppErrorCases)
}

func TestParseCppHeaderNesting(t *testing.T) {
	deep := strings.Repeat("extern \"C\" {\n", maxCBlockDepth+1) + strings.Repeat("}\n", maxCBlockDepth+1)
	if _, err := ParseCppHeader("deep.h", []byte(deep)); err == nil || !strings.Contains(err.Error(), "nested too deeply") {
		t.Errorf("%d nested blocks: got %v, want a nesting error", maxCBlockDepth+1, err)
	}
	ok := strings.Repeat("extern \"C\" {\n", maxCBlockDepth) + strings.Repeat("}\n", maxCBlockDepth)
	if _, err := ParseCppHeader("ok.h", []byte(ok)); err != nil {
		t.Errorf("%d nested blocks: %v", maxCBlockDepth, err)
	}
	// Structs nested beyond the cap are skipped, not parsed recursively.
	nested := "typedef struct {" + strings.Repeat("struct {", maxCNestDepth+2) + "int x;" +
		strings.Repeat("} s;", maxCNestDepth+2) + "} Deep;\n"
	f, err := ParseCppHeader("nested.h", []byte(nested))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Structs) != 0 {
		t.Errorf("struct nested %d deep was parsed", maxCNestDepth+3)
	}
}

func FuzzParseCppHeader(f *testing.F) {
	seedFuzz(f, "cpp", cppErrorCases)
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseCppHeader("fuzz.h", src)
		checkFuzzResult(t, file, err)
	})
}

var (
	reInterface = regexp.MustCompile(`\bDECLARE_INTERFACE_?\(\s*(\w+)\s*(?:,\s*(\w+)\s*)?\)`)
	reMethod    = regexp.MustCompile(`\bSTDMETHOD(?:\s*\(\s*(\w+)\s*\)|_\s*\(([^,]+),\s*(\w+)\s*\))\s*\(`)
	reSAL       = regexp.MustCompile(`\b_\w+_\([^()]*\)|\b_(?:In|Out|Inout)\w*_\s`)
	reGUID      = regexp.MustCompile(`\b(?:EXTERN_GUID|DEFINE_GUID)\s*\(\s*(\w+)((?:\s*,\s*0[xX][0-9a-fA-F]+){11})\s*\)`)
	reGUIDText  = regexp.MustCompile(`\{([0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12})\}\s*\n(?:\s*//[^\n]*\n){0,3}\s*EXTERN_GUID\(\s*(IID_\w+)`)
)

// TestParseCppHeaderRealInputs parses cor.h of each runtime and checks the
// result against counts and values found in the raw text by regular
// expressions, and against known facts.
func TestParseCppHeaderRealInputs(t *testing.T) {
	dir := inputDir(t)
	for _, v := range inputVersions {
		t.Run(versionName(v), func(t *testing.T) {
			raw := readInput(t, dir, v, "cor.h")
			f, err := ParseCppHeader("cor.h", raw)
			if err != nil {
				t.Fatal(err)
			}
			text := stripComments(string(raw))

			// Interfaces, in order, with their bases.
			ifaces := reInterface.FindAllStringSubmatchIndex(text, -1)
			if len(ifaces) != len(f.Interfaces) {
				t.Fatalf("%d interfaces parsed, %d DECLARE_INTERFACE in the text", len(f.Interfaces), len(ifaces))
			}
			methods := 0
			for i, m := range ifaces {
				name, base := text[m[2]:m[3]], ""
				if m[4] >= 0 {
					base = text[m[4]:m[5]]
				}
				it := f.Interfaces[i]
				if it.Name != name || it.Base != base {
					t.Errorf("interface %d: parsed %s : %s, text says %s : %s", i, it.Name, it.Base, name, base)
					continue
				}
				// The body runs to the first line that starts with '}'.
				body := text[m[1]:]
				if end := regexp.MustCompile(`\n\s*}`).FindStringIndex(body); end != nil {
					body = body[:end[0]]
				}
				ms := reMethod.FindAllStringSubmatchIndex(body, -1)
				if len(ms) != len(it.Methods) {
					t.Errorf("%s: %d methods parsed, %d STDMETHOD in the text", it.Name, len(it.Methods), len(ms))
					continue
				}
				methods += len(ms)
				for j, mm := range ms {
					want := ""
					if mm[2] >= 0 {
						want = body[mm[2]:mm[3]]
					} else {
						want = body[mm[6]:mm[7]]
					}
					got := it.Methods[j]
					if got.Name != want {
						t.Errorf("%s method %d: parsed %s, text says %s", it.Name, j, got.Name, want)
						continue
					}
					// Parameters: the list up to ") PURE", without SAL
					// annotations and default values, split at commas.
					rest := body[mm[1]:]
					end := regexp.MustCompile(`\)\s*PURE`).FindStringIndex(rest)
					if end == nil {
						t.Errorf("%s.%s: no PURE", it.Name, want)
						continue
					}
					list := strings.TrimSpace(reSAL.ReplaceAllString(rest[:end[0]], " "))
					n := 0
					if list != "" && list != "void" {
						n = strings.Count(list, ",") + 1
					}
					if len(got.Params) != n {
						t.Errorf("%s.%s: %d parameters parsed, %d in %q", it.Name, want, len(got.Params), n, list)
					}
				}
				if it.IID == (uuid.UUID{}) {
					t.Errorf("%s has no IID", it.Name)
				}
			}
			t.Logf("%s: %d interfaces, %d methods, %d GUIDs, %d enums, %d structs, %d typedefs, %d consts",
				versionName(v), len(f.Interfaces), methods, len(f.GUIDs), len(f.Enums), len(f.Structs), len(f.Typedefs), len(f.Consts))

			// GUIDs: values formatted from the macro arguments.
			gs := reGUID.FindAllStringSubmatch(text, -1)
			if len(gs) != len(f.GUIDs) {
				t.Fatalf("%d GUIDs parsed, %d in the text", len(f.GUIDs), len(gs))
			}
			for i, g := range gs {
				var n [11]uint64
				for k, s := range strings.Split(strings.TrimPrefix(strings.TrimSpace(g[2]), ","), ",") {
					n[k], err = strconv.ParseUint(strings.TrimSpace(s), 0, 32)
					if err != nil {
						t.Fatal(err)
					}
				}
				want := fmt.Sprintf("%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x",
					n[0], n[1], n[2], n[3], n[4], n[5], n[6], n[7], n[8], n[9], n[10])
				if f.GUIDs[i].Name != g[1] || f.GUIDs[i].Value.String() != want {
					t.Errorf("GUID %d: parsed %s = %s, text says %s = %s", i, f.GUIDs[i].Name, f.GUIDs[i].Value, g[1], want)
				}
			}
			// IIDs: the {...} comment above each IID agrees with its value.
			comments := reGUIDText.FindAllStringSubmatch(string(raw), -1)
			if len(comments) < len(f.Interfaces) {
				t.Errorf("only %d IIDs have a {...} comment", len(comments))
			}
			byName := map[string]*GUID{}
			for _, g := range f.GUIDs {
				byName[g.Name] = g
			}
			for _, c := range comments {
				g := byName[c[2]]
				if g == nil || !strings.EqualFold(g.Value.String(), c[1]) {
					t.Errorf("%s: parsed %v, comment says %s", c[2], g, c[1])
				}
			}

			// Known facts.
			imp := f.Interface("IMetaDataImport")
			if imp == nil {
				t.Fatal("no IMetaDataImport")
			}
			if got := imp.IID.String(); got != "7dac8207-d3ae-4c75-9b67-92801a497d44" {
				t.Errorf("IID_IMetaDataImport = %s", got)
			}
			if imp.Base != "IUnknown" {
				t.Errorf("IMetaDataImport base %q", imp.Base)
			}
			for i, want := range []struct{ name, ret string }{{"CloseEnum", "void"}, {"CountEnum", "HRESULT"}, {"ResetEnum", "HRESULT"}} {
				if m := imp.Methods[i]; m.Name != want.name || m.Ret.String() != want.ret {
					t.Errorf("IMetaDataImport method %d = %s %s, want %s %s", i, m.Ret, m.Name, want.ret, want.name)
				}
			}
			props := findMethod(t, imp, "GetTypeDefProps")
			sz := findParam(t, props, "szTypeDef")
			if sz.Dir != DirOut || sz.SizeIs != "cchTypeDef" || sz.LengthIs != "*pchTypeDef" || !sz.Optional || sz.Type.String() != "LPWSTR" {
				t.Errorf("GetTypeDefProps.szTypeDef = %+v", *sz)
			}
			if p := findParam(t, props, "td"); p.Dir != DirIn {
				t.Errorf("GetTypeDefProps.td dir %s", p.Dir)
			}
			if p := findParam(t, props, "pdwTypeDefFlags"); p.Dir != DirOut || p.Type.String() != "DWORD*" {
				t.Errorf("GetTypeDefProps.pdwTypeDefFlags = %+v", *p)
			}
			enum := findMethod(t, imp, "EnumTypeDefs")
			if p := findParam(t, enum, "phEnum"); p.Dir != DirInOut {
				t.Errorf("EnumTypeDefs.phEnum dir %s", p.Dir)
			}
			if p := findParam(t, enum, "rTypeDefs"); p.Dir != DirOut || !p.Type.Array || p.Type.Name != "mdTypeDef" {
				t.Errorf("EnumTypeDefs.rTypeDefs = %+v", *p)
			}
			if p := findParam(t, findMethod(t, imp, "GetCustomAttributeProps"), "ppBlob"); p.Type.String() != "const void**" || p.Dir != DirOut {
				t.Errorf("GetCustomAttributeProps.ppBlob = %+v", *p)
			}
			if m := findMethod(t, imp, "IsValidToken"); m.Ret.String() != "BOOL" {
				t.Errorf("IsValidToken returns %s", m.Ret)
			}
			if it := f.Interface("IMetaDataImport2"); it == nil || it.Base != "IMetaDataImport" {
				t.Errorf("IMetaDataImport2 = %+v", it)
			}
			if it := f.Interface("IMetaDataTables2"); it == nil || it.Base != "IMetaDataTables" {
				t.Errorf("IMetaDataTables2 = %+v", it)
			}
			if len(f.Typedefs) == 0 || f.Typedefs[0].Name != "UVCP_CONSTANT" || f.Typedefs[0].Type.String() != "const void*" {
				t.Errorf("UVCP_CONSTANT not parsed as const void*")
			}
			if f.Enum("CorValidatorModuleType") == nil || f.Enum("CorNativeLinkType") == nil {
				t.Errorf("cor.h enums missing")
			}
			if v == "v3.1" {
				gen := f.Interface("ICeeGen")
				if gen == nil {
					t.Fatal("no ICeeGen in 3.1")
				}
				if p := findParam(t, findMethod(t, gen, "EmitString"), "lpString"); p.Dir != DirIn || p.Optional {
					t.Errorf("ICeeGen.EmitString lpString (_In_) = %+v", *p)
				}
				if p := findParam(t, findMethod(t, gen, "GetString"), "lpString"); p.Dir != DirOut || !p.Optional {
					t.Errorf("ICeeGen.GetString lpString (_Out_opt_) = %+v", *p)
				}
				if m := findMethod(t, gen, "GetSectionBlock"); len(m.Params) != 4 || m.Params[3].Name != "ppBytes" {
					t.Errorf("ICeeGen.GetSectionBlock with default values: %d params", len(m.Params))
				}
				if f.Enum("CeeSectionRelocType") == nil {
					t.Errorf("CeeSectionRelocType missing")
				}
			}
		})
	}
}

func findMethod(t *testing.T, it *Interface, name string) *Method {
	t.Helper()
	for _, m := range it.Methods {
		if m.Name == name {
			return m
		}
	}
	t.Fatalf("%s has no method %s", it.Name, name)
	return nil
}

func findParam(t *testing.T, m *Method, name string) *Param {
	t.Helper()
	for _, p := range m.Params {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("%s has no parameter %s", m.Name, name)
	return nil
}
