package profiler

import (
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

func TestTaskState(t *testing.T) {
	for _, c := range []struct {
		line string
		want byte
		ok   bool
	}{
		{"4242 (dotnet) S 1 4242 4242 0 -1", 'S', true},
		{"4243 (.NET Tiered Com) R 1 4242", 'R', true},
		{"4244 (a) b) (c) D 1", 'D', true},
		{"4245 (x)", 0, false},
		{"4246 x S 1", 0, false},
		{"", 0, false},
	} {
		got, ok := taskState([]byte(c.line))
		if got != c.want || ok != c.ok {
			t.Errorf("taskState(%q) = %q, %v; want %q, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

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
