package harness_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// The CLSID testdata/cprof/cprof.c answers to.
const cprofCLSID = "{5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73}"

var helloWant = []string{
	"hello from the clrprof harness",
	"args: one,two",
	"", // corelib: checked separately
	"linq: 4 16 36 64 100",
	"dict: a=3 b=2 c=1",
	"threads: 1000",
	"caught: NullReferenceException",
	"caught: DivideByZeroException",
	"gc: collected",
	"bye",
}

// helloApp compiles the hello app for rt (mcs before .NET 10, Roslyn
// against rt's reference assemblies from 10 on).
func helloApp(t *testing.T, rt harness.Runtime) string {
	return harness.CompileCS(t, []string{"testdata/hello/hello.cs"}, "", harness.For(rt))
}

// checkHello checks the hello app's whole output, including that it ran on
// rt's own framework.
func checkHello(t *testing.T, rt harness.Runtime, res harness.Result) {
	t.Helper()
	res.MustSucceed(t)
	got := res.StdoutLines()
	if len(got) != len(helloWant) {
		t.Fatalf("hello printed %d lines, want %d:\n%s", len(got), len(helloWant), res.Describe())
	}
	for i, want := range helloWant {
		if i == 2 {
			wantLib := filepath.Join(rt.FrameworkDir, "System.Private.CoreLib.dll")
			if got[i] != "corelib: "+wantLib {
				t.Fatalf("line %d: got %q, want corelib: %s (did it run on another runtime?)", i+1, got[i], wantLib)
			}
			continue
		}
		if got[i] != want {
			t.Fatalf("line %d: got %q, want %q\n%s", i+1, got[i], want, res.Describe())
		}
	}
}

func TestRuntimes(t *testing.T) {
	harness.Integration(t)
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	if len(rts) == 0 {
		t.Fatal("no runtime")
	}
	names := map[string]bool{}
	for _, rt := range rts {
		t.Logf("%s", rt)
		if names[rt.Name] {
			t.Errorf("duplicate runtime name %s", rt.Name)
		}
		names[rt.Name] = true
		if !regexp.MustCompile(`^(system-)?(netcore|net)\d+\.\d+\.\d+`).MatchString(rt.Name) {
			t.Errorf("odd runtime name %q", rt.Name)
		}
		if rt.Version != strconv.Itoa(rt.Major)+"."+strconv.Itoa(rt.Minor)+"."+strconv.Itoa(rt.Patch) &&
			!strings.HasPrefix(rt.Version, strconv.Itoa(rt.Major)+"."+strconv.Itoa(rt.Minor)+"."+strconv.Itoa(rt.Patch)+"-") {
			t.Errorf("%s: version %q does not match %d.%d.%d", rt.Name, rt.Version, rt.Major, rt.Minor, rt.Patch)
		}
		if fi, err := os.Stat(rt.DotnetPath); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s: host %s not executable: %v", rt.Name, rt.DotnetPath, err)
		}
		if filepath.Dir(rt.DotnetPath) != rt.Dir {
			t.Errorf("%s: host %s not in Dir %s", rt.Name, rt.DotnetPath, rt.Dir)
		}
		if _, err := os.Stat(filepath.Join(rt.FrameworkDir, "libcoreclr.so")); err != nil {
			t.Errorf("%s: %v", rt.Name, err)
		}
		if rt.FrameworkDir != filepath.Join(rt.Dir, "shared", "Microsoft.NETCore.App", rt.Version) {
			t.Errorf("%s: FrameworkDir %s", rt.Name, rt.FrameworkDir)
		}
	}
}

// TestSetupInstalledEveryRuntime checks that each runtime package listed in
// scripts/setup.sh is unpacked in the cache and found by Runtimes.
func TestSetupInstalledEveryRuntime(t *testing.T) {
	harness.Integration(t)
	if os.Getenv("CLRPROF_RUNTIMES") != "" {
		t.Skip("CLRPROF_RUNTIMES filters the runtimes")
	}
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	root, err := harness.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(root, "scripts", "setup.sh"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile(`^\s*"(npm|pypi) (\S+) (\S+) [0-9a-f]{64} \S+"$`)
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		m := entry.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n++
		dir := filepath.Join(harness.CacheDir(), "runtimes", m[1]+"-"+m[2]+"-"+m[3])
		found := false
		for _, rt := range rts {
			if rt.Dir == dir {
				found = true
				t.Logf("%s %s %s -> %s", m[1], m[2], m[3], rt.Name)
			}
		}
		if !found {
			t.Errorf("%s %s %s: no runtime found in %s", m[1], m[2], m[3], dir)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("found %d runtime packages in setup.sh, want at least 4", n)
	}
}

func TestHelloWorld(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"one", "two"}})
		checkHello(t, rt, res)
		if res.Stderr != "" {
			t.Errorf("unexpected stderr:\n%s", res.Stderr)
		}
	})
}

