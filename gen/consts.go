package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseConstHeader parses a C header of constants and plain declarations,
// such as corhdr.h, into a File:
//
//   - every "typedef enum [Tag] [: base] { A = expr, B, ... } Name;" and
//     "enum Tag { ... };" becomes an Enum with evaluated values: implicit
//     values count up from the previous one, and expressions may use casts,
//     shifts, '|', earlier enumerators of any enum in the file, earlier
//     integer #defines and the file's function-like macros. An enum whose
//     values do not all evaluate (they name something the file does not
//     define) is left out. The enumerators of an anonymous enum ("enum { A,
//     B };") become integer Consts.
//   - every object-like "#define NAME expr" whose replacement evaluates as an
//     integer constant expression becomes a Const of kind ConstInt; one whose
//     replacement is a string literal ("str", L"str", W("str"), or several
//     concatenated) becomes a ConstString (wide forms are recorded as strings
//     too; Expr shows how the value was written). Function-like macros and
//     defines that do not evaluate are skipped; a name defined twice with
//     different values is an error.
//   - typedefs ("typedef uint32_t mdToken;", "typedef const COR_SIGNATURE*
//     PCCOR_SIGNATURE;"), structs and unions (with bit-fields and nested
//     anonymous unions) and function-pointer typedefs, where they parse as
//     plain C; declarations that do not (C++ classes, inline functions,
//     templates, variables) are skipped.
//
// Conditional directives are evaluated with nothing predefined. Errors are
// *Error values with the file, line and column.
func ParseConstHeader(name string, src []byte) (f *File, err error) {
	defer recoverParse(name, &f, &err)
	return parseCHeader(name, src, nil)
}

// ---------------------------------------------------------------------------
// #define bodies with their real positions.

// macroDef is a #define of an active region with its replacement tokens
// lexed at their real positions in the file.
type macroDef struct {
	Name    string
	Func    bool
	Params  []string
	Body    string  // replacement text as written, white space folded
	Toks    []Token // replacement tokens (no TokEOF)
	LexErr  error   // the replacement text does not lex as C
	Pos     Pos     // the '#'
	NamePos Pos
	BodyPos Pos
}

// collectDefines locates each #define that Preprocess recorded in src and
// lexes its replacement text so that tokens carry their real positions.
func collectDefines(file string, src []byte, defs []*Define) []*macroDef {
	lines := lineOffsets(src)
	out := make([]*macroDef, 0, len(defs))
	for _, d := range defs {
		m := &macroDef{Name: d.Name, Func: d.Func, Params: d.Params, Body: d.Body, Pos: d.Pos, NamePos: d.Pos, BodyPos: d.Pos}
		loc, ok := locateDefine(src, lines, d.Pos)
		var body []byte
		if ok {
			m.NamePos, m.BodyPos = loc.namePos, loc.bodyPos
			body = src[loc.bodyStart:loc.bodyEnd]
		} else {
			// Not found where the directive token says: fall back to the
			// folded text, positioned at the directive.
			body = []byte(d.Body)
		}
		toks, err := Lex(file, body)
		if err != nil {
			m.LexErr = shiftError(err, m.BodyPos)
		} else {
			m.Toks = shiftTokens(toks[:len(toks)-1], m.BodyPos)
		}
		out = append(out, m)
	}
	return out
}

// lineOffsets returns the byte offset at which each line of src starts.
func lineOffsets(src []byte) []int {
	offs := []int{0}
	for i, c := range src {
		if c == '\n' {
			offs = append(offs, i+1)
		}
	}
	return offs
}

// shiftTokens moves tokens lexed from a slice that starts at p to their
// positions in the whole file.
func shiftTokens(toks []Token, p Pos) []Token {
	for i := range toks {
		toks[i].Pos = shiftPos(toks[i].Pos, p)
	}
	return toks
}

func shiftPos(q, p Pos) Pos {
	if q.Line == 1 {
		q.Col += p.Col - 1
	}
	q.Line += p.Line - 1
	q.File = p.File
	return q
}

func shiftError(err error, p Pos) error {
	if e, ok := err.(*Error); ok {
		return &Error{Pos: shiftPos(e.Pos, p), Msg: e.Msg}
	}
	return &Error{Pos: p, Msg: err.Error()}
}

type defineLoc struct {
	namePos, bodyPos   Pos
	bodyStart, bodyEnd int
}

// rawScanner walks raw source bytes keeping a line and column.
type rawScanner struct {
	src       []byte
	off       int
	line, col int
	file      string
}

func (s *rawScanner) at(i int) byte {
	if s.off+i < len(s.src) {
		return s.src[s.off+i]
	}
	return 0
}

func (s *rawScanner) adv() {
	if s.off >= len(s.src) {
		return
	}
	if s.src[s.off] == '\n' {
		s.line++
		s.col = 1
	} else {
		s.col++
	}
	s.off++
}

