package gen

import (
	"fmt"
	"strings"
)

// TokKind classifies a token.
type TokKind int

const (
	TokEOF TokKind = iota
	TokIdent
	TokNumber
	TokString
	TokChar
	TokPunct
	TokDirective // a whole preprocessor line, continuations joined; Text starts with '#'
)

func (k TokKind) String() string {
	switch k {
	case TokEOF:
		return "end of file"
	case TokIdent:
		return "identifier"
	case TokNumber:
		return "number"
	case TokString:
		return "string"
	case TokChar:
		return "character"
	case TokPunct:
		return "punctuation"
	case TokDirective:
		return "directive"
	}
	return fmt.Sprintf("TokKind(%d)", int(k))
}

// Token is a lexical token of C, C++ or MIDL source.
type Token struct {
	Kind TokKind
	Text string
	Pos  Pos
}

func (t Token) String() string {
	if t.Kind == TokEOF {
		return "end of file"
	}
	return fmt.Sprintf("%q", t.Text)
}

// Error is a parse error at a position in an input file.
type Error struct {
	Pos Pos
	Msg string
}

func (e *Error) Error() string { return e.Pos.String() + ": " + e.Msg }

func errorf(p Pos, format string, args ...any) *Error {
	return &Error{Pos: p, Msg: fmt.Sprintf(format, args...)}
}

// multi-character punctuators, longest first.
var puncts = []string{
	"<<=", ">>=", "...",
	"::", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||",
	"+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "##",
}

// Lex splits src into tokens. Comments are dropped; preprocessor lines become
// single TokDirective tokens. The last token is always TokEOF.
func Lex(file string, src []byte) ([]Token, error) {
	lx := lexer{file: file, src: src, line: 1, col: 1}
	var toks []Token
	atLineStart := true
	for {
		lx.skipSpace(&atLineStart)
		if lx.off >= len(lx.src) {
			toks = append(toks, Token{Kind: TokEOF, Pos: lx.pos()})
			return toks, nil
		}
		p := lx.pos()
		c := lx.src[lx.off]
		switch {
		case c == '#' && atLineStart:
			text, err := lx.directive()
			if err != nil {
				return nil, err
			}
			toks = append(toks, Token{Kind: TokDirective, Text: text, Pos: p})
			atLineStart = true
			continue
		case isIdentStart(c):
			start := lx.off
			for lx.off < len(lx.src) && isIdentPart(lx.src[lx.off]) {
				lx.advance()
			}
			toks = append(toks, Token{Kind: TokIdent, Text: string(lx.src[start:lx.off]), Pos: p})
		case isDigit(c) || (c == '.' && lx.off+1 < len(lx.src) && isDigit(lx.src[lx.off+1])):
			start := lx.off
			for lx.off < len(lx.src) && (isIdentPart(lx.src[lx.off]) || lx.src[lx.off] == '.') {
				lx.advance()
			}
			toks = append(toks, Token{Kind: TokNumber, Text: string(lx.src[start:lx.off]), Pos: p})
		case c == '"' || c == '\'':
			text, err := lx.quoted(c)
			if err != nil {
				return nil, err
			}
			kind := TokString
			if c == '\'' {
				kind = TokChar
			}
			toks = append(toks, Token{Kind: kind, Text: text, Pos: p})
		default:
			n := 1
			for _, pu := range puncts {
				if strings.HasPrefix(string(lx.src[lx.off:min(lx.off+len(pu), len(lx.src))]), pu) {
					n = len(pu)
					break
				}
			}
			if n == 1 && !strings.ContainsRune("{}[]()<>;:,.=*&|^~!?+-/%\\@$", rune(c)) {
				return nil, errorf(p, "unexpected character %q", c)
			}
			text := string(lx.src[lx.off : lx.off+n])
			for i := 0; i < n; i++ {
				lx.advance()
			}
			toks = append(toks, Token{Kind: TokPunct, Text: text, Pos: p})
		}
		atLineStart = false
	}
}

