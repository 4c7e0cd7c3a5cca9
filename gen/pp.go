package gen

import (
	"strings"
)

// Define is an object-like or function-like #define seen in an active region.
type Define struct {
	Name   string
	Params []string // nil for object-like macros
	Func   bool
	Body   string
	Pos    Pos
}

// Preprocessed is the result of Preprocess.
type Preprocessed struct {
	Tokens  []Token   // active tokens, directives removed, ending in TokEOF
	Defines []*Define // #defines of active regions, in order
}

const maxCondDepth = 64

// Preprocess evaluates conditional directives over toks and records
// #defines. Macros are not expanded into the token stream: the inputs use them
// only as markers that the parsers recognise by name. predefined gives the
// names (and integer values) that are defined before the file starts.
func Preprocess(toks []Token, predefined map[string]int64) (*Preprocessed, error) {
	type frame struct {
		parentActive bool
		active       bool
		taken        bool // some branch of this #if was taken
		sawElse      bool
		pos          Pos
	}
	defs := map[string]*Define{}
	vals := map[string]int64{}
	for k, v := range predefined {
		vals[k] = v
		defs[k] = &Define{Name: k}
	}
	env := Env{
		Defined: func(n string) bool { _, ok := defs[n]; return ok },
		Ident: func(n string) (int64, bool) {
			if v, ok := vals[n]; ok {
				return v, true
			}
			return 0, false
		},
		UnknownIsZero: true,
	}
	var stack []frame
	active := true
	out := &Preprocessed{}
	for _, t := range toks {
		if t.Kind != TokDirective {
			if active {
				out.Tokens = append(out.Tokens, t)
			}
			continue
		}
		name, rest := splitDirective(t.Text)
		switch name {
		case "if", "ifdef", "ifndef":
			if len(stack) >= maxCondDepth {
				return nil, errorf(t.Pos, "conditionals nested too deeply")
			}
			cond := false
			if active {
				var err error
				cond, err = evalCondition(name, rest, t.Pos, env)
				if err != nil {
					return nil, err
				}
			}
			stack = append(stack, frame{parentActive: active, active: active && cond, taken: cond, pos: t.Pos})
			active = active && cond
		case "elif":
			if len(stack) == 0 {
				return nil, errorf(t.Pos, "#elif without #if")
			}
			f := &stack[len(stack)-1]
			if f.sawElse {
				return nil, errorf(t.Pos, "#elif after #else")
			}
			cond := false
			if f.parentActive && !f.taken {
				var err error
				cond, err = evalCondition("if", rest, t.Pos, env)
				if err != nil {
					return nil, err
				}
			}
			f.active = f.parentActive && !f.taken && cond
			f.taken = f.taken || cond
			active = f.active
		case "else":
			if len(stack) == 0 {
				return nil, errorf(t.Pos, "#else without #if")
			}
			f := &stack[len(stack)-1]
			if f.sawElse {
				return nil, errorf(t.Pos, "second #else")
			}
			f.sawElse = true
			f.active = f.parentActive && !f.taken
			f.taken = true
			active = f.active
		case "endif":
			if len(stack) == 0 {
				return nil, errorf(t.Pos, "#endif without #if")
			}
			active = stack[len(stack)-1].parentActive
			stack = stack[:len(stack)-1]
		case "define":
			if !active {
				continue
			}
			d, err := parseDefine(rest, t.Pos)
			if err != nil {
				return nil, err
			}
			defs[d.Name] = d
			if !d.Func {
				// Remember simple integer values for later #if tests.
				if v, err := EvalString(t.Pos, d.Body, env); err == nil && strings.TrimSpace(d.Body) != "" {
					vals[d.Name] = v
				}
			}
			out.Defines = append(out.Defines, d)
		case "undef":
			if active {
				n := strings.TrimSpace(rest)
				delete(defs, n)
				delete(vals, n)
			}
		case "include", "pragma", "error", "warning", "line", "":
			// No effect on what the parsers read.
		default:
			if active {
				return nil, errorf(t.Pos, "unknown directive #%s", name)
			}
		}
	}
	if len(stack) > 0 {
		return nil, errorf(stack[len(stack)-1].pos, "#if without #endif")
	}
	if len(out.Tokens) == 0 || out.Tokens[len(out.Tokens)-1].Kind != TokEOF {
		out.Tokens = append(out.Tokens, Token{Kind: TokEOF})
	}
	return out, nil
}

func splitDirective(text string) (name, rest string) {
	s := strings.TrimSpace(strings.TrimPrefix(text, "#"))
	i := 0
	for i < len(s) && isIdentPart(s[i]) {
		i++
	}
	return s[:i], strings.TrimSpace(s[i:])
}

func evalCondition(kind, rest string, p Pos, env Env) (bool, error) {
	switch kind {
	case "ifdef", "ifndef":
		n := strings.TrimSpace(rest)
		if n == "" || !isIdentStart(n[0]) {
			return false, errorf(p, "#%s needs a name", kind)
		}
		d := env.Defined(n)
		return d == (kind == "ifdef"), nil
	}
	v, err := EvalString(p, rest, env)
	if err != nil {
		return false, errorf(p, "in #if: %v", err)
	}
	return v != 0, nil
}

func parseDefine(rest string, p Pos) (*Define, error) {
	i := 0
	for i < len(rest) && isIdentPart(rest[i]) {
		i++
	}
	if i == 0 || !isIdentStart(rest[0]) {
		return nil, errorf(p, "#define needs a name")
	}
	d := &Define{Name: rest[:i], Pos: p}
	tail := rest[i:]
	if strings.HasPrefix(tail, "(") {
		end := strings.IndexByte(tail, ')')
		if end < 0 {
			return nil, errorf(p, "unterminated parameter list in #define %s", d.Name)
		}
		d.Func = true
		for _, a := range strings.Split(tail[1:end], ",") {
			if a = strings.TrimSpace(a); a != "" {
				d.Params = append(d.Params, a)
			}
		}
		tail = tail[end+1:]
	}
	d.Body = strings.TrimSpace(tail)
	return d, nil
}
