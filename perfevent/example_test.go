//go:build linux && amd64

package perfevent_test

import (
	"fmt"
	"runtime"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/perfevent"
)

// Sample one thread of the process (here a goroutine locked to its
// thread) every millisecond of its CPU time, then read its samples: each
// is the thread's instruction pointer and the return addresses of its
// frame-pointer call chain.
func Example() {
	s, err := perfevent.New(perfevent.Options{Period: time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.Add(uint32(syscall.Gettid())); err != nil {
			fmt.Println(err) // perf events refused here
			return
		}
		x := 0
		for i := 0; i < 50_000_000; i++ {
			x = x*31 + i
		}
		_ = x
	}()
	<-done
	n := 0
	s.Drain(func(smp perfevent.Sample) {
		if n == 0 {
			fn := runtime.FuncForPC(uintptr(smp.Stack[0]))
			fmt.Println("thread", smp.TID, "was in", fn.Name())
		}
		n++
	})
	fmt.Println(n, "samples;", s.Stats().Lost, "lost")
}

// With StackBytes the kernel copies each sample's registers and the top 16
// KiB of the thread's stack, and Drain unwinds the copy: by the call frame
// information of native code (exact where the kernel's frame-pointer chains
// lose the callers of code built without frame pointers) and by frame
// pointers elsewhere. A stack deeper than the copy ends early, and says so.
func Example_stackBytes() {
	s, err := perfevent.New(perfevent.Options{Period: time.Millisecond, StackBytes: 16 << 10})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := s.Add(uint32(syscall.Gettid())); err != nil {
			fmt.Println(err)
			return
		}
		x := 0
		for i := 0; i < 50_000_000; i++ {
			x = x*31 + i
		}
		_ = x
	}()
	<-done
	var short int
	s.Drain(func(smp perfevent.Sample) {
		if smp.Short {
			short++ // the outer frames were beyond the 16 KiB copied
		}
	})
	c := s.Stats()
	fmt.Println(c.Lost, "lost,", short, "cut short,", c.Stopped, "stopped at a frame it cannot follow")
}
