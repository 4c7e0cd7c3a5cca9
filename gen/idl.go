package gen

import (
	"math"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ParseIDL parses the MIDL subset used by corprof.idl: interface blocks with
// attribute lists, typedefs of scalars, structs, unions, enums and function
// types, forward declarations, import and cpp_quote (both ignored), and
// preprocessor conditionals.
func ParseIDL(name string, src []byte) (*File, error) {
	cp, err := newCParser(name, src, nil)
	if err != nil {
		return nil, err
	}
	cp.midl = true
	p := &idlParser{c: cp.c, f: cp.f, cp: cp}
	for !p.c.atEOF() {
		if err := cp.flushDefines(p.c.peek().Pos); err != nil {
			return nil, err
		}
		if err := p.topLevel(); err != nil {
			return nil, err
		}
	}
	if err := cp.flushDefines(Pos{Line: math.MaxInt}); err != nil {
		return nil, err
	}
	return p.f, nil
}

// maxIDLItems caps the number of members a single block may declare.
const maxIDLItems = 100000

// idlParser reads what is MIDL-specific (attribute lists, interface blocks,
// import, cpp_quote) and hands C declarations to the shared C parser, which
// works on the same cursor and file.
type idlParser struct {
	c  *cursor
	f  *File
	cp *cParser
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
		save := c.i
		start := c.next()
		if c.isPunct("[") {
			if _, err := p.attributes(); err != nil {
				return err
			}
		}
		return p.cp.typedefRest(start, save)
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
		return p.cp.decl()
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
