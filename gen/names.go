package gen

import (
	"go/token"
	"strings"
	"unicode"
)

// initialisms are words written in upper case in Go names.
var initialisms = map[string]string{
	"id": "ID", "ids": "IDs", "il": "IL", "jit": "JIT", "gc": "GC", "ccw": "CCW", "rcw": "RCW",
	"elt": "ELT", "com": "COM", "clr": "CLR", "api": "API", "url": "URL", "cpu": "CPU",
	"ngen": "NGen", "rejit": "ReJIT", "ip": "IP", "rva": "RVA", "utf8": "UTF8", "guid": "GUID",
	"iid": "IID", "mvid": "MVID", "ui": "UI", "os": "OS", "eh": "EH", "tls": "TLS", "sz": "SZ",
	"tbl": "Tbl", "r2r": "R2R", "nt": "NT", "pe": "PE", "md": "MD",
	// Words the C names run together, and runs of capitals that are two words.
	"rejitid": "ReJITID", "jitid": "JITID", "enterleave": "EnterLeave", "nongc": "NonGC",
	"eventpipe": "EventPipe", "largeobject": "LargeObject", "pinnedobject": "PinnedObject",
	"sbyte": "SByte", "retval": "RetVal", "inproc": "InProc", "appdomain": "AppDomain",
	"logalways": "LogAlways",
}

// splitWords splits a C identifier at underscores and lower→upper case
// changes, and before the last upper-case letter of an upper-case run that
// is followed by a lower-case letter (JITCompilation → JIT, Compilation).
func splitWords(s string) []string {
	var words []string
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		r := []rune(part)
		start := 0
		for i := 1; i < len(r); i++ {
			prev, cur := r[i-1], r[i]
			split := false
			switch {
			case unicode.IsLower(prev) && unicode.IsUpper(cur):
				split = true
			case unicode.IsDigit(prev) && unicode.IsUpper(cur) && i+1 < len(r) && unicode.IsLower(r[i+1]):
				split = true
			case unicode.IsUpper(prev) && unicode.IsUpper(cur) && i+1 < len(r) && unicode.IsLower(r[i+1]):
				split = true
			}
			if split {
				words = append(words, string(r[start:i]))
				start = i
			}
		}
		words = append(words, string(r[start:]))
	}
	return words
}

// goWord renders one word in Go casing: initialisms upper-case, others
// capitalised.
func goWord(w string) string {
	lw := strings.ToLower(w)
	if ini, ok := initialisms[lw]; ok {
		return ini
	}
	return strings.ToUpper(lw[:1]) + lw[1:]
}

// ExportedName converts a C name (SNAKE_CASE or camelCase) to an exported Go
// name: COR_PRF_MONITOR_JIT_COMPILATION → CorPrfMonitorJITCompilation.
func ExportedName(s string) string {
	var b strings.Builder
	for _, w := range splitWords(s) {
		b.WriteString(goWord(w))
	}
	out := b.String()
	if out == "" {
		return "X"
	}
	if !unicode.IsLetter([]rune(out)[0]) {
		out = "X" + out
	}
	return out
}

// LocalName converts a C parameter name to a Go parameter name:
// functionId → functionID, pICorProfilerInfoUnk → pICorProfilerInfoUnk.
func LocalName(s string) string {
	words := splitWords(s)
	if len(words) == 0 {
		return "x"
	}
	var b strings.Builder
	first := strings.ToLower(words[0])
	if ini, ok := initialisms[first]; ok && len(words) > 1 {
		first = strings.ToLower(ini)
	}
	b.WriteString(first)
	for _, w := range words[1:] {
		b.WriteString(goWord(w))
	}
	out := b.String()
	if token.IsKeyword(out) || predeclared[out] {
		out += "_"
	}
	return out
}

// ParamName converts a C parameter name to the Go parameter name a user
// reads: the Hungarian prefix is dropped like ResultName does
// (fIsSafeToBlock → isSafeToBlock, szName → name, dwMethodFlags →
// methodFlags) and names Go reserves are replaced (type → typ).
func ParamName(s string) string {
	i := 0
	for i < len(s) && unicode.IsLower(rune(s[i])) {
		i++
	}
	if i > 0 && i < len(s) && unicode.IsUpper(rune(s[i])) && hungarian(s[:i]) {
		s = s[i:]
	}
	var n string
	if ini, ok := initialisms[strings.ToLower(s)]; ok && ini == s {
		n = strings.ToLower(s) // IDs → ids
	} else {
		words := splitWords(s)
		if len(words) == 0 {
			return "x"
		}
		var b strings.Builder
		b.WriteString(strings.ToLower(goWord(words[0])))
		for _, w := range words[1:] {
			b.WriteString(goWord(w))
		}
		n = b.String()
	}
	if n == "" || !unicode.IsLetter([]rune(n)[0]) {
		n = "x" + n
	}
	if alt, ok := paramAlternatives[n]; ok {
		return alt
	}
	if token.IsKeyword(n) || predeclared[n] {
		return n + "Arg"
	}
	return n
}

