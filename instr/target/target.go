// Package target parses and matches the targets of package instr: which
// methods to instrument, in one syntax,
//
//	ASSEMBLY!TYPE::METHOD
//	ASSEMBLY!TYPE::METHOD(PARAM, PARAM, ...)
//
// ASSEMBLY is an assembly's simple name (System.Private.CoreLib, Shop;
// compared without regard to case, as the runtime binds names). TYPE is the
// type's reflection full name (Type.FullName without type arguments): the
// namespace, the name with its generic arity after a backtick, and nested
// types after '+', as in Shop.Box`1+Inner. METHOD is a method's name as
// metadata has it (Total, .ctor, .cctor, get_Count,
// System.IDisposable.Dispose). TYPE, METHOD or both may be '*': every type
// of the assembly (nested ones included), every method of the type. All
// overloads of a name match unless a parameter list narrows the target to
// the methods whose parameter types are exactly those listed, each written
// as package instr names a parameter (instr.ParamName): System.Int32,
// System.String[], System.Int32& (by-ref), System.Byte* (pointer),
// System.Collections.Generic.List`1[System.Int32] (a generic instantiation),
// !0 and !!0 (a type's and a method's own generic parameters, by position).
// An empty list, Get(), matches the overload without parameters.
//
// [ParseList] reads a comma-separated list of targets (commas inside a
// parameter list do not separate targets), as the AUTOTRACE_TARGETS
// variable of sample/autotrace holds it.
//
// # One spelling
//
// The SDK names a type three ways: package metadata and ilrw.Method.Name
// write nesting with '/' after ILAsm (Shop.Box`1/Inner::F); package
// profiler (Info.FunctionNameParts, ClassName) writes C#-like names with
// type arguments (Shop.Box<int>+Inner). Targets use the reflection full name
// (Shop.Box`1+Inner). [TypeFromIL] and [TypeFromProfiler] convert either
// spelling into the target one, so that a name seen anywhere in the SDK can
// be matched against a target; [Name] formats a method in target syntax.
//
// The package is pure Go, without cgo: parsing and matching are usable (and
// tested, and fuzzed) anywhere.
package target

import (
	"fmt"
	"strconv"
	"strings"
)

// Target is one parsed target.
type Target struct {
	Assembly string // simple name of the assembly
	Type     string // reflection full name, or "*"
	Method   string // method name, or "*"
	// Params lists the parameter types when HasParams is set (an empty
	// list then means no parameters); otherwise every overload matches.
	Params    []string
	HasParams bool
}

// SyntaxError reports a malformed target: the target's text and the byte
// position in it (0-based) where parsing failed.
type SyntaxError struct {
	Target string
	Pos    int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("instr: target %q: position %d: %s", e.Target, e.Pos, e.Msg)
}

// Any is the wildcard of a type or method.
const Any = "*"

// String returns the target in its canonical spelling (which Parse reads
// back to the same Target).
func (t Target) String() string {
	var sb strings.Builder
	sb.WriteString(t.Assembly)
	sb.WriteByte('!')
	sb.WriteString(t.Type)
	sb.WriteString("::")
	sb.WriteString(t.Method)
	if t.HasParams {
		sb.WriteByte('(')
		sb.WriteString(strings.Join(t.Params, ", "))
		sb.WriteByte(')')
	}
	return sb.String()
}

// Name formats a method in target syntax: assembly!type::method.
func Name(assembly, typ, method string) string {
	return assembly + "!" + typ + "::" + method
}

// MatchesAssembly reports whether the target applies to the assembly named
// asm (simple names compare without regard to case).
func (t Target) MatchesAssembly(asm string) bool {
	return strings.EqualFold(t.Assembly, asm)
}

// MatchesType reports whether the target applies to the type typ (a
// reflection full name) of its assembly.
func (t Target) MatchesType(typ string) bool {
	return t.Type == Any || t.Type == typ
}

// Matches reports whether the target names the method method of type typ
// (reflection full name) in assembly asm, whose parameter types, as
// [FormatParam] writes them, are params.
func (t Target) Matches(asm, typ, method string, params []string) bool {
	if !t.MatchesAssembly(asm) || !t.MatchesType(typ) {
		return false
	}
	if t.Method != Any && t.Method != method {
		return false
	}
	if !t.HasParams {
		return true
	}
	if len(params) != len(t.Params) {
		return false
	}
	for i, p := range params {
		if p != t.Params[i] {
			return false
		}
	}
	return true
}

// nameSpecial is special minus the angle brackets and '=', which compilers
// use in generated names (<>c, <Main>d__0, <>c__DisplayClass0_0).
const nameSpecial = "!:+(),*`[]&\\\"' \t\r\n"

type parser struct {
	s   string
	pos int
}

