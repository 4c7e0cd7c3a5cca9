package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// DefaultTimeout is how long [Run] lets a program run when
// [RunOptions].Timeout is zero.
const DefaultTimeout = 2 * time.Minute

// outputLimit caps each of stdout and stderr; the first and last halves of
// anything longer are kept.
const outputLimit = 64 << 20

// RunOptions says how [Run] runs a program.
type RunOptions struct {
	// Args are the program's arguments.
	Args []string
	// ProfilerPath is the profiler library to load; empty runs without one.
	ProfilerPath string
	// ProfilerCLSID is the CLSID to ask the profiler for, "{XXXXXXXX-...}".
	// Required with ProfilerPath.
	ProfilerCLSID string
	// DisableReadyToRun makes the runtime JIT the framework instead of
	// using its precompiled code: COMPlus_ReadyToRun=0 and
	// COMPlus_ZapDisable=1 (and DOTNET_ twins).
	DisableReadyToRun bool
	// Env holds extra KEY=VALUE variables, applied last (they win).
	Env []string
	// ConfigProperties are added to the runtimeconfig.json's
	// configProperties (e.g. "System.GC.Server": true).
	ConfigProperties map[string]any
	// AspNetCore runs the app on the ASP.NET Core shared framework
	// (Microsoft.AspNetCore.App, found by [AspNetCoreDir]) beside
	// Microsoft.NETCore.App: the runtimeconfig.json names both.
	AspNetCore bool
	// Timeout bounds the run (default DefaultTimeout); the process group is
	// killed with SIGKILL when it expires.
	Timeout time.Duration
	// Dir is the working directory (default: a fresh temporary directory).
	Dir string
	// Stdin is the program's standard input (default: empty).
	Stdin string
	// ExpectCrash says the run is meant to crash (a demonstration of what
	// happens without a safety measure): its core, if any, is deleted
	// instead of kept and read with gdb.
	ExpectCrash bool
}

// Result is how a run ended and what it printed.
type Result struct {
	// Runtime is the runtime it ran on.
	Runtime Runtime
	// Args is the full command line, host first.
	Args []string
	// Stdout and Stderr are what the program printed.
	Stdout, Stderr string
	// ExitCode is the exit status, or -1 if a signal ended the process.
	ExitCode int
	// Signaled is true when a signal ended the process; Signal is which one
	// (SIGABRT, SIGSEGV, SIGKILL after a timeout, ...).
	Signaled bool
	Signal   syscall.Signal
	// CoreDumped is true when the kernel wrote a core file.
	CoreDumped bool
	// Core is where the core file was kept (under <cache>/cores/), and
	// Backtrace what gdb said about it (every thread's backtrace, the
	// signal, the profiler's signal audit), or why there is none. Both are
	// set only for runs that a signal ended.
	Core, Backtrace string
	// TimedOut is true when the run was killed because its timeout expired.
	TimedOut bool
	// Duration is the wall time from start to exit.
	Duration time.Duration
	// MaxRSS is the process's peak resident set size in bytes, and CPU its
	// user plus system time, both from its rusage (zero if unknown).
	MaxRSS int64
	CPU    time.Duration
}

// Run runs the .NET program app on rt with `dotnet exec --runtimeconfig`,
// waits for it (killing its process group after the timeout) and returns
// how it ended. It fails the test only if the program cannot be started; use
// the Result's Must methods to check the outcome. See the package comment
// for the environment it sets.
func Run(t testing.TB, rt Runtime, app string, opts RunOptions) Result {
	t.Helper()
	cmd, timeout := command(t, "harness.Run", rt, app, opts)
	res := Result{Runtime: rt, Args: cmd.Args}
	cmd.Stdin = strings.NewReader(opts.Stdin)
	var stdout, stderr capBuffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr

	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("harness.Run: %v", err)
	}
	pgid := cmd.Process.Pid
	sockets := diagSockets(pgid, cmd.Env)
	defer removeSockets(sockets)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(timeout)
	var waitErr error
	select {
	case waitErr = <-done:
		timer.Stop()
	case <-timer.C:
		res.TimedOut = true
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		waitErr = <-done
	}
	res.Duration = time.Since(start)
	// Leftover children of the program (same group) go too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)

	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	setExit(t, "harness.Run", &res, cmd.ProcessState, waitErr)
	collectCrash(t, &res, rt.DotnetPath, pgid, cmd.Dir, start, opts)
	t.Logf("ran on %s: %s %s -> %s in %v", rt.Name, filepath.Base(app), strings.Join(opts.Args, " "), res.Status(), res.Duration.Round(time.Millisecond))
	return res
}

