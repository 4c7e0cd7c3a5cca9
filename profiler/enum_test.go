package profiler

import (
	"errors"
	"slices"
	"testing"
)

// TestBatches pins the enumerator protocol All implements: batches until
// an empty one, an error yielded once and ending the iteration, early
// break honoured.
func TestBatches(t *testing.T) {
	src := [][]int{{1, 2}, {3}, {}, {99}}
	i := 0
	next := func() ([]int, error) { b := src[i]; i++; return b, nil }
	got, err := collect(batches(next))
	if err != nil || !slices.Equal(got, []int{1, 2, 3}) || i != 3 {
		t.Errorf("collect = %v, %v after %d calls; want [1 2 3], nil after 3", got, err, i)
	}
	boom := errors.New("boom")
	calls := 0
	failing := func() ([]int, error) {
		calls++
		if calls == 2 {
			return nil, boom
		}
		return []int{calls}, nil
	}
	got, err = collect(batches(failing))
	if !errors.Is(err, boom) || !slices.Equal(got, []int{1}) {
		t.Errorf("collect(failing) = %v, %v; want [1], boom", got, err)
	}
	i = 0
	for v := range batches(next) {
		if v == 2 {
			break
		}
	}
	if i != 1 {
		t.Errorf("break after the 2nd item fetched %d batches, want 1", i)
	}
	var nilEnum *ModuleEnum
	if _, err := nilEnum.Collect(); err == nil {
		t.Error("Collect on a nil ModuleEnum: no error")
	}
}
