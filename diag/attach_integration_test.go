package diag_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

// The CLSID testdata/attachprof registers.
const attachprofCLSID = "9F1C2B7A-4E3D-4A6B-8C5D-1E2F3A4B5C6D"

// The CLSID profiler/testdata/countprof registers.
const countprofCLSID = "7D3A4B12-9E1F-4C6B-8A2D-3F5E6C7B8A91"

const waitLong = time.Minute

func attachprof(t *testing.T) string {
	t.Helper()
	return harness.BuildProfiler(t, "./diag/testdata/attachprof")
}

// attachApp compiles the long-running app for rt.
func attachApp(t *testing.T, rt harness.Runtime) string {
	t.Helper()
	return harness.CompileCS(t, []string{"testdata/attachapp/app.cs"}, "", harness.For(rt))
}

// startApp starts the long-running app without any profiler variables,
// with its own short TMPDIR (where its diagnostics socket goes), and waits
// until it is ready.
func startApp(t *testing.T, rt harness.Runtime, app string) (*harness.Proc, string) {
	t.Helper()
	tmp, err := os.MkdirTemp("", "clrat")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	p := harness.Start(t, rt, app, harness.RunOptions{Env: []string{"TMPDIR=" + tmp}, Timeout: 3 * time.Minute})
	must(t, p.WaitStdout("ready\n", waitLong))
	return p, tmp
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func request(lib string, data string) diag.AttachRequest {
	return diag.AttachRequest{CLSID: uuid.MustParse(attachprofCLSID), ProfilerPath: lib, ClientData: []byte(data)}
}

func attach(t *testing.T, pid int, req diag.AttachRequest) (time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLong)
	defer cancel()
	start := time.Now()
	err := diag.Attach(ctx, pid, req)
	return time.Since(start), err
}

// plantStale leaves in dir what a runtime killed earlier with the same pid
// leaves behind: a socket file named for pid with another key, which nobody
// listens on (connecting to it is refused). Seen in CI: a leftover in /tmp
// from an earlier killed test app whose pid the kernel had handed out
// again was taken for the target's socket.
func plantStale(t *testing.T, dir string, pid int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("dotnet-diagnostic-%d-1-socket", pid))
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	must(t, err)
	l.SetUnlinkOnClose(false)
	must(t, l.Close())
	t.Cleanup(func() { os.Remove(path) })
	return path
}

// command sends a line to the app and waits for the answer that starts
// with want.
func command(t *testing.T, p *harness.Proc, line, want string) {
	t.Helper()
	must(t, p.WriteLine(line))
	must(t, p.WaitStdout(want, waitLong))
}

// detachStallTimeout is how long a detach may take before waitDetached
// calls it stalled.
const detachStallTimeout = 20 * time.Second

// waitDetached waits for attach number n to be detached. .NET Core 3.1
// sometimes never completes a detach the runtime accepted: its detach
// thread keeps polling in ProfilingAPIDetach::ExecuteEvacuationLoop with no
// thread inside the profiler (seen about once in 30 to 60 quick
// attach/detach cycles; never on .NET 8). There waitDetached logs the
// stall, checks that the app still answers, and returns false; the test
// then ends early. Elsewhere a stall fails the test.
func waitDetached(t *testing.T, rt harness.Runtime, p *harness.Proc, n int) bool {
	t.Helper()
	err := p.WaitStderr(fmt.Sprintf("ProfilerDetachSucceeded n=%d ", n), detachStallTimeout)
	if err == nil {
		return true
	}
	if rt.Major != 3 {
		t.Fatal(err)
	}
	t.Logf("KNOWN .NET Core 3.1 DETACH STALL: detach %d accepted but not completed after %v", n, detachStallTimeout)
	command(t, p, "ping", "pong ")
	finish(t, p)
	return false
}

// finish quits the app and checks that it ended normally.
func finish(t *testing.T, p *harness.Proc) harness.Result {
	t.Helper()
	must(t, p.WriteLine("quit"))
	res := p.Wait()
	res.MustSucceed(t)
	res.MustStdoutContain(t, "app done\n")
	res.MustStderrNotContain(t, "panic", "level=ERROR", "Unhandled")
	return res
}

