package harness_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

func TestStart(t *testing.T) {
	app := harness.CompileCS(t, []string{"testdata/echo/echo.cs"}, "")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		p := harness.Start(t, rt, app, harness.RunOptions{})
		if err := p.WaitStdout("ready\n", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		// Pid is the .NET process itself, running this app.
		cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(p.Pid) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cmdline), "echo.exe") {
			t.Errorf("pid %d runs %q", p.Pid, cmdline)
		}
		if p.Exited() {
			t.Fatal("exited already")
		}
		if err := p.WriteLine("hello"); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitStdout("echo: hello\n", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		// Something that never comes: an error naming it, promptly.
		if err := p.WaitStdout("never printed", 200*time.Millisecond); err == nil || !strings.Contains(err.Error(), "never printed") {
			t.Errorf("WaitStdout of a missing string: %v", err)
		}
		if err := p.WriteLine("exit 3"); err != nil {
			t.Fatal(err)
		}
		res := p.Wait()
		res.MustExit(t, 3)
		res.MustStdoutContain(t, "ready\necho: hello\nbye\n")
		if !p.Exited() {
			t.Error("Exited is false after Wait")
		}
		// After the end, waiting for output reports the exit.
		if err := p.WaitStdout("never printed", time.Minute); err == nil || !strings.Contains(err.Error(), "exit 3") {
			t.Errorf("WaitStdout after exit: %v", err)
		}
	})
}

func TestStartEOFAndTimeout(t *testing.T) {
	app := harness.CompileCS(t, []string{"testdata/echo/echo.cs"}, "")
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	rt := rts[len(rts)-1]
	// Wait closes stdin: the app sees end of file and exits 0.
	p := harness.Start(t, rt, app, harness.RunOptions{})
	res := p.Wait()
	res.MustSucceed(t)
	res.MustStdoutContain(t, "ready\neof\n")

	// A program that outlives its timeout is killed with its group.
	p = harness.Start(t, rt, app, harness.RunOptions{Timeout: 3 * time.Second})
	if err := p.WaitStdout("ready\n", 30*time.Second); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if !p.Exited() {
		t.Fatal("still running after its timeout")
	}
	res = p.Wait()
	if !res.TimedOut || res.Signal != syscall.SIGKILL {
		t.Fatalf("want a timeout kill, got %s", res.Status())
	}
}
