package ilrw_test

import (
	"fmt"

	"github.com/clrprof/clrprof/ilrw"
)

// Decode a method body, add code at its entry, recompute the max stack and
// encode it again (a body that outgrows a tiny header gets a fat one).
func Example() {
	// ldarg.0; ldarg.1; add; ret — a tiny header (code size 4).
	body, err := ilrw.Decode([]byte{4<<2 | 2, 0x02, 0x03, 0x58, 0x2A})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(body.Dump(nil))

	// Count calls in a static field (token 0x04000001): ldsfld, ldc.i4.1,
	// add, stsfld. 16 bytes of code and a max stack of 2 still fit a tiny
	// header.
	err = body.InsertAtEntry(
		ilrw.IToken(ilrw.OpLdsfld, 0x04000001), ilrw.LdcI4(1), ilrw.I(ilrw.OpAdd),
		ilrw.IToken(ilrw.OpStsfld, 0x04000001),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	// Dump is right in the middle of an edit: the inserted instructions'
	// offsets are those Encode will give them, and the max stack is
	// computed (the header still says 8 until ComputeMaxStack).
	fmt.Print(body.Dump(nil))
	if _, err := body.ComputeMaxStack(nil); err != nil {
		fmt.Println(err)
		return
	}
	out, err := body.Encode()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("% x\n", out)
	fmt.Print(body.Dump(nil))
	// Output:
	// // tiny header, maxstack 2 (header 8), 4 instructions
	// IL_0000: ldarg.0
	// IL_0001: ldarg.1
	// IL_0002: add
	// IL_0003: ret
	// // tiny header, maxstack 2 (header 8), 8 instructions
	// IL_0000: ldsfld 0x04000001
	// IL_0005: ldc.i4.1
	// IL_0006: add
	// IL_0007: stsfld 0x04000001
	// IL_000c: ldarg.0
	// IL_000d: ldarg.1
	// IL_000e: add
	// IL_000f: ret
	// 42 7e 01 00 00 04 17 58 80 01 00 00 04 02 03 58 2a
	// // tiny header, maxstack 2, 8 instructions
	// IL_0000: ldsfld 0x04000001
	// IL_0005: ldc.i4.1
	// IL_0006: add
	// IL_0007: stsfld 0x04000001
	// IL_000c: ldarg.0
	// IL_000d: ldarg.1
	// IL_000e: add
	// IL_000f: ret
}
