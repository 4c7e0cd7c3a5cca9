package bench_test

import (
	"bytes"
	"fmt"

	"github.com/clrprof/clrprof/bench"
)

// A corpus is written by bench/prof/corpus inside a runtime and read back
// by the decoder benchmarks.
func ExampleReadCorpus() {
	c := &bench.Corpus{}
	c.Add(bench.KindBody, []byte{0x0A, 0x00, 0x2A}) // tiny header: 2 bytes of code (nop; ret)
	c.Add(bench.KindMethodSig, []byte{0x00, 0x00, 0x01})
	var buf bytes.Buffer
	c.WriteTo(&buf)

	back, err := bench.ReadCorpus(buf.Bytes())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(back.Bodies), "body,", len(back.MethodSigs), "signature,", back.Bytes(bench.KindBody), "IL bytes")
	fmt.Println("round-trip mismatches:", bench.CheckRoundTrip(back))
	// Output:
	// 1 body, 1 signature, 3 IL bytes
	// round-trip mismatches: 0
}