func behaveApp(t *testing.T, rt harness.Runtime) string {
	return harness.CompileCS(t, []string{"testdata/behave/behave.cs"}, "", harness.For(rt))
}

func TestExitCodeAndStdin(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := behaveApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"exit", "42"}})
		res.MustExit(t, 42)
		res.MustStdoutContain(t, "exiting 42")
		if res.Succeeded() {
			t.Fatal("exit 42 counted as success")
		}

		in := "line one\nline two with ünïcödé\n"
		res = harness.Run(t, rt, app, harness.RunOptions{Args: []string{"echo"}, Stdin: in})
		res.MustSucceed(t)
		if res.Stdout != in {
			t.Fatalf("echo: got %q, want %q", res.Stdout, in)
		}
	})
}

func TestUnhandledExceptionAborts(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := behaveApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"throw"}, ExpectCrash: true})
		res.MustSignal(t, syscall.SIGABRT)
		res.MustStdoutContain(t, "throwing")
		// 2.x says "Unhandled Exception:", 3.0+ "Unhandled exception.".
		res.MustStderrContain(t, "System.InvalidOperationException: behave: thrown on purpose")
		if !strings.Contains(strings.ToLower(res.Stderr), "unhandled exception") {
			t.Fatalf("no unhandled-exception report:\n%s", res.Describe())
		}

		res = harness.Run(t, rt, app, harness.RunOptions{Args: []string{"failfast"}, ExpectCrash: true})
		res.MustSignal(t, syscall.SIGABRT)
		res.MustStderrContain(t, "behave: failfast")
	})
}

func TestTimeoutKillsProcessGroup(t *testing.T) {
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := behaveApp(t, rt)
		const timeout = 3 * time.Second
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"hang"}, Timeout: timeout})
		if !res.TimedOut || !res.Signaled || res.Signal != syscall.SIGKILL {
			t.Fatalf("want a timeout and SIGKILL, got %s:\n%s", res.Status(), res.Describe())
		}
		if res.Succeeded() {
			t.Fatal("timed-out run counted as success")
		}
		if res.Duration < timeout || res.Duration > timeout+20*time.Second {
			t.Fatalf("ran for %v with a %v timeout", res.Duration, timeout)
		}
		// The app's child (/bin/sleep 600) was in its process group: it
		// must be gone too (dead or a zombie waiting for a reaper).
		line := strings.TrimSpace(res.Stdout)
		if !strings.HasPrefix(line, "child ") {
			t.Fatalf("no child pid printed:\n%s", res.Describe())
		}
		pid, err := strconv.Atoi(strings.TrimPrefix(line, "child "))
		if err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !processGone(pid) {
			if time.Now().After(deadline) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("child %d of the timed-out app is still running", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
}

// processGone reports whether pid is no longer running: absent, or a zombie.
func processGone(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) STATE ...; comm may hold spaces, so cut at the last ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && (s[i+2] == 'Z' || s[i+2] == 'X')
}

// buildCProf compiles testdata/cprof/cprof.c, warnings as errors.
func buildCProf(t *testing.T) string {
	t.Helper()
	return harness.BuildCShared(t, []string{"testdata/cprof/cprof.c"}, "-I../include", "-Wall", "-Wextra", "-Werror", "-fvisibility=hidden")
}

var cprofLine = regexp.MustCompile(`(?m)^cprof: (.*)$`)

func cprofLines(res harness.Result) []string {
	var out []string
	for _, m := range cprofLine.FindAllStringSubmatch(res.Stderr, -1) {
		out = append(out, m[1])
	}
	return out
}

var shutdownLine = regexp.MustCompile(`(?m)^cprof: Shutdown modules=(\d+) jit=(\d+)$`)

func shutdownCounts(t *testing.T, res harness.Result) (modules, jit int) {
	t.Helper()
	m := shutdownLine.FindStringSubmatch(res.Stderr)
	if m == nil {
		t.Fatalf("no Shutdown line:\n%s", res.Describe())
	}
	modules, _ = strconv.Atoi(m[1])
	jit, _ = strconv.Atoi(m[2])
	return modules, jit
}

