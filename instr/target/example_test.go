package target_test

import (
	"fmt"

	"github.com/clrprof/clrprof/instr/target"
)

func ExampleParse() {
	t, err := target.Parse("Shop!Shop.Box`1+Inner::Get(System.Int32)")
	fmt.Println(t.Assembly, t.Type, t.Method, t.Params, err)
	fmt.Println(t.Matches("Shop", "Shop.Box`1+Inner", "Get", []string{"System.Int32"}))
	fmt.Println(t.Matches("Shop", "Shop.Box`1+Inner", "Get", []string{"System.String"}))

	_, err = target.Parse("Shop!Shop.Orders:Total")
	fmt.Println(err)
	// Output:
	// Shop Shop.Box`1+Inner Get [System.Int32] <nil>
	// true
	// false
	// instr: target "Shop!Shop.Orders:Total": position 16: unexpected ':' after the type; want '::' and a method name
}

func ExampleParseList() {
	ts, err := target.ParseList("mcs!*::*, Shop!Shop.Cache::Put(System.String, System.Int32)")
	fmt.Println(len(ts), err)
	for _, t := range ts {
		fmt.Println(t)
	}
	// Output:
	// 2 <nil>
	// mcs!*::*
	// Shop!Shop.Cache::Put(System.String, System.Int32)
}

// A name seen through package ilrw (Type/Nested::Method) or package
// profiler (C#-like, with type arguments) converts to the spelling of
// targets.
func ExampleTypeFromProfiler() {
	fmt.Println(target.TypeFromProfiler("Shop.Box<int>+Inner"))
	fmt.Println(target.TypeFromProfiler("System.Collections.Generic.Dictionary<System.__Canon,int>"))
	fmt.Println(target.TypeFromIL("Shop.Box`1/Inner"))
	fmt.Println(target.Name("Shop", target.TypeFromIL("Shop.Box`1/Inner"), "Get"))
	// Output:
	// Shop.Box`1+Inner
	// System.Collections.Generic.Dictionary`2
	// Shop.Box`1+Inner
	// Shop!Shop.Box`1+Inner::Get
}
