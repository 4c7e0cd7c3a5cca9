package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// rec writes the listener's encoding (Listener.cs), for the tests.
type rec []byte

func (r rec) u8(v byte) rec   { return append(r, v) }
func (r rec) i32(v int32) rec { return binary.LittleEndian.AppendUint32(r, uint32(v)) }
func (r rec) i64(v int64) rec { return binary.LittleEndian.AppendUint64(r, uint64(v)) }
func (r rec) str(s string) rec {
	return append(r.i32(int32(len(s))), s...)
}

func sample() rec {
	r := rec{}.u8(1)
	for i := 0; i < 16; i++ {
		r = r.u8(byte(0xa0 + i))
	}
	r = append(r, 1, 2, 3, 4, 5, 6, 7, 8) // span
	r = append(r, 9, 9, 9, 9, 9, 9, 9, 9) // parent
	r = r.u8(1).u8(1).u8(1).u8(2)         // sampled, remote parent, server, error
	r = r.i64(1_700_000_000_000_000_000).i64(int64(42 * time.Millisecond))
	r = r.str("Microsoft.AspNetCore").str("").str("GET /products/{id:int}").str("boom")
	r = r.i32(4).str("http.route").u8(0).str("/products/{id:int}").
		str("http.response.status_code").u8(1).i64(500).
		str("ok").u8(2).u8(1).
		str("ratio").u8(3).i64(int64(math.Float64bits(0.5)))
	r = r.i32(1).str("exception").i64(1_700_000_000_010_000_000).i32(1).str("exception.type").u8(0).str("System.InvalidOperationException")
	return r
}

func TestDecodeSpan(t *testing.T) {
	s, err := decodeSpan(sample())
	if err != nil {
		t.Fatal(err)
	}
	if s.Context.TraceID().String() != "a0a1a2a3a4a5a6a7a8a9aaabacadaeaf" || s.Context.SpanID().String() != "0102030405060708" ||
		!s.Context.IsSampled() || s.Parent.SpanID().String() != "0909090909090909" || !s.Parent.IsRemote() ||
		s.Kind != trace.SpanKindServer || s.Status != codes.Error || s.StatusDescription != "boom" ||
		s.Scope != "Microsoft.AspNetCore" || s.Name != "GET /products/{id:int}" ||
		s.End.Sub(s.Start) != 42*time.Millisecond || s.Start.UnixNano() != 1_700_000_000_000_000_000 {
		t.Errorf("decoded %+v", s)
	}
	want := map[string]string{"http.route": "/products/{id:int}", "http.response.status_code": "500", "ok": "true", "ratio": "0.5"}
	if len(s.Attrs) != len(want) {
		t.Errorf("attributes %v", s.Attrs)
	}
	for _, kv := range s.Attrs {
		if want[string(kv.Key)] != kv.Value.String() {
			t.Errorf("%s = %s, want %s", kv.Key, kv.Value.String(), want[string(kv.Key)])
		}
	}
	if len(s.Events) != 1 || s.Events[0].Name != "exception" || len(s.Events[0].Attributes) != 1 {
		t.Errorf("events %+v", s.Events)
	}
	// Every truncation is an error, never a panic; so is a trailing byte.
	full := sample()
	for n := 0; n < len(full); n++ {
		if _, err := decodeSpan(full[:n]); err == nil {
			t.Errorf("a record cut at %d of %d bytes decoded", n, len(full))
		}
	}
	if _, err := decodeSpan(append(sample(), 0)); err == nil {
		t.Error("a trailing byte was accepted")
	}
	// A root: no parent.
	root := sample()
	copy(root[25:33], make([]byte, 8))
	if s, err := decodeSpan(root); err != nil || s.Parent.IsValid() {
		t.Errorf("root: parent %v, %v", s.Parent, err)
	}
}

