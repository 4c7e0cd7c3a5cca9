package target

import (
	"errors"
	"reflect"
	"testing"
)

// FuzzParse checks that Parse never panics, that every error is a
// *SyntaxError naming the input with a position inside it (or at its end),
// and that a parsed target formats to a spelling that parses back to it.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"Shop!Shop.Orders::Total", "mcs!*::*", "Shop!Shop.Box`1+Inner::F",
		"Shop!C::Get(System.Int32, System.String[], System.Int32&)",
		"Shop!C::Put(System.Collections.Generic.Dictionary`2[System.String, A`1+B[!0]], !!1, System.Byte*, System.Int32[,])",
		"app!Program+<>c::<Main>b__0_0", "", "!", "A!B::", "A!B`::C(", "A!B::C(D`1[",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tg, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T %v", s, err, err)
			}
			if se.Target != s || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("Parse(%q): %v: target %q position %d", s, err, se.Target, se.Pos)
			}
			return
		}
		again, err := Parse(tg.String())
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which does not parse: %v", s, tg.String(), err)
		}
		if !reflect.DeepEqual(again, tg) {
			t.Fatalf("Parse(%q) = %#v; its String %q parses to %#v", s, tg, tg.String(), again)
		}
		if !tg.HasParams && !tg.Matches(tg.Assembly, tg.Type, tg.Method, nil) {
			t.Fatalf("%q does not match its own names", s)
		}
		ParseList(s)
		TypeFromProfiler(s)
	})
}
