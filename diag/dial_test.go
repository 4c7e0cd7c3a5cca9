package diag

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A runtime creates its socket file (bind) a moment before it listens: a
// connection refused in between is tried again while the process lives,
// and given up at once for a process that is gone.
func TestDialSocketWaitsForListen(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "s")
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	// Bound, not listening, the process gone: refused at once, not tried
	// again (trying again lasts listenGrace before it gives up, so an
	// answer sooner than that was the first one). The dead process is
	// made before the clock starts: forking on a loaded machine took
	// 680 ms once, counted as the dial's.
	pid := deadPID(t)
	start := time.Now()
	if _, err := dialSocket(ctx, sock, pid); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dead process: %v, want ECONNREFUSED", err)
	}
	if d := time.Since(start); d >= listenGrace {
		t.Errorf("dead process: gave up after %v, the retry window (%v): it was tried again", d, listenGrace)
	}

	// Bound, listening 50 ms later, the process alive: connected.
	go func() {
		time.Sleep(50 * time.Millisecond)
		syscall.Listen(fd, 1)
	}()
	conn, err := dialSocket(ctx, sock, os.Getpid())
	if err != nil {
		t.Fatalf("live process, listening late: %v", err)
	}
	conn.Close()
}

// deadPID is the pid of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	p, err := os.StartProcess("/bin/true", []string{"true"}, &os.ProcAttr{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	return p.Pid
}
