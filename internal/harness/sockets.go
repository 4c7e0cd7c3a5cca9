package harness

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/clrprof/clrprof/internal/procstat"
)

// diagSockets returns where the runtime of process pid, just started with
// environment env, creates its diagnostics socket
// (dotnet-diagnostic-{pid}-{start time}-socket in its TMPDIR, or /tmp),
// or nil if its start time cannot be read. A runtime removes its socket
// when it shuts down normally; one killed (a timeout, a crash a test
// provokes) leaves it behind, and a later process given the same pid would
// find it beside (or, on .NET Core 2.x, instead of) its own. The harness
// removes them once the process has ended.
func diagSockets(pid int, env []string) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	key, ok := procstat.StartTime(b)
	if !ok {
		return nil
	}
	dir := "/tmp"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "TMPDIR="); ok && v != "" {
			dir = v
		}
	}
	name := fmt.Sprintf("dotnet-diagnostic-%d-%s-socket", pid, key)
	paths := []string{filepath.Join(dir, name)}
	if filepath.Clean(dir) != "/tmp" {
		paths = append(paths, filepath.Join("/tmp", name))
	}
	return paths
}

// removeSockets removes the sockets diagSockets named; the process that
// made them has ended.
func removeSockets(paths []string) {
	for _, p := range paths {
		if fi, err := os.Lstat(p); err == nil && fi.Mode()&os.ModeSocket != 0 {
			_ = os.Remove(p)
		}
	}
}
