package metadata_test

import (
	"fmt"

	"github.com/clrprof/clrprof/metadata"
)

// Decode a method signature, change it, and encode it again.
func ExampleParseMethodSig() {
	// instance int32 (string[], int32&)
	blob := []byte{0x20, 0x02, 0x08, 0x1d, 0x0e, 0x10, 0x08}
	sig, err := metadata.ParseMethodSig(blob)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sig.HasThis(), len(sig.Params), sig.Return.Kind == metadata.ElementTypeI4)
	fmt.Println(metadata.PrimitiveName(sig.Params[0].Elem.Kind, metadata.ILAsm) + "[]")

	// Add a third parameter: a List<int32> (List`1 being TypeRef 0x01000003).
	list := metadata.GenericInst(metadata.ClassType(0x01000003), metadata.Primitive(metadata.ElementTypeI4))
	sig.Params = append(sig.Params, list)
	out, _ := sig.Encode()
	fmt.Printf("% x\n", out)

	// Malformed blobs fail with the offset of the problem.
	_, err = metadata.ParseMethodSig(blob[:5])
	fmt.Println(err)
	// Output:
	// true 2 true
	// string[]
	// 20 03 08 1d 0e 10 08 15 12 0d 01 08
	// metadata: signature: truncated at byte 5: want element type, blob ends
}
