package gen

import (
	"encoding/binary"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ParseCppHeader parses a C++ header that declares COM interfaces with the
// Windows interface macros, such as cor.h, into a File:
//
//   - every DECLARE_INTERFACE_(Name, Base) { STDMETHOD(M)(params) PURE;
//     STDMETHOD_(Ret, M)(params) PURE; ... }; block (and DECLARE_INTERFACE(Name),
//     DECLARE_INTERFACE_IID_(Name, Base, "iid")) becomes an Interface whose
//     methods are in declaration order, which is their vtable order. Anything
//     else inside such a block is an error, since it would shift the vtable.
//   - EXTERN_GUID(Name, l, w1, w2, b1, ..., b8) and DEFINE_GUID(...) become
//     GUIDs; an interface gets its IID from the GUID named IID_<Name> when
//     there is one.
//   - parameters: SAL annotations (see salAnnotations) set Dir, Optional,
//     SizeIs and LengthIs. Without one, a parameter that is a pointer or
//     array is DirOut unless it points to const data (DirIn), except that
//     HCORENUM* is DirInOut; anything else is DirIn. Default values
//     ("ULONG align = 1") are accepted and dropped; unnamed parameters are
//     named p0, p1, ....
//   - typedefs, enums, structs, unions, function-pointer typedefs and
//     #define constants, as ParseConstHeader describes.
//
// The file is preprocessed with __cplusplus defined. C++-only declarations
// (inline functions, classes, templates, namespaces' contents that are not
// the above, variables) are skipped; extern "C" blocks and namespaces are
// entered. Errors are *Error values with the file, line and column.
func ParseCppHeader(name string, src []byte) (f *File, err error) {
	defer recoverParse(name, &f, &err)
	return parseCHeader(name, src, map[string]int64{"__cplusplus": 201703})
}

// Caps on nesting and counts.
const (
	maxCBlockDepth   = 32      // extern "C" { and namespace { blocks
	maxCNestDepth    = 16      // structs and unions declared inside structs
	maxCParams       = 1024    // parameters of one method
	maxCItems        = 1 << 16 // methods of an interface, fields of a struct, enumerators of an enum
	maxDeclarators   = 1024    // names in one typedef
	maxGUIDComponent = 11
)

// cParser parses the declarations of a C or C++ header.
type cParser struct {
	f           *File
	c           *cursor
	ev          *constEnv
	defs        []*macroDef // #defines in source order
	nextDef     int         // defs[:nextDef] have been processed
	consts      map[string]*Const
	enumerators map[string]Pos
	guids       map[string]*GUID
	ifaces      map[string]*Interface
	midl        bool // MIDL rules: report declarations it cannot parse instead of skipping them; unattributed parameters are [in]
}

// newCParser preprocesses src and returns a parser positioned at its start.
func newCParser(name string, src []byte, predefined map[string]int64) (*cParser, error) {
	toks, err := Lex(name, src)
	if err != nil {
		return nil, err
	}
	pp, err := Preprocess(toks, predefined)
	if err != nil {
		return nil, err
	}
	p := &cParser{
		f:           &File{Name: name},
		ev:          newConstEnv(),
		defs:        collectDefines(name, src, pp.Defines),
		consts:      map[string]*Const{},
		enumerators: map[string]Pos{},
		guids:       map[string]*GUID{},
		ifaces:      map[string]*Interface{},
	}
	p.c = newCursor(dropAttributeWords(pp.Tokens))
	return p, nil
}

func parseCHeader(name string, src []byte, predefined map[string]int64) (*File, error) {
	p, err := newCParser(name, src, predefined)
	if err != nil {
		return nil, err
	}
	if err := p.top(); err != nil {
		return nil, err
	}
	if err := p.flushDefines(Pos{Line: math.MaxInt}); err != nil {
		return nil, err
	}
	for _, it := range p.f.Interfaces {
		if g := p.guids["IID_"+it.Name]; g != nil && it.IID == (uuid.UUID{}) {
			it.IID = g.Value
		}
	}
	return p.f, nil
}

// dropAttributeWords removes macro words that qualify a declaration without
// changing its type ("typedef UNALIGNED void const *UVCP_CONSTANT;").
func dropAttributeWords(toks []Token) []Token {
	out := toks[:0:0]
	for _, t := range toks {
		if t.Kind == TokIdent && (t.Text == "UNALIGNED" || t.Text == "__unaligned") {
			continue
		}
		out = append(out, t)
	}
	return out
}

func posBefore(a, b Pos) bool {
	return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
}

// flushDefines processes the #defines that come before p, so that a
// declaration sees exactly the macros defined above it.
func (p *cParser) flushDefines(before Pos) error {
	for p.nextDef < len(p.defs) && posBefore(p.defs[p.nextDef].Pos, before) {
		d := p.defs[p.nextDef]
		p.nextDef++
		if err := p.define(d); err != nil {
			return err
		}
	}
	return nil
}

func (p *cParser) define(d *macroDef) error {
	if d.Func {
		p.ev.macros[d.Name] = d
		return nil
	}
	delete(p.ev.macros, d.Name)
	if d.LexErr != nil || len(d.Toks) == 0 {
		return nil
	}
	k := &Const{Name: d.Name, Expr: d.Body, Source: p.f.Name, Pos: d.NamePos}
	if s, ok := stringConst(d.Toks); ok {
		k.Kind, k.Str = ConstString, s
	} else {
		v, err := EvalTokens(d.Toks, p.ev.env(nil, 0))
		if err != nil {
			return nil // not a constant: a type, a keyword, a statement...
		}
		k.Value = v
	}
	return p.addConst(k)
}

func (p *cParser) addConst(k *Const) error {
	if prev := p.consts[k.Name]; prev != nil {
		if prev.Kind == k.Kind && prev.Value == k.Value && prev.Str == k.Str {
			return nil
		}
		return errorf(k.Pos, "%s redefined with a different value (previous definition at %s)", k.Name, prev.Pos)
	}
	p.consts[k.Name] = k
	if k.Kind == ConstInt {
		p.ev.names[k.Name] = k.Value
	}
	p.f.Consts = append(p.f.Consts, k)
	return nil
}

// top parses top-level declarations until the end of the file.
func (p *cParser) top() error {
	c := p.c
	var blocks []Pos
	for {
		t := c.peek()
		if t.Kind != TokEOF {
			if err := p.flushDefines(t.Pos); err != nil {
				return err
			}
		}
		switch {
		case t.Kind == TokEOF:
			if len(blocks) > 0 {
				return errorf(blocks[len(blocks)-1], "block is not closed")
			}
			return nil
		case t.Kind == TokPunct && t.Text == ";":
			c.next()
		case t.Kind == TokPunct && t.Text == "}":
			if len(blocks) == 0 {
				return errorf(t.Pos, "unexpected '}'")
			}
			blocks = blocks[:len(blocks)-1]
			c.next()
		case t.Kind == TokIdent && t.Text == "extern" && c.peekAt(1).Kind == TokString:
			// extern "C" { ... } or extern "C" declaration.
			c.next()
			c.next()
			if c.acceptPunct("{") {
				if len(blocks) >= maxCBlockDepth {
					return errorf(t.Pos, "blocks nested too deeply")
				}
				blocks = append(blocks, t.Pos)
			}
		case t.Kind == TokIdent && t.Text == "namespace" &&
			(isPunctTok(c.peekAt(1), "{") || (c.peekAt(1).Kind == TokIdent && isPunctTok(c.peekAt(2), "{"))):
			c.next()
			if c.peek().Kind == TokIdent {
				c.next()
			}
			c.next()
			if len(blocks) >= maxCBlockDepth {
				return errorf(t.Pos, "blocks nested too deeply")
			}
			blocks = append(blocks, t.Pos)
		default:
			if err := p.decl(); err != nil {
				return err
			}
		}
	}
}

func isPunctTok(t Token, s string) bool { return t.Kind == TokPunct && t.Text == s }

// decl parses or skips one declaration.
func (p *cParser) decl() error {
	c := p.c
	t := c.peek()
	if t.Kind == TokIdent {
		switch t.Text {
		case "EXTERN_GUID", "DEFINE_GUID":
			if isPunctTok(c.peekAt(1), "(") {
				return p.guid()
			}
		case "DECLARE_INTERFACE", "DECLARE_INTERFACE_", "DECLARE_INTERFACE_IID_":
			if isPunctTok(c.peekAt(1), "(") {
				return p.iface()
			}
		case "typedef":
			return p.typedef()
		case "enum":
			if p.enumHasBody() {
				return p.enumDecl(t, false)
			}
		case "struct", "union":
			if c.peekAt(1).Kind == TokIdent && isPunctTok(c.peekAt(2), "{") {
				return p.structDecl()
			}
		}
	}
	return p.skipDecl()
}

// skipDecl skips a declaration the parser does not model: up to and including
// its ';', or through the body of a function definition.
func (p *cParser) skipDecl() error {
	c := p.c
	start := c.peek()
	var prev Token
	for n := 0; ; n++ {
		t := c.peek()
		switch {
		case t.Kind == TokEOF:
			return errorf(start.Pos, "declaration is not terminated")
		case t.Kind != TokPunct:
		case t.Text == ";":
			c.next()
			return nil
		case t.Text == "}" && n > 0:
			return nil // closes an enclosing block; the caller handles it
		case t.Text == "(" || t.Text == "[":
			cl := ")"
			if t.Text == "[" {
				cl = "]"
			}
			if err := c.skipBalanced(t.Text, cl); err != nil {
				return err
			}
			prev = Token{Kind: TokPunct, Text: cl}
			continue
		case t.Text == "{":
			if err := c.skipBalanced("{", "}"); err != nil {
				return err
			}
			if c.acceptPunct(";") || isFunctionBodyStart(prev) {
				return nil
			}
			prev = Token{Kind: TokPunct, Text: "}"}
			continue
		case t.Text == ")" || t.Text == "]":
			return errorf(t.Pos, "unbalanced %q", t.Text)
		}
		prev = c.next()
	}
}

// isFunctionBodyStart reports whether a '{' after prev opens a function body
// (rather than a class body or an initializer, which a ';' follows).
func isFunctionBodyStart(prev Token) bool {
	switch {
	case prev.Kind == TokPunct && prev.Text == ")":
		return true
	case prev.Kind == TokIdent:
		switch prev.Text {
		case "const", "noexcept", "override", "final", "volatile":
			return true
		}
	}
	return false
}

// ---------------------------------------------------------------------------
// GUIDs

var guidLimits = [maxGUIDComponent]int64{0xffffffff, 0xffff, 0xffff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}

// guid parses EXTERN_GUID(Name, l, w1, w2, b1, ..., b8) or DEFINE_GUID(...).
func (p *cParser) guid() error {
	c := p.c
	kw := c.next()
	if _, err := c.expectPunct("("); err != nil {
		return err
	}
	nameTok, err := c.expectIdent()
	if err != nil {
		return err
	}
	var parts [maxGUIDComponent]int64
	for k := range parts {
		if _, err := c.expectPunct(","); err != nil {
			return err
		}
		at := c.peek()
		toks, err := c.collectUntil(",", ")")
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			return errorf(at.Pos, "missing GUID component %d of %s", k+1, nameTok.Text)
		}
		v, err := EvalTokens(toks, Env{})
		if err != nil {
			return withPos(err, at.Pos)
		}
		if v < 0 || v > guidLimits[k] {
			return errorf(at.Pos, "GUID component %s out of range", exprText(toks))
		}
		parts[k] = v
	}
	if _, err := c.expectPunct(")"); err != nil {
		return err
	}
	c.acceptPunct(";")
	// {Data1-Data2-Data3-Data4}: the textual form, and uuid.UUID's byte
	// order, is big-endian for the three integer fields.
	var u uuid.UUID
	binary.BigEndian.PutUint32(u[0:4], uint32(parts[0]))
	binary.BigEndian.PutUint16(u[4:6], uint16(parts[1]))
	binary.BigEndian.PutUint16(u[6:8], uint16(parts[2]))
	for i := 0; i < 8; i++ {
		u[8+i] = byte(parts[3+i])
	}
	return p.addGUID(&GUID{Name: nameTok.Text, Value: u, Source: p.f.Name, Pos: kw.Pos})
}

