package diag

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseAdvertise decodes arbitrary bytes as an advertise message (what
// a reverse diagnostics port reads first from whoever connects): no panic,
// and whatever parses re-encodes to the same bytes.
func FuzzParseAdvertise(f *testing.F) {
	b, _ := Advertise{Cookie: testCLSID, PID: 12345}.MarshalBinary()
	f.Add(b)
	f.Add(b[:AdvertiseSize-1])
	f.Add([]byte(AdvertiseMagic))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := ParseAdvertise(b)
		if err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(b) {
				t.Fatalf("error %v (offset out of range?)", err)
			}
			return
		}
		enc, err := a.MarshalBinary()
		if err != nil || !bytes.Equal(enc, b) {
			t.Fatalf("re-encoded %x (%v) from %x", enc, err, b)
		}
	})
}

// FuzzStartupRequest decodes arbitrary StartupProfiler payloads (what a
// diagnostics server parses): no panic, and whatever decodes and can be
// sent round-trips.
func FuzzStartupRequest(f *testing.F) {
	b, _ := StartupRequest{CLSID: testCLSID, ProfilerPath: "/tmp/prøf-😀/lib.so"}.MarshalBinary()
	f.Add(b)
	f.Add(b[:17])
	f.Fuzz(func(t *testing.T, b []byte) {
		var r StartupRequest
		if err := r.UnmarshalBinary(b); err != nil {
			var fe *FormatError
			if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > len(b) {
				t.Fatalf("error %v (offset out of range?)", err)
			}
			return
		}
		enc, err := r.MarshalBinary()
		if err != nil {
			return
		}
		var r2 StartupRequest
		if err := r2.UnmarshalBinary(enc); err != nil || r2 != r {
			t.Fatalf("round trip changed %+v to %+v (%v)", r, r2, err)
		}
	})
}
