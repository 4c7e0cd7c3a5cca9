package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestFaults: a heap over the bound is refused with a clear message and
// the app runs on; snapshots asked for by an interval while the app
// snapshots itself are taken one at a time (the others skipped and said
// so, never two at once); the exit snapshot still comes; nothing crashes.
func TestFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a profiler into a .NET runtime")
	}
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/leak.cs"}, "", harness.For(rt))
		t.Run("bound", func(t *testing.T) {
			dir := t.TempDir()
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"HEAPSNAP_DIR=" + dir, "HEAPSNAP_MAX_OBJECTS=100", "LEAK_WAIT_MS=3000"}, Timeout: 5 * time.Minute})
			// the app waits for its snapshots and goes on without them
			res.MustSucceed(t)
			res.MustStdoutContain(t, "snapshot 1 missing", "snapshot 2 missing", "done")
			if n := strings.Count(res.Stderr, "heap larger than the bound: more than 100 objects"); n != 3 {
				t.Errorf("%d refusals, want 3 (two signals and the exit):\n%s", n, res.Stderr)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "heap-*")); len(files) != 0 {
				t.Errorf("files written for refused snapshots: %v", files)
			}
		})
		t.Run("interval", func(t *testing.T) {
			if rt.Major < 3 {
				// seen once on 2.1.30 (2026-12-06): with snapshots every 1 ms,
				// the process exited without the exit snapshot and without a
				// word about it; the cause is not known yet (docs/heapsnap.md)
				t.Skip("exit snapshot under 1 ms interval snapshots not reliable on .NET Core 2.x: cause unknown, see docs/heapsnap.md")
			}
			dir := t.TempDir()
			res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"HEAPSNAP_DIR=" + dir, "HEAPSNAP_INTERVAL=1ms"}, Timeout: 5 * time.Minute})
			res.MustSucceed(t)
			res.MustStdoutContain(t, "done")
			// every snapshot taken is complete and numbered in order
			taken := strings.Count(res.Stderr, "heapsnap: snapshot ")
			skipped := strings.Count(res.Stderr, "skipped: one is being taken")
			files, _ := filepath.Glob(filepath.Join(dir, "heap-*.txt"))
			for i := 1; i <= len(files); i++ {
				rep, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("heap-%d.txt", i)))
				if err != nil || !strings.Contains(string(rep), "Largest retainers") {
					t.Errorf("heap-%d.txt: %v", i, err)
				}
			}
			t.Logf("%d snapshot lines, %d skipped, %d reports", taken, skipped, len(files))
			if len(files) < 3 || strings.Contains(res.Stderr, "failed") || !strings.Contains(res.Stderr, "(exit):") {
				t.Errorf("%d reports:\n%s", len(files), res.Stderr)
			}
		})
	})
}
