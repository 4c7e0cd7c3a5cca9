package metadata_test

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// The pieces names are made of. Import2.TypeName, Import2.MethodName and
// package profiler's Info.FunctionName (which need a module's metadata, so
// a running runtime) build their names with these rules: a full name
// splits at its last dot, a generic type's `n arity is dropped in favour of
// its type arguments, System types with an element type of their own take
// C# keywords in type arguments and ILAsm names in parameter lists, and an
// array's brackets show its rank and any bounds.
func Example_typeNames() {
	ns, name := metadata.SplitTypeName("System.Collections.Generic.Dictionary`2")
	fmt.Println(ns, "|", name, "|", metadata.StripArity(name))
	fmt.Println(metadata.StripArity("Shop.Outer`1+Inner`2"))

	for _, t := range []string{"System.Int32", "System.String", "System.IntPtr", "Shop.Order"} {
		fmt.Println(metadata.BuiltinName(t, metadata.CSharp), metadata.BuiltinName(t, metadata.ILAsm))
	}

	fmt.Println(metadata.FormatArrayShape(metadata.ArrayShape{Rank: 2}))
	fmt.Println(metadata.FormatArrayShape(metadata.ArrayShape{Rank: 2, Sizes: []uint32{4}, LoBounds: []int32{0, 1}}))
	// Output:
	// System.Collections.Generic | Dictionary`2 | Dictionary
	// Shop.Outer+Inner
	// int int32
	// string string
	// nint native int
	// Shop.Order Shop.Order
	// [,]
	// [0...3,1...]
}
