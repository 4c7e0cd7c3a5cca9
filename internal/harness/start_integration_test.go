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
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/echo/echo.cs"}, "", harness.For(rt))
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
	rts := harness.NeedsRuntime(t)
	rt := rts[len(rts)-1]
	app := harness.CompileCS(t, []string{"testdata/echo/echo.cs"}, "", harness.For(rt))
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

// A runtime killed before it can shut down leaves its diagnostics socket
// behind; the harness removes it, so that a later process given the same
// pid does not find it (seen in CI: a .NET Core 2.1 app, which makes no
// socket, was taken to have one that refused connections). Runtimes from
// .NET Core 3.0 make the socket; 2.x make none.
func TestKilledRuntimeLeavesNoSocket(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/echo/echo.cs"}, "", harness.For(rt))
		if !rt.AtLeast(3, 0) {
			t.Skipf(".NET Core %s makes no diagnostics socket", rt.Version)
		}
		tmp := t.TempDir()
		p := harness.Start(t, rt, app, harness.RunOptions{Env: []string{"TMPDIR=" + tmp}})
		if err := p.WaitStdout("ready\n", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		prefix := "dotnet-diagnostic-" + strconv.Itoa(p.Pid) + "-"
		sockets := func() []string {
			var names []string
			ents, _ := os.ReadDir(tmp)
			for _, e := range ents {
				if strings.HasPrefix(e.Name(), prefix) {
					names = append(names, e.Name())
				}
			}
			return names
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(sockets()) == 0 {
			if time.Now().After(deadline) {
				t.Fatalf("no %s* in %s while the app runs", prefix, tmp)
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("while running: %v", sockets())
		p.Kill()
		res := p.Wait()
		res.MustSignal(t, syscall.SIGKILL)
		if left := sockets(); len(left) != 0 {
			t.Errorf("after SIGKILL: %v left in %s", left, tmp)
		}
	})
}
