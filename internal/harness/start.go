package harness

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Proc is a program started by [Start] that may still be running: a test
// talks to it through its standard input, watches its output, and finally
// waits for it.
type Proc struct {
	// Pid is the process id of the `dotnet` host, which is the .NET process
	// itself (and the leader of its process group).
	Pid int

	t       testing.TB
	rt      Runtime
	args    []string
	stdin   io.WriteCloser
	out     *watchBuffer
	err     *watchBuffer
	started time.Time
	timeout time.Duration
	done    chan struct{} // closed when the process has been reaped
	waitErr error
	// startErr is set when Wait returned without a process state.
	startErr error
	killed   bool // the timeout expired and Proc killed the group
	mu       sync.Mutex
	result   *Result
}

// Start starts app on rt exactly as [Run] would (same environment, runtime
// config, fresh working directory, own process group) but returns at once.
// opts.Stdin is ignored: write to the program with [Proc.WriteLine] and
// [Proc.CloseStdin]. The timeout (opts.Timeout, default DefaultTimeout)
// runs from the start; when it expires the process group is killed. If the
// test ends without [Proc.Wait], the group is killed then.
func Start(t testing.TB, rt Runtime, app string, opts RunOptions) *Proc {
	t.Helper()
	cmd, timeout := command(t, "harness.Start", rt, app, opts)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("harness.Start: %v", err)
	}
	p := &Proc{
		t: t, rt: rt, args: cmd.Args, stdin: stdin,
		out: newWatchBuffer(), err: newWatchBuffer(),
		timeout: timeout, done: make(chan struct{}),
	}
	cmd.Stdout, cmd.Stderr = p.out, p.err
	p.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness.Start: %v", err)
	}
	p.Pid = cmd.Process.Pid
	sockets := diagSockets(p.Pid, cmd.Env)
	go func() {
		p.waitErr = cmd.Wait()
		// Leftover children of the program (same group) go too.
		_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		removeSockets(sockets)
		p.result = &Result{Runtime: rt, Args: p.args, Duration: time.Since(p.started)}
		if ps := cmd.ProcessState; ps != nil {
			exitFields(p.result, ps)
			p.mu.Lock()
			p.result.TimedOut = p.killed
			p.mu.Unlock()
			collectCrash(t, p.result, rt.DotnetPath, p.Pid, cmd.Dir, p.started, opts)
		} else {
			p.result.ExitCode, p.startErr = -1, p.waitErr
		}
		close(p.done)
	}()
	go func() {
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-p.done:
		case <-timer.C:
			p.mu.Lock()
			p.killed = true
			p.mu.Unlock()
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
		}
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
			<-p.done
		}
	})
	t.Logf("started on %s: %s (pid %d)", rt.Name, strings.Join(append([]string{filepath.Base(app)}, opts.Args...), " "), p.Pid)
	return p
}

// WriteLine writes s and a newline to the program's standard input.
func (p *Proc) WriteLine(s string) error {
	_, err := io.WriteString(p.stdin, s+"\n")
	return err
}

// CloseStdin closes the program's standard input (it reads end of file).
func (p *Proc) CloseStdin() error { return p.stdin.Close() }

// Stdout and Stderr return what the program printed so far.
func (p *Proc) Stdout() string { return p.out.String() }

// Stderr returns what the program wrote to stderr so far.
func (p *Proc) Stderr() string { return p.err.String() }

// Exited reports whether the program has ended.
func (p *Proc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// WaitStdout waits until the program's stdout contains sub and returns
// nil, or returns an error (with the output so far) if the program ends or
// timeout passes first.
func (p *Proc) WaitStdout(sub string, timeout time.Duration) error {
	return p.waitFor(p.out, "stdout", sub, timeout)
}

// WaitStderr is WaitStdout for stderr.
func (p *Proc) WaitStderr(sub string, timeout time.Duration) error {
	return p.waitFor(p.err, "stderr", sub, timeout)
}

func (p *Proc) waitFor(b *watchBuffer, name, sub string, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s, changed := b.snapshot()
		if strings.Contains(s, sub) {
			return nil
		}
		select {
		case <-changed:
		case <-p.done:
			if s, _ := b.snapshot(); strings.Contains(s, sub) {
				return nil
			}
			return fmt.Errorf("pid %d ended (%s) before its %s showed %q:\n%s", p.Pid, p.result.Status(), name, sub, p.describe())
		case <-deadline.C:
			return fmt.Errorf("pid %d: no %q on %s after %v:\n%s", p.Pid, sub, name, timeout, p.describe())
		}
	}
}

func (p *Proc) describe() string {
	return fmt.Sprintf("--- stdout (last 40 lines) ---\n%s--- stderr (last 40 lines) ---\n%s", tail(p.Stdout(), 40), tail(p.Stderr(), 40))
}

// Wait closes the program's standard input, waits for it to end (until the
// timeout given to Start, after which its process group is killed) and
// returns how it ended, as [Run] does.
func (p *Proc) Wait() Result {
	p.t.Helper()
	_ = p.stdin.Close()
	<-p.done
	if p.startErr != nil {
		p.t.Fatalf("harness.Start: wait: %v", p.startErr)
	}
	res := *p.result
	p.mu.Lock()
	res.TimedOut = p.killed
	p.mu.Unlock()
	res.Stdout, res.Stderr = p.Stdout(), p.Stderr()
	p.t.Logf("ran on %s: pid %d -> %s in %v", p.rt.Name, p.Pid, res.Status(), res.Duration.Round(time.Millisecond))
	return res
}

// Kill sends SIGKILL to the program's process group.
func (p *Proc) Kill() { _ = syscall.Kill(-p.Pid, syscall.SIGKILL) }

// watchBuffer is a capBuffer that can be read while it is written, with a
// channel closed at every write.
type watchBuffer struct {
	mu      sync.Mutex
	buf     capBuffer
	changed chan struct{}
}

func newWatchBuffer() *watchBuffer { return &watchBuffer{changed: make(chan struct{})} }

func (b *watchBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, err := b.buf.Write(p)
	close(b.changed)
	b.changed = make(chan struct{})
	return n, err
}

func (b *watchBuffer) String() string {
	s, _ := b.snapshot()
	return s
}

// snapshot returns the contents and a channel closed at the next write.
func (b *watchBuffer) snapshot() (string, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String(), b.changed
}
