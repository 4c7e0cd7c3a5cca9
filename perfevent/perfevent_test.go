//go:build linux && amd64

package perfevent

import (
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

//go:noinline
func spinLeaf(n int) int {
	x := 0
	for i := 0; i < n; i++ {
		x = x*31 + i
	}
	return x
}

// threadCPU is the calling thread's CPU time.
func threadCPU() time.Duration {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3 /* CLOCK_THREAD_CPUTIME_ID */, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

//go:noinline
func spinCaller(d time.Duration) int {
	x := 0
	for end := threadCPU() + d; threadCPU() < end; {
		x += spinLeaf(1 << 16)
	}
	return x
}

func funcName(pc uint64) string {
	if f := runtime.FuncForPC(uintptr(pc)); f != nil {
		return f.Name()
	}
	return "?"
}

// A thread of this process spinning for 400 ms of CPU at a 5 ms period
// gives about 80 samples, nearly all with spinLeaf innermost (resolved from
// the sampled IP) and the goroutine's function among its callers (from the
// frame-pointer chain the kernel followed), and the thread's ID. spinLeaf
// keeps no frame pointer (a Go leaf without a frame), so its own caller,
// spinCaller, is the frame the chain skips: what the package comment says
// it cannot see.
// With StackBytes the same holds: the test binary's Go code has no call
// frame information, and the package's own unwinding follows its frame
// pointers as the kernel does.
func TestSampleOwnThread(t *testing.T) {
	for _, sb := range []int{0, 16384} {
		t.Run("StackBytes="+strconv.Itoa(sb), func(t *testing.T) { sampleOwnThread(t, sb) })
	}
}

func sampleOwnThread(t *testing.T, stackBytes int) {
	s, err := New(Options{Period: 5 * time.Millisecond, StackBytes: stackBytes})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	done := make(chan uint32)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tid := uint32(syscall.Gettid())
		if err := s.Add(tid); err != nil {
			t.Error(err)
			close(done)
			return
		}
		spinCaller(400 * time.Millisecond)
		done <- tid
	}()
	tid, ok := <-done
	if !ok {
		t.Skip("perf events not available here")
	}
	var n, leaf, withCaller, otherTID int
	s.Drain(func(smp Sample) {
		n++
		if n == 1 {
			var names []string
			for _, pc := range smp.Stack {
				names = append(names, funcName(pc-1))
			}
			t.Logf("first sample: %v", names)
		}
		if smp.TID != tid {
			otherTID++
		}
		if strings.HasSuffix(funcName(smp.Stack[0]), ".spinLeaf") {
			leaf++
			for _, pc := range smp.Stack[1:] {
				if strings.HasSuffix(funcName(pc-1), ".sampleOwnThread.func1") {
					withCaller++
					break
				}
			}
		}
	})
	c := s.Stats()
	t.Logf("%d samples, %d with spinLeaf innermost, %d of those with the goroutine's function as a caller; counts %+v", n, leaf, withCaller, c)
	if n < 20 || leaf < n*8/10 || withCaller < leaf*9/10 || otherTID != 0 || c.Lost != 0 || c.Threads != 1 {
		t.Errorf("want about 80 samples of the thread, nearly all in spinLeaf under the goroutine's function, none lost")
	}
}
