package gen

import (
	"strconv"
	"strings"
)

// Env resolves names while evaluating a constant expression.
type Env struct {
	// Ident returns the value of an identifier, or false if it is unknown.
	Ident func(name string) (int64, bool)
	// Call evaluates a function-like macro applied to evaluated arguments,
	// or returns false if name is not such a macro.
	Call func(name string, args []int64) (int64, bool)
	// Defined answers `defined(X)` in #if expressions; nil outside them.
	Defined func(name string) bool
	// UnknownIsZero makes unknown identifiers evaluate to 0, as in #if.
	UnknownIsZero bool
	// IsType reports whether a name is a type name, so that "(name)" before
	// an operand is a cast (needed for lower-case typedef names such as
	// mdTypeDef); nil leaves casts to the built-in heuristic.
	IsType func(name string) bool
}

// EvalTokens evaluates a C integer constant expression. Casts to a type name,
// such as (ULONG) or (HRESULT), are accepted and ignored.
func EvalTokens(toks []Token, env Env) (int64, error) {
	if len(toks) == 0 {
		return 0, &Error{Msg: "empty expression"}
	}
	ev := evaluator{toks: toks, env: env}
	v, err := ev.cond()
	if err != nil {
		return 0, err
	}
	if ev.i < len(ev.toks) && ev.toks[ev.i].Kind != TokEOF {
		return 0, errorf(ev.toks[ev.i].Pos, "unexpected %s in expression", ev.toks[ev.i])
	}
	return v, nil
}

// EvalString lexes and evaluates s; positions in errors are relative to p.
func EvalString(p Pos, s string, env Env) (int64, error) {
	toks, err := Lex(p.File, []byte(s))
	if err != nil {
		return 0, err
	}
	for i := range toks {
		toks[i].Pos.Line += p.Line - 1
		if toks[i].Pos.Line == p.Line {
			toks[i].Pos.Col += p.Col - 1
		}
	}
	return EvalTokens(toks, env)
}

type evaluator struct {
	toks  []Token
	i     int
	env   Env
	depth int
}

const maxExprDepth = 200

func (ev *evaluator) peek() Token {
	if ev.i < len(ev.toks) {
		return ev.toks[ev.i]
	}
	return Token{Kind: TokEOF}
}

func (ev *evaluator) isPunct(s string) bool {
	t := ev.peek()
	return t.Kind == TokPunct && t.Text == s
}

func (ev *evaluator) pos() Pos {
	if ev.i < len(ev.toks) {
		return ev.toks[ev.i].Pos
	}
	if len(ev.toks) > 0 {
		return ev.toks[len(ev.toks)-1].Pos
	}
	return Pos{}
}

func (ev *evaluator) cond() (int64, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > maxExprDepth {
		return 0, errorf(ev.pos(), "expression nested too deeply")
	}
	c, err := ev.binary(0)
	if err != nil {
		return 0, err
	}
	if !ev.isPunct("?") {
		return c, nil
	}
	ev.i++
	a, err := ev.cond()
	if err != nil {
		return 0, err
	}
	if !ev.isPunct(":") {
		return 0, errorf(ev.pos(), "expected ':' in conditional expression")
	}
	ev.i++
	b, err := ev.cond()
	if err != nil {
		return 0, err
	}
	if c != 0 {
		return a, nil
	}
	return b, nil
}

var binPrec = map[string]int{
	"||": 1, "&&": 2, "|": 3, "^": 4, "&": 5,
	"==": 6, "!=": 6, "<": 7, "<=": 7, ">": 7, ">=": 7,
	"<<": 8, ">>": 8, "+": 9, "-": 9, "*": 10, "/": 10, "%": 10,
}

