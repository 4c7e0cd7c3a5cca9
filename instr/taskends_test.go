package instr

import (
	"context"
	"errors"
	"testing"
	"time"
	"unsafe"
)

// WaitTaskEnds returns at once with nothing pending, waits for the count
// to come down, and at ctx's end reports what is left; the counts are
// summed over their shards, and the shards lie a cache line and more
// apart.
func TestWaitTaskEndsCount(t *testing.T) {
	if d := uintptr(unsafe.Pointer(&taskEndsRegistered[1])) - uintptr(unsafe.Pointer(&taskEndsRegistered[0])); d < 128 {
		t.Errorf("shards %d bytes apart", d)
	}
	if n, err := WaitTaskEnds(context.Background()); n != 0 || err != nil {
		t.Fatalf("nothing pending: %d, %v", n, err)
	}
	// Registered on two threads' shards, one of them finished on a third.
	taskEndsRegistered[3].n.Add(1)
	taskEndsRegistered[taskEndShards-1].n.Add(2)
	taskEndsFinished[7].n.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	n, err := WaitTaskEnds(ctx)
	cancel()
	if n != 2 || !errors.Is(err, context.DeadlineExceeded) || PendingTaskEnds() != 2 {
		t.Errorf("two pending, bounded: %d, %v (PendingTaskEnds %d)", n, err, PendingTaskEnds())
	}
	go func() {
		time.Sleep(5 * time.Millisecond)
		taskEndsFinished[0].n.Add(1)
		time.Sleep(5 * time.Millisecond)
		taskEndsFinished[3].n.Add(1)
	}()
	if n, err := WaitTaskEnds(context.Background()); n != 0 || err != nil || PendingTaskEnds() != 0 {
		t.Errorf("after both ends: %d, %v", n, err)
	}
}
