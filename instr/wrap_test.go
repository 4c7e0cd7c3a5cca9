package instr

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// fakeModule is the Emitter of the unit tests: locals and type specs are
// counted, not written anywhere.
type fakeModule struct {
	locals []*metadata.Type
	specs  int
}

func (f *fakeModule) AddLocals(b *ilrw.Body, types ...*metadata.Type) (int, error) {
	first := len(f.locals)
	f.locals = append(f.locals, types...)
	b.LocalVarSig = metadata.Token(0x11000001)
	return first, nil
}

func (f *fakeModule) TypeSpec(t []byte) (metadata.Token, error) {
	if _, err := metadata.ParseTypeSpec(t); err != nil {
		return 0, err
	}
	f.specs++
	return metadata.Token(0x1B000000 + f.specs), nil
}

const (
	tokBegin  = metadata.Token(0x0A00F001)
	tokEnd    = metadata.Token(0x0A00F002)
	tokSink   = metadata.Token(0x0A00F003)
	tokCallee = metadata.Token(0x0A000010) // one argument, returns a value
	tokValue  = metadata.Token(0x02000005) // a value type of the module
)

// calls resolves the tokens of the unit tests' bodies.
type calls struct{}

func (calls) CallSite(t metadata.Token) (ilrw.CallSite, error) {
	switch t {
	case tokBegin:
		return ilrw.CallSite{Params: 3, ReturnsValue: true}, nil
	case tokEnd:
		return ilrw.CallSite{Params: 4}, nil
	case tokSink:
		return ilrw.CallSite{Params: 2}, nil
	}
	return ilrw.CallSite{Params: 1, ReturnsValue: true}, nil
}

func i4() *metadata.Type { return metadata.Primitive(metadata.ElementTypeI4) }

func newWrapper(b *ilrw.Body, sig *metadata.MethodSig, static bool) *wrapper {
	return &wrapper{body: b, sig: sig, em: &fakeModule{}, id: 7, args: true, static: static,
		byRefLike: func(metadata.Token) bool { return false }}
}

// span is a half-open range of instruction indexes.
type span struct{ lo, hi int }

func (s span) inside(o span) bool   { return s.lo >= o.lo && s.hi <= o.hi }
func (s span) disjoint(o span) bool { return s.hi <= o.lo || o.hi <= s.lo }

// checkClauses checks ECMA-335's rules on the clauses of b (II.19):
// every try block and handler (filter included) is either disjoint from or
// nested in every other, a clause nested in another comes before it, and
// each handler follows or precedes its try block without overlap.
func checkClauses(t *testing.T, b *ilrw.Body) {
	t.Helper()
	for _, p := range clauseProblems(b) {
		t.Error(p)
	}
}

func clauseProblems(b *ilrw.Body) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	idx := func(in *ilrw.Instruction) int {
		if in == nil {
			return len(b.Instructions)
		}
		i := b.Index(in)
		if i < 0 {
			errorf("a clause names an instruction that is not in the body")
		}
		return i
	}
	type regions struct{ try, hnd span }
	rs := make([]regions, len(b.Clauses))
	for i, c := range b.Clauses {
		start := idx(c.HandlerStart)
		if c.Kind == ilrw.ClauseFilter {
			start = idx(c.FilterStart)
		}
		rs[i] = regions{span{idx(c.TryStart), idx(c.TryEnd)}, span{start, idx(c.HandlerEnd)}}
		if rs[i].try.lo >= rs[i].try.hi || rs[i].hnd.lo >= rs[i].hnd.hi || !rs[i].try.disjoint(rs[i].hnd) {
			errorf("clause %d: try %v handler %v", i, rs[i].try, rs[i].hnd)
		}
	}
	for i := range rs {
		for j := range rs {
			if i == j {
				continue
			}
			for _, a := range []span{rs[i].try, rs[i].hnd} {
				for _, o := range []span{rs[j].try, rs[j].hnd} {
					if !(a.disjoint(o) || a.inside(o) || o.inside(a)) {
						errorf("clauses %d and %d overlap: %v and %v", i, j, a, o)
					}
					// i strictly nested in j: i must come first.
					if a.inside(o) && a != o && !(rs[i].try == rs[j].try) && i > j {
						errorf("clause %d is nested in clause %d but comes after it", i, j)
					}
				}
			}
		}
	}
	return problems
}

