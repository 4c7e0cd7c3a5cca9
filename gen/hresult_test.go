package gen

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestParseErrorHeaderGolden(t *testing.T) {
	checkGolden(t, "hresult", ParseErrorHeader)
}

var hresultErrorCases = []errorCase{
	{"lex", "#define A EMAKEHR(0x1)\n#define B 0x8013\x01\n", "2:17", "unexpected character"},
	{"code", "#define A 0x80131500\nint x;\n", "2:1", "only preprocessor directives"},
	{"unknown name", "#define A 0x80131500\n#define B  E_NOT_A_WINERROR_NAME\n", "2:12", "B is not an HRESULT: unknown name E_NOT_A_WINERROR_NAME"},
	{"unknown macro", "#define A SOMEHR(0x1)\n", "1:11", "unknown macro SOMEHR"},
	{"string", "#define A \"text\"\n", "1:11", "A is not an HRESULT"},
	{"syntax", "#define A EMAKEHR(0x1\n", "1:19", "A is not an HRESULT"},
	{"too big", "#define A 0x100000000\n", "1:11", "does not fit in 32 bits"},
	{"too small", "#define A (-0x80000001)\n", "1:11", "does not fit in 32 bits"},
	{"redefined", "#define A EMAKEHR(0x1)\n#define A EMAKEHR(0x2)\n", "2:9", "redefined"},
	{"wrong arity", "#define EMAKEHR(val) MAKE_HRESULT(1, 0x13, val)\n#define A EMAKEHR(1, 2)\n", "2:11", "unknown macro EMAKEHR"},
	{"endif", "#define A 1\n#endif\n", "2:1", "#endif without #if"},
	{"recursive", "#define EMAKEHR(val) EMAKEHR(val)\n#define A EMAKEHR(1)\n", "2:11", "macro expansion too deep"},
	{"continued", "#define A \\\n   (0x80131500 + \\\n    )\n", "3:5", "A is not an HRESULT"},
}

func TestParseErrorHeaderErrors(t *testing.T) {
	checkErrors(t, ParseErrorHeader, hresultErrorCases)
}

func TestParseErrorHeaderDuplicate(t *testing.T) {
	f, err := ParseErrorHeader("dup.h", []byte("#define A EMAKEHR(0x1)\n#define A ((HRESULT)0x80130001L)\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Consts) != 1 || f.Consts[0].Value != -0x7fecffff {
		t.Errorf("got:\n%s", renderFile(f))
	}
}

func FuzzParseErrorHeader(f *testing.F) {
	seedFuzz(f, "hresult", hresultErrorCases)
	f.Fuzz(func(t *testing.T, src []byte) {
		file, err := ParseErrorHeader("fuzz.h", src)
		checkFuzzResult(t, file, err)
	})
}

var (
	reObjectDefine = regexp.MustCompile(`(?m)^#define[ \t]+(\w+)[ \t]+(\S[^\n]*?)[ \t]*$`)
	reMakeHR       = regexp.MustCompile(`^([SE])MAKEHR\((0x[0-9a-fA-F]+)\)$`)
	reTypedefHR    = regexp.MustCompile(`^_HRESULT_TYPEDEF_\((0x[0-9a-fA-F]+)L\)$`)
)

// TestParseErrorHeaderRealInputs parses corerror.h of each runtime and checks
// every HRESULT against a value computed from the raw text.
func TestParseErrorHeaderRealInputs(t *testing.T) {
	dir := inputDir(t)
	for _, v := range inputVersions {
		t.Run(versionName(v), func(t *testing.T) {
			raw := readInput(t, dir, v, "corerror.h")
			f, err := ParseErrorHeader("corerror.h", raw)
			if err != nil {
				t.Fatal(err)
			}
			// Object-like defines with a value, except the facility.
			var names, bodies []string
			for _, m := range reObjectDefine.FindAllStringSubmatch(string(raw), -1) {
				if strings.HasPrefix(m[1], "FACILITY_") {
					continue
				}
				names = append(names, m[1])
				bodies = append(bodies, m[2])
			}
			if len(names) != len(f.Consts) {
				t.Fatalf("%d HRESULTs parsed, %d defines in the text", len(f.Consts), len(names))
			}
			computed := 0
			for i, k := range f.Consts {
				if k.Name != names[i] {
					t.Fatalf("HRESULT %d is %s, text says %s", i, k.Name, names[i])
				}
				var want uint64
				switch m, mt := reMakeHR.FindStringSubmatch(bodies[i]), reTypedefHR.FindStringSubmatch(bodies[i]); {
				case m != nil:
					code, err := strconv.ParseUint(m[2], 0, 16)
					if err != nil {
						t.Fatal(err)
					}
					want = 0x00130000 | code
					if m[1] == "E" {
						want |= 0x80000000
					}
				case mt != nil:
					if want, err = strconv.ParseUint(mt[1], 0, 32); err != nil {
						t.Fatal(err)
					}
				default:
					continue
				}
				computed++
				if k.Value != int64(int32(uint32(want))) {
					t.Errorf("%s = %#x, want %#x from %s", k.Name, uint32(k.Value), want, bodies[i])
				}
				if k.Expr != bodies[i] {
					t.Errorf("%s: Expr %q, text %q", k.Name, k.Expr, bodies[i])
				}
			}
			if computed < len(f.Consts)-16 {
				t.Errorf("only %d of %d values computed independently", computed, len(f.Consts))
			}
			t.Logf("%s: %d HRESULTs", versionName(v), len(f.Consts))

			// Known values, including the winerror.h forms.
			byName := map[string]int64{}
			for _, k := range f.Consts {
				byName[k.Name] = k.Value
			}
			for name, want := range map[string]uint32{
				"META_E_BAD_SIGNATURE":            0x80131192,
				"CLDB_S_TRUNCATION":               0x00131106,
				"CORDBG_E_UNRECOVERABLE_ERROR":    0x80131300,
				"CORDBG_E_PROCESS_TERMINATED":     0x80131301,
				"CORPROF_E_FUNCTION_NOT_COMPILED": 0x80131350,
				"COR_E_ARGUMENT":                  0x80070057, // E_INVALIDARG
				"COR_E_INVALIDCAST":               0x80004002, // E_NOINTERFACE
				"COR_E_OUTOFMEMORY":               0x8007000E,
				"COR_E_NULLREFERENCE":             0x80004003, // E_POINTER
				"COR_E_UNAUTHORIZEDACCESS":        0x80070005,
				"COR_E_ARITHMETIC":                0x80070216, // ArithmeticException.HResult
				"COR_E_FILENOTFOUND":              0x80070002,
				"COR_E_DIRECTORYNOTFOUND":         0x80070003,
				"COR_E_PATHTOOLONG":               0x800700CE,
				"COR_E_ENDOFSTREAM":               0x80070026,
				"COR_E_STACKOVERFLOW":             0x800703E9,
				"COR_E_AMBIGUOUSMATCH":            0x8000211D,
				"COR_E_BADIMAGEFORMAT":            0x8007000B,
			} {
				got, ok := byName[name]
				if !ok || got != int64(int32(want)) {
					t.Errorf("%s = %#x (found %v), want %#x", name, uint32(got), ok, want)
				}
			}
		})
	}
}