func (p *cParser) addGUID(g *GUID) error {
	if prev := p.guids[g.Name]; prev != nil {
		if prev.Value == g.Value {
			return nil
		}
		return errorf(g.Pos, "GUID %s redefined with a different value (previous definition at %s)", g.Name, prev.Pos)
	}
	p.guids[g.Name] = g
	p.f.GUIDs = append(p.f.GUIDs, g)
	return nil
}

// ---------------------------------------------------------------------------
// Interfaces

// iface parses a DECLARE_INTERFACE block.
func (p *cParser) iface() error {
	c := p.c
	kw := c.next()
	if _, err := c.expectPunct("("); err != nil {
		return err
	}
	nameTok, err := c.expectIdent()
	if err != nil {
		return err
	}
	it := &Interface{Name: nameTok.Text, Source: p.f.Name, Pos: kw.Pos}
	if kw.Text != "DECLARE_INTERFACE" {
		if _, err := c.expectPunct(","); err != nil {
			return err
		}
		base, err := c.expectIdent()
		if err != nil {
			return err
		}
		it.Base = base.Text
	}
	if kw.Text == "DECLARE_INTERFACE_IID_" {
		if _, err := c.expectPunct(","); err != nil {
			return err
		}
		s := c.peek()
		str, ok := "", s.Kind == TokString
		if ok {
			str, ok = unquoteC(s.Text)
		}
		if !ok {
			return errorf(s.Pos, "expected the IID of %s as a string, found %s", it.Name, s)
		}
		u, err := uuid.Parse(strings.Trim(str, "{}"))
		if err != nil {
			return errorf(s.Pos, "bad IID %s: %v", s.Text, err)
		}
		c.next()
		it.IID = u
	}
	if _, err := c.expectPunct(")"); err != nil {
		return err
	}
	if _, err := c.expectPunct("{"); err != nil {
		return err
	}
	seen := map[string]Pos{}
	for !c.acceptPunct("}") {
		t := c.peek()
		switch {
		case t.Kind == TokEOF:
			return errorf(kw.Pos, "interface %s is not closed", it.Name)
		case isPunctTok(t, ";"):
			c.next()
		case t.Kind == TokIdent && (t.Text == "BEGIN_INTERFACE" || t.Text == "END_INTERFACE"):
			c.next()
		case t.Kind == TokIdent && (t.Text == "STDMETHOD" || t.Text == "STDMETHOD_"):
			m, err := p.method()
			if err != nil {
				return err
			}
			if prev, dup := seen[m.Name]; dup {
				// Overloads are laid out in a compiler-specific order.
				return errorf(m.Pos, "method %s.%s declared twice (first at %s)", it.Name, m.Name, prev)
			}
			seen[m.Name] = m.Pos
			it.Methods = append(it.Methods, m)
			if len(it.Methods) > maxCItems {
				return errorf(m.Pos, "too many methods")
			}
		default:
			return errorf(t.Pos, "unexpected %s in interface %s: expected STDMETHOD or STDMETHOD_", t, it.Name)
		}
	}
	c.acceptPunct(";")
	if prev := p.ifaces[it.Name]; prev != nil {
		return errorf(it.Pos, "interface %s declared twice (first at %s)", it.Name, prev.Pos)
	}
	p.ifaces[it.Name] = it
	p.f.Interfaces = append(p.f.Interfaces, it)
	return nil
}