// roundTrip checks that the wrapped body analyses, encodes and decodes
// back to the same code and clauses.
func roundTrip(t *testing.T, b *ilrw.Body) {
	t.Helper()
	if _, err := b.ComputeMaxStack(calls{}); err != nil {
		t.Fatalf("max stack: %v\n%s", err, b.Dump(nil))
	}
	checkClauses(t, b)
	out, err := b.Encode()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	d, err := ilrw.Decode(out)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if d.Dump(nil) != b.Dump(nil) {
		t.Fatalf("decoded\n%s\nencoded\n%s", d.Dump(nil), b.Dump(nil))
	}
}

func TestWrapShape(t *testing.T) {
	// static int F(int x, ref Point p) { return Callee(x); }
	body := &ilrw.Body{Instructions: []*ilrw.Instruction{
		ilrw.I(ilrw.OpLdarg0), ilrw.IToken(ilrw.OpCall, tokCallee), ilrw.I(ilrw.OpRet)}}
	sig := &metadata.MethodSig{Return: i4(), Params: []*metadata.Type{i4(), metadata.ByRefTo(metadata.ValueType(tokValue))}}
	w := newWrapper(body, sig, true)
	if err := w.wrap(tokBegin, tokEnd); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, body)
	d := body.Dump(nil)
	t.Log(d)
	if len(body.Clauses) != 4 {
		t.Errorf("%d clauses, want 4 (Begin guard, exception filter, finally, End guard)", len(body.Clauses))
	}
	// Begin: id, null this, a 2-element object[], the by-ref argument
	// read through and boxed.
	for _, want := range []string{"ldc.i4.7", "newarr", "ldobj", "box", "stelem.ref", "endfilter", "endfinally", "leave"} {
		if !strings.Contains(d, want) {
			t.Errorf("the wrap has no %s", want)
		}
	}
	if body.Instructions[0].Op != ilrw.OpLdcI47 || body.Instructions[1].Op != ilrw.OpLdnull {
		t.Errorf("the body does not start with Begin's id and this: %v %v", body.Instructions[0].Op, body.Instructions[1].Op)
	}
	if body.Flags&ilrw.FlagInitLocals == 0 {
		t.Errorf("InitLocals not set: the state and exception locals must start null")
	}
	if n := len(w.em.(*fakeModule).locals); n != 4 {
		t.Errorf("%d locals added, want 4 (state, exception, scratch, return value)", n)
	}
}

func TestWrapRegionsAtTheEnd(t *testing.T) {
	// A body whose handler ends with the code (clause end nil) and whose
	// last instruction is not a ret: void F() { try { Callee(0) } catch { throw; } ... }
	call := ilrw.IToken(ilrw.OpCall, tokCallee)
	leave := ilrw.I(ilrw.OpRet) // placeholder, replaced below
	handler := ilrw.I(ilrw.OpPop)
	retI := ilrw.I(ilrw.OpRet)
	body := &ilrw.Body{Instructions: []*ilrw.Instruction{
		ilrw.I(ilrw.OpLdcI40), call, ilrw.I(ilrw.OpPop), leave, retI, handler, ilrw.I(ilrw.OpRethrow)}}
	*leave = *ilrw.IBranch(ilrw.OpLeave, retI)
	body.Clauses = []*ilrw.Clause{{Kind: ilrw.ClauseCatch, TryStart: body.Instructions[0], TryEnd: retI,
		HandlerStart: handler, HandlerEnd: nil, ClassToken: metadata.Token(0x01000001)}}
	sig := &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid)}
	first := body.Instructions[0]
	w := newWrapper(body, sig, true)
	w.sink = tokSink
	if err := w.wrap(tokBegin, tokEnd); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, body)
	var excFilter *ilrw.Clause
	for _, c := range body.Clauses {
		if c.Kind == ilrw.ClauseFilter && c.TryStart == first {
			excFilter = c
		}
	}
	if c := body.Clauses[0]; excFilter == nil || c.HandlerEnd == nil || c.HandlerEnd != excFilter.FilterStart {
		t.Errorf("the body's handler, which ended with the code, does not end where the body ends:\n%s", body.Dump(nil))
	}
	if len(body.Clauses) != 7 {
		t.Errorf("%d clauses, want 7 (the body's, Begin's guard and its sink guard, End's two, the exception filter, the finally)", len(body.Clauses))
	}
}

