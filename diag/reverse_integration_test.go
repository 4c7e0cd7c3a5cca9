package diag_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

// A runtime started with a suspending reverse diagnostics port connects to
// the test's listener, advertises its pid, and waits; the test sets the
// start-up profiler over that connection (the conformance scenario
// reverse_startup uses the ordinary socket instead), accepts the runtime's
// next connection, resumes it there, and the runtime loads the profiler at
// start-up and runs the app. Afterwards StartupProfiler is refused: the
// runtime is no longer paused. .NET Core 3.1 ignores the port and says it
// does not know the command; 2.x has no diagnostics socket.
func TestReverseStartupProfiler(t *testing.T) {
	countprof := harness.BuildProfiler(t, "./profiler/testdata/countprof")
	req := diag.StartupRequest{CLSID: uuid.MustParse(countprofCLSID), ProfilerPath: countprof}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := attachApp(t, rt)
		tmp, err := os.MkdirTemp("", "clrrv")
		must(t, err)
		t.Cleanup(func() { os.RemoveAll(tmp) })
		ln, err := diag.ListenReverse(filepath.Join(tmp, "port"))
		must(t, err)
		defer ln.Close()
		p := harness.Start(t, rt, app, harness.RunOptions{Env: []string{ln.Env(), "TMPDIR=" + tmp}, Timeout: 3 * time.Minute})
		ctx, cancel := context.WithTimeout(context.Background(), waitLong)
		defer cancel()

		if !rt.AtLeast(5, 0) {
			// The port is not used: the app runs at once.
			must(t, p.WaitStdout("ready\n", waitLong))
			short, cancelShort := context.WithTimeout(ctx, 500*time.Millisecond)
			_, err := ln.Accept(short)
			cancelShort()
			if !errors.Is(err, diag.ErrTimeout) {
				t.Errorf("Accept on %s: %v, want ErrTimeout (no connection)", rt.Name, err)
			}
			// A leftover socket of an earlier process with the same pid
			// is not taken for the app's (it has none).
			plantStale(t, tmp, p.Pid)
			err = diag.SetStartupProfiler(ctx, p.Pid, req)
			t.Logf("SetStartupProfiler on %s: %v", rt.Name, err)
			if !errors.Is(err, diag.ErrNotSupported) {
				t.Errorf("SetStartupProfiler on %s: %v, want ErrNotSupported", rt.Name, err)
			} else if want := "NET Core " + rt.Version + " "; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "needs .NET 6") {
				t.Errorf("error %q does not say the target runs %s and that .NET 6 is needed", err, want)
			}
			res := finish(t, p)
			res.MustStderrNotContain(t, "countprof:")
			return
		}

		c1, err := ln.Accept(ctx)
		must(t, err)
		t.Logf("advertise: pid %d cookie %v", c1.PID, c1.Advertise.Cookie)
		if c1.PID != p.Pid {
			t.Errorf("advertised pid %d, started %d", c1.PID, p.Pid)
		}
		c2, err := ln.SetStartupProfiler(ctx, c1, req)
		must(t, err)
		if c2.PID != c1.PID || c2.Advertise.Cookie != c1.Advertise.Cookie {
			t.Errorf("second advertise %+v differs from the first %+v", c2.Advertise, c1.Advertise)
		}
		if strings.Contains(p.Stdout(), "ready") {
			t.Errorf("the app ran before ResumeRuntime")
		}
		must(t, c2.ResumeRuntime(ctx))
		must(t, p.WaitStdout("ready\n", waitLong))
		must(t, p.WaitStderr("countprof: Initialize", waitLong))

		err = diag.SetStartupProfiler(ctx, p.Pid, req)
		t.Logf("SetStartupProfiler after resume: %v", err)
		if !errors.Is(err, diag.ErrRefused) || !errors.Is(err, profiler.E_INVALIDARG) {
			t.Errorf("SetStartupProfiler after resume: %v, want ErrRefused with E_INVALIDARG", err)
		}
		command(t, p, "phase 1", "phase 1 done: ")
		res := finish(t, p)
		res.MustStderrContain(t, "countprof: Shutdown")
	})
}
