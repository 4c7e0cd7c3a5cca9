package metadata

import (
	"fmt"
	"testing"
)

func TestFormatHelpers(t *testing.T) {
	for in, want := range map[string]string{
		"List`1": "List", "System.Collections.Generic.Dictionary`2+Enumerator": "System.Collections.Generic.Dictionary+Enumerator",
		"Outer`1+Inner`2": "Outer+Inner", "Plain": "Plain", "Odd`x": "Odd`x",
	} {
		if got := StripArity(in); got != want {
			t.Errorf("StripArity(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		s    ArrayShape
		want string
	}{
		{ArrayShape{Rank: 1}, "[]"},
		{ArrayShape{Rank: 2}, "[,]"},
		{ArrayShape{Rank: 2, LoBounds: []int32{0, 0}}, "[,]"},
		{ArrayShape{Rank: 2, LoBounds: []int32{1, 0}}, "[1...,]"},
		{ArrayShape{Rank: 2, Sizes: []uint32{4}, LoBounds: []int32{0, 2}}, "[0...3,2...]"},
		{ArrayShape{Rank: 1, Sizes: []uint32{5}, LoBounds: []int32{-2}}, "[-2...2]"},
	} {
		if got := FormatArrayShape(c.s); got != c.want {
			t.Errorf("FormatArrayShape(%+v) = %q, want %q", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		chain, args []string
		want        string
	}{
		{[]string{"Inner`1", "Ns.Outer`1"}, []string{"int", "string"}, "Ns.Outer<int>+Inner<string>"},
		{[]string{"Enumerator", "Ns.Dictionary`2"}, []string{"K", "V"}, "Ns.Dictionary<K,V>+Enumerator"},
		{[]string{"Plain", "Outer`1"}, []string{"long"}, "Outer<long>+Plain"},
		{[]string{"List`1"}, nil, "List"},
		{[]string{"Odd`1"}, []string{"a", "b"}, "Odd<a,b>"},
	} {
		if got := distributeArgs(c.chain, c.args); got != c.want {
			t.Errorf("distributeArgs(%q, %q) = %q, want %q", c.chain, c.args, got, c.want)
		}
	}
	if BuiltinName("System.Int32", ILAsm) != "int32" || BuiltinName("System.Int32", CSharp) != "int" ||
		BuiltinName("System.IntPtr", ILAsm) != "native int" || BuiltinName("Foo.Bar", CSharp) != "Foo.Bar" {
		t.Error("BuiltinName")
	}
	var nilCtx *GenericContext
	if nilCtx.arg(false, 1) != "!1" || nilCtx.arg(true, 0) != "!!0" {
		t.Error("nil context")
	}
	ctx := &GenericContext{TypeArgs: []string{"T"}, MethodArgs: []string{"", "V"}}
	if ctx.arg(false, 0) != "T" || ctx.arg(true, 0) != "!!0" || ctx.arg(true, 1) != "V" || ctx.arg(false, 3) != "!3" {
		t.Error("context")
	}
	if ns, n := SplitTypeName("A.B.C"); ns != "A.B" || n != "C" {
		t.Error("SplitTypeName")
	}
	// The ECMA key's token is the well-known b77a5c561934e089.
	ecma := []byte{0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0}
	if tok := fmt.Sprintf("%x", PublicKeyToken(ecma)); tok != "b77a5c561934e089" {
		t.Errorf("PublicKeyToken(ECMA key) = %s", tok)
	}
	if PublicKeyToken(nil) != nil {
		t.Error("PublicKeyToken(nil)")
	}
}