func TestWrapTailAndJmp(t *testing.T) {
	body := &ilrw.Body{Instructions: []*ilrw.Instruction{
		ilrw.I(ilrw.OpLdarg0), ilrw.I(ilrw.OpTail), ilrw.IToken(ilrw.OpCall, tokCallee), ilrw.I(ilrw.OpRet)}}
	sig := &metadata.MethodSig{Return: i4(), Params: []*metadata.Type{i4()}, CallConv: 0x20}
	w := newWrapper(body, sig, false)
	w.valueTy = false
	if err := w.wrap(tokBegin, tokEnd); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, body)
	if strings.Contains(body.Dump(nil), "tail.") {
		t.Errorf("tail. survived the wrap")
	}
	jmp := &ilrw.Body{Instructions: []*ilrw.Instruction{ilrw.IToken(ilrw.OpJmp, tokCallee)}}
	err := newWrapper(jmp, &metadata.MethodSig{Return: metadata.Primitive(metadata.ElementTypeVoid)}, true).wrap(tokBegin, tokEnd)
	if !errors.Is(err, errNotWrappable) {
		t.Errorf("jmp: %v, want errNotWrappable", err)
	}
}

func TestWrapUnboxable(t *testing.T) {
	// Pointers, typed references and byref-like values reach Begin and
	// End as null: they cannot be boxed.
	body := &ilrw.Body{Instructions: []*ilrw.Instruction{ilrw.I(ilrw.OpLdarg0), ilrw.I(ilrw.OpRet)}}
	span := metadata.ValueType(tokValue)
	sig := &metadata.MethodSig{Return: span, Params: []*metadata.Type{span, metadata.PtrTo(i4()), metadata.Primitive(metadata.ElementTypeTypedbyref)}}
	w := newWrapper(body, sig, true)
	w.byRefLike = func(tok metadata.Token) bool { return tok == tokValue }
	if err := w.wrap(tokBegin, tokEnd); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, body)
	if d := body.Dump(nil); strings.Contains(d, "box") {
		t.Errorf("a byref-like value, pointer or typedref was boxed:\n%s", d)
	}
}

// realBodies reads the real method bodies ilrw's fuzz corpus holds.
func realBodies(t testing.TB) [][]byte {
	files, _ := filepath.Glob("../ilrw/testdata/fuzz/FuzzDecode/real-body*")
	var out [][]byte
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			l := sc.Text()
			if strings.HasPrefix(l, "[]byte(") {
				if s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(l, "[]byte("), ")")); err == nil {
					out = append(out, []byte(s))
				}
			}
		}
		fh.Close()
	}
	return out
}

// FuzzWrap wraps arbitrary bodies: the wrap never panics; it either
// refuses (errNotWrappable) or gives a body whose clauses obey ECMA-335's
// nesting rules, which encodes and decodes, and which passes the stack
// analysis whenever the original did.
func FuzzWrap(f *testing.F) {
	for _, b := range realBodies(f) {
		f.Add(b, uint8(0))
	}
	f.Add([]byte{3<<2 | 2, 0x02, 0x28, 0x10, 0x00, 0x00, 0x0A, 0x2A}, uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		if b, err := ilrw.Decode(data); err != nil || len(b.Instructions) == 0 || len(clauseProblems(b)) > 0 {
			return // not a body a compiler could have written
		}
		// The body says nothing of its return type: wrap it as returning
		// int32 and as void; when the original passes the stack analysis,
		// the signature that fits it must give a body that passes too.
		okInt := fuzzWrapOnce(t, data, mode, i4())
		okVoid := fuzzWrapOnce(t, data, mode, metadata.Primitive(metadata.ElementTypeVoid))
		if b, _ := ilrw.Decode(data); !okInt && !okVoid {
			if _, err := b.ComputeMaxStack(calls{}); err == nil {
				t.Fatalf("the original passes the stack analysis, the wrapped body does not with either return type:\n%s", b.Dump(nil))
			}
		}
	})
}

// fuzzWrapOnce wraps the body data holds as a method returning ret, checks
// the result, and reports whether it passes the stack analysis (true too
// when the wrap refused the body).
func fuzzWrapOnce(t *testing.T, data []byte, mode uint8, ret *metadata.Type) bool {
	b, err := ilrw.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	sig := &metadata.MethodSig{Return: ret, Params: []*metadata.Type{i4(), metadata.ByRefTo(metadata.Primitive(metadata.ElementTypeString))}}
	w := newWrapper(b, sig, mode&2 != 0)
	if mode&4 != 0 {
		w.sink = tokSink
	}
	w.args = mode&8 == 0
	if err := w.wrap(tokBegin, tokEnd); err != nil {
		if errors.Is(err, errNotWrappable) {
			return true
		}
		t.Fatalf("wrap: %v", err)
	}
	checkClauses(t, b)
	_, serr := b.ComputeMaxStack(calls{})
	out, err := b.Encode()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	if _, err := ilrw.Decode(out); err != nil {
		t.Fatalf("decode of the wrapped body: %v", err)
	}
	return serr == nil
}