func TestCProfilerLoads(t *testing.T) {
	lib := buildCProf(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			Args:          []string{"one", "two"},
			ProfilerPath:  lib,
			ProfilerCLSID: cprofCLSID,
		})
		checkHello(t, rt, res)
		lines := cprofLines(res)
		t.Logf("profiler said:\n  %s", strings.Join(lines, "\n  "))
		res.MustStderrContain(t, "cprof: DllGetClassObject "+cprofCLSID+" -> 0x00000000\n")

		// Initialize, with at least ICorProfilerInfo8 (.NET Core 2.0's).
		initRe := regexp.MustCompile(`(?m)^cprof: Initialize info=ICorProfilerInfo(\d*) pid=(\d+)$`)
		m := initRe.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("no Initialize line:\n%s", res.Describe())
		}
		if level, _ := strconv.Atoi(m[1]); level < 8 {
			t.Errorf("runtime offers only ICorProfilerInfo%s", m[1])
		}
		modules, _ := shutdownCounts(t, res)
		// CoreLib, the app, System.Runtime, System.Console, System.Linq, ...
		if modules < 4 {
			t.Errorf("only %d ModuleLoadFinished callbacks", modules)
		}
		iInit, iShut := -1, -1
		for i, l := range lines {
			if strings.HasPrefix(l, "Initialize ") && iInit < 0 {
				iInit = i
			}
			if strings.HasPrefix(l, "Shutdown ") {
				iShut = i
			}
		}
		if iInit < 0 || iShut < iInit || iShut != len(lines)-1 {
			t.Errorf("Initialize/Shutdown out of order: %q", lines)
		}
		if n := strings.Count(res.Stderr, "cprof: Initialize "); n != 1 {
			t.Errorf("Initialize called %d times", n)
		}
	})
}

func TestCProfilerWrongCLSID(t *testing.T) {
	lib := buildCProf(t)
	const wrong = "{0BADC0DE-0000-4000-8000-000000000001}"
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			Args:          []string{"one", "two"},
			ProfilerPath:  lib,
			ProfilerCLSID: wrong,
		})
		// The app runs normally ...
		checkHello(t, rt, res)
		// ... the runtime did load the library and ask for that CLSID ...
		res.MustStderrContain(t, "cprof: DllGetClassObject "+wrong+" -> CLASS_E_CLASSNOTAVAILABLE\n")
		// ... and got no profiler.
		res.MustStderrNotContain(t, "cprof: CreateInstance", "cprof: Initialize", "cprof: Shutdown")
	})
}

func TestCProfilerNotEnabled(t *testing.T) {
	lib := buildCProf(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			Args:          []string{"one", "two"},
			ProfilerPath:  lib,
			ProfilerCLSID: cprofCLSID,
			Env:           []string{"CORECLR_ENABLE_PROFILING=0", "DOTNET_ENABLE_PROFILING=0"},
		})
		checkHello(t, rt, res)
		res.MustStderrNotContain(t, "cprof:")
	})
}

func TestCProfilerInitializeFails(t *testing.T) {
	lib := buildCProf(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			Args:          []string{"one", "two"},
			ProfilerPath:  lib,
			ProfilerCLSID: cprofCLSID,
			Env:           []string{"CPROF_INIT_HR=0x80004005"},
		})
		// A profiler whose Initialize fails is dropped; the app runs.
		checkHello(t, rt, res)
		res.MustStderrContain(t, "cprof: Initialize returning 0x80004005\n")
		res.MustStderrNotContain(t, "cprof: Shutdown")
	})
}

func TestCProfilerCrashIsReported(t *testing.T) {
	lib := buildCProf(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: cprofCLSID,
			Env:           []string{"CPROF_CRASH=initialize"},
		})
		res.MustSignal(t, syscall.SIGSEGV)
		res.MustStderrContain(t, "cprof: Initialize crashing on purpose\n")
		if strings.Contains(res.Stdout, "hello") {
			t.Fatalf("app ran after the profiler crashed:\n%s", res.Describe())
		}
		// The crash left evidence: a kept core and gdb's backtrace of
		// the crashing thread, naming the function that faulted.
		if strings.HasPrefix(harness.CorePattern(), "|") {
			t.Skipf("core_pattern pipes cores elsewhere (%s): no core to read here", harness.CorePattern())
		}
		if !res.CoreDumped || res.Core == "" {
			t.Fatalf("no core kept (dumped=%v, core=%q):\n%s", res.CoreDumped, res.Core, res.Describe())
		}
		if _, err := os.Stat(res.Core); err != nil {
			t.Fatalf("kept core: %v", err)
		}
		if !strings.Contains(res.Backtrace, "prof_initialize") || !strings.Contains(res.Describe(), "crash evidence") {
			t.Fatalf("the backtrace does not name the faulting function:\n%s", res.Describe())
		}
		_ = os.Remove(res.Core)
	})
}

