package instr

import (
	"context"
	"errors"
	"testing"
	"time"
)

// WaitTaskEnds returns at once with nothing pending, waits for the count
// to come down, and at ctx's end reports what is left.
func TestWaitTaskEndsCount(t *testing.T) {
	if n, err := WaitTaskEnds(context.Background()); n != 0 || err != nil {
		t.Fatalf("nothing pending: %d, %v", n, err)
	}
	taskEndsPending.Add(2)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	n, err := WaitTaskEnds(ctx)
	cancel()
	if n != 2 || !errors.Is(err, context.DeadlineExceeded) || PendingTaskEnds() != 2 {
		t.Errorf("two pending, bounded: %d, %v (PendingTaskEnds %d)", n, err, PendingTaskEnds())
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		taskEndsPending.Add(-1)
		time.Sleep(5 * time.Millisecond)
		taskEndsPending.Add(-1)
	}()
	if n, err := WaitTaskEnds(context.Background()); n != 0 || err != nil || PendingTaskEnds() != 0 {
		t.Errorf("after both ends: %d, %v", n, err)
	}
}