// The scenario: an app started without profiler variables gets a
// profiler attached, which sees its client data and callbacks, detaches,
// and is attached again; the app runs on and exits normally. On runtimes
// without attach (.NET Core 2.x) the client says so and the app is
// untouched.
func TestAttachDetachOnEveryRuntime(t *testing.T) {
	lib := attachprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := attachApp(t, rt)
		p, tmp := startApp(t, rt, app)
		stale := plantStale(t, tmp, p.Pid)
		if !rt.AtLeast(3, 0) {
			_, err := attach(t, p.Pid, request(lib, "jit"))
			t.Logf("attach on %s: %v", rt.Name, err)
			if !errors.Is(err, diag.ErrNotSupported) {
				t.Fatalf("attach to .NET Core %s: %v, want ErrNotSupported", rt.Version, err)
			}
			for _, s := range []string{"NET Core " + rt.Version, "3.0 or later", "libcoreclr.so"} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			// No harm: the app still works and exits normally, and no
			// profiler code ran in it.
			command(t, p, "phase 1", "phase 1 done: one1-one2-one3\n")
			command(t, p, "ping", "pong ")
			res := finish(t, p)
			res.MustStderrNotContain(t, "attachprof:", "clrprof:")
			return
		}

		sock, err := diag.SocketPath(p.Pid)
		must(t, err)
		if filepath.Dir(sock) != tmp {
			t.Errorf("socket %s is not in the app's TMPDIR %s", sock, tmp)
		}
		if sock == stale {
			t.Errorf("SocketPath took the leftover %s, newer than the app's own socket", stale)
		}
		t.Logf("diagnostics socket: %s", sock)

		// A profiler that refuses: the client gets the runtime's refusal,
		// the app is fine, and attaching works afterwards.
		d, err := attach(t, p.Pid, request(lib, "fail"))
		t.Logf("attach with a refusing profiler (%v): %v", d.Round(time.Millisecond), err)
		if !errors.Is(err, diag.ErrRefused) {
			t.Fatalf("attach of a refusing profiler: %v, want ErrRefused", err)
		}
		must(t, p.WaitStderr("attachprof: refusing to attach", waitLong))

		for round := 1; round <= 2; round++ {
			data := fmt.Sprintf("jit round=%d\x00\xff\x01", round)
			d, err := attach(t, p.Pid, request(lib, data))
			must(t, err)
			t.Logf("attach %d took %v", round, d.Round(time.Millisecond))
			// The profiler got its client data, byte for byte.
			must(t, p.WaitStderr(fmt.Sprintf("InitializeForAttach n=%d ", round+1), waitLong))
			if want := fmt.Sprintf("data=%q", data); !strings.Contains(p.Stderr(), want) {
				t.Fatalf("stderr lacks %s:\n%s", want, p.Stderr())
			}
			must(t, p.WaitStderr(fmt.Sprintf("ProfilerAttachComplete n=%d", round+1), waitLong))

			if round == 1 {
				// One profiler at a time.
				_, err := attach(t, p.Pid, request(lib, "jit"))
				t.Logf("second attach while attached: %v", err)
				if !errors.Is(err, diag.ErrRefused) || !errors.Is(err, profiler.CORPROF_E_PROFILER_ALREADY_ACTIVE) {
					t.Fatalf("second attach: %v, want ErrRefused and CORPROF_E_PROFILER_ALREADY_ACTIVE", err)
				}
			}

			// Callbacks: the profiler sees this round's new method compiled.
			command(t, p, fmt.Sprintf("phase %d", round), fmt.Sprintf("phase %d done: ", round))
			must(t, p.WaitStderr(fmt.Sprintf("JITCompilationStarted n=%d Phase%dWork", round+1, round), waitLong))

			// Detach, asked for from within a callback.
			start := time.Now()
			command(t, p, fmt.Sprintf("detach %d", round), fmt.Sprintf("detach %d called: %d", round, round))
			if !waitDetached(t, rt, p, round+1) {
				return
			}
			t.Logf("detach %d took %v", round, time.Since(start).Round(time.Millisecond))
			m := regexp.MustCompile(fmt.Sprintf(`ProfilerDetachSucceeded n=%d jits=(\d+) seen=(\S*)`, round+1)).FindStringSubmatch(p.Stderr())
			if m == nil {
				t.Fatalf("no detach summary:\n%s", p.Stderr())
			}
			t.Logf("round %d: %s JIT compilations seen, methods %s", round, m[1], m[2])
			if want := fmt.Sprintf("Phase%dWork,DetachMarker%d", round, round); m[2] != want {
				t.Errorf("round %d saw %s, want %s", round, m[2], want)
			}
			must(t, p.WaitStderr(fmt.Sprintf("RequestDetach n=%d: <nil>", round+1), waitLong))
		}

		// Detached for good: new methods compile without the profiler.
		command(t, p, "phase 3", "phase 3 done: three1-three2-three3\n")
		command(t, p, "ping", "pong ")
		res := finish(t, p)
		res.MustStderrNotContain(t, "Phase3Work", "attachprof: Shutdown")
		if n := strings.Count(res.Stderr, "ProfilerDetachSucceeded"); n != 2 {
			t.Errorf("%d detaches, want 2", n)
		}
	})
}