// command prepares `dotnet exec` of app on rt as [Run] describes (runtime
// config, environment, working directory, own process group) and returns it
// with the run's timeout. Standard streams are left to the caller. Errors
// fail the test, prefixed with who.
func command(t testing.TB, who string, rt Runtime, app string, opts RunOptions) (*exec.Cmd, time.Duration) {
	t.Helper()
	Integration(t)
	appAbs, err := filepath.Abs(app)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(appAbs); err != nil {
		t.Fatalf("%s: %v", who, err)
	}
	tmp := t.TempDir()

	// runtimeconfig.json with this runtime's exact version.
	props := map[string]any{"System.Globalization.Invariant": true}
	for k, v := range opts.ConfigProperties {
		props[k] = v
	}
	rc := map[string]any{"runtimeOptions": map[string]any{
		"framework":        map[string]any{"name": frameworkName, "version": rt.Version},
		"configProperties": props,
	}}
	if opts.AspNetCore {
		_, v, ok := AspNetCoreDir(rt)
		if !ok {
			t.Fatalf("%s: no %s beside %s", who, aspNetCoreName, rt)
		}
		ro := rc["runtimeOptions"].(map[string]any)
		delete(ro, "framework")
		ro["frameworks"] = []any{
			map[string]any{"name": frameworkName, "version": rt.Version},
			map[string]any{"name": aspNetCoreName, "version": v},
		}
	}
	rcData, err := json.MarshalIndent(rc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	rcPath := filepath.Join(tmp, strings.TrimSuffix(filepath.Base(appAbs), filepath.Ext(appAbs))+".runtimeconfig.json")
	if err := os.WriteFile(rcPath, rcData, 0o644); err != nil {
		t.Fatal(err)
	}

	env := runEnv(opts)
	if opts.ProfilerPath != "" {
		if opts.ProfilerCLSID == "" {
			t.Fatalf("%s: ProfilerPath without ProfilerCLSID", who)
		}
		lib, err := filepath.Abs(opts.ProfilerPath)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(lib); err != nil {
			t.Fatalf("%s: profiler: %v", who, err)
		}
		env = append(env, ProfilerEnv(lib, opts.ProfilerCLSID)...)
	}
	if opts.DisableReadyToRun {
		for _, p := range []string{"COMPlus_", "DOTNET_"} {
			env = append(env, p+"ReadyToRun=0", p+"ZapDisable=1")
		}
	}
	env = append(env, opts.Env...)

	dir := opts.Dir
	if dir == "" {
		dir = filepath.Join(tmp, "cwd")
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if dl, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if d, ok := dl.Deadline(); ok {
			// Leave the test binary time to report rather than be killed
			// by `go test -timeout` with the child still running.
			if left := time.Until(d) - 10*time.Second; left < timeout {
				timeout = max(left, time.Second)
			}
		}
	}

	enableCores()
	args := append([]string{"exec", "--runtimeconfig", rcPath, appAbs}, opts.Args...)
	cmd := exec.Command(rt.DotnetPath, args...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// If something outside the group still holds the pipes, do not wait
	// for it forever.
	cmd.WaitDelay = 10 * time.Second
	return cmd, timeout
}

// setExit records in res how the process ended (ps), failing the test if it
// never started; waitErr is what Wait returned.
func setExit(t testing.TB, who string, res *Result, ps *os.ProcessState, waitErr error) {
	t.Helper()
	if ps == nil {
		t.Fatalf("%s: %v", who, waitErr)
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) && !errors.Is(waitErr, exec.ErrWaitDelay) {
		t.Logf("%s: wait: %v", who, waitErr)
	}
	exitFields(res, ps)
}

// exitFields sets res's ExitCode, Signaled, Signal, CoreDumped, MaxRSS and
// CPU from ps.
func exitFields(res *Result, ps *os.ProcessState) {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		res.MaxRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	res.CPU = ps.UserTime() + ps.SystemTime()
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		res.Signaled, res.Signal, res.ExitCode = true, ws.Signal(), -1
		res.CoreDumped = ws.CoreDump()
	} else {
		res.ExitCode = ws.ExitStatus()
	}
}

// runEnv is the inherited environment without any variable that steers the
// runtime or the host, plus the harness defaults.
func runEnv(opts RunOptions) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		u := strings.ToUpper(k)
		if strings.HasPrefix(u, "CORECLR_") || strings.HasPrefix(u, "COMPLUS_") || strings.HasPrefix(u, "DOTNET_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1")
}