func TestDisableReadyToRun(t *testing.T) {
	lib := buildCProf(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := helloApp(t, rt)
		opts := harness.RunOptions{Args: []string{"one", "two"}, ProfilerPath: lib, ProfilerCLSID: cprofCLSID}
		res := harness.Run(t, rt, app, opts)
		checkHello(t, rt, res)
		_, jitOn := shutdownCounts(t, res)

		opts.DisableReadyToRun = true
		res = harness.Run(t, rt, app, opts)
		checkHello(t, rt, res)
		_, jitOff := shutdownCounts(t, res)
		t.Logf("JITCompilationStarted: %d with precompiled code, %d without", jitOn, jitOff)
		if jitOff < 100 || jitOff < 5*jitOn {
			t.Fatalf("DisableReadyToRun: %d JIT compilations (vs %d): the framework was not JIT-compiled", jitOff, jitOn)
		}
	})
}

func TestCompileCSCachesAndReferences(t *testing.T) {
	p1 := harness.CompileCS(t, []string{"testdata/hello/hello.cs"}, "")
	fi1, err := os.Stat(p1)
	if err != nil {
		t.Fatal(err)
	}
	p2 := harness.CompileCS(t, []string{"testdata/hello/hello.cs"}, "")
	fi2, err := os.Stat(p2)
	if err != nil {
		t.Fatal(err)
	}
	if p1 != p2 || !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Fatalf("second compile was not served from the cache: %s (%v) vs %s (%v)", p1, fi1.ModTime(), p2, fi2.ModTime())
	}
	p3 := harness.CompileCS(t, []string{"testdata/hello/hello.cs"}, "", harness.Optimize(), harness.Define("UNUSED_SYMBOL"))
	if p3 == p1 {
		t.Fatal("different options gave the same cached output")
	}

	// A library and an app referencing it, in one directory, compiled for
	// each runtime (by mcs before .NET 10, by Roslyn from 10 on).
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		dir := t.TempDir()
		lib := harness.CompileCS(t, []string{"testdata/greeter/greeter.cs"}, dir, harness.Library(), harness.Unsafe(), harness.For(rt))
		if filepath.Base(lib) != "greeter.dll" || filepath.Dir(lib) != dir {
			t.Fatalf("library at %s", lib)
		}
		app := harness.CompileCS(t, []string{"testdata/greeter/main.cs"}, dir, harness.Reference(lib), harness.OutName("greet.exe"), harness.For(rt))
		if filepath.Base(app) != "greet.exe" {
			t.Fatalf("app at %s", app)
		}
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"harness"}})
		res.MustSucceed(t)
		if got, want := res.Stdout, "Hello, harness! (sum 15)\n"; got != want {
			t.Fatalf("got %q, want %q", got, want)
		}
	})
}

func TestBuildProfilerGo(t *testing.T) {
	// The test's environment must reach go build (as GOEXPERIMENT=cgocheck2
	// does in CI): CGO_CFLAGS defines the mark the library prints.
	t.Setenv("CGO_CFLAGS", os.Getenv("CGO_CFLAGS")+" -DGOPROF_MARK=\"from-env\"")
	lib := harness.BuildProfiler(t, "./internal/harness/testdata/goprof",
		harness.BuildFlags("-ldflags=-X main.flagMark=from-flag"))
	// Not the hello app: its DivideByZeroException kills the process on
	// .NET Core 3.1 and .NET 8 once a Go library is loaded (Go's SIGFPE
	// handling; risks.md item 2), which is the profiler runtime's problem,
	// not the harness's.
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := behaveApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			Args:          []string{"exit", "0"},
			ProfilerPath:  lib,
			ProfilerCLSID: cprofCLSID,
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "exiting 0")
		res.MustStderrContain(t, "goprof: DllGetClassObject cgo-mark=from-env flag-mark=from-flag\n")
	})
}
