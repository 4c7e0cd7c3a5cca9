package target

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want Target
	}{
		{"Shop!Shop.Orders::Total", Target{Assembly: "Shop", Type: "Shop.Orders", Method: "Total"}},
		{"  mcs!*::*  ", Target{Assembly: "mcs", Type: "*", Method: "*"}},
		{"Shop!Shop.Box`1+Inner::F", Target{Assembly: "Shop", Type: "Shop.Box`1+Inner", Method: "F"}},
		{"Shop!*::Get", Target{Assembly: "Shop", Type: "*", Method: "Get"}},
		{"Shop!Shop.Box`1::*", Target{Assembly: "Shop", Type: "Shop.Box`1", Method: "*"}},
		{"Shop!Shop.Cache::Get(System.Int32)", Target{Assembly: "Shop", Type: "Shop.Cache", Method: "Get", Params: []string{"System.Int32"}, HasParams: true}},
		{"Shop!Shop.Cache::Get()", Target{Assembly: "Shop", Type: "Shop.Cache", Method: "Get", Params: []string{}, HasParams: true}},
		{"Shop!Shop.Cache::Get( System.Int32 ,System.String[],  System.Int32& )", Target{Assembly: "Shop", Type: "Shop.Cache", Method: "Get",
			Params: []string{"System.Int32", "System.String[]", "System.Int32&"}, HasParams: true}},
		{"Shop!Shop.Cache::Put(System.Collections.Generic.List`1[System.Int32], !0, !!1, System.Byte*, System.Int32[,])", Target{Assembly: "Shop", Type: "Shop.Cache", Method: "Put",
			Params: []string{"System.Collections.Generic.List`1[System.Int32]", "!0", "!!1", "System.Byte*", "System.Int32[,]"}, HasParams: true}},
		{"Shop!Shop.Cache::Put(System.Collections.Generic.Dictionary`2[System.String, Shop.Box`1+Inner[System.Int32]])", Target{Assembly: "Shop", Type: "Shop.Cache", Method: "Put",
			Params: []string{"System.Collections.Generic.Dictionary`2[System.String,Shop.Box`1+Inner[System.Int32]]"}, HasParams: true}},
		{"System.Private.CoreLib!System.Collections.Generic.List`1::.ctor", Target{Assembly: "System.Private.CoreLib", Type: "System.Collections.Generic.List`1", Method: ".ctor"}},
		{"app!Program+<>c::<Main>b__0_0", Target{Assembly: "app", Type: "Program+<>c", Method: "<Main>b__0_0"}},
		{"app!Program::System.IDisposable.Dispose", Target{Assembly: "app", Type: "Program", Method: "System.IDisposable.Dispose"}},
		{"my-app.v2!Ns.T::M", Target{Assembly: "my-app.v2", Type: "Ns.T", Method: "M"}},
	}
	for _, c := range cases {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", c.in, got, c.want)
		}
		again, err := Parse(got.String())
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Errorf("Parse(String()) of %q: %q gives %#v, %v", c.in, got.String(), again, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		in  string
		pos int
		msg string
	}{
		{"", 0, "empty target"},
		{"Shop", 4, "in the assembly name"},
		{"!T::M", 0, "missing assembly"},
		{"*!T::M", 0, "the assembly must be named"},
		{"Shop!::M", 5, "missing type name"},
		{"Shop!T", 6, "want '::'"},
		{"Shop!T:M", 6, "want '::'"},
		{"Shop!T::", 8, "missing method name"},
		{"Shop!Box`::M", 9, "generic arity"},
		{"Shop!Box`0::M", 9, "bad generic arity"},
		{"Shop!Box`1+::M", 11, "nested type name"},
		{"Shop!A..B::M", 5, "empty namespace"},
		{"Shop!T::M(", 10, "missing parameter type"},
		{"Shop!T::M(System.Int32", 22, "unclosed parameter list"},
		{"Shop!T::M(System.Int32,)", 23, "missing parameter type"},
		{"Shop!T::M(System.Int32) x", 23, "after the parameter list"},
		{"Shop!T::*(System.Int32)", 9, "not '*'"},
		{"Shop!T::M(*)", 10, "not a parameter type"},
		{"Shop!T::M(System.Int32&[])", 23, "must end"},
		{"Shop!T::M(List`1[System.Int32)", 29, "unexpected ')'"},
		{"Shop!T::M x", 9, "after the method name"},
		{"  Shop!T", 8, "want '::'"},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Parse(%q): %v, want a *SyntaxError", c.in, err)
			continue
		}
		if se.Pos != c.pos || !strings.Contains(se.Msg, c.msg) || se.Target != c.in {
			t.Errorf("Parse(%q): %v (pos %d), want position %d and %q", c.in, err, se.Pos, c.pos, c.msg)
		}
		if !strings.Contains(err.Error(), c.in) {
			t.Errorf("error %q does not name the target", err)
		}
	}
}