var paramAlternatives = map[string]string{
	"type": "typ", "func": "fn", "len": "length", "cap": "capacity", "string": "str", "map": "m",
	"range": "rng", "select": "sel", "interface": "iface", "default": "def", "new": "newValue",
}

var predeclared = map[string]bool{
	"len": true, "cap": true, "new": true, "make": true, "copy": true, "append": true, "close": true,
	"string": true, "error": true, "bool": true, "byte": true, "rune": true, "int": true, "uint": true,
	"min": true, "max": true, "clear": true, "print": true, "panic": true, "recover": true, "real": true,
	"imag": true, "complex": true, "delete": true, "unsafe": true, "info": true, "hr": true, "ok": true,
	"err": true, "r": true, "d": true, "self": true, "C": true, "uuid": true, "iid": true,
}

// ResultName converts an out-parameter name to an exported field name,
// dropping a Hungarian prefix: pClassId → ClassID, pdwFlags → Flags,
// ppMethodHeader → MethodHeader, szName → Name.
func ResultName(s string) string {
	if n, ok := resultNameOverrides[s]; ok {
		return n
	}
	if ini, ok := initialisms[strings.TrimPrefix(s, "p")]; ok && strings.HasPrefix(s, "p") && strings.ToLower(s) == s {
		return ini // pmvid → MVID
	}
	i := 0
	for i < len(s) && unicode.IsLower(rune(s[i])) {
		i++
	}
	if i > 0 && i < len(s) && unicode.IsUpper(rune(s[i])) && hungarian(s[:i]) {
		s = s[i:]
	}
	return ExportedName(s)
}

func hungarian(prefix string) bool {
	switch prefix {
	case "p", "pp", "pc", "pcb", "pcch", "pch", "pdw", "pb", "pf", "pi", "pul", "pus", "psz", "pwsz", "ptk",
		"pmd", "pn", "pv", "ppv", "ppb", "sz", "wsz", "r", "rg", "pbo", "pu", "pt", "ptd",
		"ptr", "pmb", "pmr", "pl", "pcv", "ul", "dw", "b", "f", "c", "cb", "cch", "ppsz", "us", "tk":
		return true
	}
	return false
}

// TypeName converts a C type name to an exported Go type name, dropping the
// COR_PRF_ prefix: COR_PRF_MONITOR → Monitor, COR_PRF_GC_ROOT_KIND → GCRootKind.
func TypeName(s string) string {
	// The high event mask's values are named High + what they turn on
	// (HighBasicGC, HighEventPipe), whether or not the C name spells
	// MONITOR_ (COR_PRF_HIGH_MONITOR_EVENT_PIPE, COR_PRF_HIGH_BASIC_GC).
	if rest, ok := strings.CutPrefix(s, "COR_PRF_HIGH_MONITOR_"); ok && rest != "" {
		s = "COR_PRF_HIGH_" + rest
	}
	for _, pre := range []string{"COR_PRF_", "_COR_PRF_", "Cor", "COR_"} {
		if strings.HasPrefix(s, pre) && len(s) > len(pre) {
			return ExportedName(s[len(pre):])
		}
	}
	s = strings.TrimLeft(s, "_")
	if w := splitWords(s); len(w) > 1 && len(w[0]) <= 3 && strings.ToLower(w[0]) == w[0] && (w[0] == "md" || initialisms[w[0]] == "") {
		// A lower-case Hungarian prefix of cor.h's enum values (tdPublic,
		// fdStatic, mdPublic, pdIn) is the same kind of word for every
		// enum: capitalised, never read as an initialism (md → Md, like
		// Td and Fd; MDNotifyAll, upper case in C, stays MD; pe, a real
		// initialism with no sibling prefixes, stays PE).
		return strings.ToUpper(w[0][:1]) + w[0][1:] + ExportedName(strings.Join(w[1:], "_"))
	}
	return ExportedName(s)
}

// InterfaceGoName names the Go wrapper of a COM interface:
// ICorProfilerFunctionControl → FunctionControl, IMethodMalloc → MethodMalloc,
// IMetaDataImport2 → Import2 (in package metadata).
func InterfaceGoName(s string) string {
	for _, pre := range []string{"ICorProfiler", "IMetaData", "I"} {
		if strings.HasPrefix(s, pre) && len(s) > len(pre) {
			return s[len(pre):]
		}
	}
	return s
}

// resultNameOverrides names outputs and struct fields whose C names say
// what they are only through a prefix.
var resultNameOverrides = map[string]string{
	"pmd":        "Method", // GetParamProps: the method of the parameter
	"ridOfField": "Field",  // COR_FIELD_OFFSET
}

// UnexportedName is the unexported form of an exported Go name: its leading
// capitals in lower case, save the last of a run followed by a lower-case
// letter (EventData → eventData, OSInfo → osInfo, ID → id).
func UnexportedName(s string) string {
	r := []rune(s)
	i := 0
	for i < len(r) && unicode.IsUpper(r[i]) {
		i++
	}
	if i > 1 && i < len(r) && unicode.IsLower(r[i]) {
		i--
	}
	for j := 0; j < i; j++ {
		r[j] = unicode.ToLower(r[j])
	}
	return string(r)
}