// method parses STDMETHOD(Name)(params) PURE; or STDMETHOD_(Ret, Name)(params) PURE;
func (p *cParser) method() (*Method, error) {
	c := p.c
	kw := c.next()
	if _, err := c.expectPunct("("); err != nil {
		return nil, err
	}
	m := &Method{Ret: TypeRef{Name: "HRESULT"}, Pos: kw.Pos}
	if kw.Text == "STDMETHOD_" {
		ret, err := c.typeRef()
		if err != nil {
			return nil, err
		}
		m.Ret = ret
		if _, err := c.expectPunct(","); err != nil {
			return nil, err
		}
	}
	nameTok, err := c.expectIdent()
	if err != nil {
		return nil, err
	}
	m.Name = nameTok.Text
	if _, err := c.expectPunct(")"); err != nil {
		return nil, err
	}
	if m.Params, err = p.params(); err != nil {
		return nil, err
	}
	c.acceptIdent("PURE")
	if _, err := c.expectPunct(";"); err != nil {
		return nil, err
	}
	return m, nil
}

// params parses a parenthesized parameter list.
func (p *cParser) params() ([]*Param, error) {
	c := p.c
	if _, err := c.expectPunct("("); err != nil {
		return nil, err
	}
	if c.acceptPunct(")") {
		return nil, nil
	}
	if (c.isIdent("void") || c.isIdent("THIS")) && isPunctTok(c.peekAt(1), ")") {
		c.next()
		c.next()
		return nil, nil
	}
	c.acceptIdent("THIS_")
	var params []*Param
	for {
		if len(params) >= maxCParams {
			return nil, errorf(c.peek().Pos, "too many parameters")
		}
		prm, err := p.param(len(params))
		if err != nil {
			return nil, err
		}
		params = append(params, prm)
		if c.acceptPunct(",") {
			continue
		}
		if _, err := c.expectPunct(")"); err != nil {
			return nil, err
		}
		return params, nil
	}
}