func (p *parser) errf(pos int, format string, args ...any) error {
	return &SyntaxError{Target: p.s, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) eof() bool { return p.pos >= len(p.s) }

// name reads a run of characters that are not in stop.
func (p *parser) name(stop string) string {
	start := p.pos
	for p.pos < len(p.s) && !strings.ContainsRune(stop, rune(p.s[p.pos])) && p.s[p.pos] >= 0x20 && p.s[p.pos] != 0x7f {
		p.pos++
	}
	return p.s[start:p.pos]
}

// describe names the character at pos for error messages.
func (p *parser) describe(pos int) string {
	if pos >= len(p.s) {
		return "end of target"
	}
	return strconv.QuoteRune(rune(p.s[pos]))
}

// Parse parses one target. Blanks around it are ignored; inside it, only
// after the commas of a parameter list and around its parentheses' contents.
func Parse(s string) (Target, error) {
	trimmed := strings.TrimSpace(s)
	lead := strings.Index(s, trimmed)
	t, err := parse(trimmed)
	if err != nil {
		if se, ok := err.(*SyntaxError); ok {
			se.Target = s
			se.Pos += lead
		}
		return Target{}, err
	}
	return t, nil
}

func parse(s string) (Target, error) {
	p := &parser{s: s}
	var t Target
	if s == "" {
		return t, p.errf(0, "empty target; want ASSEMBLY!TYPE::METHOD")
	}
	// Assembly.
	t.Assembly = p.name("!:()," + " \t\r\n*")
	if t.Assembly == "" {
		if !p.eof() && p.s[p.pos] == '*' {
			return t, p.errf(p.pos, "the assembly must be named ('*' stands for a type or a method only)")
		}
		return t, p.errf(p.pos, "missing assembly name before '!'")
	}
	if p.eof() || p.s[p.pos] != '!' {
		return t, p.errf(p.pos, "unexpected %s in the assembly name; want ASSEMBLY!TYPE::METHOD", p.describe(p.pos))
	}
	p.pos++
	// Type.
	typ, err := p.typeName(true)
	if err != nil {
		return t, err
	}
	t.Type = typ
	if !strings.HasPrefix(p.s[p.pos:], "::") {
		return t, p.errf(p.pos, "unexpected %s after the type; want '::' and a method name", p.describe(p.pos))
	}
	p.pos += 2
	// Method.
	if !p.eof() && p.s[p.pos] == '*' {
		t.Method = Any
		p.pos++
	} else {
		start := p.pos
		t.Method = p.name(nameSpecial)
		if t.Method == "" {
			return t, p.errf(start, "missing method name (or '*') after '::', found %s", p.describe(start))
		}
	}
	if p.eof() {
		return t, nil
	}
	if p.s[p.pos] != '(' {
		return t, p.errf(p.pos, "unexpected %s after the method name", p.describe(p.pos))
	}
	if t.Method == Any {
		return t, p.errf(p.pos, "a parameter list narrows overloads of a named method, not '*'")
	}
	p.pos++
	t.HasParams = true
	t.Params = []string{}
	p.blanks()
	if !p.eof() && p.s[p.pos] == ')' {
		p.pos++
	} else {
		for {
			p.blanks()
			start := p.pos
			param, err := p.param()
			if err != nil {
				return t, err
			}
			if param == "" {
				return t, p.errf(start, "missing parameter type, found %s", p.describe(start))
			}
			t.Params = append(t.Params, param)
			p.blanks()
			if p.eof() {
				return t, p.errf(p.pos, "unclosed parameter list: missing ')'")
			}
			if p.s[p.pos] == ',' {
				p.pos++
				continue
			}
			if p.s[p.pos] == ')' {
				p.pos++
				break
			}
			return t, p.errf(p.pos, "unexpected %s in the parameter list", p.describe(p.pos))
		}
	}
	if !p.eof() {
		return t, p.errf(p.pos, "unexpected %s after the parameter list", p.describe(p.pos))
	}
	return t, nil
}

func (p *parser) blanks() {
	for p.pos < len(p.s) && (p.s[p.pos] == ' ' || p.s[p.pos] == '\t') {
		p.pos++
	}
}

// typeName reads a reflection full name: segments separated by '+', each
// with an optional `N arity; or '*' when wildcard is allowed.
func (p *parser) typeName(wildcard bool) (string, error) {
	start := p.pos
	if !p.eof() && p.s[p.pos] == '*' {
		if !wildcard {
			return "", p.errf(p.pos, "'*' is not a parameter type")
		}
		p.pos++
		return Any, nil
	}
	for {
		segStart := p.pos
		seg := p.name(nameSpecial)
		if seg == "" {
			what := "type name"
			if p.pos > start {
				what = "nested type name after '+'"
			}
			return "", p.errf(segStart, "missing %s, found %s", what, p.describe(segStart))
		}
		if strings.HasPrefix(seg, ".") || strings.HasSuffix(seg, ".") || strings.Contains(seg, "..") {
			return "", p.errf(segStart, "empty namespace or type name part in %q", seg)
		}
		if !p.eof() && p.s[p.pos] == '`' {
			p.pos++
			ds := p.pos
			for !p.eof() && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
				p.pos++
			}
			if p.pos == ds {
				return "", p.errf(ds, "want the generic arity (digits) after '`', found %s", p.describe(ds))
			}
			if n, err := strconv.Atoi(p.s[ds:p.pos]); err != nil || n == 0 || p.s[ds] == '0' {
				return "", p.errf(ds, "bad generic arity %q", p.s[ds:p.pos])
			}
		}
		if !p.eof() && p.s[p.pos] == '+' {
			p.pos++
			continue
		}
		return p.s[start:p.pos], nil
	}
}

