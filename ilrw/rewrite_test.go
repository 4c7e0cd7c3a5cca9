package ilrw

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// fakeEmitter records what a rewrite defines.
type fakeEmitter struct {
	locals [][]byte // signatures, token 0x11000000|index+1
	specs  [][]byte
}

func (f *fakeEmitter) AddLocals(b *Body, types ...*metadata.Type) (int, error) {
	var old []byte
	if b.LocalVarSig != 0 {
		old = f.locals[b.LocalVarSig.RID()-1]
	}
	sig, first, err := metadata.AppendLocals(old, types...)
	if err != nil {
		return 0, err
	}
	f.locals = append(f.locals, sig)
	b.LocalVarSig = metadata.Token(0x11000000 | len(f.locals))
	return first, nil
}

func (f *fakeEmitter) TypeSpec(t []byte) (metadata.Token, error) {
	f.specs = append(f.specs, append([]byte(nil), t...))
	return metadata.Token(0x1b000000 | len(f.specs)), nil
}

func TestWrapExit(t *testing.T) {
	const hook = 0x06000010
	// int32 Add(int32, int32) as a tiny body, and the catch body (void).
	for _, c := range []struct {
		name  string
		body  []byte
		sig   []byte
		ret   int // rets in the body
		boxed bool
	}{
		{"tiny int32", tinyAdd, []byte{0x00, 0x02, 0x08, 0x08, 0x08}, 1, true},
		{"fat string", fatCatch, []byte{0x00, 0x00, 0x0e}, 1, false},
		{"void", fatCatch, []byte{0x00, 0x00, 0x01}, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeEmitter{}
			b := mustDecode(t, c.body)
			if b.LocalVarSig != 0 {
				f.locals = [][]byte{{0x07, 0x01, 0x08}} // the catch body's int32 local
			}
			sig, err := metadata.ParseMethodSig(c.sig)
			if err != nil {
				t.Fatal(err)
			}
			var ex Exit
			err = b.WrapExit(f, sig, func(e Exit) ([]*Instruction, error) {
				ex = e
				ld, err := e.LoadReturnAsObject(f)
				return append(ld, IToken(OpCall, hook)), err
			})
			if err != nil {
				t.Fatal(err)
			}
			b2, _ := roundTrip(t, b)
			d := b2.Dump(nil)
			fin := b2.Clauses[len(b2.Clauses)-1]
			if fin.Kind != ClauseFinally || fin.TryStart != b2.Instructions[0] || !b2.Fat || !b2.InitLocals() {
				t.Fatalf("clause %+v\n%s", fin, d)
			}
			if strings.Count(d, ": ret\n") != 1 || strings.Count(d, ": leave IL_") < c.ret {
				t.Errorf("want one ret and a leave for each old one:\n%s", d)
			}
			if returnsVoid(sig.Return) {
				if ex.ReturnLocal != -1 || !strings.Contains(d, "ldnull") {
					t.Errorf("void: local %d\n%s", ex.ReturnLocal, d)
				}
			} else {
				locals, err := metadata.ParseLocalVarSig(f.locals[len(f.locals)-1])
				if err != nil {
					t.Fatal(err)
				}
				n := len(locals.Locals)
				if ex.ReturnLocal != n-1 || ex.ReturnType != sig.Return || !locals.Locals[n-1].Equal(sig.Return) {
					t.Errorf("return local %d of %d, type %+v", ex.ReturnLocal, n, ex.ReturnType)
				}
			}
			if c.boxed != (len(f.specs) == 1 && strings.Contains(d, "box 0x1b000001")) {
				t.Errorf("boxing: specs %x\n%s", f.specs, d)
			}
			// The hook's stack needs are counted.
			n, err := b2.ComputeMaxStack(fakeResolver{hook: {Params: 1}})
			if err != nil || n < 2 && c.name == "tiny int32" {
				t.Errorf("max stack %d %v\n%s", n, err, d)
			}
			// The last instructions: endfinally, [ldloc], ret.
			last := b2.Instructions[len(b2.Instructions)-1]
			if last.Op != OpRet || fin.HandlerEnd == nil || fin.HandlerEnd.Op == OpEndfinally {
				t.Errorf("exit block\n%s", d)
			}
		})
	}
}

func TestWrapExitDropsTailPrefix(t *testing.T) {
	f := &fakeEmitter{}
	b := &Body{Instructions: []*Instruction{I(OpTail), IToken(OpCall, 0x06000001), I(OpRet)}}
	sig, _ := metadata.ParseMethodSig([]byte{0x00, 0x00, 0x01})
	if err := b.WrapExit(f, sig, func(Exit) ([]*Instruction, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.Dump(nil), "tail.") {
		t.Error("tail. kept inside a try")
	}
}

func TestReplaceCalls(t *testing.T) {
	b := &Body{Instructions: []*Instruction{
		IToken(OpCall, 0x0A000001), IToken(OpCallvirt, 0x0A000001), IToken(OpCall, 0x0A000002), IToken(OpLdftn, 0x0A000001), I(OpRet),
	}}
	if n := b.ReplaceCalls(0x0A000001, 0x06000009); n != 2 {
		t.Errorf("%d replaced", n)
	}
	if b.Instructions[1].Op != OpCall || b.Instructions[1].Token != 0x06000009 || b.Instructions[2].Token != 0x0A000002 || b.Instructions[3].Token != 0x0A000001 {
		t.Error(b.Dump(nil))
	}
}

func TestLoadReturnAsObject(t *testing.T) {
	f := &fakeEmitter{}
	for _, c := range []struct {
		typ  []byte
		want string
	}{
		{[]byte{0x0e}, "ldloc.0"},                         // string
		{[]byte{0x12, 0x05}, "ldloc.0"},                   // class
		{[]byte{0x1d, 0x08}, "ldloc.0"},                   // int32[]
		{[]byte{0x08}, "ldloc.0 box"},                     // int32
		{[]byte{0x11, 0x09}, "ldloc.0 box"},               // valuetype
		{[]byte{0x1e, 0x00}, "ldloc.0 box"},               // !!0
		{[]byte{0x20, 0x09, 0x08}, "ldloc.0 box"},         // modopt int32
		{[]byte{0x10, 0x08}, "ldnull"},                    // int32&
		{[]byte{0x15, 0x12, 0x09, 0x01, 0x08}, "ldloc.0"}, // class G<int32>
		{[]byte{0x45, 0x08}, "ldnull"},                    // pinned int32
		{[]byte{0x16}, "ldnull"},                          // typedref
	} {
		typ, err := metadata.ParseTypeSpec(c.typ)
		if err != nil {
			t.Fatalf("%x: %v", c.typ, err)
		}
		ins, err := Exit{ReturnLocal: 0, ReturnType: typ}.LoadReturnAsObject(f)
		if err != nil {
			t.Fatal(err)
		}
		var s []string
		for _, in := range ins {
			s = append(s, in.Op.String())
		}
		if got := strings.Join(s, " "); got != c.want {
			t.Errorf("%x: %s, want %s", c.typ, got, c.want)
		}
	}
	if !bytes.Equal(f.specs[len(f.specs)-1], []byte{0x08}) {
		t.Errorf("modifiers kept in the type spec: %x", f.specs)
	}
}