func (s *rawScanner) pos() Pos { return Pos{File: s.file, Line: s.line, Col: s.col} }

// skipHSpace skips blanks, line continuations and block comments inside a
// directive line.
func (s *rawScanner) skipHSpace() {
	for s.off < len(s.src) {
		switch c := s.at(0); {
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			s.adv()
		case c == '\\' && (s.at(1) == '\n' || (s.at(1) == '\r' && s.at(2) == '\n')):
			for s.off < len(s.src) && s.at(0) != '\n' {
				s.adv()
			}
			s.adv()
		case c == '/' && s.at(1) == '*':
			s.adv()
			s.adv()
			for s.off < len(s.src) && !(s.at(0) == '*' && s.at(1) == '/') {
				s.adv()
			}
			s.adv()
			s.adv()
		default:
			return
		}
	}
}

func (s *rawScanner) ident() string {
	start := s.off
	for s.off < len(s.src) && isIdentPart(s.src[s.off]) {
		s.adv()
	}
	return string(s.src[start:s.off])
}

// locateDefine finds the name and replacement text of the #define whose '#'
// is at p.
func locateDefine(src []byte, lines []int, p Pos) (defineLoc, bool) {
	var loc defineLoc
	if p.Line < 1 || p.Line > len(lines) || p.Col < 1 {
		return loc, false
	}
	off := lines[p.Line-1] + p.Col - 1
	if off >= len(src) || src[off] != '#' {
		return loc, false
	}
	s := &rawScanner{src: src, off: off, line: p.Line, col: p.Col, file: p.File}
	s.adv()
	s.skipHSpace()
	if s.ident() != "define" {
		return loc, false
	}
	s.skipHSpace()
	loc.namePos = s.pos()
	if s.ident() == "" {
		return loc, false
	}
	if s.at(0) == '(' {
		for s.off < len(s.src) && s.at(0) != ')' {
			if s.at(0) == '\n' && !(s.off > 0 && s.src[s.off-1] == '\\') {
				return loc, false
			}
			s.adv()
		}
		s.adv()
	}
	s.skipHSpace()
	loc.bodyPos = s.pos()
	loc.bodyStart = s.off
	// The directive ends at the first newline that is not escaped and not
	// inside a block comment.
	for s.off < len(s.src) {
		c := s.at(0)
		switch {
		case c == '\n':
			loc.bodyEnd = s.off
			return loc, true
		case c == '\\' && (s.at(1) == '\n' || (s.at(1) == '\r' && s.at(2) == '\n')):
			s.adv()
			s.adv()
		case c == '/' && s.at(1) == '/':
			for s.off < len(s.src) && s.at(0) != '\n' {
				s.adv()
			}
		case c == '/' && s.at(1) == '*':
			s.adv()
			s.adv()
			for s.off < len(s.src) && !(s.at(0) == '*' && s.at(1) == '/') {
				s.adv()
			}
			s.adv()
			s.adv()
		case c == '"' || c == '\'':
			s.adv()
			for s.off < len(s.src) && s.at(0) != c && s.at(0) != '\n' {
				if s.at(0) == '\\' {
					s.adv()
				}
				s.adv()
			}
			if s.at(0) == c {
				s.adv()
			}
		default:
			s.adv()
		}
	}
	loc.bodyEnd = len(src)
	if loc.bodyEnd < loc.bodyStart {
		loc.bodyEnd = loc.bodyStart
	}
	return loc, true
}

// ---------------------------------------------------------------------------
// Evaluation of constant expressions against the names of a file.

const (
	maxMacroDepth  = 16     // nested function-like macro expansions
	maxMacroCalls  = 100000 // macro expansions per file
	maxMacroParams = 64
)

// constEnv holds what a constant expression may refer to: earlier integer
// names, type names usable in casts, function-like macros of the file, and
// built-in macros.
type constEnv struct {
	names    map[string]int64
	types    map[string]bool
	macros   map[string]*macroDef
	builtin  func(name string, args []int64) (int64, bool)
	fallback func(name string) (int64, bool)
	calls    int
	limited  bool // an expansion was refused by maxMacroDepth or maxMacroCalls
}

func newConstEnv() *constEnv {
	return &constEnv{names: map[string]int64{}, types: map[string]bool{}, macros: map[string]*macroDef{}}
}

// env returns an Env; params binds the parameters of a macro being expanded.
func (e *constEnv) env(params map[string]int64, depth int) Env {
	return Env{
		Ident: func(n string) (int64, bool) {
			if v, ok := params[n]; ok {
				return v, true
			}
			if v, ok := e.names[n]; ok {
				return v, true
			}
			if e.fallback != nil {
				return e.fallback(n)
			}
			return 0, false
		},
		Call: func(n string, args []int64) (int64, bool) {
			return e.call(n, args, depth)
		},
		IsType: func(n string) bool {
			if _, ok := params[n]; ok {
				return false
			}
			return e.types[n]
		},
	}
}

