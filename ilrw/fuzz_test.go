package ilrw

import (
	"bytes"
	"testing"

	"github.com/clrprof/clrprof/metadata"
)

// FuzzDecode: decoding arbitrary bytes never panics; a body that decodes
// encodes, and decode→encode is stable from then on; the stack analysis
// and the dump never panic either. A Decoder reused across inputs decodes
// what Decode does, and AppendEncode appends what Encode returns.
func FuzzDecode(f *testing.F) {
	f.Add(tinyAdd)
	f.Add(fatCatch)
	f.Add([]byte{4<<2 | 2, 0x2B, 0x01, 0x00, 0x2A})
	f.Add([]byte{5<<2 | 2, 0x45, 0x01, 0x00, 0x00, 0x00})
	var dec Decoder // reused across inputs, as a loop would
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decode(data)
		r, rerr := dec.Decode(data)
		if (err == nil) != (rerr == nil) {
			t.Fatalf("Decode: %v; Decoder.Decode: %v", err, rerr)
		}
		if err != nil {
			return
		}
		if bd, rd := b.Dump(nil), r.Dump(nil); bd != rd {
			t.Fatalf("Decoder.Decode gives\n%s\nDecode gives\n%s", rd, bd)
		}
		rout, rerr := r.AppendEncode([]byte{0xAA})
		bout, err := b.Encode()
		if err != nil || rerr != nil || !bytes.Equal(rout, append([]byte{0xAA}, bout...)) {
			t.Fatalf("AppendEncode of the reused body: %x, %v; Encode: %x, %v", rout, rerr, bout, err)
		}
		b.Dump(nil)
		b.ComputeMaxStack(anyCall{})
		out, err := b.Encode()
		if err != nil {
			t.Fatalf("decoded body does not encode: %v", err)
		}
		b2, err := Decode(out)
		if err != nil {
			t.Fatalf("encoded body does not decode: %v\n%x", err, out)
		}
		out2, err := b2.Encode()
		if err != nil || !bytes.Equal(out, out2) {
			t.Fatalf("unstable: %v\n%x\n%x", err, out, out2)
		}
	})
}

// anyCall answers every call site with one parameter and a result.
type anyCall struct{}

func (anyCall) CallSite(metadata.Token) (CallSite, error) {
	return CallSite{Params: 1, ReturnsValue: true}, nil
}
