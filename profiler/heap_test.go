package profiler

import (
	"errors"
	"strings"
	"testing"
)

func TestArrayInfoLen(t *testing.T) {
	for _, c := range []struct {
		lengths []uint32
		want    uint64
	}{
		{[]uint32{5}, 5},
		{[]uint32{2, 3}, 6},
		{[]uint32{0, 7}, 0},
		{[]uint32{1 << 31, 1 << 31}, 1 << 62}, // no uint32 overflow
	} {
		if got := (ArrayInfo{Lengths: c.lengths}).Len(); got != c.want {
			t.Errorf("Len(%v) = %d, want %d", c.lengths, got, c.want)
		}
	}
}

func TestEventMaskError(t *testing.T) {
	err := error(&EventMaskError{High: HighBasicGC | HighLargeObjectAllocated, Since: ".NET Core 3.0"})
	if !errors.Is(err, ErrNotAvailable) || !errors.Is(err, E_INVALIDARG) {
		t.Errorf("%v: want errors.Is ErrNotAvailable and E_INVALIDARG", err)
	}
	for _, want := range []string{"HighBasicGC|HighLargeObjectAllocated", "not available", ".NET Core 3.0"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q lacks %q", err.Error(), want)
		}
	}
}

// The groups of highFlagsSince must not overlap, and every flag in them
// must be a single known COR_PRF_HIGH_MONITOR bit.
func TestHighFlagsSince(t *testing.T) {
	var seen HighMonitor
	for _, g := range highFlagsSince {
		if g.flags&seen != 0 {
			t.Errorf("%v listed twice", g.flags&seen)
		}
		seen |= g.flags
		if g.info < 10 || g.since == "" {
			t.Errorf("group %v: info %d since %q", g.flags, g.info, g.since)
		}
	}
	if want := HighBasicGC | HighGCMovedObjects | HighLargeObjectAllocated | HighEventPipe | HighPinnedObjectAllocated | HighGCSkipAllocatedByClassStatistic; seen != want {
		t.Errorf("flags checked %v, want %v", seen, want)
	}
}
