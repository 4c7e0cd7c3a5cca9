package gen

import (
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ParseIDL parses the MIDL subset used by corprof.idl: interface blocks with
// attribute lists, typedefs of scalars, structs, unions, enums and function
// types, forward declarations, import and cpp_quote (both ignored), and
// preprocessor conditionals.
func ParseIDL(name string, src []byte) (*File, error) {
	toks, err := Lex(name, src)
	if err != nil {
		return nil, err
	}
	pp, err := Preprocess(toks, nil)
	if err != nil {
		return nil, err
	}
	p := &idlParser{c: newCursor(pp.Tokens), f: &File{Name: name}, enumVals: map[string]int64{}}
	for _, d := range pp.Defines {
		if d.Func || d.Body == "" {
			continue
		}
		if v, err := EvalString(d.Pos, d.Body, Env{Ident: p.lookup}); err == nil {
			p.f.Consts = append(p.f.Consts, &Const{Name: d.Name, Value: v, Expr: d.Body, Source: name, Pos: d.Pos})
		}
	}
	for !p.c.atEOF() {
		if err := p.topLevel(); err != nil {
			return nil, err
		}
	}
	return p.f, nil
}

// maxIDLItems caps the number of members a single block may declare.
const maxIDLItems = 100000

type idlParser struct {
	c        *cursor
	f        *File
	enumVals map[string]int64
}

func (p *idlParser) lookup(n string) (int64, bool) {
	v, ok := p.enumVals[n]
	return v, ok
}

func (p *idlParser) topLevel() error {
	c := p.c
	t := c.peek()
	switch {
	case c.acceptPunct(";"):
		return nil
	case t.Kind == TokIdent && t.Text == "cpp_quote":
		c.next()
		return p.skipCall()
	case t.Kind == TokIdent && (t.Text == "import" || t.Text == "importlib"):
		c.next()
		if c.acceptPunct("(") {
			if _, err := c.collectUntil(")"); err != nil {
				return err
			}
			c.next()
		}
		for c.peek().Kind == TokString || c.isPunct(",") {
			c.next()
		}
		_, err := c.expectPunct(";")
		return err
	case t.Kind == TokIdent && t.Text == "typedef":
		c.next()
		return p.typedef()
	case t.Kind == TokPunct && t.Text == "[":
		attrs, err := p.attributes()
		if err != nil {
			return err
		}
		if !c.isIdent("interface") {
			return errorf(c.peek().Pos, "expected interface after attribute list, found %s", c.peek())
		}
		return p.iface(attrs)
	case t.Kind == TokIdent && t.Text == "interface":
		return p.iface(nil)
	case t.Kind == TokIdent && (t.Text == "enum" || t.Text == "struct" || t.Text == "union"):
		// A forward declaration ("enum CorElementType;") or a tagged
		// definition without typedef.
		kw := c.next().Text
		tag, err := c.expectIdent()
		if err != nil {
			return err
		}
		if c.acceptPunct(";") {
			return nil
		}
		switch kw {
		case "enum":
			e, err := p.enumBody(tag.Text, tag.Pos)
			if err != nil {
				return err
			}
			e.Name = tag.Text
			p.f.Enums = append(p.f.Enums, e)
		default:
			s, err := p.structBody(kw == "union", tag.Text, tag.Pos, 0)
			if err != nil {
				return err
			}
			s.Name = tag.Text
			p.f.Structs = append(p.f.Structs, s)
		}
		_, err = c.expectPunct(";")
		return err
	}
	return errorf(t.Pos, "unexpected %s at top level", t)
}

// skipCall skips a parenthesised argument list and an optional ';'.
func (p *idlParser) skipCall() error {
	if err := p.c.skipBalanced("(", ")"); err != nil {
		return err
	}
	p.c.acceptPunct(";")
	return nil
}

// attr is one entry of a MIDL attribute list: name and raw argument text.
type attr struct {
	Name string
	Args []string // top-level comma-separated arguments, as text
	Pos  Pos
}

func (p *idlParser) attributes() ([]attr, error) {
	c := p.c
	if _, err := c.expectPunct("["); err != nil {
		return nil, err
	}
	var out []attr
	for !c.acceptPunct("]") {
		nameTok, err := c.expectIdent()
		if err != nil {
			return nil, err
		}
		a := attr{Name: nameTok.Text, Pos: nameTok.Pos}
		if c.acceptPunct("(") {
			for {
				arg, err := c.collectUntil(",", ")")
				if err != nil {
					return nil, err
				}
				a.Args = append(a.Args, joinTokens(arg))
				if c.acceptPunct(")") {
					break
				}
				c.next() // ","
			}
		}
		out = append(out, a)
		if len(out) > maxIDLItems {
			return nil, errorf(nameTok.Pos, "too many attributes")
		}
		if !c.acceptPunct(",") && !c.isPunct("]") {
			return nil, errorf(c.peek().Pos, "expected ',' or ']' in attribute list, found %s", c.peek())
		}
	}
	return out, nil
}

func (p *idlParser) iface(attrs []attr) error {
	c := p.c
	kw := c.next() // interface
	nameTok, err := c.expectIdent()
	if err != nil {
		return err
	}
	if c.acceptPunct(";") {
		return nil // forward declaration
	}
	it := &Interface{Name: nameTok.Text, Source: p.f.Name, Pos: kw.Pos}
	for _, a := range attrs {
		switch a.Name {
		case "uuid":
			if len(a.Args) != 1 {
				return errorf(a.Pos, "uuid takes one argument")
			}
			id, err := uuid.Parse(strings.Trim(strings.ReplaceAll(a.Args[0], " ", ""), `"`))
			if err != nil {
				return errorf(a.Pos, "bad uuid %s: %v", a.Args[0], err)
			}
			it.IID = id
		case "local":
			it.Local = true
		}
	}
	if c.acceptPunct(":") {
		base, err := c.expectIdent()
		if err != nil {
			return err
		}
		it.Base = base.Text
	}
	if _, err := c.expectPunct("{"); err != nil {
		return err
	}
	for !c.acceptPunct("}") {
		if c.atEOF() {
			return errorf(kw.Pos, "interface %s is not closed", it.Name)
		}
		if c.acceptPunct(";") {
			continue
		}
		if c.isIdent("cpp_quote") {
			c.next()
			if err := p.skipCall(); err != nil {
				return err
			}
			continue
		}
		m, err := p.method()
		if err != nil {
			return err
		}
		it.Methods = append(it.Methods, m)
		if len(it.Methods) > maxIDLItems {
			return errorf(m.Pos, "too many methods")
		}
	}
	c.acceptPunct(";")
	p.f.Interfaces = append(p.f.Interfaces, it)
	return nil
}

func (p *idlParser) method() (*Method, error) {
	c := p.c
	if c.isPunct("[") {
		if _, err := p.attributes(); err != nil {
			return nil, err
		}
	}
	start := c.peek()
	ret, err := c.typeRef()
	if err != nil {
		return nil, err
	}
	for c.isIdent("STDMETHODCALLTYPE") || c.isIdent("__stdcall") {
		c.next()
	}
	nameTok, err := c.expectIdent()
	if err != nil {
		return nil, err
	}
	m := &Method{Name: nameTok.Text, Ret: ret, Pos: start.Pos}
	m.Params, err = p.params()
	if err != nil {
		return nil, err
	}
	if _, err := c.expectPunct(";"); err != nil {
		return nil, err
	}
	return m, nil
}

// params parses "( [attrs] type name[], ... )"; "(void)" is empty.
func (p *idlParser) params() ([]*Param, error) {
	c := p.c
	if _, err := c.expectPunct("("); err != nil {
		return nil, err
	}
	if c.isIdent("void") && c.peekAt(1).Kind == TokPunct && c.peekAt(1).Text == ")" {
		c.next()
	}
	var out []*Param
	for !c.acceptPunct(")") {
		prm, err := p.param(len(out))
		if err != nil {
			return nil, err
		}
		out = append(out, prm)
		if len(out) > maxIDLItems {
			return nil, errorf(prm.Pos, "too many parameters")
		}
		if !c.acceptPunct(",") && !c.isPunct(")") {
			return nil, errorf(c.peek().Pos, "expected ',' or ')' after parameter, found %s", c.peek())
		}
	}
	return out, nil
}

func (p *idlParser) param(index int) (*Param, error) {
	c := p.c
	prm := &Param{Pos: c.peek().Pos}
	var attrs []attr
	if c.isPunct("[") {
		var err error
		if attrs, err = p.attributes(); err != nil {
			return nil, err
		}
	}
	t, err := c.typeRef()
	if err != nil {
		return nil, err
	}
	prm.Type = t
	if c.peek().Kind == TokIdent {
		prm.Name = c.next().Text
	} else {
		prm.Name = "p" + strconv.Itoa(index)
	}
	if err := c.arraySuffix(&prm.Type); err != nil {
		return nil, err
	}
	in, out := false, false
	for _, a := range attrs {
		switch a.Name {
		case "in":
			in = true
		case "out":
			out = true
		case "retval":
			prm.Retval = true
		case "unique", "optional", "ptr":
			prm.Optional = true
		case "annotation":
			// A SAL annotation in a string: _Out_writes_to_(cap, len),
			// _In_reads_opt_(count) and the like.
			if len(a.Args) == 1 {
				sal := strings.Trim(a.Args[0], `"`)
				name, rest, ok := strings.Cut(sal, "(")
				if ok && strings.HasSuffix(rest, ")") {
					args := strings.Split(strings.TrimSuffix(rest, ")"), ",")
					for i := range args {
						args[i] = strings.ReplaceAll(strings.TrimSpace(args[i]), " ", "")
					}
					if len(args) >= 1 && args[0] != "" {
						prm.SizeIs = args[0]
					}
					if len(args) >= 2 {
						prm.LengthIs = args[1]
					}
				}
				if strings.Contains(name, "_opt_") {
					prm.Optional = true
				}
			}
		case "size_is", "length_is":
			if len(a.Args) < 1 {
				return nil, errorf(a.Pos, "%s needs an argument", a.Name)
			}
			if a.Name == "size_is" {
				prm.SizeIs = a.Args[0]
			} else {
				prm.LengthIs = a.Args[0]
			}
		}
	}
	switch {
	case in && out:
		prm.Dir = DirInOut
	case out:
		prm.Dir = DirOut
	default:
		prm.Dir = DirIn
	}
	return prm, nil
}

// typedef parses what follows the typedef keyword.
func (p *idlParser) typedef() error {
	c := p.c
	start := c.peek()
	if c.isPunct("[") {
		if _, err := p.attributes(); err != nil {
			return err
		}
	}
	// typedef struct/union/enum [tag] { ... } Name [, *PName];
	if (c.isIdent("struct") || c.isIdent("union") || c.isIdent("enum")) &&
		(c.peekAt(1).Kind == TokPunct && c.peekAt(1).Text == "{" ||
			c.peekAt(1).Kind == TokIdent && c.peekAt(2).Kind == TokPunct && c.peekAt(2).Text == "{") {
		kw := c.next().Text
		tag := ""
		if c.peek().Kind == TokIdent {
			tag = c.next().Text
		}
		var names []string
		var err error
		switch kw {
		case "enum":
			var e *Enum
			if e, err = p.enumBody(tag, start.Pos); err != nil {
				return err
			}
			if names, err = p.declNames(); err != nil {
				return err
			}
			e.Name = firstOr(names, tag)
			p.f.Enums = append(p.f.Enums, e)
		default:
			var s *Struct
			if s, err = p.structBody(kw == "union", tag, start.Pos, 0); err != nil {
				return err
			}
			if names, err = p.declNames(); err != nil {
				return err
			}
			s.Name = firstOr(names, tag)
			p.f.Structs = append(p.f.Structs, s)
		}
		return nil
	}
	// Function types: RET [CALLCONV] NAME ( params ); or RET CALLCONV (* NAME)(params);
	// A leading calling convention is allowed too (STDMETHODCALLTYPE void F(...)).
	for c.isIdent("STDMETHODCALLTYPE") || c.isIdent("__stdcall") {
		c.next()
	}
	t, err := c.typeRef()
	if err != nil {
		return err
	}
	for c.isIdent("STDMETHODCALLTYPE") || c.isIdent("__stdcall") {
		c.next()
	}
	if c.isPunct("(") && c.peekAt(1).Kind == TokPunct && c.peekAt(1).Text == "*" {
		c.next()
		c.next()
		nameTok, err := c.expectIdent()
		if err != nil {
			return err
		}
		if _, err := c.expectPunct(")"); err != nil {
			return err
		}
		params, err := p.params()
		if err != nil {
			return err
		}
		p.f.FuncTypes = append(p.f.FuncTypes, &FuncType{Name: nameTok.Text, Ret: t, Pointer: true, Params: params, Source: p.f.Name, Pos: start.Pos})
		_, err = c.expectPunct(";")
		return err
	}
	nameTok, err := c.expectIdent()
	if err != nil {
		return err
	}
	if c.isPunct("(") {
		params, err := p.params()
		if err != nil {
			return err
		}
		p.f.FuncTypes = append(p.f.FuncTypes, &FuncType{Name: nameTok.Text, Ret: t, Params: params, Source: p.f.Name, Pos: start.Pos})
		_, err = c.expectPunct(";")
		return err
	}
	// Scalar typedef, possibly with further declarators: typedef T A, *PA;
	for {
		td := &Typedef{Name: nameTok.Text, Type: t, Source: p.f.Name, Pos: nameTok.Pos}
		if err := c.arraySuffix(&td.Type); err != nil {
			return err
		}
		p.f.Typedefs = append(p.f.Typedefs, td)
		if !c.acceptPunct(",") {
			break
		}
		extra := TypeRef{Name: t.Name, Const: t.Const, Ptr: t.Ptr}
		for c.acceptPunct("*") {
			extra.Ptr++
		}
		if nameTok, err = c.expectIdent(); err != nil {
			return err
		}
		t = extra
	}
	_, err = c.expectPunct(";")
	return err
}

// declNames parses "Name [, *PName ...] ;" after a struct/enum body and
// records pointer aliases as typedefs of the first name.
func (p *idlParser) declNames() ([]string, error) {
	c := p.c
	var names []string
	for !c.acceptPunct(";") {
		ptr := 0
		for c.acceptPunct("*") {
			ptr++
		}
		n, err := c.expectIdent()
		if err != nil {
			return nil, err
		}
		if ptr > 0 && len(names) > 0 {
			p.f.Typedefs = append(p.f.Typedefs, &Typedef{Name: n.Text, Type: TypeRef{Name: names[0], Ptr: ptr}, Source: p.f.Name, Pos: n.Pos})
		}
		names = append(names, n.Text)
		if !c.acceptPunct(",") && !c.isPunct(";") {
			return nil, errorf(c.peek().Pos, "expected ',' or ';' after typedef name, found %s", c.peek())
		}
	}
	return names, nil
}

func firstOr(names []string, def string) string {
	if len(names) > 0 {
		return names[0]
	}
	return def
}

func (p *idlParser) enumBody(tag string, pos Pos) (*Enum, error) {
	c := p.c
	if _, err := c.expectPunct("{"); err != nil {
		return nil, err
	}
	e := &Enum{Tag: tag, Source: p.f.Name, Pos: pos}
	next := int64(0)
	for !c.acceptPunct("}") {
		nameTok, err := c.expectIdent()
		if err != nil {
			return nil, err
		}
		v := &EnumValue{Name: nameTok.Text, Pos: nameTok.Pos, Value: next}
		if c.acceptPunct("=") {
			expr, err := c.collectUntil(",", "}")
			if err != nil {
				return nil, err
			}
			if len(expr) == 0 {
				return nil, errorf(nameTok.Pos, "missing value for %s", nameTok.Text)
			}
			v.Expr = joinTokens(expr)
			if v.Value, err = EvalTokens(expr, Env{Ident: p.lookup}); err != nil {
				return nil, err
			}
		}
		p.enumVals[v.Name] = v.Value
		next = v.Value + 1
		e.Values = append(e.Values, v)
		if len(e.Values) > maxIDLItems {
			return nil, errorf(nameTok.Pos, "too many enumerators")
		}
		if !c.acceptPunct(",") && !c.isPunct("}") {
			return nil, errorf(c.peek().Pos, "expected ',' or '}' in enum, found %s", c.peek())
		}
	}
	return e, nil
}

const maxStructDepth = 16

func (p *idlParser) structBody(union bool, tag string, pos Pos, depth int) (*Struct, error) {
	c := p.c
	if depth > maxStructDepth {
		return nil, errorf(pos, "structs nested too deeply")
	}
	if _, err := c.expectPunct("{"); err != nil {
		return nil, err
	}
	s := &Struct{Tag: tag, Union: union, Source: p.f.Name, Pos: pos}
	for !c.acceptPunct("}") {
		if c.atEOF() {
			return nil, errorf(pos, "struct is not closed")
		}
		if c.isPunct("[") {
			if _, err := p.attributes(); err != nil {
				return nil, err
			}
		}
		fpos := c.peek().Pos
		if (c.isIdent("struct") || c.isIdent("union")) && (c.peekAt(1).Text == "{" || c.peekAt(2).Text == "{") {
			kw := c.next().Text
			innerTag := ""
			if c.peek().Kind == TokIdent {
				innerTag = c.next().Text
			}
			inner, err := p.structBody(kw == "union", innerTag, fpos, depth+1)
			if err != nil {
				return nil, err
			}
			name := ""
			if c.peek().Kind == TokIdent {
				name = c.next().Text
			}
			inner.Name = innerTag
			p.f.Structs = append(p.f.Structs, inner)
			s.Fields = append(s.Fields, &Field{Name: name, Type: TypeRef{Name: innerTag}, Pos: fpos})
			if _, err := c.expectPunct(";"); err != nil {
				return nil, err
			}
			continue
		}
		t, err := c.typeRef()
		if err != nil {
			return nil, err
		}
		for {
			ft := t
			for c.acceptPunct("*") {
				ft.Ptr++
			}
			nameTok, err := c.expectIdent()
			if err != nil {
				return nil, err
			}
			if err := c.arraySuffix(&ft); err != nil {
				return nil, err
			}
			s.Fields = append(s.Fields, &Field{Name: nameTok.Text, Type: ft, Pos: nameTok.Pos})
			if len(s.Fields) > maxIDLItems {
				return nil, errorf(nameTok.Pos, "too many fields")
			}
			if !c.acceptPunct(",") {
				break
			}
		}
		if _, err := c.expectPunct(";"); err != nil {
			return nil, err
		}
	}
	return s, nil
}
