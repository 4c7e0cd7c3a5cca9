//go:build clrprof_testhooks

package ring

import "testing"

// Eight producer threads write records of one to six words into rings of
// 4 KiB (so every ring wraps and fills many times over) while one consumer
// drains: every record arrives once, whole, in order per thread, and
// limit stays the last reading of tail plus the ring.
func TestRingCoreStress(t *testing.T) {
	const threads, events, size = 8, 100000, 4096
	r, err := Stress(threads, events, size)
	if err != nil {
		t.Fatalf("%v (%+v)", err, r)
	}
	if r.Records != threads*events {
		t.Errorf("read %d records, want %d", r.Records, threads*events)
	}
	if r.BadLimit != 0 {
		t.Errorf("%d rings ended with limit != tail_seen + size", r.BadLimit)
	}
	// Each ring took some 100000 * 28 bytes through 4096: its producer
	// must have read tail again, and found it moved, many times.
	if r.Seen < threads*(events*28/size)/2 {
		t.Errorf("reserves read a moved tail %d times, want at least %d", r.Seen, threads*(events*28/size)/2)
	}
	t.Logf("%+v", r)
}
