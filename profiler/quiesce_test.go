package profiler

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/clrprof/clrprof/internal/testspin"
)

// TestQuiesceWaitBusyThread: while another thread of the process spins,
// the wait lasts the whole quiesceDrain; the spinning thread is seen.
func TestQuiesceWaitBusyThread(t *testing.T) {
	// The busy thread is one of C (testspin): a spinning goroutine is
	// preempted by Go, and its locked thread then sleeps until the
	// goroutine runs again, which under load let quiesceWait return after
	// 3.5 ms (seen 2026-12-06, the machine's two cores shared with other
	// test runs).
	spinner, stop, err := testspin.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	busy, err := otherThreadsRunnable(syscall.Gettid(), make([]byte, 0, 512))
	if err != nil || busy == "" {
		t.Fatalf("otherThreadsRunnable with thread %d spinning = %q, %v; want a thread", spinner, busy, err)
	}
	if w, last := quiesceWait(); w < quiesceDrain || last == "" {
		t.Errorf("quiesceWait with thread %d spinning returned after %v (last busy %q); want at least %v", spinner, w, last, quiesceDrain)
	}
}

// QuiesceDrain is quiesceDrain for the integration tests (package
// profiler_test).
const QuiesceDrain = quiesceDrain