// salKind says what the arguments of a SAL annotation mean.
type salKind int

const (
	salNoArgs     salKind = iota
	salSize               // (capacity)
	salSizeLength         // (capacity, filled count)
	salAll                // (count): capacity and filled count
	salOtherArgs          // arguments carry no buffer size (_In_range_(lo, hi))
)

type salInfo struct {
	setsDir bool
	dir     Dir
	opt     bool
	kind    salKind
}

func salIn(k salKind) salInfo       { return salInfo{setsDir: true, dir: DirIn, kind: k} }
func salOut(k salKind) salInfo      { return salInfo{setsDir: true, dir: DirOut, kind: k} }
func salInOut(k salKind) salInfo    { return salInfo{setsDir: true, dir: DirInOut, kind: k} }
func (s salInfo) optional() salInfo { s.opt = true; return s }

// salAnnotations lists the SAL parameter annotations the parser understands.
// cor.h uses _Out_writes_to_opt_ (and, in 3.1, _In_ and _Out_opt_); the rest
// are the common forms of the same families. "bytes"/"bcount" sizes are in
// bytes, the others in elements. An identifier that looks like SAL but is not
// listed is an error rather than a type name.
var salAnnotations = map[string]salInfo{
	// SAL 2
	"_In_": salIn(salNoArgs), "_In_opt_": salIn(salNoArgs).optional(),
	"_In_z_": salIn(salNoArgs), "_In_opt_z_": salIn(salNoArgs).optional(),
	"_In_reads_": salIn(salSize), "_In_reads_opt_": salIn(salSize).optional(),
	"_In_reads_bytes_": salIn(salSize), "_In_reads_bytes_opt_": salIn(salSize).optional(),
	"_In_reads_z_": salIn(salSize), "_In_reads_opt_z_": salIn(salSize).optional(),
	"_In_reads_or_z_": salIn(salSize), "_In_range_": salIn(salOtherArgs),
	"_Out_": salOut(salNoArgs), "_Out_opt_": salOut(salNoArgs).optional(),
	"_Out_writes_": salOut(salSize), "_Out_writes_opt_": salOut(salSize).optional(),
	"_Out_writes_z_": salOut(salSize), "_Out_writes_opt_z_": salOut(salSize).optional(),
	"_Out_writes_bytes_": salOut(salSize), "_Out_writes_bytes_opt_": salOut(salSize).optional(),
	"_Out_writes_to_": salOut(salSizeLength), "_Out_writes_to_opt_": salOut(salSizeLength).optional(),
	"_Out_writes_bytes_to_": salOut(salSizeLength), "_Out_writes_bytes_to_opt_": salOut(salSizeLength).optional(),
	"_Out_writes_all_": salOut(salAll), "_Out_writes_all_opt_": salOut(salAll).optional(),
	"_Out_writes_bytes_all_": salOut(salAll), "_Out_writes_bytes_all_opt_": salOut(salAll).optional(),
	"_Out_range_": salOut(salOtherArgs),
	"_Inout_":     salInOut(salNoArgs), "_Inout_opt_": salInOut(salNoArgs).optional(),
	"_Inout_z_": salInOut(salNoArgs), "_Inout_opt_z_": salInOut(salNoArgs).optional(),
	"_Inout_updates_": salInOut(salSize), "_Inout_updates_opt_": salInOut(salSize).optional(),
	"_Inout_updates_bytes_": salInOut(salSize), "_Inout_updates_bytes_opt_": salInOut(salSize).optional(),
	"_Inout_updates_to_": salInOut(salSizeLength), "_Inout_updates_to_opt_": salInOut(salSizeLength).optional(),
	"_Inout_updates_all_": salInOut(salAll), "_Inout_updates_all_opt_": salInOut(salAll).optional(),
	"_Outptr_": salOut(salNoArgs), "_Outptr_opt_": salOut(salNoArgs).optional(),
	"_Outptr_result_maybenull_": salOut(salNoArgs), "_Outptr_opt_result_maybenull_": salOut(salNoArgs).optional(),
	"_Outptr_result_z_": salOut(salNoArgs), "_Outptr_opt_result_z_": salOut(salNoArgs).optional(),
	"_Outptr_result_buffer_": salOut(salSize), "_Outptr_opt_result_buffer_": salOut(salSize).optional(),
	"_Outptr_result_bytebuffer_": salOut(salSize), "_Outptr_opt_result_bytebuffer_": salOut(salSize).optional(),
	"_Outptr_result_buffer_to_": salOut(salSizeLength), "_Outptr_result_bytebuffer_to_": salOut(salSizeLength),
	"_Deref_out_": salOut(salNoArgs), "_Deref_out_opt_": salOut(salNoArgs).optional(),
	"_Deref_out_z_": salOut(salNoArgs), "_Deref_out_range_": salOut(salOtherArgs),
	"_Deref_in_range_": salIn(salOtherArgs), "_Deref_inout_range_": salInOut(salOtherArgs),
	"_Reserved_": salIn(salNoArgs),
	// Modifiers that do not change the direction.
	"_Pre_notnull_": {}, "_Pre_maybenull_": {kind: salNoArgs, opt: true}, "_Pre_valid_": {},
	"_Post_z_": {}, "_Post_valid_": {}, "_Post_invalid_": {}, "_Notnull_": {}, "_Maybenull_": {opt: true},
	// SAL 1
	"__in": salIn(salNoArgs), "__in_opt": salIn(salNoArgs).optional(),
	"__in_z": salIn(salNoArgs), "__in_z_opt": salIn(salNoArgs).optional(),
	"__in_ecount": salIn(salSize), "__in_ecount_opt": salIn(salSize).optional(),
	"__in_bcount": salIn(salSize), "__in_bcount_opt": salIn(salSize).optional(),
	"__in_ecount_z": salIn(salSize), "__in_range": salIn(salOtherArgs),
	"__out": salOut(salNoArgs), "__out_opt": salOut(salNoArgs).optional(),
	"__out_ecount": salOut(salSize), "__out_ecount_opt": salOut(salSize).optional(),
	"__out_bcount": salOut(salSize), "__out_bcount_opt": salOut(salSize).optional(),
	"__out_ecount_z": salOut(salSize), "__out_ecount_z_opt": salOut(salSize).optional(),
	"__out_ecount_part": salOut(salSizeLength), "__out_ecount_part_opt": salOut(salSizeLength).optional(),
	"__out_bcount_part": salOut(salSizeLength), "__out_bcount_part_opt": salOut(salSizeLength).optional(),
	"__out_ecount_full": salOut(salAll), "__out_ecount_full_opt": salOut(salAll).optional(),
	"__out_bcount_full": salOut(salAll), "__out_bcount_full_opt": salOut(salAll).optional(),
	"__out_range": salOut(salOtherArgs),
	"__inout":     salInOut(salNoArgs), "__inout_opt": salInOut(salNoArgs).optional(),
	"__inout_z":      salInOut(salNoArgs),
	"__inout_ecount": salInOut(salSize), "__inout_ecount_opt": salInOut(salSize).optional(),
	"__inout_bcount": salInOut(salSize), "__inout_bcount_opt": salInOut(salSize).optional(),
	"__inout_ecount_part": salInOut(salSizeLength), "__inout_bcount_part": salInOut(salSizeLength),
	"__deref_out": salOut(salNoArgs), "__deref_out_opt": salOut(salNoArgs).optional(),
	"__deref_out_z":      salOut(salNoArgs),
	"__deref_out_ecount": salOut(salSize), "__deref_out_ecount_opt": salOut(salSize).optional(),
	"__deref_out_bcount": salOut(salSize), "__deref_out_bcount_opt": salOut(salSize).optional(),
	"__deref_out_ecount_part": salOut(salSizeLength), "__deref_out_bcount_part": salOut(salSizeLength),
	"__deref_opt_out": salOut(salNoArgs).optional(), "__deref_out_range": salOut(salOtherArgs),
	"__deref_inout": salInOut(salNoArgs), "__deref_inout_opt": salInOut(salNoArgs).optional(),
	"__reserved": salIn(salNoArgs),
}

