package gen

import "strings"

// cursor walks a token slice that ends in TokEOF.
type cursor struct {
	toks []Token
	i    int
}

func newCursor(toks []Token) *cursor {
	if len(toks) == 0 || toks[len(toks)-1].Kind != TokEOF {
		var p Pos
		if len(toks) > 0 {
			p = toks[len(toks)-1].Pos
		}
		toks = append(toks, Token{Kind: TokEOF, Pos: p})
	}
	return &cursor{toks: toks}
}

func (c *cursor) peek() Token { return c.toks[c.i] }

func (c *cursor) peekAt(n int) Token {
	if c.i+n < len(c.toks) {
		return c.toks[c.i+n]
	}
	return c.toks[len(c.toks)-1]
}

func (c *cursor) next() Token {
	t := c.toks[c.i]
	if t.Kind != TokEOF {
		c.i++
	}
	return t
}

func (c *cursor) atEOF() bool { return c.toks[c.i].Kind == TokEOF }

func (c *cursor) isPunct(s string) bool {
	t := c.toks[c.i]
	return t.Kind == TokPunct && t.Text == s
}

func (c *cursor) isIdent(s string) bool {
	t := c.toks[c.i]
	return t.Kind == TokIdent && t.Text == s
}

func (c *cursor) acceptPunct(s string) bool {
	if c.isPunct(s) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) acceptIdent(s string) bool {
	if c.isIdent(s) {
		c.i++
		return true
	}
	return false
}

func (c *cursor) expectPunct(s string) (Token, error) {
	t := c.peek()
	if t.Kind != TokPunct || t.Text != s {
		return t, errorf(t.Pos, "expected %q, found %s", s, t)
	}
	c.i++
	return t, nil
}

func (c *cursor) expectIdent() (Token, error) {
	t := c.peek()
	if t.Kind != TokIdent {
		return t, errorf(t.Pos, "expected a name, found %s", t)
	}
	c.i++
	return t, nil
}

// skipBalanced skips from an opening bracket to just past its match.
func (c *cursor) skipBalanced(open, close string) error {
	start := c.peek()
	if _, err := c.expectPunct(open); err != nil {
		return err
	}
	depth := 1
	for depth > 0 {
		t := c.next()
		switch {
		case t.Kind == TokEOF:
			return errorf(start.Pos, "unbalanced %q", open)
		case t.Kind == TokPunct && t.Text == open:
			depth++
		case t.Kind == TokPunct && t.Text == close:
			depth--
		}
	}
	return nil
}

// collectUntil returns the tokens up to (not including) the first top-level
// punctuator in stops, without consuming it.
func (c *cursor) collectUntil(stops ...string) ([]Token, error) {
	var out []Token
	depth := 0
	start := c.peek()
	for {
		t := c.peek()
		if t.Kind == TokEOF {
			return nil, errorf(start.Pos, "unexpected end of file")
		}
		if t.Kind == TokPunct {
			if depth == 0 {
				for _, s := range stops {
					if t.Text == s {
						return out, nil
					}
				}
			}
			switch t.Text {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth == 0 {
					return nil, errorf(t.Pos, "unbalanced %q", t.Text)
				}
				depth--
			}
		}
		out = append(out, c.next())
	}
}

func joinTokens(toks []Token) string {
	var b strings.Builder
	for i, t := range toks {
		if i > 0 && needsSpace(toks[i-1], t) {
			b.WriteByte(' ')
		}
		b.WriteString(t.Text)
	}
	return b.String()
}

func needsSpace(a, b Token) bool {
	word := func(k TokKind) bool { return k == TokIdent || k == TokNumber }
	return word(a.Kind) && word(b.Kind)
}

// typeWords are words that may precede or combine into a base type name.
var typeQualifiers = map[string]bool{
	"struct": true, "enum": true, "union": true, "interface": true,
	"__RPC_FAR": true, "volatile": true, "__RPC__in": true,
}

// typeRef parses a type: qualifiers, a base name (possibly several words as
// in "unsigned int"), and trailing '*'s. It stops before the declarator name.
func (c *cursor) typeRef() (TypeRef, error) {
	var t TypeRef
	start := c.peek()
	var words []string
	for {
		tok := c.peek()
		if tok.Kind != TokIdent {
			break
		}
		switch {
		case tok.Text == "const":
			t.Const = true
			c.i++
			continue
		case typeQualifiers[tok.Text]:
			c.i++
			continue
		}
		if len(words) > 0 && !isMultiWordType(words, tok.Text) {
			break
		}
		words = append(words, tok.Text)
		c.i++
	}
	if len(words) == 0 {
		return t, errorf(start.Pos, "expected a type, found %s", start)
	}
	t.Name = strings.Join(words, " ")
	for {
		switch {
		case c.acceptPunct("*"):
			t.Ptr++
		case c.isIdent("const") || c.isIdent("__RPC_FAR"):
			if c.peek().Text == "const" && t.Ptr == 0 {
				t.Const = true
			}
			c.i++
		default:
			return t, nil
		}
	}
}

// isMultiWordType reports whether next continues a multi-word C type such as
// "unsigned long" or "long long".
func isMultiWordType(words []string, next string) bool {
	prim := map[string]bool{"unsigned": true, "signed": true, "long": true, "short": true, "int": true, "char": true, "__int64": true, "__int32": true, "__int16": true, "__int8": true, "double": true}
	for _, w := range words {
		if !prim[w] {
			return false
		}
	}
	return prim[next] && words[len(words)-1] != "int" && words[len(words)-1] != "char"
}

// arraySuffix parses an optional "[]" or "[N]" after a declarator name.
func (c *cursor) arraySuffix(t *TypeRef) error {
	if !c.isPunct("[") {
		return nil
	}
	c.i++
	toks, err := c.collectUntil("]")
	if err != nil {
		return err
	}
	c.i++
	t.Array = true
	t.ArrayLen = joinTokens(toks)
	return nil
}
