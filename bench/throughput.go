package bench

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/clrprof/clrprof/ilrw"
	"github.com/clrprof/clrprof/metadata"
)

// CheckRoundTrip decodes and re-encodes every body of c once and returns
// how many did not come back byte for byte (a decoding error counts too).
func CheckRoundTrip(c *Corpus) (mismatches int) {
	for _, data := range c.Bodies {
		body, err := ilrw.Decode(data)
		if err != nil {
			mismatches++
			continue
		}
		out, err := body.Encode()
		if err != nil || !bytes.Equal(out, data) {
			mismatches++
		}
	}
	return mismatches
}

// BenchILDecode measures ilrw.Decode over every IL body of c. One op is
// one pass over the whole corpus; b.SetBytes makes the reported MB/s IL
// bytes decoded per second. It reports the allocations per body
// ("allocs/body") and the bodies per second.
func BenchILDecode(b *testing.B, c *Corpus) {
	if len(c.Bodies) == 0 {
		b.Skip("no IL bodies in the corpus")
	}
	b.SetBytes(c.Bytes(KindBody))
	b.ReportAllocs()
	var failures int
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, data := range c.Bodies {
			if _, err := ilrw.Decode(data); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, len(c.Bodies), "body", before)
	if failures > 0 {
		b.Errorf("%d bodies failed to decode", failures)
	}
}

// BenchILEncode measures Body.Encode over every IL body of c, decoded once
// before the timer starts. MB/s is IL bytes encoded per second.
func BenchILEncode(b *testing.B, c *Corpus) {
	if len(c.Bodies) == 0 {
		b.Skip("no IL bodies in the corpus")
	}
	bodies := make([]*ilrw.Body, 0, len(c.Bodies))
	for _, data := range c.Bodies {
		body, err := ilrw.Decode(data)
		if err != nil {
			b.Fatalf("a corpus body does not decode: %v", err)
		}
		bodies = append(bodies, body)
	}
	b.SetBytes(c.Bytes(KindBody))
	b.ReportAllocs()
	var failures int
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, body := range bodies {
			if _, err := body.Encode(); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, len(bodies), "body", before)
	if failures > 0 {
		b.Errorf("%d bodies failed to encode", failures)
	}
}

// BenchILRoundTrip measures ilrw.Decode followed by Body.Encode over every
// IL body of c. One op is one pass over the whole corpus; b.SetBytes makes
// the reported MB/s IL bytes decoded and encoded per second. It reports the
// allocations per body ("allocs/body") and the bodies per second.
func BenchILRoundTrip(b *testing.B, c *Corpus) {
	if len(c.Bodies) == 0 {
		b.Skip("no IL bodies in the corpus")
	}
	b.SetBytes(c.Bytes(KindBody))
	b.ReportAllocs()
	var failures int
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, data := range c.Bodies {
			body, err := ilrw.Decode(data)
			if err != nil {
				failures++
				continue
			}
			if _, err := body.Encode(); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, len(c.Bodies), "body", before)
	if failures > 0 {
		b.Errorf("%d bodies failed to decode or encode", failures)
	}
}

// BenchILRoundTripReuse is [BenchILRoundTrip] through the reusing API a
// loop that does not keep its bodies can take: one ilrw.Decoder for every
// body and Body.AppendEncode into one buffer.
func BenchILRoundTripReuse(b *testing.B, c *Corpus) {
	if len(c.Bodies) == 0 {
		b.Skip("no IL bodies in the corpus")
	}
	b.SetBytes(c.Bytes(KindBody))
	b.ReportAllocs()
	var failures int
	var dec ilrw.Decoder
	var buf []byte
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, data := range c.Bodies {
			body, err := dec.Decode(data)
			if err != nil {
				failures++
				continue
			}
			if buf, err = body.AppendEncode(buf[:0]); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, len(c.Bodies), "body", before)
	if failures > 0 {
		b.Errorf("%d bodies failed to decode or encode", failures)
	}
}

