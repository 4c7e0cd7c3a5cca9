package gen

import (
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

func TestParseConstHeaderGolden(t *testing.T) {
	checkGolden(t, "consts", ParseConstHeader)
}

var constErrorCases = []errorCase{
	{"lex", "#define A 1\ntypedef int @x;\n  $ `\n", "3:5", "unexpected character"},
	{"else without if", "#define A 1\n#else\n", "2:1", "#else without #if"},
	{"bad if", "#if (1 +\n#endif\n", "1:1", "in #if"},
	{"enum syntax", "typedef enum E\n{\n    A = 1,\n    B\n    C = 2,\n} E;\n", "5:5", "expected ',' or '}'"},
	{"enum missing name", "typedef enum E\n{\n    A,\n    = 2,\n} E;\n", "4:5", "expected a name"},
	{"enum unbalanced", "typedef enum E\n{\n    A = (1,\n} E;\n", "3:9", "unexpected end of file"},
	{"enum no declarator end", "typedef enum E { A } E\n", "2:1", `expected ',' or ';'`},
	{"enumerator twice in enum", "enum E { A, B, A };\n", "1:16", "declared twice"},
	{"enumerator twice", "typedef enum { A = 1 } E1;\n\ntypedef enum { A = 1 } E2;\n", "3:16", "declared twice"},
	{"define redefined", "#define FX 1\n#define FX 2\n", "2:9", "redefined"},
	{"string redefined", "#define FX \"a\"\n#define FX \"b\"\n", "2:9", "redefined"},
	{"stray brace", "typedef int A;\n  }\n", "2:3", "unexpected '}'"},
	{"unterminated", "typedef struct { int x; } S;\nstatic int x\n", "2:1", "not terminated"},
}

func TestParseConstHeaderErrors(t *testing.T) {
	checkErrors(t, ParseConstHeader, constErrorCases)
}

func TestParseConstHeaderSkips(t *testing.T) {
	// Identical redefinitions are accepted once; what does not evaluate is
	// skipped without error.
	src := "#define A 1\n#define A 1\n#define B A +\n#define C (A << 70)\n#define D sizeof(int)\n" +
		"typedef enum { X = B } E;\nstruct S { int f() { return 1; } };\n"
	f, err := ParseConstHeader("skips.h", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Consts) != 1 || f.Consts[0].Name != "A" || len(f.Enums) != 0 || len(f.Structs) != 0 {
		t.Errorf("got:\n%s", renderFile(f))
	}
}

func TestMacroExpansionCaps(t *testing.T) {
	// A self-referencing macro and a doubling chain must stop, not recurse
	// or blow up.
	var b strings.Builder
	b.WriteString("#define LOOP(x) LOOP(x)\n#define L LOOP(1)\n#define M0(x) (x)\n")
	for i := 1; i <= 40; i++ {
		b.WriteString("#define M" + strconv.Itoa(i) + "(x) (M" + strconv.Itoa(i-1) + "(x) + M" + strconv.Itoa(i-1) + "(x))\n")
	}
	b.WriteString("#define BIG M40(1)\n#define SMALL M3(1)\n")
	f, err := ParseConstHeader("caps.h", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Consts) != 1 || f.Consts[0].Name != "SMALL" || f.Consts[0].Value != 8 {
		t.Errorf("got:\n%s", renderFile(f))
	}
}

func FuzzParseConstHeader(f *testing.F) {
	seedFuzz(f, "consts", constErrorCases)
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseConstHeader("fuzz.h", src)
		checkFuzzResult(t, file, err)
	})
}