func TestParseList(t *testing.T) {
	got, err := ParseList(" A!T::M(System.Int32, System.String) ,, B!*::*, C!X`2[]::Y,")
	if err == nil {
		t.Fatalf("want an error for X`2[], got %v", got)
	}
	var se *SyntaxError
	if !errors.As(err, &se) || se.Target != "C!X`2[]::Y" || se.Pos != 5 {
		t.Fatalf("error %v: want target C!X`2[]::Y at 5", err)
	}
	got, err = ParseList(" A!T::M(System.Int32, System.String) ,, B!*::*, D!Dictionary`2::Add(Dictionary`2[System.Int32,System.String]),")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"A!T::M(System.Int32, System.String)", "B!*::*", "D!Dictionary`2::Add(Dictionary`2[System.Int32,System.String])"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].String() != want[i] {
			t.Errorf("item %d: %q, want %q", i, got[i], want[i])
		}
	}
}

func TestMatches(t *testing.T) {
	must := func(s string) Target {
		tg, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return tg
	}
	cases := []struct {
		target, asm, typ, method string
		params                   []string
		want                     bool
	}{
		{"Shop!Shop.Orders::Total", "shop", "Shop.Orders", "Total", nil, true},
		{"Shop!Shop.Orders::Total", "Shop", "Shop.Orders", "total", nil, false},
		{"Shop!Shop.Orders::Total", "Shop2", "Shop.Orders", "Total", nil, false},
		{"Shop!*::Total", "Shop", "Shop.Box`1+Inner", "Total", []string{"System.Int32"}, true},
		{"Shop!Shop.Box`1+Inner::*", "Shop", "Shop.Box`1+Inner", "F", nil, true},
		{"Shop!Shop.Box`1+Inner::*", "Shop", "Shop.Box`1", "F", nil, false},
		{"Shop!*::*", "Shop", "X", ".ctor", nil, true},
		{"Shop!C::Get(System.Int32)", "Shop", "C", "Get", []string{"System.Int32"}, true},
		{"Shop!C::Get(System.Int32)", "Shop", "C", "Get", []string{"System.String"}, false},
		{"Shop!C::Get(System.Int32)", "Shop", "C", "Get", []string{"System.Int32", "System.Int32"}, false},
		{"Shop!C::Get()", "Shop", "C", "Get", nil, true},
		{"Shop!C::Get()", "Shop", "C", "Get", []string{"System.Int32"}, false},
		{"Shop!C::Get", "Shop", "C", "Get", []string{"System.Int32"}, true},
	}
	for _, c := range cases {
		if got := must(c.target).Matches(c.asm, c.typ, c.method, c.params); got != c.want {
			t.Errorf("%s matches %s!%s::%s%v = %v, want %v", c.target, c.asm, c.typ, c.method, c.params, got, c.want)
		}
	}
}

func TestTypeNames(t *testing.T) {
	for in, want := range map[string]string{
		"Shop.Box`1/Inner": "Shop.Box`1+Inner",
		"Shop.Orders":      "Shop.Orders",
		"A/B/C":            "A+B+C",
	} {
		if got := TypeFromIL(in); got != want {
			t.Errorf("TypeFromIL(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"Shop.Box<int>+Inner":                         "Shop.Box`1+Inner",
		"Shop.Pair<int,System.__Canon>":               "Shop.Pair`2",
		"Shop.Box<Shop.Pair<int,string>>+Inner<long>": "Shop.Box`1+Inner`1",
		"Shop.Box<Outer+Nested>":                      "Shop.Box`1",
		"Program+<>c":                                 "Program+<>c",
		"Program+<Main>d__0":                          "Program+<Main>d__0",
		"Program+<>c__DisplayClass1_0<T>":             "Program+<>c__DisplayClass1_0`1",
		"System.Collections.Generic.List<T>":          "System.Collections.Generic.List`1",
		"Shop.Orders":                                 "Shop.Orders",
	} {
		if got := TypeFromProfiler(in); got != want {
			t.Errorf("TypeFromProfiler(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Name("Shop", "Shop.Orders", "Total"); got != "Shop!Shop.Orders::Total" {
		t.Errorf("Name = %q", got)
	}
}
