package profiler_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

// The CLSID testdata/countprof registers.
const countprofCLSID = "{7D3A4B12-9E1F-4C6B-8A2D-3F5E6C7B8A91}"

// countprof builds testdata/countprof (Go's build cache makes repeats cheap).
func countprof(t *testing.T) string {
	t.Helper()
	return harness.BuildProfiler(t, "./profiler/testdata/countprof")
}

func app(t *testing.T, rt harness.Runtime) string {
	return harness.CompileCS(t, []string{"testdata/app/app.cs"}, "", harness.For(rt))
}

func checkApp(t *testing.T, res harness.Result) {
	t.Helper()
	res.MustSucceed(t)
	res.MustStdoutContain(t, "work: ", "app done\n")
}

var shutdownRe = regexp.MustCompile(`(?m)^countprof: Shutdown modules=(\d+) jits=(\d+)$`)

func shutdownCounts(t *testing.T, res harness.Result) (modules, jits int) {
	t.Helper()
	m := shutdownRe.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no Shutdown line:\n%s", res.Describe())
	}
	modules, _ = strconv.Atoi(m[1])
	jits, _ = strconv.Atoi(m[2])
	return modules, jits
}

func TestProfilerLoadsOnEveryRuntime(t *testing.T) {
	lib := countprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: countprofCLSID,
			Env:           []string{"CLRPROF_LOG_LEVEL=debug"},
		})
		checkApp(t, res)
		res.MustStderrContain(t, "countprof: Initialize info=")
		modules, jits := shutdownCounts(t, res)
		t.Logf("%s: modules=%d jits=%d", rt.Name, modules, jits)
		if modules < 3 || jits < 1 {
			t.Errorf("modules=%d jits=%d, want at least 3 and 1", modules, jits)
		}
		// Nothing from the SDK above DEBUG/INFO: no warnings, no errors.
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "clrprof: ") && (strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR")) {
				t.Errorf("SDK complained: %s", l)
			}
		}
		// What the signal audit saw, for the record.
		var audit []string
		for _, l := range res.StderrLines() {
			if strings.Contains(l, "signal audit") {
				audit = append(audit, l)
			}
		}
		t.Logf("signal audit on %s:\n  %s", rt.Name, strings.Join(audit, "\n  "))
		res.MustStderrContain(t, "signal audit: done")
		// Every runtime here installs its activation handler (SIGRTMIN)
		// before it loads the profiler; the Go runtime added SA_ONSTACK to
		// it, and the audit took it off again (newFlags is read back).
		restored := regexp.MustCompile(`msg="signal audit: gave a handler its flags back[^"]*" signal=SIGRTMIN\(\d+\) handler="[^"]*libcoreclr\.so" flags=\S*SA_ONSTACK\S* newFlags=(\S+)`)
		m := restored.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no restoration of SIGRTMIN's flags logged:\n%s", res.Describe())
		}
		if strings.Contains(m[1], "SA_ONSTACK") || !strings.Contains(m[1], "SA_SIGINFO") || !strings.Contains(m[1], "SA_RESTART") {
			t.Errorf("SIGRTMIN flags after the audit: %s", m[1])
		}
		// SIGFPE and SIGBUS are CoreCLR's again, with its own flags (no
		// SA_ONSTACK); SIGSEGV goes through the router.
		for _, sig := range []string{"SIGFPE", "SIGBUS"} {
			re := regexp.MustCompile(`msg="signal audit: gave the signal back[^"]*" signal=` + sig + ` handler="[^"]*libcoreclr\.so" flags=\S+ newFlags=(\S+)`)
			if m := re.FindStringSubmatch(res.Stderr); m == nil {
				t.Errorf("no reclaiming of %s logged", sig)
			} else if strings.Contains(m[1], "SA_ONSTACK") {
				t.Errorf("%s flags after the audit: %s", sig, m[1])
			}
		}
		res.MustStderrContain(t, `msg="signal audit: routed the signal`)
	})
}

func TestProfilerWrongCLSID(t *testing.T) {
	lib := countprof(t)
	const wrong = "{0BADC0DE-0000-4000-8000-000000000001}"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: wrong,
		})
		checkApp(t, res)
		// Logged at the default level, naming both CLSIDs ...
		res.MustStderrContain(t, "clrprof: ", "level=WARN", "requested="+wrong, "registered="+countprofCLSID)
		// ... and no profiler ran.
		res.MustStderrNotContain(t, "countprof: Initialize", "countprof: Shutdown")
	})
}

// A callback that panics, or faults in a way Go turns into a panic (a nil
// dereference is a SIGSEGV in Go code and must reach Go's handler through
// the SIGSEGV router; an integer division by zero is checked by Go), is
// recovered and logged, and the app completes.
func TestProfilerPanickingCallback(t *testing.T) {
	lib := countprof(t)
	faults := []struct{ mode, msg string }{
		{"panic", "deliberate panic in JITCompilationStarted"},
		{"nil", "invalid memory address or nil pointer dereference"},
		{"divide", "integer divide by zero"},
	}
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		for _, f := range faults {
			res := harness.Run(t, rt, a, harness.RunOptions{
				ProfilerPath:  lib,
				ProfilerCLSID: countprofCLSID,
				Env:           []string{"COUNTPROF_MISBEHAVE=" + f.mode},
			})
			checkApp(t, res)
			res.MustStderrContain(t,
				"level=ERROR",
				"panic in JITCompilationStarted",
				f.msg,
				"main.(*countprof).JITCompilationStarted", // the stack
			)
			// The profiler kept working after the panic.
			_, jits := shutdownCounts(t, res)
			if jits < 10 {
				t.Errorf("%s: only %d JIT callbacks after the panic", f.mode, jits)
			}
		}
	})
}

// runtime.Goexit in a callback cannot be contained: the Go runtime aborts
// the process. This test pins that documented behaviour.
func TestProfilerGoexitInCallbackAbortsProcess(t *testing.T) {
	lib := countprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		a := app(t, rt)
		res := harness.Run(t, rt, a, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: countprofCLSID,
			Env:           []string{"COUNTPROF_MISBEHAVE=goexit"},
			ExpectCrash:   true,
		})
		if res.Succeeded() {
			t.Fatalf("the app survived runtime.Goexit in a callback; update the documentation:\n%s", res.Describe())
		}
		res.MustStderrContain(t, "runtime.Goexit called in a thread that was not created by the Go runtime")
	})
}
