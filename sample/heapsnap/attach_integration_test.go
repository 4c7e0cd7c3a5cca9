package main_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
)

// TestAttach attaches heapsnap to the leak app while it serves
// (diag.AttachProfiler, settings in the client data), asks for a snapshot
// with SIGUSR2 at once (the walk still on from the attach) and again after
// the mask was given back (the walk turned on for that collection only),
// and checks each holds the 200 leaked objects with their 64 KB arrays, and
// that the app runs on and ends normally. Before
// .NET Core 3.0 there is no attach: diag.ErrNotSupported.
func TestAttach(t *testing.T) {
	harness.Integration(t)
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/leak.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		p := harness.Start(t, rt, app, harness.RunOptions{Args: []string{"serve"}, Env: []string{"HEAPSNAP_DIR=" + dir}, Timeout: 5 * time.Minute})
		defer p.Kill()
		pid, err := waitReady(dir)
		if err != nil {
			t.Fatalf("%v\n%s", err, p.Stderr())
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		err = diag.AttachProfiler(ctx, pid, clsid, lib, []byte("HEAPSNAP_DIR="+dir+" HEAPSNAP_EXIT=0"))
		if !rt.AtLeast(3, 0) {
			if !errors.Is(err, diag.ErrNotSupported) {
				t.Fatalf("attach on %s: %v, want diag.ErrNotSupported", rt.Name, err)
			}
			os.WriteFile(filepath.Join(dir, "quit"), nil, 0o644)
			p.Wait().MustSucceed(t)
			return
		}
		if err != nil {
			time.Sleep(time.Second)
			if p.Exited() {
				t.Fatalf("attach: %v; the app ended:\n%s", err, p.Wait().Describe())
			}
			t.Fatalf("attach: %v\n%s", err, p.Stderr())
		}
		if err := p.WaitStderr("heapsnap: attached to pid", 30*time.Second); err != nil {
			t.Fatal(err)
		}
		for n := 1; n <= 2; n++ {
			if n == 2 {
				// the second after the walk was turned off again (a second
				// after the attach): Take turns it on for its collection
				time.Sleep(1500 * time.Millisecond)
			}
			if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
				t.Fatal(err)
			}
			counts, err := waitProfileCounts(filepath.Join(dir, "heap-"+string(rune('0'+n))+".pb.gz"))
			if err != nil {
				if p.Exited() {
					t.Fatalf("%v; the app ended:\n%s", err, p.Wait().Describe())
				}
				t.Fatalf("%v\n%s", err, p.Stderr())
			}
			if counts["Shop.Leaked"] != 200 || counts["byte[]"] < 200 {
				t.Errorf("snapshot %d: %d Shop.Leaked, %d byte[]; the app holds 200 of each", n, counts["Shop.Leaked"], counts["byte[]"])
			}
		}
		rep, _ := os.ReadFile(filepath.Join(dir, "heap-2.txt"))
		if !strings.Contains(string(rep), "heap walk: recorded in C") {
			t.Errorf("heap-2.txt does not say the walk was recorded in C")
		}
		// the static list's class was loaded before the attach: not named,
		// and the report says so
		if !strings.Contains(string(rep), "attached: static fields of classes loaded before the attach are not named") {
			t.Errorf("heap-2.txt does not say what it cannot name after an attach")
		}
		t.Logf("heap-2.txt (first lines):\n%s", strings.Join(strings.SplitN(string(rep), "\n", 41)[:40], "\n"))
		os.WriteFile(filepath.Join(dir, "quit"), nil, 0o644)
		res := p.Wait()
		res.MustSucceed(t)
		res.MustStdoutContain(t, "quit")
		if strings.Contains(res.Stderr, "after the attach, the heap walk stays on") {
			t.Errorf("the mask was not given back after the attach:\n%s", res.Stderr)
		}
	})
}