// ProfilerEnv returns the variables that load the profiler library lib
// (-buildmode=c-shared) with CLSID clsid: CORECLR_ENABLE_PROFILING,
// CORECLR_PROFILER and CORECLR_PROFILER_PATH, and their DOTNET_ twins. Run
// sets them from RunOptions; a .NET process started otherwise (StartShop's
// ShopOptions.Env) takes them from here.
func ProfilerEnv(lib, clsid string) []string {
	var env []string
	for _, p := range []string{"CORECLR_", "DOTNET_"} {
		env = append(env, p+"ENABLE_PROFILING=1", p+"PROFILER="+clsid, p+"PROFILER_PATH="+lib)
	}
	return env
}

// Status says how the run ended, in a few words.
func (r Result) Status() string {
	switch {
	case r.TimedOut:
		return "timed out (killed)"
	case r.Signaled:
		s := "killed by signal " + r.Signal.String()
		if r.CoreDumped {
			s += " (core dumped)"
		}
		return s
	default:
		return fmt.Sprintf("exit %d", r.ExitCode)
	}
}

// Succeeded reports whether the program exited with status 0 by itself.
func (r Result) Succeeded() bool {
	return !r.TimedOut && !r.Signaled && r.ExitCode == 0
}

// Describe is a multi-line report: runtime, command, status, and the last
// lines of stdout and stderr.
func (r Result) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "runtime: %s\n", r.Runtime)
	fmt.Fprintf(&b, "command: %s\n", strings.Join(r.Args, " "))
	fmt.Fprintf(&b, "status:  %s after %v\n", r.Status(), r.Duration.Round(time.Millisecond))
	fmt.Fprintf(&b, "--- stdout (last 40 lines) ---\n%s", tail(r.Stdout, 40))
	fmt.Fprintf(&b, "--- stderr (last 40 lines) ---\n%s", tail(r.Stderr, 40))
	if r.Backtrace != "" {
		fmt.Fprintf(&b, "--- crash evidence (core: %s) ---\n%s\n", r.Core, strings.TrimRight(r.Backtrace, "\n"))
	}
	return b.String()
}

func tail(s string, n int) string {
	if s == "" {
		return "(empty)\n"
	}
	s = strings.TrimRight(s, "\n")
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[... %d lines before ...]", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n") + "\n"
}

// MustSucceed fails the test unless the program exited 0 by itself.
func (r Result) MustSucceed(t testing.TB) {
	t.Helper()
	if !r.Succeeded() {
		t.Fatalf("program did not succeed:\n%s", r.Describe())
	}
	if strings.Contains(r.Stderr, GuardLapseMarker) {
		t.Fatalf("the profiler's signal guard lapsed (a test build's check: Go ran in a callback with the runtime's activation signal unblocked):\n%s", r.Describe())
	}
}

