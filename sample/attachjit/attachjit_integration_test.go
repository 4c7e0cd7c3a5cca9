package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/harness"
)

// The sample attached to the busy test app of package diag for a second,
// twice, with diag.AttachProfiler: each time it detaches by itself and writes
// its report, and the app runs on.
func TestAttachJIT(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/attachjit")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"../../diag/testdata/attachapp/app.cs"}, "", harness.For(rt))
		p := harness.Start(t, rt, app, harness.RunOptions{Timeout: 2 * time.Minute})
		if err := p.WaitStdout("ready\n", time.Minute); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if !rt.AtLeast(3, 0) {
			err := diag.AttachProfiler(ctx, p.Pid, CLSID, lib, []byte("seconds=1"))
			t.Logf("%s: %v", rt.Name, err)
			if !errors.Is(err, diag.ErrNotSupported) {
				t.Fatalf("attach on %s: %v, want diag.ErrNotSupported", rt.Name, err)
			}
		} else {
			for round := 1; round <= 2; round++ {
				out := filepath.Join(t.TempDir(), "report.txt")
				start := time.Now()
				if err := diag.AttachProfiler(ctx, p.Pid, CLSID, lib, []byte("seconds=1 top=1000 out="+out)); err != nil {
					t.Fatal(err)
				}
				// Something new to compile while it watches.
				if err := p.WriteLine("phase " + strconv.Itoa(round)); err != nil {
					t.Fatal(err)
				}
				report, ok := waitFile(out, 30*time.Second)
				if !ok {
					t.Fatalf("no report in %s", out)
				}
				t.Logf("round %d, report after %v:\n%s", round, time.Since(start).Round(time.Millisecond), head(report, 8))
				m := regexp.MustCompile(`^attachjit: pid (\d+), detaching after (\S+)s: (\d+) JIT compilations of (\d+) methods\n`).FindStringSubmatch(report)
				if m == nil || m[1] != strconv.Itoa(p.Pid) {
					t.Fatalf("report:\n%s", report)
				}
				if secs, _ := strconv.ParseFloat(m[2], 64); secs < 1 {
					t.Errorf("detached after %ss, before the second it was given", m[2])
				}
				if n, _ := strconv.Atoi(m[4]); n < 1 {
					t.Errorf("no methods in the report")
				}
				// The method the app compiled while it watched, once.
				if want := "       1  App.Phase" + strconv.Itoa(round) + "Work\n"; !strings.Contains(report, want) {
					t.Errorf("report lacks %q", want)
				}
				// The report comes before the detach; the next attach needs
				// the detach done. .NET Core 3.1 sometimes never completes a
				// detach it accepted (see diag's waitDetached).
				detached := fmt.Sprintf("attachjit: pid %d detached\n", p.Pid)
				if !waitCount(p.Stderr, detached, round, 30*time.Second) {
					if rt.Major == 3 {
						t.Logf("KNOWN .NET Core 3.1 DETACH STALL: round %d's detach accepted but not completed; the app must still run", round)
						break
					}
					t.Fatalf("round %d: no detach; stderr:\n%s", round, p.Stderr())
				}
			}
		}
		if err := p.WriteLine("ping"); err != nil {
			t.Fatal(err)
		}
		if err := p.WaitStdout("pong ", time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteLine("quit"); err != nil {
			t.Fatal(err)
		}
		res := p.Wait()
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done\n")
		res.MustStderrNotContain(t, "panic", "refused")
	})
}

// waitFile waits until path exists and ends with a newline, and returns it;
// false if that did not happen within timeout.
func waitFile(path string, timeout time.Duration) (string, bool) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			time.Sleep(50 * time.Millisecond) // let the writer finish
			b, _ = os.ReadFile(path)
			return string(b), true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "", false
}

// waitCount waits until text() holds sub at least n times.
func waitCount(text func() string, sub string, n int, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if strings.Count(text(), sub) >= n {
			return true
		}
		time.Sleep(50 * time.Millisecond)
	}
	return strings.Count(text(), sub) >= n
}

// head returns the first n lines of s.
func head(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append(lines[:n], "...\n")
	}
	return strings.Join(lines, "")
}
