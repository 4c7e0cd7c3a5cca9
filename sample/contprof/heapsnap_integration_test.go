package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestContprofHeapsnap: with CONTPROF_HEAPSNAP=signal,exit, contprof takes
// heap snapshots beside its profiles: sample/heapsnap's leak app asks for
// two with SIGUSR2 and a third comes at exit, in CONTPROF_DIR/heapsnap;
// the second names the static list that holds the leak and its growth,
// and the profiles are written as without it.
// Without CONTPROF_HEAPSNAP nothing of it runs.
func TestContprofHeapsnap(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./sample/contprof")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../heapsnap/testdata/leak.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		snaps := filepath.Join(dir, "heapsnap")
		res := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Env:     []string{"CONTPROF_DIR=" + dir, "CONTPROF_HEAPSNAP=signal,exit", "HEAPSNAP_DIR=" + snaps},
			Timeout: 5 * time.Minute})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "snapshot 1 written", "snapshot 2 written", "done")
		res.MustStderrContain(t, "contprof: heapsnap snapshot 3 (exit):")
		rep, err := os.ReadFile(filepath.Join(snaps, "heap-2.txt"))
		if err != nil {
			t.Fatal(err)
		}
		since := string(rep)
		if i := strings.Index(since, "Since snapshot 1"); i >= 0 {
			since = since[i:]
		} else {
			t.Fatalf("heap-2.txt has no diff:\n%s", rep)
		}
		if !strings.Contains(since, "[static] → Shop.Work.Leak → System.Collections.Generic.List<Shop.Leaked> → Shop.Leaked[] → Shop.Leaked → byte[]") {
			t.Errorf("the diff does not name the path holding the growth:\n%s", since)
		}
		for _, f := range []string{"heap-1.pb.gz", "heap-3.txt", "heap-3.pb.gz"} {
			if _, err := os.Stat(filepath.Join(snaps, f)); err != nil {
				t.Error(err)
			}
		}

		// and the profiles as without it
		if _, err := os.Stat(filepath.Join(dir, "gc.1.pprof")); err != nil {
			t.Errorf("no GC profile beside the snapshots: %v\n%s", err, res.Stderr)
		}

		// off by default: no member, no directory, not a word
		offDir := t.TempDir()
		off := harness.Run(t, rt, app, harness.RunOptions{ProfilerPath: lib, ProfilerCLSID: clsid,
			Args: []string{"nothing"}, Env: []string{"CONTPROF_DIR=" + offDir}})
		off.MustSucceed(t)
		off.MustStdoutContain(t, "nothing done")
		if _, err := os.Stat(filepath.Join(offDir, "heapsnap")); err == nil || strings.Contains(off.Stderr, "heapsnap") {
			t.Errorf("heap snapshots on without CONTPROF_HEAPSNAP:\n%s", off.Describe())
		}
	})
}