// salLike matches identifiers in the SAL namespace.
var salLike = regexp.MustCompile(`^(_(In|Out|Inout|Outptr|Deref|Pre|Post|Reserved|Ret|Notnull|Maybenull|Null|Success|When)_|__(in|out|inout|deref|reserved)(_|$))`)

// param parses one parameter: SAL annotations, type, optional name, array
// suffix and default value.
func (p *cParser) param(index int) (*Param, error) {
	c := p.c
	start := c.peek()
	if isPunctTok(start, "...") {
		return nil, errorf(start.Pos, "variable argument lists are not supported")
	}
	prm := &Param{Pos: start.Pos}
	var sal salInfo
	for c.peek().Kind == TokIdent {
		at := c.peek()
		info, known := salAnnotations[at.Text]
		if !known {
			if salLike.MatchString(at.Text) {
				return nil, errorf(at.Pos, "unknown SAL annotation %s", at.Text)
			}
			break
		}
		c.next()
		var args [][]Token
		if info.kind != salNoArgs {
			var err error
			if args, err = p.salArgs(at); err != nil {
				return nil, err
			}
			want := map[salKind]int{salSize: 1, salAll: 1, salSizeLength: 2}[info.kind]
			if want > 0 && len(args) != want {
				return nil, errorf(at.Pos, "%s takes %d argument(s), found %d", at.Text, want, len(args))
			}
		}
		if info.setsDir {
			sal.setsDir, sal.dir = true, info.dir
		}
		sal.opt = sal.opt || info.opt
		switch info.kind {
		case salSize:
			prm.SizeIs = exprText(args[0])
		case salSizeLength:
			prm.SizeIs, prm.LengthIs = exprText(args[0]), exprText(args[1])
		case salAll:
			prm.SizeIs = exprText(args[0])
			prm.LengthIs = prm.SizeIs
		}
	}
	t, err := c.typeRef()
	if err != nil {
		return nil, err
	}
	if c.peek().Kind == TokIdent {
		prm.Name = c.next().Text
	} else {
		prm.Name = "p" + strconv.Itoa(index)
	}
	if err := c.arraySuffix(&t); err != nil {
		return nil, err
	}
	prm.Type = t
	if eq := c.peek(); c.acceptPunct("=") {
		def, err := c.collectUntil(",", ")")
		if err != nil {
			return nil, err
		}
		if len(def) == 0 {
			return nil, errorf(eq.Pos, "missing default value for %s", prm.Name)
		}
	}
	prm.Optional = sal.opt
	if sal.setsDir {
		prm.Dir = sal.dir
	} else {
		prm.Dir = defaultDir(t)
		if p.midl {
			prm.Dir = DirIn
		}
	}
	return prm, nil
}