func FuzzDecodeSpan(f *testing.F) {
	f.Add([]byte(sample()))
	f.Add([]byte{1})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any input: an error or a span, never a panic, and a decoded
		// record accounts for every byte (re-encoding is not checked:
		// strings need not be UTF-8).
		s, err := decodeSpan(b)
		if err == nil && len(s.Attrs) > len(b) {
			t.Errorf("%d attributes from %d bytes", len(s.Attrs), len(b))
		}
	})
}

// BenchmarkDecodeSpan decodes a server span's record as the listener
// sends it, on the callback's path: its allocations are what the
// profiler's Go heap gets per span before the pipeline's own.
func BenchmarkDecodeSpan(b *testing.B) {
	r := sample()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeSpan(r); err != nil {
			b.Fatal(err)
		}
	}
}

// TestInterner: a repeated string is one copy; a long one and those past
// the bound are copied each time, and nothing the table returns differs
// from its bytes.
func TestInterner(t *testing.T) {
	in := interner{m: map[string]string{}}
	a, b := in.get([]byte("http.route")), in.get([]byte("http.route"))
	if a != "http.route" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("repeated string: %q and %q, one copy: %v", a, b, unsafe.StringData(a) == unsafe.StringData(b))
	}
	long := bytes.Repeat([]byte("x"), maxInternLen+1)
	if l1, l2 := in.get(long), in.get(long); l1 != string(long) || unsafe.StringData(l1) == unsafe.StringData(l2) {
		t.Error("a string longer than maxInternLen was interned or changed")
	}
	for i := 0; len(in.m) < maxInterned; i++ {
		in.get([]byte(strconv.Itoa(i)))
	}
	past := []byte("past the bound")
	if p1, p2 := in.get(past), in.get(past); p1 != string(past) || unsafe.StringData(p1) == unsafe.StringData(p2) || len(in.m) != maxInterned {
		t.Errorf("past the bound: %q, table of %d", p1, len(in.m))
	}
	if in.get(nil) != "" {
		t.Error("empty")
	}
}

// batchOf frames records as Listener.Send does.
func batchOf(recs ...[]byte) []byte {
	var b []byte
	for _, r := range recs {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r)))
		b = append(b, r...)
	}
	return b
}

// TestSplitBatch: every record of a batch in order, and a broken framing
// (a count past the end, a zero or negative count, a short tail) stops it
// with errBatch after the records before it.
func TestSplitBatch(t *testing.T) {
	one, two := []byte(sample()), []byte{7, 8, 9}
	var got [][]byte
	collect := func(r []byte) { got = append(got, append([]byte(nil), r...)) }
	if err := splitBatch(batchOf(one, two, one), collect); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || !bytes.Equal(got[0], one) || !bytes.Equal(got[1], two) || !bytes.Equal(got[2], one) {
		t.Fatalf("records %q", got)
	}
	good := batchOf(two)
	for name, b := range map[string][]byte{
		"overrun":  slices.Concat(good, []byte{4, 0, 0, 0, 1, 2}),
		"zero":     slices.Concat(good, []byte{0, 0, 0, 0}),
		"negative": slices.Concat(good, []byte{0xff, 0xff, 0xff, 0xff, 1}),
		"tail":     slices.Concat(good, []byte{1, 0}),
	} {
		got = nil
		if err := splitBatch(b, collect); !errors.Is(err, errBatch) || len(got) != 1 || !bytes.Equal(got[0], two) {
			t.Errorf("%s: %v after %q, want errBatch after the first record", name, err, got)
		}
	}
}

func FuzzSplitBatch(f *testing.F) {
	f.Add(batchOf([]byte(sample()), []byte{1}))
	f.Add([]byte{4, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		// Any input: records that lie within it and account for every
		// byte before an error, never a panic.
		used := 0
		err := splitBatch(b, func(r []byte) {
			if len(r) == 0 || len(r) > len(b) {
				t.Fatalf("a record of %d bytes from %d", len(r), len(b))
			}
			used += 4 + len(r)
		})
		if err == nil && used != len(b) {
			t.Errorf("%d of %d bytes in records, no error", used, len(b))
		}
	})
}
