//go:build cgo

package metadata_test

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// Constants for DefineField, DefineParam and DefineProperty: the element
// type and the little-endian bytes ECMA-335's Constant table holds.
func ExampleConstant() {
	for _, c := range []*metadata.Constant{metadata.Int32Constant(42), metadata.StringConstant("hé")} {
		fmt.Printf("%v % x\n", c.Type, c.Value)
	}
	// Output:
	// ElementTypeI4 2a 00 00 00
	// ElementTypeString 68 00 e9 00
}
