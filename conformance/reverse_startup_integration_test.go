package conformance

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
	"github.com/google/uuid"
)

func init() {
	register(&scenario{
		Name:          "reverse_startup",
		Upstream:      "eventpipe/reverse_startup.cs, native/nullprofiler",
		UpstreamLines: 54,
		CLSID:         "{9C1A6E14-2DEC-45CE-9061-F31964D8884D}",
		NotApplicable: func(rt harness.Runtime) string {
			switch {
			case rt.Major < 3:
				return "no diagnostics server at all before .NET Core 3.0: no diagnostic port to pause start-up, no StartupProfiler command"
			case rt.Major < 5:
				return "diagnostic ports (DOTNET_DiagnosticPorts: the runtime connects out, advertises itself and pauses at start-up until ResumeRuntime) " +
					"arrived in .NET 5 and the Profiler/StartupProfiler command in .NET 6 (dotnet/runtime#52175); 3.1's server only listens and knows AttachProfiler"
			}
			return ""
		},
		Run: runReverseStartup,
		Check: func(t *testing.T, rt harness.Runtime, res harness.Result) {
			// The profiler was initialized before any managed code ran.
			out := res.Stdout
			i, j := strings.Index(out, "profiler: Initialize"), strings.Index(out, "app: Main runs")
			if i < 0 || j < 0 || i > j {
				t.Errorf("the profiler's Initialize does not come before Main\n%s", res.Describe())
			}
		},
	})
}

// runReverseStartup is upstream's reverse start-up test: the test listens
// on a reverse diagnostics port and starts the app, which has no profiler
// variables but DOTNET_DiagnosticPorts naming the port with the suspend
// mode. The runtime connects and advertises itself, then waits; the test
// sends StartupProfiler with the scenario's profiler through the runtime's
// ordinary diagnostics socket (as upstream does), then ResumeRuntime on the
// reverse connection, and the runtime loads the profiler and runs the app.
func runReverseStartup(t *testing.T, rt harness.Runtime, app, lib string, sc *scenario) harness.Result {
	dir, err := os.MkdirTemp("", "clrrv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	ln, err := diag.ListenReverse(filepath.Join(dir, "port"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()

	p := harness.Start(t, rt, app, harness.RunOptions{Env: []string{ln.Env(), "TMPDIR=" + dir}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := ln.Accept(ctx)
	if err != nil {
		p.Kill()
		t.Fatalf("the runtime did not connect to the reverse port: %v\n%s", err, p.Wait().Describe())
	}
	defer conn.Close()
	if conn.PID != p.Pid {
		t.Errorf("the runtime advertised pid %d, started %d", conn.PID, p.Pid)
	}
	t.Logf("advertise: pid %d, cookie %v", conn.PID, conn.Advertise.Cookie)
	// Paused: Main has not run.
	time.Sleep(100 * time.Millisecond)
	if out := p.Stdout(); strings.Contains(out, "app: Main runs") {
		t.Errorf("the app ran before ResumeRuntime:\n%s", out)
	}
	req := diag.StartupRequest{CLSID: uuid.MustParse(strings.Trim(sc.CLSID, "{}")), ProfilerPath: lib}
	// The runtime connects before its start-up thread marks it paused
	// (see diag.ReverseListener.SetStartupProfiler); until then it
	// answers E_INVALIDARG, which before any ResumeRuntime means "not
	// yet". Ask again until it accepts.
	const eInvalidArg = diag.HRESULT(-2147024809) // 0x80070057
	for {
		err := diag.SetStartupProfiler(ctx, p.Pid, req)
		if errors.Is(err, eInvalidArg) && ctx.Err() == nil {
			t.Logf("SetStartupProfiler: %v; again", err)
			time.Sleep(5 * time.Millisecond)
			continue
		}
		if err != nil {
			t.Errorf("SetStartupProfiler: %v", err)
		}
		break
	}
	if err := conn.ResumeRuntime(ctx); err != nil {
		t.Errorf("ResumeRuntime: %v", err)
	}
	return p.Wait()
}