// defaultDir is the direction of a parameter without a SAL annotation.
func defaultDir(t TypeRef) Dir {
	n := t.Indirections()
	switch {
	case t.Name == "HCORENUM" && n == 1:
		return DirInOut
	case n == 0, n == 1 && t.Const:
		return DirIn
	}
	return DirOut
}

// salArgs parses the parenthesized, comma-separated arguments of a SAL
// annotation.
func (p *cParser) salArgs(at Token) ([][]Token, error) {
	c := p.c
	if !c.acceptPunct("(") {
		return nil, errorf(at.Pos, "%s needs arguments", at.Text)
	}
	var args [][]Token
	for {
		a := c.peek()
		toks, err := c.collectUntil(",", ")")
		if err != nil {
			return nil, err
		}
		if len(toks) == 0 {
			return nil, errorf(a.Pos, "empty argument to %s", at.Text)
		}
		args = append(args, toks)
		if len(args) > maxMacroParams {
			return nil, errorf(a.Pos, "too many arguments to %s", at.Text)
		}
		if c.acceptPunct(")") {
			return args, nil
		}
		c.next() // ','
	}
}

// ---------------------------------------------------------------------------
// Enums

// enumHasBody reports whether the enum keyword at the cursor starts an enum
// definition: enum [class|struct] [Tag] [: base] {.
func (p *cParser) enumHasBody() bool {
	c := p.c
	save := c.i
	defer func() { c.i = save }()
	_, _, ok := p.enumHead()
	return ok
}

// enumHead parses "enum [class|struct] [Tag] [: base]" up to the '{'.
func (p *cParser) enumHead() (tag string, scoped, ok bool) {
	c := p.c
	if !c.acceptIdent("enum") {
		return "", false, false
	}
	if c.acceptIdent("class") || c.acceptIdent("struct") {
		scoped = true
	}
	if c.peek().Kind == TokIdent {
		tag = c.next().Text
	}
	if c.acceptPunct(":") {
		// The underlying type: words and "::".
		for c.peek().Kind == TokIdent || isPunctTok(c.peek(), "::") {
			c.next()
		}
	}
	return tag, scoped, c.isPunct("{")
}

// enumDecl parses an enum definition, after "typedef" when typedef is set.
func (p *cParser) enumDecl(start Token, typedef bool) error {
	c := p.c
	tag, scoped, _ := p.enumHead()
	vals, ok, err := p.enumBody(scoped)
	if err != nil {
		return err
	}
	e := &Enum{Name: tag, Tag: tag, Values: vals, Source: p.f.Name, Pos: start.Pos}
	var decls []declarator
	if typedef {
		if decls, err = p.declarators(); err != nil {
			return err
		}
	} else {
		// enum Tag { ... } [variables];
		if _, err := c.collectUntil(";"); err != nil {
			return err
		}
		c.next()
	}
	if !ok {
		return nil // some value names something this file does not define
	}
	name, aliases := typedefNames(decls, tag)
	if name == "" {
		// enum { A, B }; — the enumerators are plain constants.
		for _, v := range vals {
			if err := p.addConst(&Const{Name: v.Name, Expr: v.Expr, Value: v.Value, Source: p.f.Name, Pos: v.Pos}); err != nil {
				return err
			}
		}
		return p.addEnumerators(vals, scoped)
	}
	e.Name = name
	if err := p.addEnumerators(vals, scoped); err != nil {
		return err
	}
	p.f.Enums = append(p.f.Enums, e)
	p.addTypes(name, tag)
	p.addAliases(name, aliases)
	return nil
}

func (p *cParser) addEnumerators(vals []*EnumValue, scoped bool) error {
	for _, v := range vals {
		if !scoped {
			if prev, dup := p.enumerators[v.Name]; dup {
				return errorf(v.Pos, "enumerator %s declared twice (first at %s)", v.Name, prev)
			}
			p.enumerators[v.Name] = v.Pos
		}
		p.ev.names[v.Name] = v.Value
	}
	return nil
}