// param reads a parameter type: a type name (or !N / !!N) with an optional
// [type, ...] instantiation, then any of [], [,...], *, & suffixes. Blanks
// after commas inside brackets are dropped, so that the result is canonical.
func (p *parser) param() (string, error) {
	var sb strings.Builder
	if !p.eof() && p.s[p.pos] == '!' {
		start := p.pos
		p.pos++
		sb.WriteByte('!')
		if !p.eof() && p.s[p.pos] == '!' {
			p.pos++
			sb.WriteByte('!')
		}
		ds := p.pos
		for !p.eof() && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		if p.pos == ds || (p.pos-ds > 1 && p.s[ds] == '0') || p.pos-ds > 5 {
			return "", p.errf(start, "want a generic parameter position such as !0 or !!1")
		}
		sb.WriteString(p.s[ds:p.pos])
	} else {
		if p.eof() {
			return "", nil
		}
		if c := p.s[p.pos]; c == ')' || c == ',' {
			return "", nil
		}
		n, err := p.typeName(false)
		if err != nil {
			return "", err
		}
		sb.WriteString(n)
		// A generic instantiation: Name`N[arg, arg].
		if strings.Contains(n, "`") && !p.eof() && p.s[p.pos] == '[' && !p.arraySuffixAhead() {
			p.pos++
			sb.WriteByte('[')
			for i := 0; ; i++ {
				p.blanks()
				if i > 0 {
					sb.WriteByte(',')
				}
				as := p.pos
				a, err := p.param()
				if err != nil {
					return "", err
				}
				if a == "" {
					return "", p.errf(as, "missing type argument, found %s", p.describe(as))
				}
				sb.WriteString(a)
				p.blanks()
				if p.eof() {
					return "", p.errf(p.pos, "unclosed type argument list: missing ']'")
				}
				if p.s[p.pos] == ',' {
					p.pos++
					continue
				}
				if p.s[p.pos] == ']' {
					p.pos++
					sb.WriteByte(']')
					break
				}
				return "", p.errf(p.pos, "unexpected %s in a type argument list", p.describe(p.pos))
			}
		}
	}
	// Suffixes.
	for !p.eof() {
		switch p.s[p.pos] {
		case '*':
			sb.WriteByte('*')
			p.pos++
			continue
		case '&':
			sb.WriteByte('&')
			p.pos++
			if !p.eof() && p.s[p.pos] != ')' && p.s[p.pos] != ',' && p.s[p.pos] != ']' && p.s[p.pos] != ' ' {
				return "", p.errf(p.pos, "'&' (by-ref) must end a parameter type")
			}
			return sb.String(), nil
		case '[':
			if !p.arraySuffixAhead() {
				return "", p.errf(p.pos, "want an array suffix [] or [,], found %s", p.describe(p.pos+1))
			}
			for p.s[p.pos] != ']' {
				sb.WriteByte(p.s[p.pos])
				p.pos++
			}
			sb.WriteByte(']')
			p.pos++
			continue
		}
		break
	}
	return sb.String(), nil
}

// arraySuffixAhead reports whether an array suffix ([] or [,,]) starts at
// the current position.
func (p *parser) arraySuffixAhead() bool {
	i := p.pos
	if i >= len(p.s) || p.s[i] != '[' {
		return false
	}
	for i++; i < len(p.s) && p.s[i] == ','; i++ {
	}
	return i < len(p.s) && p.s[i] == ']'
}

// ParseList parses a comma-separated list of targets. Commas inside a
// parameter list belong to it; blanks around items and empty items are
// ignored. The first malformed item is the error (its position counted in
// the item, whose text the error names).
func ParseList(s string) ([]Target, error) {
	var out []Target
	depth, start := 0, 0
	flush := func(end int) error {
		item := s[start:end]
		if strings.TrimSpace(item) == "" {
			return nil
		}
		t, err := Parse(item)
		if err != nil {
			if se, ok := err.(*SyntaxError); ok {
				se.Target = strings.TrimSpace(item)
				se.Pos -= strings.Index(item, se.Target)
				if se.Pos < 0 {
					se.Pos = 0
				}
			}
			return err
		}
		out = append(out, t)
		return nil
	}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '[':
			depth++
		case ')', ']':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				if err := flush(i); err != nil {
					return nil, err
				}
				start = i + 1
			}
		}
	}
	if err := flush(len(s)); err != nil {
		return nil, err
	}
	return out, nil
}
