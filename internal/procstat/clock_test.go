//go:build linux

package procstat

import (
	"runtime"
	"syscall"
	"testing"
)

// The calling thread's CPU-time clock, read by its own id and by its
// thread id, counts the same time: spinning advances both, and the reading
// by thread id falls between two readings of the other.
func TestThreadClock(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := uint32(syscall.Gettid())
	a, ok1 := ClockNanos(ClockThreadCPUTime)
	x := 0
	for i := 0; i < 20_000_000; i++ {
		x = x*31 + i
	}
	b, ok2 := ClockNanos(ThreadClock(tid))
	c, ok3 := ClockNanos(ClockThreadCPUTime)
	if !ok1 || !ok2 || !ok3 {
		t.Skip("clock_gettime refused here")
	}
	t.Logf("own clock %d, by thread id %d, own clock %d ns (spin result %d)", a, b, c, x&1)
	if !(a < b && b <= c) {
		t.Errorf("readings out of order: %d, %d, %d", a, b, c)
	}
	if _, ok := ClockNanos(ThreadClock(4_000_000)); ok {
		t.Errorf("thread 4000000 (above the usual pid_max) has a clock")
	}
}