// BenchSigDecode measures metadata.ParseMethodSig over every method
// signature and metadata.ParseLocalVarSig over every local-variable
// signature of c. One op is one pass; MB/s is signature bytes per second.
// It reports allocations per signature ("allocs/sig").
func BenchSigDecode(b *testing.B, c *Corpus) {
	n := len(c.MethodSigs) + len(c.LocalSigs)
	if n == 0 {
		b.Skip("no signatures in the corpus")
	}
	b.SetBytes(c.Bytes(KindMethodSig) + c.Bytes(KindLocalSig))
	b.ReportAllocs()
	var failures int
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range c.MethodSigs {
			if _, err := metadata.ParseMethodSig(s); err != nil {
				failures++
			}
		}
		for _, s := range c.LocalSigs {
			if _, err := metadata.ParseLocalVarSig(s); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, n, "sig", before)
	if failures > 0 {
		b.Errorf("%d signatures failed to decode", failures)
	}
}

// BenchSigDecodeReuse is [BenchSigDecode] through one metadata.SigDecoder,
// which decodes each signature into memory kept from the one before.
func BenchSigDecodeReuse(b *testing.B, c *Corpus) {
	n := len(c.MethodSigs) + len(c.LocalSigs)
	if n == 0 {
		b.Skip("no signatures in the corpus")
	}
	b.SetBytes(c.Bytes(KindMethodSig) + c.Bytes(KindLocalSig))
	b.ReportAllocs()
	var failures int
	var d metadata.SigDecoder
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range c.MethodSigs {
			if _, err := d.ParseMethodSig(s); err != nil {
				failures++
			}
		}
		for _, s := range c.LocalSigs {
			if _, err := d.ParseLocalVarSig(s); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, n, "sig", before)
	if failures > 0 {
		b.Errorf("%d signatures failed to decode", failures)
	}
}

// BenchSigEncode measures Encode over every signature of c, decoded once
// before the timer starts. MB/s is signature bytes encoded per second.
func BenchSigEncode(b *testing.B, c *Corpus) {
	var sigs []metadata.Signature
	for _, s := range c.MethodSigs {
		m, err := metadata.ParseMethodSig(s)
		if err != nil {
			b.Fatalf("a corpus method signature does not decode: %v", err)
		}
		sigs = append(sigs, m)
	}
	for _, s := range c.LocalSigs {
		l, err := metadata.ParseLocalVarSig(s)
		if err != nil {
			b.Fatalf("a corpus local signature does not decode: %v", err)
		}
		sigs = append(sigs, l)
	}
	if len(sigs) == 0 {
		b.Skip("no signatures in the corpus")
	}
	b.SetBytes(c.Bytes(KindMethodSig) + c.Bytes(KindLocalSig))
	b.ReportAllocs()
	var failures int
	before := mallocs()
	b.ResetTimer()
	for b.Loop() {
		for _, s := range sigs {
			if _, err := s.Encode(); err != nil {
				failures++
			}
		}
	}
	b.StopTimer()
	reportPerItem(b, len(sigs), "sig", before)
	if failures > 0 {
		b.Errorf("%d signatures failed to encode", failures)
	}
}

// mallocs is the number of heap allocations so far.
func mallocs() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.Mallocs
}

// reportPerItem adds allocs/<unit> and <unit>s/s metrics for n items per
// op, given the allocation count before the timed loop.
func reportPerItem(b *testing.B, n int, unit string, before uint64) {
	if b.N == 0 || n == 0 {
		return
	}
	items := float64(b.N) * float64(n)
	b.ReportMetric(float64(mallocs()-before)/items, "allocs/"+unit)
	if el := b.Elapsed(); el > 0 {
		b.ReportMetric(items/el.Seconds(), plural(unit)+"/s")
	}
}

func plural(unit string) string {
	if unit == "body" {
		return "bodies"
	}
	return unit + "s"
}