// A profiler without InitializeForAttach is refused; every event mask flag
// alone, set by an attached profiler: the runtime's verdict must agree with
// profiler.CheckAttachMask, and SetAttachEventMask names what is not
// allowed.
func TestAttachEventMask(t *testing.T) {
	lib := attachprof(t)
	// profiler/testdata/countprof implements Initialize only.
	countprof := harness.BuildProfiler(t, "./profiler/testdata/countprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := attachApp(t, rt)
		if !rt.AtLeast(3, 0) {
			t.Skipf("no attach on .NET Core %s (TestAttachDetachOnEveryRuntime checks the error)", rt.Version)
		}
		p, _ := startApp(t, rt, app)

		_, err := attach(t, p.Pid, request(lib, "badmask"))
		t.Logf("attach with a disallowed mask: %v", err)
		if !errors.Is(err, diag.ErrRefused) || !errors.Is(err, profiler.CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER) {
			t.Fatalf("attach with a disallowed mask: %v, want ErrRefused and CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER", err)
		}
		must(t, p.WaitStderr("badmask: SetEventMask:", waitLong))
		stderr := p.Stderr()
		for _, want := range []string{
			"badmask: SetAttachEventMask: clrprof: a profiler attached to a running process may not set MonitorEnterLeave on this runtime",
			"badmask: is=true as=true low=MonitorEnterLeave",
			"badmask: SetEventMask: CORPROF_E_UNSUPPORTED_FOR_ATTACHING_PROFILER",
		} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}

		_, err = attach(t, p.Pid, request(lib, "probe"))
		must(t, err)
		must(t, p.WaitStderr("probe: acceptedLow=", waitLong))
		m := regexp.MustCompile(`probe: acceptedLow=(\S+) refusedLow=(\S+) acceptedHigh=(\S+) refusedHigh=(\S+) mismatches=(\d+)`).FindStringSubmatch(p.Stderr())
		if m == nil {
			t.Fatalf("no probe summary:\n%s", p.Stderr())
		}
		t.Logf("%s: runtime accepted low %s refused low %s, accepted high %s refused high %s", rt.Name, m[1], m[2], m[3], m[4])
		if m[5] != "0" {
			t.Errorf("runtime and CheckAttachMask disagree on %s flags:\n%s", m[5], p.Stderr())
		}
		if m[1] == "0x0" || m[2] == "0x0" {
			t.Errorf("the probe accepted or refused nothing: %v", m)
		}
		finish(t, p)

		// A clrprof profiler without InitializeForAttach is not attachable.
		// (In a process of its own: once a Go library is loaded, the SDK
		// declines to start a second Go runtime beside it.)
		p, _ = startApp(t, rt, app)
		_, err = attach(t, p.Pid, diag.AttachRequest{CLSID: uuid.MustParse(countprofCLSID), ProfilerPath: countprof})
		t.Logf("attach of a profiler without InitializeForAttach: %v", err)
		if !errors.Is(err, diag.ErrRefused) || !errors.Is(err, profiler.CORPROF_E_PROFILER_NOT_ATTACHABLE) {
			t.Fatalf("attach of countprof: %v, want ErrRefused and CORPROF_E_PROFILER_NOT_ATTACHABLE", err)
		}
		must(t, p.WaitStderr("does not implement InitializeForAttach; refusing", waitLong))
		finish(t, p)
	})
}

// Attach and detach many times in a row on one process: every cycle works,
// and the app runs on. Logs the cycle time and the target's resident set
// before and after.
func TestAttachDetachRepeatedly(t *testing.T) {
	const cycles = 20
	lib := attachprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := attachApp(t, rt)
		if !rt.AtLeast(3, 0) {
			t.Skipf("no attach on .NET Core %s", rt.Version)
		}
		p, _ := startApp(t, rt, app)
		// The first attach loads the library (and a Go runtime) for good.
		_, err := attach(t, p.Pid, request(lib, "after=10ms"))
		must(t, err)
		if !waitDetached(t, rt, p, 1) {
			return
		}
		rss0 := rss(t, p.Pid)
		start := time.Now()
		for i := 2; i <= cycles+1; i++ {
			_, err := attach(t, p.Pid, request(lib, "after=10ms"))
			must(t, err)
			if !waitDetached(t, rt, p, i) {
				return
			}
		}
		per := time.Since(start) / cycles
		rss1 := rss(t, p.Pid)
		t.Logf("%s: %d attach/detach cycles, %v each; VmRSS %d kB -> %d kB", rt.Name, cycles, per.Round(time.Millisecond), rss0, rss1)
		command(t, p, "phase 4", "phase 4 done: four1-four2-four3\n")
		res := finish(t, p)
		if n := strings.Count(res.Stderr, "RequestDetach n="); n != cycles+1 {
			t.Errorf("%d detach requests, want %d", n, cycles+1)
		}
	})
}

// rss returns the VmRSS of pid in kB.
func rss(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`VmRSS:\s+(\d+) kB`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no VmRSS in %s", b)
	}
	n := 0
	fmt.Sscan(string(m[1]), &n)
	return n
}