func (e *constEnv) call(name string, args []int64, depth int) (int64, bool) {
	if m := e.macros[name]; m != nil {
		if depth >= maxMacroDepth || e.calls >= maxMacroCalls {
			e.limited = true
			return 0, false
		}
		if m.LexErr != nil || len(m.Params) != len(args) || len(m.Params) > maxMacroParams || len(m.Toks) == 0 {
			return 0, false
		}
		e.calls++
		params := make(map[string]int64, len(args))
		for i, p := range m.Params {
			params[p] = args[i]
		}
		v, err := EvalTokens(m.Toks, e.env(params, depth+1))
		return v, err == nil
	}
	if e.builtin != nil {
		return e.builtin(name, args)
	}
	return 0, false
}

// eval evaluates toks; errors without a position get p.
func (e *constEnv) eval(toks []Token, p Pos) (int64, error) {
	v, err := EvalTokens(toks, e.env(nil, 0))
	if err != nil {
		return 0, withPos(err, p)
	}
	return v, nil
}

// withPos gives err the position p if it has none.
func withPos(err error, p Pos) error {
	if e, ok := err.(*Error); ok {
		if e.Pos.Line == 0 {
			return &Error{Pos: p, Msg: e.Msg}
		}
		return e
	}
	return &Error{Pos: p, Msg: err.Error()}
}

// ---------------------------------------------------------------------------
// String literals.

// stringConst reports whether toks are one or more (possibly wide) string
// literals: "a", L"a", u8"a", W("a"), "a" "b". It returns the concatenated
// value.
func stringConst(toks []Token) (string, bool) {
	if len(toks) == 0 {
		return "", false
	}
	var b strings.Builder
	for i := 0; i < len(toks); {
		t := toks[i]
		switch {
		case t.Kind == TokString:
			s, ok := unquoteC(t.Text)
			if !ok {
				return "", false
			}
			b.WriteString(s)
			i++
		case t.Kind == TokIdent && (t.Text == "L" || t.Text == "u8" || t.Text == "u" || t.Text == "U") &&
			i+1 < len(toks) && toks[i+1].Kind == TokString &&
			toks[i+1].Pos.Line == t.Pos.Line && toks[i+1].Pos.Col == t.Pos.Col+len(t.Text):
			i++
		case t.Kind == TokIdent && t.Text == "W" && i+2 < len(toks) &&
			toks[i+1].Kind == TokPunct && toks[i+1].Text == "(" && toks[i+2].Kind == TokString:
			j := i + 2
			for j < len(toks) && toks[j].Kind == TokString {
				s, ok := unquoteC(toks[j].Text)
				if !ok {
					return "", false
				}
				b.WriteString(s)
				j++
			}
			if j >= len(toks) || toks[j].Kind != TokPunct || toks[j].Text != ")" {
				return "", false
			}
			i = j + 1
		default:
			return "", false
		}
	}
	return b.String(), true
}

// unquoteC decodes a C string literal including its quotes.
func unquoteC(lit string) (string, bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	s := lit[1 : len(lit)-1]
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(s) {
			return "", false
		}
		switch c = s[i]; c {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\\', '"', '\'', '?':
			b.WriteByte(c)
		case 'x':
			j := i + 1
			for j < len(s) && j < i+3 && strings.IndexByte("0123456789abcdefABCDEF", s[j]) >= 0 {
				j++
			}
			if j == i+1 {
				return "", false
			}
			v, err := strconv.ParseUint(s[i+1:j], 16, 8)
			if err != nil {
				return "", false
			}
			b.WriteByte(byte(v))
			i = j - 1
		default:
			if c < '0' || c > '7' {
				return "", false
			}
			j := i
			for j < len(s) && j < i+3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			v, err := strconv.ParseUint(s[i:j], 8, 16)
			if err != nil || v > 0xff {
				return "", false
			}
			b.WriteByte(byte(v))
			i = j - 1
		}
	}
	return b.String(), true
}

// exprText renders tokens as written: one space where the source had white
// space or a comment between two tokens, none where they touched.
func exprText(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 {
			p := toks[i-1]
			if p.Pos.Line != t.Pos.Line || p.Pos.Col+len(p.Text) != t.Pos.Col {
				b.WriteByte(' ')
			}
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

// recoverParse is the last line of defence of the exported parsers: a panic
// becomes an *Error. Every known input is handled without one; a panic here
// is a bug to fix at its cause.
func recoverParse(file string, f **File, err *error) {
	if r := recover(); r != nil {
		*f = nil
		*err = &Error{Pos: Pos{File: file}, Msg: fmt.Sprintf("internal error: %v", r)}
	}
}