var (
	reEnumDef    = regexp.MustCompile(`typedef\s+enum\s*(\w*)\s*(?::\s*\w+\s*)?\{([^}]*)\}\s*(\w+)\s*;`)
	reDirective  = regexp.MustCompile(`(?m)^[ \t]*#.*$`)
	reLiteral    = regexp.MustCompile(`^(\w+)\s*=\s*(0[xX][0-9a-fA-F]+|[0-9]+)$`)
	reNilToken   = regexp.MustCompile(`#define\s+(md\w+Nil)\s+\(\((md\w+)\)(mdt\w+)\)`)
	reStrDefine  = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*define[ \t]+(\w+)[ \t]+(?:L|W\()?"`)
	reTokenAlias = regexp.MustCompile(`typedef\s+mdToken\s+(\w+)\s*;`)
)

// TestParseConstHeaderRealInputs parses corhdr.h of each runtime and checks
// it against what regular expressions find in the raw text, and known facts.
func TestParseConstHeaderRealInputs(t *testing.T) {
	dir := inputDir(t)
	for _, v := range inputVersions {
		t.Run(versionName(v), func(t *testing.T) {
			raw := readInput(t, dir, v, "corhdr.h")
			f, err := ParseConstHeader("corhdr.h", raw)
			if err != nil {
				t.Fatal(err)
			}
			text := reDirective.ReplaceAllString(stripComments(string(raw)), "")

			// Enums: every typedef enum, its enumerators in order, and the
			// values written as plain numbers.
			literal := map[string]int64{}
			defs := reEnumDef.FindAllStringSubmatch(text, -1)
			if len(defs) != len(f.Enums) {
				t.Errorf("%d enums parsed, %d typedef enums in the text", len(f.Enums), len(defs))
			}
			enumerators := 0
			for _, d := range defs {
				e := f.Enum(d[3])
				if e == nil {
					t.Errorf("enum %s not parsed", d[3])
					continue
				}
				if e.Tag != d[1] {
					t.Errorf("enum %s: tag %q, text says %q", e.Name, e.Tag, d[1])
				}
				var entries []string
				for _, s := range strings.Split(d[2], ",") {
					if s = strings.TrimSpace(s); s != "" {
						entries = append(entries, s)
					}
				}
				if len(entries) != len(e.Values) {
					t.Errorf("enum %s: %d enumerators parsed, %d in the text", e.Name, len(e.Values), len(entries))
					continue
				}
				enumerators += len(entries)
				for i, s := range entries {
					name := strings.TrimSpace(strings.SplitN(s, "=", 2)[0])
					if e.Values[i].Name != name {
						t.Errorf("enum %s[%d] = %s, text says %s", e.Name, i, e.Values[i].Name, name)
					}
					if m := reLiteral.FindStringSubmatch(s); m != nil {
						want, err := strconv.ParseInt(m[2], 0, 64)
						if err != nil {
							t.Fatal(err)
						}
						literal[name] = want
						if e.Values[i].Value != want {
							t.Errorf("%s = %#x, text says %s", name, e.Values[i].Value, m[2])
						}
					}
				}
			}
			if len(literal) < 300 {
				t.Errorf("only %d enumerators with literal values checked", len(literal))
			}

			consts := map[string]*Const{}
			var strs []string
			for _, k := range f.Consts {
				consts[k.Name] = k
				if k.Kind == ConstString {
					strs = append(strs, k.Name)
				}
			}
			// Nil tokens: ((mdTypeDef)mdtTypeDef) is the mdt value.
			nils := reNilToken.FindAllStringSubmatch(stripComments(string(raw)), -1)
			if len(nils) < 20 {
				t.Errorf("only %d nil tokens in the text", len(nils))
			}
			for _, m := range nils {
				k := consts[m[1]]
				if k == nil || k.Kind != ConstInt || k.Value != literal[m[3]] {
					t.Errorf("%s = %+v, want %#x (%s)", m[1], k, literal[m[3]], m[3])
				}
			}
			// String defines: the same set of names.
			var wantStrs []string
			seen := map[string]bool{}
			for _, m := range reStrDefine.FindAllStringSubmatch(string(raw), -1) {
				if !seen[m[1]] {
					seen[m[1]] = true
					wantStrs = append(wantStrs, m[1])
				}
			}
			sort.Strings(strs)
			sort.Strings(wantStrs)
			if strings.Join(strs, " ") != strings.Join(wantStrs, " ") {
				t.Errorf("string constants:\n parsed %v\n text   %v", strs, wantStrs)
			}
			// Token typedefs.
			aliases := reTokenAlias.FindAllStringSubmatch(text, -1)
			typedefs := map[string]*Typedef{}
			for _, td := range f.Typedefs {
				typedefs[td.Name] = td
			}
			for _, m := range aliases {
				if td := typedefs[m[1]]; td == nil || td.Type.String() != "mdToken" {
					t.Errorf("typedef %s = %+v, want mdToken", m[1], td)
				}
			}
			if len(aliases) < 25 {
				t.Errorf("only %d mdToken typedefs in the text", len(aliases))
			}
			t.Logf("%s: %d enums, %d enumerators, %d consts (%d strings), %d typedefs, %d structs",
				versionName(v), len(f.Enums), enumerators, len(f.Consts), len(strs), len(f.Typedefs), len(f.Structs))

			// Known facts.
			value := func(enum, name string) int64 {
				t.Helper()
				e := f.Enum(enum)
				if e == nil {
					t.Fatalf("no enum %s", enum)
				}
				for _, ev := range e.Values {
					if ev.Name == name {
						return ev.Value
					}
				}
				t.Fatalf("%s has no %s", enum, name)
				return 0
			}
			for _, c := range []struct {
				enum, name string
				want       int64
			}{
				{"CorTokenType", "mdtTypeDef", 0x02000000},
				{"CorTokenType", "mdtString", 0x70000000},
				{"CorElementType", "ELEMENT_TYPE_GENERICINST", 0x15},
				{"CorElementType", "ELEMENT_TYPE_SENTINEL", 0x41},
				{"CorElementType", "ELEMENT_TYPE_PINNED", 0x45},
				{"CorSerializationType", "SERIALIZATION_TYPE_SZARRAY", 0x1d},
				{"CorILMethodFlags", "CorILMethod_FormatMask", 7},
				{"CorCheckDuplicatesFor", "MDDupDefault", 0x102818},
				{"CorCheckDuplicatesFor", "MDDupENC", 0xffffffff},
				{"CorAttributeTargets", "catAll", 0x5fff},
				{"CorExceptionFlag", "COR_ILEXCEPTION_CLAUSE_NONE", 0},
				{"CorExceptionFlag", "COR_ILEXCEPTION_CLAUSE_FINALLY", 2},
				{"ReplacesCorHdrNumericDefines", "COR_VERSION_MAJOR", 2},
				{"CorCallingConvention", "IMAGE_CEE_CS_CALLCONV_HASTHIS", 0x20},
			} {
				if got := value(c.enum, c.name); got != c.want {
					t.Errorf("%s = %#x, want %#x", c.name, got, c.want)
				}
			}
			sizes := map[string]int{"CorElementType": 36, "CorTokenType": 28, "CorCallingConvention": 17, "CorOpenFlags": 12}
			if v == "v3.1" {
				sizes["CorTokenType"] = 27 // no mdtNestedClass
				sizes["CorCallingConvention"] = 13
			}
			for name, n := range sizes {
				if e := f.Enum(name); e == nil || len(e.Values) != n {
					t.Errorf("%s has %v values, want %d", name, e, n)
				}
			}
			if e := f.Enum("CompilationRelaxationEnum"); e == nil || e.Tag != "CompilationRelaxationsEnum" {
				t.Errorf("CompilationRelaxationEnum = %+v", e)
			}
			for name, want := range map[string]int64{"mdTypeDefNil": 0x02000000, "mdTokenNil": 0, "IMAGE_CEE_CS_CALLCONV_DEFAULT_HASTHIS": 0x20, "IMAGE_CEE_CS_CALLCONV_INSTANTIATION": 0xa} {
				if k := consts[name]; k == nil || k.Value != want {
					t.Errorf("%s = %+v, want %#x", name, k, want)
				}
			}
			if k := consts["COR_CTOR_METHOD_NAME_W"]; k == nil || k.Str != ".ctor" || k.Expr != `W(".ctor")` {
				t.Errorf("COR_CTOR_METHOD_NAME_W = %+v", k)
			}
			if k := consts["DESCR_GROUP_METHODIMPL"]; k == nil || k.Value != 1 {
				t.Errorf("anonymous enum DESCR_GROUP_METHODIMPL = %+v", k)
			}
			wantToken := map[string]string{"": "uint32_t", "v3.1": "ULONG32"}[v]
			if td := typedefs["mdToken"]; td == nil || td.Type.String() != wantToken {
				t.Errorf("mdToken = %+v, want %s", td, wantToken)
			}
			if td := typedefs["PCCOR_SIGNATURE"]; td == nil || td.Type.String() != "const COR_SIGNATURE*" {
				t.Errorf("PCCOR_SIGNATURE = %+v", td)
			}
			if td := typedefs["HCORENUM"]; td == nil || td.Type.String() != "void*" {
				t.Errorf("HCORENUM = %+v", td)
			}
			structs := map[string]*Struct{}
			for _, s := range f.Structs {
				structs[s.Name] = s
			}
			fat := structs["IMAGE_COR_ILMETHOD_FAT"]
			if fat == nil || len(fat.Fields) != 5 {
				t.Fatalf("IMAGE_COR_ILMETHOD_FAT = %+v", fat)
			}
			for i, want := range []struct {
				name string
				bits int
			}{{"Flags", 12}, {"Size", 4}, {"MaxStack", 16}, {"CodeSize", 0}, {"LocalVarSigTok", 0}} {
				if fl := fat.Fields[i]; fl.Name != want.name || fl.Bits != want.bits {
					t.Errorf("IMAGE_COR_ILMETHOD_FAT field %d = %s:%d, want %s:%d", i, fl.Name, fl.Bits, want.name, want.bits)
				}
			}
			clause := structs["IMAGE_COR_ILMETHOD_SECT_EH_CLAUSE_FAT"]
			if clause == nil || len(clause.Fields) != 6 {
				t.Fatalf("IMAGE_COR_ILMETHOD_SECT_EH_CLAUSE_FAT = %+v", clause)
			}
			if u := clause.Fields[5].Nested; u == nil || !u.Union || clause.Fields[5].Name != "" || len(u.Fields) != 2 || u.Fields[1].Name != "FilterOffset" {
				t.Errorf("IMAGE_COR_ILMETHOD_SECT_EH_CLAUSE_FAT's anonymous union = %+v", clause.Fields[5])
			}
			if clause.Fields[0].Type.Name != "CorExceptionFlag" {
				t.Errorf("clause Flags type %s", clause.Fields[0].Type)
			}
			if eh := structs["IMAGE_COR_ILMETHOD_SECT_EH_FAT"]; eh == nil || eh.Fields[1].Type.ArrayLen != "1" {
				t.Errorf("IMAGE_COR_ILMETHOD_SECT_EH_FAT = %+v", eh)
			}
			if u := structs["IMAGE_COR_ILMETHOD"]; u == nil || !u.Union {
				t.Errorf("IMAGE_COR_ILMETHOD = %+v", u)
			}
		})
	}
}
