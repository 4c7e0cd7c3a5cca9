package profiler

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

// TestQuiesceWaitBusyThread: while another thread of the process spins,
// the wait lasts the whole quiesceDrain; the spinning thread is seen.
func TestQuiesceWaitBusyThread(t *testing.T) {
	var stop atomic.Bool
	started := make(chan int)
	go func() {
		runtime.LockOSThread()
		started <- syscall.Gettid()
		for !stop.Load() {
		}
	}()
	spinner := <-started
	defer stop.Store(true)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	busy, err := otherThreadsRunnable(syscall.Gettid(), make([]byte, 0, 512))
	if err != nil || busy == "" {
		t.Fatalf("otherThreadsRunnable with thread %d spinning = %q, %v; want a thread", spinner, busy, err)
	}
	if w, last := quiesceWait(); w < quiesceDrain || last == "" {
		t.Errorf("quiesceWait with a thread spinning returned after %v (last busy %q); want at least %v", w, last, quiesceDrain)
	}
}

// QuiesceDrain is quiesceDrain for the integration tests (package
// profiler_test).
const QuiesceDrain = quiesceDrain