// enumBody parses { A = expr, B, ... }. ok is false when a value does not
// evaluate; the syntax must be right regardless.
func (p *cParser) enumBody(scoped bool) (vals []*EnumValue, ok bool, err error) {
	c := p.c
	open, err := c.expectPunct("{")
	if err != nil {
		return nil, false, err
	}
	local := map[string]int64{}
	ok = true
	next := int64(0)
	for !c.acceptPunct("}") {
		if c.atEOF() {
			return nil, false, errorf(open.Pos, "enum is not closed")
		}
		nameTok, err := c.expectIdent()
		if err != nil {
			return nil, false, err
		}
		if _, dup := local[nameTok.Text]; dup {
			return nil, false, errorf(nameTok.Pos, "enumerator %s declared twice", nameTok.Text)
		}
		if prev, dup := p.enumerators[nameTok.Text]; dup && !scoped {
			return nil, false, errorf(nameTok.Pos, "enumerator %s declared twice (first at %s)", nameTok.Text, prev)
		}
		v := &EnumValue{Name: nameTok.Text, Pos: nameTok.Pos, Value: next}
		if eq := c.peek(); c.acceptPunct("=") {
			expr, err := c.collectUntil(",", "}")
			if err != nil {
				return nil, false, err
			}
			if len(expr) == 0 {
				return nil, false, errorf(eq.Pos, "missing value for %s", nameTok.Text)
			}
			v.Expr = exprText(expr)
			if err := p.flushDefines(expr[0].Pos); err != nil {
				return nil, false, err
			}
			if ok {
				val, err := EvalTokens(expr, p.ev.env(local, 0))
				if err != nil {
					ok = false
				}
				v.Value = val
			}
		}
		local[v.Name] = v.Value
		next = v.Value + 1
		vals = append(vals, v)
		if len(vals) > maxCItems {
			return nil, false, errorf(nameTok.Pos, "too many enumerators")
		}
		if !c.acceptPunct(",") && !c.isPunct("}") {
			return nil, false, errorf(c.peek().Pos, "expected ',' or '}' in enum, found %s", c.peek())
		}
	}
	return vals, ok, nil
}

// ---------------------------------------------------------------------------
// Typedefs and structs

// declarator is one name of a declaration list: "*PName", "Name[4]".
type declarator struct {
	name     string
	ptr      int
	array    bool
	arrayLen string
	pos      Pos
}

// declarators parses "D1, *D2, ... ;" including the ';'.
func (p *cParser) declarators() ([]declarator, error) {
	c := p.c
	var out []declarator
	for !c.acceptPunct(";") {
		var d declarator
		for {
			if c.acceptPunct("*") {
				d.ptr++
			} else if !c.acceptIdent("const") && !c.acceptIdent("volatile") {
				break
			}
		}
		nameTok, err := c.expectIdent()
		if err != nil {
			return nil, err
		}
		d.name, d.pos = nameTok.Text, nameTok.Pos
		var t TypeRef
		if err := c.arraySuffix(&t); err != nil {
			return nil, err
		}
		d.array, d.arrayLen = t.Array, t.ArrayLen
		out = append(out, d)
		if len(out) > maxDeclarators {
			return nil, errorf(d.pos, "too many declarators")
		}
		if !c.acceptPunct(",") && !c.isPunct(";") {
			return nil, errorf(c.peek().Pos, "expected ',' or ';', found %s", c.peek())
		}
	}
	return out, nil
}

// typedefNames picks the name of a typedef'd struct or enum: the first plain
// declarator, else the tag. The other declarators are aliases.
func typedefNames(decls []declarator, tag string) (string, []declarator) {
	for i, d := range decls {
		if d.ptr == 0 && !d.array {
			rest := append(append([]declarator{}, decls[:i]...), decls[i+1:]...)
			return d.name, rest
		}
	}
	return tag, decls
}

func (p *cParser) addAliases(name string, aliases []declarator) {
	for _, d := range aliases {
		p.f.Typedefs = append(p.f.Typedefs, &Typedef{
			Name: d.name, Type: TypeRef{Name: name, Ptr: d.ptr, Array: d.array, ArrayLen: d.arrayLen},
			Source: p.f.Name, Pos: d.pos,
		})
		p.ev.types[d.name] = true
	}
}

func (p *cParser) addTypes(names ...string) {
	for _, n := range names {
		if n != "" {
			p.ev.types[n] = true
		}
	}
}

// typedef parses a typedef, or skips it when it is not plain C.
func (p *cParser) typedef() error {
	start := p.c.next()
	return p.typedefRest(start, p.c.i-1)
}

// typedefRest parses a typedef after its keyword (start); save is where the
// declaration began, for skipping it.
func (p *cParser) typedefRest(start Token, save int) error {
	c := p.c
	if c.isIdent("enum") && p.enumHasBody() {
		return p.enumDecl(start, true) // enum syntax errors are errors
	}
	var err error
	if (c.isIdent("struct") || c.isIdent("union")) &&
		(isPunctTok(c.peekAt(1), "{") || (c.peekAt(1).Kind == TokIdent && isPunctTok(c.peekAt(2), "{"))) {
		err = p.structTypedef(start)
	} else {
		err = p.plainTypedef(start)
	}
	if err != nil {
		if p.midl {
			return err
		}
		// Not plain C: skip the whole declaration.
		c.i = save
		return p.skipDecl()
	}
	return nil
}

// structTypedef parses typedef struct|union [Tag] { ... } Names;
func (p *cParser) structTypedef(start Token) error {
	c := p.c
	kw := c.next()
	tag := ""
	if c.peek().Kind == TokIdent {
		tag = c.next().Text
	}
	s, err := p.structBody(kw.Text == "union", tag, start.Pos, 0)
	if err != nil {
		return err
	}
	decls, err := p.declarators()
	if err != nil {
		return err
	}
	name, aliases := typedefNames(decls, tag)
	if name == "" {
		return errorf(start.Pos, "typedef names nothing")
	}
	s.Name = name
	p.f.Structs = append(p.f.Structs, s)
	p.addTypes(name, tag)
	p.addAliases(name, aliases)
	return nil
}

