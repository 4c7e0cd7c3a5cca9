package profiler

import (
	"bytes"
	"io"
	"log/slog"
	"sync"
	"testing"
)

// syncBuffer is a bytes.Buffer safe for concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// captureLog makes the package log into a buffer for the rest of the test.
func captureLog(t *testing.T) *syncBuffer {
	t.Helper()
	b := &syncBuffer{}
	l := slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug}))
	prev := userLogger.Swap(l)
	t.Cleanup(func() { userLogger.Store(prev) })
	return b
}

// resetRegistration forgets any registration, before and after the test.
func resetRegistration(t testing.TB) {
	t.Helper()
	reset := func() {
		registered.Store(nil)
		for slot := range callbackMethods {
			setImpl(slot, false)
		}
	}
	reset()
	t.Cleanup(reset)
}

func mustSlot(t *testing.T, name string) int {
	t.Helper()
	s := slotOf(name)
	if s < 0 {
		t.Fatalf("no callback slot named %s", name)
	}
	return s
}

func newTextLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