type lexer struct {
	file      string
	src       []byte
	off       int
	line, col int
}

func (lx *lexer) pos() Pos { return Pos{File: lx.file, Line: lx.line, Col: lx.col} }

func (lx *lexer) advance() {
	if lx.src[lx.off] == '\n' {
		lx.line++
		lx.col = 1
	} else {
		lx.col++
	}
	lx.off++
}

func (lx *lexer) peekAt(i int) byte {
	if lx.off+i < len(lx.src) {
		return lx.src[lx.off+i]
	}
	return 0
}

// skipSpace skips white space and comments, tracking whether the next token
// starts a line (so '#' begins a directive).
func (lx *lexer) skipSpace(atLineStart *bool) {
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		switch {
		case c == '\n':
			*atLineStart = true
			lx.advance()
		case c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v':
			lx.advance()
		case c == '\\' && (lx.peekAt(1) == '\n' || (lx.peekAt(1) == '\r' && lx.peekAt(2) == '\n')):
			for lx.src[lx.off] != '\n' {
				lx.advance()
			}
			lx.advance()
		case c == '/' && lx.peekAt(1) == '/':
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance()
			}
		case c == '/' && lx.peekAt(1) == '*':
			lx.advance()
			lx.advance()
			for lx.off < len(lx.src) && !(lx.src[lx.off] == '*' && lx.peekAt(1) == '/') {
				if lx.src[lx.off] == '\n' {
					*atLineStart = true
				}
				lx.advance()
			}
			if lx.off < len(lx.src) {
				lx.advance()
				lx.advance()
			}
		default:
			return
		}
	}
}

// directive reads a preprocessor line, joining continuations and dropping
// comments, and returns it with white space runs folded to one space.
func (lx *lexer) directive() (string, error) {
	var b strings.Builder
	for lx.off < len(lx.src) {
		c := lx.src[lx.off]
		if c == '\n' {
			break
		}
		if c == '\\' && (lx.peekAt(1) == '\n' || (lx.peekAt(1) == '\r' && lx.peekAt(2) == '\n')) {
			for lx.src[lx.off] != '\n' {
				lx.advance()
			}
			lx.advance()
			b.WriteByte(' ')
			continue
		}
		if c == '/' && lx.peekAt(1) == '/' {
			for lx.off < len(lx.src) && lx.src[lx.off] != '\n' {
				lx.advance()
			}
			break
		}
		if c == '/' && lx.peekAt(1) == '*' {
			p := lx.pos()
			lx.advance()
			lx.advance()
			for lx.off < len(lx.src) && !(lx.src[lx.off] == '*' && lx.peekAt(1) == '/') {
				lx.advance()
			}
			if lx.off >= len(lx.src) {
				return "", errorf(p, "unterminated comment")
			}
			lx.advance()
			lx.advance()
			b.WriteByte(' ')
			continue
		}
		if c == '"' || c == '\'' {
			q, err := lx.quoted(c)
			if err != nil {
				return "", err
			}
			b.WriteString(q)
			continue
		}
		b.WriteByte(c)
		lx.advance()
	}
	return strings.Join(strings.Fields(b.String()), " "), nil
}

// quoted reads a string or character literal including its quotes.
func (lx *lexer) quoted(q byte) (string, error) {
	p := lx.pos()
	start := lx.off
	lx.advance()
	for {
		if lx.off >= len(lx.src) || lx.src[lx.off] == '\n' {
			return "", errorf(p, "unterminated literal")
		}
		c := lx.src[lx.off]
		if c == '\\' {
			lx.advance()
			if lx.off >= len(lx.src) {
				return "", errorf(p, "unterminated literal")
			}
			lx.advance()
			continue
		}
		lx.advance()
		if c == q {
			return string(lx.src[start:lx.off]), nil
		}
	}
}

func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}
func isIdentPart(c byte) bool { return isIdentStart(c) || isDigit(c) }
func isDigit(c byte) bool     { return c >= '0' && c <= '9' }