// GuardLapseMarker starts the line a test build of a profiler prints at
// Shutdown when guarded calls into Go ended with SIGRTMIN unblocked
// (profiler/dispatch.go); MustSucceed fails a run that printed it.
const GuardLapseMarker = "clrprof-testhooks: guard lapses="

var guardRe = regexp.MustCompile(`msg="shut down" .*activationReblocked=(\d+) guardLapses=(\d+)`)

// GuardCounts reads the signal guard's counts from the SDK's shutdown log
// line (test builds, CLRPROF_LOG_LEVEL=info): how many threads' first
// calls into Go had SIGRTMIN blocked again after the Go runtime bound them
// an M, and how many guarded calls ended with SIGRTMIN unblocked.
func (r Result) GuardCounts(t testing.TB) (reblocked, lapses int) {
	t.Helper()
	m := guardRe.FindStringSubmatch(r.Stderr)
	if m == nil {
		t.Fatalf("no shutdown line with the guard's counts:\n%s", r.Describe())
	}
	reblocked, _ = strconv.Atoi(m[1])
	lapses, _ = strconv.Atoi(m[2])
	return reblocked, lapses
}

// MustExit fails the test unless the program exited with code by itself.
func (r Result) MustExit(t testing.TB, code int) {
	t.Helper()
	if r.TimedOut || r.Signaled || r.ExitCode != code {
		t.Fatalf("want exit %d, got %s:\n%s", code, r.Status(), r.Describe())
	}
}

// MustSignal fails the test unless a signal sig ended the program (and it
// did not time out).
func (r Result) MustSignal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if r.TimedOut || !r.Signaled || r.Signal != sig {
		t.Fatalf("want death by %v, got %s:\n%s", sig, r.Status(), r.Describe())
	}
}

// MustStdoutContain fails the test unless stdout contains every one of subs.
func (r Result) MustStdoutContain(t testing.TB, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.Stdout, s) {
			t.Fatalf("stdout lacks %q:\n%s", s, r.Describe())
		}
	}
}

// MustStderrContain fails the test unless stderr contains every one of subs.
func (r Result) MustStderrContain(t testing.TB, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(r.Stderr, s) {
			t.Fatalf("stderr lacks %q:\n%s", s, r.Describe())
		}
	}
}

// MustStderrNotContain fails the test if stderr contains any of subs.
func (r Result) MustStderrNotContain(t testing.TB, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if strings.Contains(r.Stderr, s) {
			t.Fatalf("stderr has %q:\n%s", s, r.Describe())
		}
	}
}

// StdoutLines returns stdout split into lines, without the final newline.
func (r Result) StdoutLines() []string { return lines(r.Stdout) }

// StderrLines returns stderr split into lines, without the final newline.
func (r Result) StderrLines() []string { return lines(r.Stderr) }

// LastStderrLine is the last line of stderr that starts with prefix
// ("" if none does): a profiler's closing report.
func (r Result) LastStderrLine(prefix string) string {
	line := ""
	for _, l := range r.StderrLines() {
		if strings.HasPrefix(l, prefix) {
			line = l
		}
	}
	return line
}

func lines(s string) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// capBuffer keeps the first and last outputLimit/2 bytes written to it.
type capBuffer struct {
	head    []byte
	tail    []byte
	dropped int64
}

func (b *capBuffer) Write(p []byte) (int, error) {
	n := len(p)
	half := outputLimit / 2
	if room := half - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) > 0 {
		b.tail = append(b.tail, p...)
		if over := len(b.tail) - half; over > half {
			// Amortized: trim only when twice the limit.
			b.dropped += int64(over)
			b.tail = append(b.tail[:0:0], b.tail[over:]...)
		}
	}
	return n, nil
}

func (b *capBuffer) String() string {
	half := outputLimit / 2
	tail := b.tail
	dropped := b.dropped
	if over := len(tail) - half; over > 0 {
		dropped += int64(over)
		tail = tail[over:]
	}
	if dropped == 0 {
		return string(b.head) + string(tail)
	}
	return string(b.head) + fmt.Sprintf("\n[harness: %d bytes dropped]\n", dropped) + string(tail)
}