// structDecl parses struct|union Tag { ... } [variables]; or skips it when
// the body is not plain C.
func (p *cParser) structDecl() error {
	c := p.c
	save := c.i
	kw := c.next()
	tag := c.next()
	s, err := p.structBody(kw.Text == "union", tag.Text, kw.Pos, 0)
	if err == nil {
		if !c.acceptPunct(";") {
			_, err = p.declarators()
		}
	}
	if err != nil {
		c.i = save
		return p.skipDecl()
	}
	s.Name = tag.Text
	p.f.Structs = append(p.f.Structs, s)
	p.addTypes(tag.Text)
	return nil
}

// structBody parses { fields } of a struct or union.
func (p *cParser) structBody(union bool, tag string, pos Pos, depth int) (*Struct, error) {
	c := p.c
	if depth > maxCNestDepth {
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
		if c.acceptPunct(";") {
			continue
		}
		fpos := c.peek().Pos
		if len(s.Fields) > maxCItems {
			return nil, errorf(fpos, "too many fields")
		}
		if (c.isIdent("struct") || c.isIdent("union")) &&
			(isPunctTok(c.peekAt(1), "{") || (c.peekAt(1).Kind == TokIdent && isPunctTok(c.peekAt(2), "{"))) {
			kw := c.next()
			innerTag := ""
			if c.peek().Kind == TokIdent {
				innerTag = c.next().Text
			}
			inner, err := p.structBody(kw.Text == "union", innerTag, fpos, depth+1)
			if err != nil {
				return nil, err
			}
			inner.Name = innerTag
			if c.acceptPunct(";") {
				s.Fields = append(s.Fields, &Field{Type: TypeRef{Name: innerTag}, Nested: inner, Pos: fpos})
				continue
			}
			decls, err := p.declarators()
			if err != nil {
				return nil, err
			}
			for _, d := range decls {
				s.Fields = append(s.Fields, &Field{
					Name: d.name, Type: TypeRef{Name: innerTag, Ptr: d.ptr, Array: d.array, ArrayLen: d.arrayLen},
					Nested: inner, Pos: d.pos,
				})
			}
			continue
		}
		t, err := c.typeRef()
		if err != nil {
			return nil, err
		}
		for {
			ft := t
			for {
				if c.acceptPunct("*") {
					ft.Ptr++
				} else if !c.acceptIdent("const") && !c.acceptIdent("volatile") {
					break
				}
			}
			nameTok, err := c.expectIdent()
			if err != nil {
				return nil, err
			}
			if err := c.arraySuffix(&ft); err != nil {
				return nil, err
			}
			f := &Field{Name: nameTok.Text, Type: ft, Pos: nameTok.Pos}
			if colon := c.peek(); c.acceptPunct(":") {
				width, err := c.collectUntil(",", ";")
				if err != nil {
					return nil, err
				}
				v, err := p.ev.eval(width, colon.Pos)
				if err != nil {
					return nil, err
				}
				if v < 1 || v > 64 {
					return nil, errorf(colon.Pos, "bad bit-field width %d", v)
				}
				f.Bits = int(v)
			}
			s.Fields = append(s.Fields, f)
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

// callingConventions may appear around the name of a function type.
var callingConventions = map[string]bool{
	"STDMETHODCALLTYPE": true, "STDAPICALLTYPE": true, "WINAPI": true, "CALLBACK": true,
	"__stdcall": true, "__cdecl": true, "__fastcall": true, "__RPC_USER": true, "__RPC_API": true,
}

func (p *cParser) skipCallingConventions() {
	for p.c.peek().Kind == TokIdent && callingConventions[p.c.peek().Text] {
		p.c.next()
	}
}

// plainTypedef parses typedef T D1, *D2; and function types:
// typedef R (CC *Name)(params); and typedef R CC Name(params);
func (p *cParser) plainTypedef(start Token) error {
	c := p.c
	p.skipCallingConventions()
	t, err := c.typeRef()
	if err != nil {
		return err
	}
	p.skipCallingConventions()
	if c.isPunct("(") {
		c.next()
		p.skipCallingConventions()
		if _, err := c.expectPunct("*"); err != nil {
			return err
		}
		nameTok, err := c.expectIdent()
		if err != nil {
			return err
		}
		if _, err := c.expectPunct(")"); err != nil {
			return err
		}
		return p.funcType(start, t, nameTok, true)
	}
	if c.peek().Kind == TokIdent && isPunctTok(c.peekAt(1), "(") {
		nameTok := c.next()
		return p.funcType(start, t, nameTok, false)
	}
	decls, err := p.declarators()
	if err != nil {
		return err
	}
	if len(decls) == 0 {
		return errorf(start.Pos, "typedef names nothing")
	}
	for _, d := range decls {
		dt := t
		dt.Ptr += d.ptr
		dt.Array, dt.ArrayLen = d.array, d.arrayLen
		p.f.Typedefs = append(p.f.Typedefs, &Typedef{Name: d.name, Type: dt, Source: p.f.Name, Pos: d.pos})
		p.ev.types[d.name] = true
	}
	return nil
}

func (p *cParser) funcType(start Token, ret TypeRef, nameTok Token, pointer bool) error {
	params, err := p.params()
	if err != nil {
		return err
	}
	if _, err := p.c.expectPunct(";"); err != nil {
		return err
	}
	p.f.FuncTypes = append(p.f.FuncTypes, &FuncType{
		Name: nameTok.Text, Ret: ret, Pointer: pointer, Params: params, Source: p.f.Name, Pos: start.Pos,
	})
	p.ev.types[nameTok.Text] = true
	return nil
}