func (ev *evaluator) binary(minPrec int) (int64, error) {
	lhs, err := ev.unary()
	if err != nil {
		return 0, err
	}
	for {
		t := ev.peek()
		if t.Kind != TokPunct {
			return lhs, nil
		}
		prec, ok := binPrec[t.Text]
		if !ok || prec <= minPrec {
			return lhs, nil
		}
		ev.i++
		rhs, err := ev.binary(prec)
		if err != nil {
			return 0, err
		}
		switch t.Text {
		case "||":
			lhs = b2i(lhs != 0 || rhs != 0)
		case "&&":
			lhs = b2i(lhs != 0 && rhs != 0)
		case "|":
			lhs |= rhs
		case "^":
			lhs ^= rhs
		case "&":
			lhs &= rhs
		case "==":
			lhs = b2i(lhs == rhs)
		case "!=":
			lhs = b2i(lhs != rhs)
		case "<":
			lhs = b2i(lhs < rhs)
		case "<=":
			lhs = b2i(lhs <= rhs)
		case ">":
			lhs = b2i(lhs > rhs)
		case ">=":
			lhs = b2i(lhs >= rhs)
		case "<<":
			if rhs < 0 || rhs > 63 {
				return 0, errorf(t.Pos, "shift count %d out of range", rhs)
			}
			lhs <<= uint(rhs)
		case ">>":
			if rhs < 0 || rhs > 63 {
				return 0, errorf(t.Pos, "shift count %d out of range", rhs)
			}
			lhs >>= uint(rhs)
		case "+":
			lhs += rhs
		case "-":
			lhs -= rhs
		case "*":
			lhs *= rhs
		case "/", "%":
			if rhs == 0 {
				return 0, errorf(t.Pos, "division by zero")
			}
			if t.Text == "/" {
				lhs /= rhs
			} else {
				lhs %= rhs
			}
		}
	}
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (ev *evaluator) unary() (int64, error) {
	ev.depth++
	defer func() { ev.depth-- }()
	if ev.depth > maxExprDepth {
		return 0, errorf(ev.pos(), "expression nested too deeply")
	}
	t := ev.peek()
	if t.Kind == TokPunct {
		switch t.Text {
		case "-", "+", "~", "!":
			ev.i++
			v, err := ev.unary()
			if err != nil {
				return 0, err
			}
			switch t.Text {
			case "-":
				return -v, nil
			case "~":
				return ^v, nil
			case "!":
				return b2i(v == 0), nil
			}
			return v, nil
		case "(":
			// A cast: '(' type-name [*...] ')' followed by an operand.
			if j, ok := ev.castEnd(); ok {
				ev.i = j
				return ev.unary()
			}
			ev.i++
			v, err := ev.cond()
			if err != nil {
				return 0, err
			}
			if !ev.isPunct(")") {
				return 0, errorf(ev.pos(), "expected ')'")
			}
			ev.i++
			return v, nil
		}
	}
	return ev.primary()
}

// castEnd reports whether a cast starts at the current '(' and returns the
// index just after its ')'.
func (ev *evaluator) castEnd() (int, bool) {
	j := ev.i + 1
	n := 0
	for j < len(ev.toks) && ev.toks[j].Kind == TokIdent {
		name := ev.toks[j].Text
		if n == 0 && !isCastTypeName(name, ev.env) {
			return 0, false
		}
		j++
		n++
	}
	if n == 0 {
		return 0, false
	}
	for j < len(ev.toks) && ev.toks[j].Kind == TokPunct && ev.toks[j].Text == "*" {
		j++
	}
	if j >= len(ev.toks) || ev.toks[j].Kind != TokPunct || ev.toks[j].Text != ")" {
		return 0, false
	}
	j++
	if j >= len(ev.toks) {
		return 0, false
	}
	next := ev.toks[j]
	switch next.Kind {
	case TokNumber, TokIdent, TokChar:
		return j, true
	case TokPunct:
		return j, next.Text == "(" || next.Text == "-" || next.Text == "~" || next.Text == "!"
	}
	return 0, false
}

func isCastTypeName(name string, env Env) bool {
	if env.IsType != nil && env.IsType(name) {
		return true
	}
	switch name {
	case "unsigned", "signed", "int", "long", "short", "char", "const":
		return true
	}
	if env.Ident != nil {
		if _, ok := env.Ident(name); ok {
			return false
		}
	}
	// Upper-case type names (ULONG, HRESULT, DWORD...) and *_t names.
	return strings.ToUpper(name) == name || strings.HasSuffix(name, "_t")
}

func (ev *evaluator) primary() (int64, error) {
	t := ev.peek()
	switch t.Kind {
	case TokNumber:
		ev.i++
		return parseCInt(t)
	case TokChar:
		ev.i++
		s, err := strconv.Unquote(t.Text)
		if err != nil || len(s) != 1 {
			return 0, errorf(t.Pos, "bad character literal %s", t.Text)
		}
		return int64(s[0]), nil
	case TokIdent:
		ev.i++
		if t.Text == "defined" && ev.env.Defined != nil {
			paren := ev.isPunct("(")
			if paren {
				ev.i++
			}
			n := ev.peek()
			if n.Kind != TokIdent {
				return 0, errorf(n.Pos, "expected name after defined")
			}
			ev.i++
			if paren {
				if !ev.isPunct(")") {
					return 0, errorf(ev.pos(), "expected ')'")
				}
				ev.i++
			}
			return b2i(ev.env.Defined(n.Text)), nil
		}
		if ev.isPunct("(") && ev.env.Call != nil {
			ev.i++
			var args []int64
			for !ev.isPunct(")") {
				v, err := ev.cond()
				if err != nil {
					return 0, err
				}
				args = append(args, v)
				if ev.isPunct(",") {
					ev.i++
				} else if !ev.isPunct(")") {
					return 0, errorf(ev.pos(), "expected ',' or ')' in arguments of %s", t.Text)
				}
			}
			ev.i++
			if v, ok := ev.env.Call(t.Text, args); ok {
				return v, nil
			}
			return 0, errorf(t.Pos, "unknown macro %s", t.Text)
		}
		if ev.env.Ident != nil {
			if v, ok := ev.env.Ident(t.Text); ok {
				return v, nil
			}
		}
		if ev.env.UnknownIsZero {
			return 0, nil
		}
		return 0, errorf(t.Pos, "unknown name %s", t.Text)
	case TokEOF:
		return 0, errorf(ev.pos(), "unexpected end of expression")
	}
	return 0, errorf(t.Pos, "unexpected %s in expression", t)
}

// parseCInt parses a C integer literal with an optional u/l suffix.
func parseCInt(t Token) (int64, error) {
	s := strings.TrimRight(t.Text, "uUlL")
	s = strings.TrimSuffix(strings.TrimSuffix(s, "i64"), "I64")
	if s == "" {
		return 0, errorf(t.Pos, "bad number %s", t.Text)
	}
	base := 10
	switch {
	case strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil {
		return 0, errorf(t.Pos, "bad number %s", t.Text)
	}
	return int64(u), nil
}
