package harness

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// recTB is a testing.TB that records a Skip or a failure instead of acting
// on the real test; each ends the calling goroutine as the real ones do.
type recTB struct {
	testing.TB
	skipped, failed bool
	msg             string
}

func (r *recTB) Helper() {}
func (r *recTB) Skip(args ...any) {
	r.skipped, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recTB) Skipf(format string, args ...any) { r.Skip(fmt.Sprintf(format, args...)) }
func (r *recTB) Fatal(args ...any) {
	r.failed, r.msg = true, fmt.Sprint(args...)
	runtime.Goexit()
}
func (r *recTB) Fatalf(format string, args ...any) { r.Fatal(fmt.Sprintf(format, args...)) }

// call runs f with a fresh recTB wrapping t on a goroutine of its own and
// returns what f did to it.
func call(t *testing.T, f func(tb testing.TB)) *recTB {
	r := &recTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r
}

// withoutRuntimes gives the test an empty cache, no DOTNET_ROOT, a PATH with
// no dotnet and fresh runtime discovery and setup state (restored after),
// and returns the cache directory.
func withoutRuntimes(t *testing.T) string {
	cache := t.TempDir()
	t.Setenv("CLRPROF_CACHE", cache)
	t.Setenv("DOTNET_ROOT", "")
	t.Setenv("CLRPROF_RUNTIMES", "")
	t.Setenv("PATH", t.TempDir())
	rtMu.Lock()
	setupMu.Lock()
	saved := []any{rtDone, rtCached, rtErr, setupRan, setupError}
	rtDone, rtCached, rtErr, setupRan, setupError = false, nil, nil, false, nil
	setupMu.Unlock()
	rtMu.Unlock()
	t.Cleanup(func() {
		rtMu.Lock()
		setupMu.Lock()
		rtDone, setupRan = saved[0].(bool), saved[3].(bool)
		rtCached, _ = saved[1].([]Runtime)
		rtErr, _ = saved[2].(error)
		setupError, _ = saved[4].(error)
		setupMu.Unlock()
		rtMu.Unlock()
	})
	return cache
}

// setShort sets -test.short to v for the rest of the test.
func setShort(t *testing.T, v bool) {
	old := flag.Lookup("test.short").Value.String()
	if err := flag.Set("test.short", fmt.Sprint(v)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set("test.short", old) })
	if Short() != v || testing.Short() != v {
		t.Fatalf("after setting -test.short=%v: Short() = %v, testing.Short() = %v", v, Short(), testing.Short())
	}
}

// noSystemRuntime skips t when this machine has a system dotnet in a fixed
// location (which withoutRuntimes cannot hide).
func noSystemRuntime(t *testing.T) {
	if hosts := systemHosts(); len(hosts) > 0 {
		for _, h := range hosts {
			if len(runtimesIn(h, "system", "system-")) > 0 {
				t.Skipf("a system runtime is installed at %s: the no-runtime case cannot be shown here", h)
			}
		}
	}
}

// TestShortSkipsIntegrationAndInstallsNothing checks that under -short
// every harness entry point of an integration test skips it with
// ShortSkipMessage before doing anything, and that looking for runtimes
// installs nothing: scripts/setup.sh does not run, the cache stays empty.
func TestShortSkipsIntegrationAndInstallsNothing(t *testing.T) {
	cache := withoutRuntimes(t)
	setShort(t, true)

	ran := false
	entries := map[string]func(tb testing.TB){
		"Integration":  func(tb testing.TB) { Integration(tb) },
		"NeedsRuntime": func(tb testing.TB) { NeedsRuntime(tb); ran = true },
		"CompileCS":    func(tb testing.TB) { CompileCS(tb, []string{"testdata/hello/hello.cs"}, ""); ran = true },
		"BuildProfiler": func(tb testing.TB) {
			BuildProfiler(tb, "./internal/harness/testdata/nonexistent")
			ran = true
		},
		"BuildCShared": func(tb testing.TB) { BuildCShared(tb, []string{"nonexistent.c"}); ran = true },
		"Run": func(tb testing.TB) {
			Run(tb, Runtime{Name: "none", DotnetPath: "/nonexistent/dotnet"}, "nonexistent.dll", RunOptions{})
			ran = true
		},
		"Start": func(tb testing.TB) {
			Start(tb, Runtime{Name: "none", DotnetPath: "/nonexistent/dotnet"}, "nonexistent.dll", RunOptions{})
			ran = true
		},
	}
	for name, f := range entries {
		r := call(t, f)
		if !r.skipped || r.failed || r.msg != ShortSkipMessage {
			t.Errorf("%s under -short: skipped %v, failed %v, message %q; want a skip with %q", name, r.skipped, r.failed, r.msg, ShortSkipMessage)
		}
	}
	if ran {
		t.Error("an entry point went on after skipping")
	}

	// ForEachRuntime takes a *testing.T: its subtest must skip, and fn
	// must not run.
	called := false
	t.Run("ForEachRuntime", func(t *testing.T) {
		ForEachRuntime(t, func(*testing.T, Runtime) { called = true })
		t.Error("ForEachRuntime returned under -short")
	})
	if called {
		t.Error("ForEachRuntime ran fn under -short")
	}

	// Runtimes itself, asked directly under -short, only looks.
	noSystemRuntime(t)
	rts, err := Runtimes()
	if err == nil || len(rts) != 0 {
		t.Fatalf("Runtimes with none installed: %v, %v; want an error", rts, err)
	}
	t.Logf("Runtimes: %v", err)
	if !strings.Contains(err.Error(), "installs nothing") || !strings.Contains(err.Error(), "go test -short") {
		t.Errorf("Runtimes' error under -short does not say it installs nothing and what to run: %v", err)
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("the cache %s is not empty after Runtimes under -short: %v", cache, ents)
	}
}

// TestNoRuntimeFailsClearly checks the other side: without -short, with no
// runtime installed and setup not possible (CLRPROF_SKIP_SETUP), an
// integration test fails (it does not skip) and says why and what to run.
func TestNoRuntimeFailsClearly(t *testing.T) {
	cache := withoutRuntimes(t)
	t.Setenv("CLRPROF_SKIP_SETUP", "1")
	setShort(t, false)
	noSystemRuntime(t)

	r := call(t, func(tb testing.TB) { NeedsRuntime(tb) })
	if r.skipped || !r.failed {
		t.Fatalf("NeedsRuntime with no runtime: skipped %v, failed %v (%q); want a failure", r.skipped, r.failed, r.msg)
	}
	t.Logf("NeedsRuntime: %s", r.msg)
	for _, want := range []string{"no CoreCLR runtime found", filepath.Join(cache, "runtimes"), "scripts/setup.sh", "DOTNET_ROOT", "go test -short ./..."} {
		if !strings.Contains(r.msg, want) {
			t.Errorf("the failure does not mention %q:\n%s", want, r.msg)
		}
	}
	if ents, _ := os.ReadDir(cache); len(ents) != 0 {
		t.Errorf("the cache %s is not empty: %v", cache, ents)
	}

	// Not under -short, Integration lets the test run.
	if r := call(t, func(tb testing.TB) { Integration(tb) }); r.skipped || r.failed {
		t.Errorf("Integration without -short: skipped %v, failed %v (%q)", r.skipped, r.failed, r.msg)
	}
}
