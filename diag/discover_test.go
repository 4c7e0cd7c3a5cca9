package diag

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func listen(t *testing.T, path string) {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
}

func TestFindSocket(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	pid := 4242
	old := filepath.Join(a, "dotnet-diagnostic-4242-100-socket")
	listen(t, old)
	past := time.Now().Add(-time.Hour)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	newer := filepath.Join(b, "dotnet-diagnostic-4242-200-socket")
	listen(t, newer)
	// Not candidates: another pid, a prefix of the pid, a plain file, a
	// key that is not a number.
	listen(t, filepath.Join(a, "dotnet-diagnostic-42420-300-socket"))
	listen(t, filepath.Join(a, "dotnet-diagnostic-424-300-socket"))
	if err := os.WriteFile(filepath.Join(a, "dotnet-diagnostic-4242-400-socket"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	listen(t, filepath.Join(a, "dotnet-diagnostic-4242-x-socket"))

	if got, stale := findSocket(pid, "", []string{a, b}); got != newer || len(stale) != 0 {
		t.Errorf("no key: %s (stale %v), want the newest %s", got, stale, newer)
	}
	if got, stale := findSocket(pid, "100", []string{a, b}); got != old || len(stale) != 1 || stale[0] != newer {
		t.Errorf("key 100: %s (stale %v), want the matching %s, %s stale", got, stale, old, newer)
	}
	// A known start time that no socket has: every socket is a leftover of
	// an earlier process with the same pid (killed before it could remove
	// it), never a candidate, however new.
	got, stale := findSocket(pid, "999", []string{b, a})
	if got != "" || len(stale) != 2 {
		t.Errorf("unknown key: %s (stale %v), want none and both stale", got, stale)
	}
	// Key 0 is what a runtime uses when it cannot read its start time.
	zero := filepath.Join(a, "dotnet-diagnostic-4242-0-socket")
	listen(t, zero)
	if got, _ := findSocket(pid, "999", []string{b, a}); got != zero {
		t.Errorf("unknown key with a key-0 socket: %s, want %s", got, zero)
	}
	if got, _ := findSocket(7, "", []string{a, b, filepath.Join(a, "missing")}); got != "" {
		t.Errorf("pid 7: %s", got)
	}
}

func TestStartTime(t *testing.T) {
	k := startTime(os.Getpid())
	if _, err := strconv.ParseUint(k, 10, 64); err != nil {
		t.Fatalf("startTime = %q", k)
	}
	// A command name with spaces and parentheses does not shift fields.
	dir := t.TempDir()
	old := procRoot
	procRoot = dir
	t.Cleanup(func() { procRoot = old })
	if err := os.MkdirAll(filepath.Join(dir, "9"), 0o755); err != nil {
		t.Fatal(err)
	}
	stat := "9 (a) b (c)) S 1 9 9 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 123456 1000 10 18446744073709551615"
	if err := os.WriteFile(filepath.Join(dir, "9", "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	if k := startTime(9); k != "123456" {
		t.Errorf("startTime = %q, want 123456", k)
	}
	if k := startTime(10); k != "" {
		t.Errorf("missing stat: %q", k)
	}
}

func TestSocketPathErrors(t *testing.T) {
	// This test binary is not a .NET process.
	_, err := SocketPath(os.Getpid())
	if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "not a .NET (CoreCLR) process") {
		t.Errorf("own pid: %v", err)
	}
	for _, pid := range []int{0, -1, 1 << 30} {
		_, err := SocketPath(pid)
		if !errors.Is(err, ErrProcessNotFound) {
			t.Errorf("pid %d: %v", pid, err)
		}
		var de *Error
		if !errors.As(err, &de) || de.PID != pid {
			t.Errorf("pid %d: %#v", pid, de)
		}
	}
}

func TestNoSocketReason(t *testing.T) {
	dir := t.TempDir()
	old := procRoot
	procRoot = dir
	t.Cleanup(func() { procRoot = old })
	write := func(pid, name, s string) {
		if err := os.MkdirAll(filepath.Join(dir, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pid, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := func(v string) string {
		return "7f0000000000-7f0000001000 r-xp 00000000 08:01 42 /opt/dotnet/shared/Microsoft.NETCore.App/" + v + "/libcoreclr.so\n"
	}
	write("1", "maps", lib("2.1.30"))
	write("2", "maps", lib("8.0.4"))
	write("2", "environ", "A=1\x00DOTNET_EnableDiagnostics=0\x00")
	write("3", "maps", lib("3.1.23"))
	write("4", "maps", "00400000-00401000 r-xp 00000000 08:01 1 /usr/bin/cat\n")
	for pid, want := range map[int]string{
		1: "it runs .NET Core 2.1.30",
		2: "DOTNET_EnableDiagnostics=0, which turns the diagnostics server off",
		3: "may still be starting",
		4: "not a .NET (CoreCLR) process",
		5: "cannot read its memory map",
	} {
		_, err := SocketPath(pid)
		if pid == 5 {
			write("5", "x", "")
			_, err = SocketPath(pid)
		}
		if !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), want) {
			t.Errorf("pid %d: %v, want %q", pid, err, want)
		}
	}
}

// TestDiagDoesNotLinkTheProfiler: the trigger side stays free of the
// profiler runtime (package profiler, its cgo shim) and of cgo.
func TestDiagDoesNotLinkTheProfiler(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "github.com/clrprof/clrprof/diag")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("CGO_ENABLED=0 go list -deps diag: %v\n%s", err, out)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "github.com/clrprof/clrprof/profiler" || dep == "github.com/clrprof/clrprof/metadata" || dep == "runtime/cgo" {
			t.Errorf("diag depends on %s", dep)
		}
	}
}
