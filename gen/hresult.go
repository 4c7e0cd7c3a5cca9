package gen

import (
	"math"
	"strings"
)

// ParseErrorHeader parses a header of HRESULT definitions, such as
// corerror.h, into a File whose Consts are the HRESULTs in file order.
//
// Every object-like "#define NAME value" is an HRESULT, where value may be
// SMAKEHR(x), EMAKEHR(x), MAKE_HRESULT(sev, fac, code), a number such as
// 0x80131500 or ((HRESULT)0x80131500L), _HRESULT_TYPEDEF_(x),
// HRESULT_FROM_WIN32(x) / __HRESULT_FROM_WIN32(x), or the name of an earlier
// HRESULT (or of one of the winerror.h values in winerrorValues). Each
// becomes a Const of kind ConstInt whose Value is the 32-bit HRESULT as a
// signed int32 widened to int64 (EMAKEHR(0x1106) is -2146234106), and whose
// Expr is the replacement text as written.
//
// Function-like macros defined in the file (SMAKEHR, EMAKEHR) are expanded
// from their own definitions, and FACILITY_* and SEVERITY_* defines are taken
// as the inputs of those macros, not as HRESULTs; MAKE_HRESULT and the other
// winerror.h macros are built in unless the file defines them. A define that
// does not evaluate to a 32-bit value, a name defined twice with different
// values, and anything but preprocessor directives outside comments are
// errors; every error is an *Error with the file, line and column.
func ParseErrorHeader(name string, src []byte) (f *File, err error) {
	defer recoverParse(name, &f, &err)
	toks, err := Lex(name, src)
	if err != nil {
		return nil, err
	}
	pp, err := Preprocess(toks, nil)
	if err != nil {
		return nil, err
	}
	for _, t := range pp.Tokens {
		if t.Kind != TokEOF {
			return nil, errorf(t.Pos, "unexpected %s: an error header holds only preprocessor directives", t)
		}
	}
	f = &File{Name: name}
	ev := newConstEnv()
	ev.builtin = func(n string, args []int64) (int64, bool) { return hresultMacro(ev, n, args) }
	ev.fallback = func(n string) (int64, bool) {
		v, ok := winerrorValues[n]
		return v, ok
	}
	seen := map[string]*Const{}
	for _, d := range collectDefines(name, src, pp.Defines) {
		if d.Func {
			ev.macros[d.Name] = d
			continue
		}
		delete(ev.macros, d.Name)
		if d.LexErr != nil {
			return nil, d.LexErr
		}
		if len(d.Toks) == 0 {
			continue // include guards and other markers
		}
		ev.limited = false
		v, err := EvalTokens(d.Toks, ev.env(nil, 0))
		if err != nil {
			e := withPos(err, d.BodyPos).(*Error)
			msg := e.Msg
			if ev.limited {
				msg = "macro expansion too deep or too long"
			}
			return nil, &Error{Pos: e.Pos, Msg: d.Name + " is not an HRESULT: " + msg}
		}
		if v < math.MinInt32 || v > math.MaxUint32 {
			return nil, errorf(d.BodyPos, "%s = %#x does not fit in 32 bits", d.Name, v)
		}
		hr := int64(int32(uint32(v)))
		if isHresultInput(d.Name) {
			ev.names[d.Name] = v
			continue
		}
		if prev := seen[d.Name]; prev != nil {
			if prev.Value == hr {
				continue
			}
			return nil, errorf(d.NamePos, "%s redefined with a different value (previous definition at %s)", d.Name, prev.Pos)
		}
		k := &Const{Name: d.Name, Kind: ConstInt, Value: hr, Expr: d.Body, Source: name, Pos: d.NamePos}
		seen[d.Name] = k
		ev.names[d.Name] = hr
		f.Consts = append(f.Consts, k)
	}
	return f, nil
}

// isHresultInput reports whether a define names a facility or severity code,
// an input of MAKE_HRESULT rather than an HRESULT.
func isHresultInput(name string) bool {
	return strings.HasPrefix(name, "FACILITY_") || strings.HasPrefix(name, "SEVERITY_")
}

// winerrorValues are the winerror.h names that corerror.h uses without
// defining them.
var winerrorValues = map[string]int64{
	"SEVERITY_SUCCESS": 0,
	"SEVERITY_ERROR":   1,
	"FACILITY_NULL":    0,
	"FACILITY_ITF":     4,
	"FACILITY_WIN32":   7,

	"S_OK":           0,
	"S_FALSE":        1,
	"E_NOTIMPL":      0x80004001,
	"E_NOINTERFACE":  0x80004002,
	"E_POINTER":      0x80004003,
	"E_ABORT":        0x80004004,
	"E_FAIL":         0x80004005,
	"E_UNEXPECTED":   0x8000FFFF,
	"E_ACCESSDENIED": 0x80070005,
	"E_HANDLE":       0x80070006,
	"E_OUTOFMEMORY":  0x8007000E,
	"E_INVALIDARG":   0x80070057,

	"ERROR_FILE_NOT_FOUND":       2,
	"ERROR_PATH_NOT_FOUND":       3,
	"ERROR_HANDLE_EOF":           38,
	"ERROR_FILENAME_EXCED_RANGE": 206,
	"ERROR_ARITHMETIC_OVERFLOW":  534,
	"ERROR_STACK_OVERFLOW":       1001,
}

// hresultMacro evaluates the winerror.h macros (and SMAKEHR/EMAKEHR when the
// file does not define them).
func hresultMacro(ev *constEnv, name string, args []int64) (int64, bool) {
	lookup := func(n string) int64 {
		if v, ok := ev.names[n]; ok {
			return v
		}
		return winerrorValues[n]
	}
	makeHR := func(sev, fac, code int64) int64 {
		return int64(uint32(sev)<<31 | uint32(fac)<<16 | uint32(code))
	}
	switch {
	case name == "MAKE_HRESULT" && len(args) == 3:
		return makeHR(args[0], args[1], args[2]), true
	case (name == "SMAKEHR" || name == "EMAKEHR") && len(args) == 1:
		fac, ok := ev.names["FACILITY_URT"]
		if !ok {
			fac = 0x13
		}
		sev := lookup("SEVERITY_SUCCESS")
		if name == "EMAKEHR" {
			sev = lookup("SEVERITY_ERROR")
		}
		return makeHR(sev, fac, args[0]), true
	case (name == "_HRESULT_TYPEDEF_") && len(args) == 1:
		return args[0], true
	case (name == "HRESULT_FROM_WIN32" || name == "__HRESULT_FROM_WIN32") && len(args) == 1:
		x := args[0]
		if int32(uint32(x)) <= 0 {
			return x, true
		}
		return int64(uint32(x)&0xffff | uint32(lookup("FACILITY_WIN32"))<<16 | 0x80000000), true
	}
	return 0, false
}
