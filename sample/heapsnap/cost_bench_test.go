//go:build benchrun

package main_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

// TestHeapsnapCost is issue 44's cost benchmark (task bench-heapsnap): the
// application's pause for a snapshot and the memory it takes, heapsnap
// against dotnet-gcdump, on the same process and heap, interleaved
// (heapsnap, then dotnet-gcdump, HEAPSNAP_BENCH_REPEAT times), for the
// heaps of HEAPSNAP_BENCH_HEAPS, MB:PAYLOAD,... (default 100:2048,1000:65536:
// 100 MB of 2 KB arrays, 1 GB of 64 KB arrays, each with a Node and a
// string; smaller payloads make more objects: dotnet-gcdump took 2 minutes
// for 600,000 objects here, mostly waiting), on .NET 10 and 11
// (dotnet-gcdump 10 attaches to those here).
//
// The pause is what the application sees: its watcher thread, sleeping
// 1 ms at a time, notes every gap over 5 ms; a tool's pause is the longest
// gap within its run (and the sum of its gaps). heapsnap's own figure (the
// ForceGC it times) follows. Memory: heapsnap lives in the process, so its
// cost is the process's peak RSS during the snapshot over the RSS before
// (VmHWM after resetting it through /proc/PID/clear_refs) and what stays
// after; dotnet-gcdump's is its own process's peak RSS (getrusage) plus the
// target's growth during its run (EventPipe's buffers live there).
func TestHeapsnapCost(t *testing.T) {
	gcdump := filepath.Join(harness.CacheDir(), "dotnet", "bin", "dotnet-gcdump")
	if _, err := os.Stat(gcdump); err != nil {
		t.Fatalf("dotnet-gcdump is not installed (%v)", err)
	}
	type heapCase struct{ mb, payload int }
	cases := []heapCase{{100, 2048}, {1000, 65536}}
	if v := os.Getenv("HEAPSNAP_BENCH_HEAPS"); v != "" {
		cases = nil
		for _, f := range strings.Split(v, ",") {
			a, b, _ := strings.Cut(f, ":")
			mb, err1 := strconv.Atoi(a)
			payload, err2 := strconv.Atoi(b)
			if err1 != nil || err2 != nil {
				t.Fatalf("HEAPSNAP_BENCH_HEAPS=%q: want MB:PAYLOAD,... (100:2048)", v)
			}
			cases = append(cases, heapCase{mb, payload})
		}
	}
	repeat := 3
	if v := os.Getenv("HEAPSNAP_BENCH_REPEAT"); v != "" {
		repeat, _ = strconv.Atoi(v)
	}
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	var table strings.Builder
	fmt.Fprintf(&table, "| runtime | heap | objects | tool | app pause, longest gap (ms) | gaps total (ms) | heapsnap's own pause (ms) | wall (s) | peak memory (MB) | app RSS kept after (MB) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skip("dotnet-gcdump 10 attaches to .NET 10 and later here")
		}
		app := harness.CompileCS(t, []string{"testdata/heapbench.cs"}, "", harness.For(rt))
		for _, hc := range cases {
			mb := hc.mb
			dir := t.TempDir()
			type run struct {
				tool           string
				t0, t1         time.Time
				ownPause       float64
				peakMB, keptMB float64
				maxGap, sumGap float64
				failed         string // dotnet-gcdump's error
			}
			var runs []run
			var runErr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				defer os.WriteFile(filepath.Join(dir, "quit"), nil, 0o644)
				pid, err := waitReady(dir)
				if err != nil {
					runErr = err
					return
				}
				time.Sleep(2 * time.Second)
				for r := 1; r <= repeat; r++ {
					// heapsnap
					resetHWM(pid)
					rss0 := status(pid, "VmRSS")
					x := run{tool: "heapsnap", t0: time.Now()}
					if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
						runErr = err
						return
					}
					if _, err := waitProfile(filepath.Join(dir, fmt.Sprintf("heap-%d.pb.gz", r)), 15*time.Minute); err != nil {
						runErr = err
						return
					}
					x.t1 = time.Now()
					x.peakMB = float64(status(pid, "VmHWM")-rss0) / 1024
					x.keptMB = float64(status(pid, "VmRSS")-rss0) / 1024
					x.ownPause = ownPause(filepath.Join(dir, fmt.Sprintf("heap-%d.txt", r)))
					runs = append(runs, x)
					time.Sleep(time.Second)

					// dotnet-gcdump
					resetHWM(pid)
					rss0 = status(pid, "VmRSS")
					y := run{tool: "dotnet-gcdump", t0: time.Now(), ownPause: -1}
					cmd := exec.Command(gcdump, "collect", "-p", strconv.Itoa(pid), "--timeout", "300", "-o", filepath.Join(dir, fmt.Sprintf("d-%d.gcdump", r)))
					out, err := cmd.CombinedOutput()
					y.t1 = time.Now()
					if err != nil || !strings.Contains(string(out), "Finished writing") {
						// said in the table, and the run goes on
						y.failed = fmt.Sprintf("failed after %.0f s (%v): %s", y.t1.Sub(y.t0).Seconds(), err, strings.Join(strings.Fields(string(out)), " "))
					}
					var toolKB int64
					if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
						toolKB = ru.Maxrss
					}
					y.peakMB = float64(toolKB+status(pid, "VmHWM")-rss0) / 1024
					y.keptMB = float64(status(pid, "VmRSS")-rss0) / 1024
					runs = append(runs, y)
					time.Sleep(time.Second)
				}
			}()
			res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{strconv.Itoa(mb), dir, strconv.Itoa(hc.payload)}, ProfilerPath: lib, ProfilerCLSID: clsid,
				Env: []string{"HEAPSNAP_DIR=" + dir, "HEAPSNAP_EXIT=0", "HEAPSNAP_MAX_OBJECTS=200000000"}, Timeout: 90 * time.Minute})
			<-done
			res.MustSucceed(t)
			if runErr != nil {
				t.Fatalf("%v\n%s", runErr, res.Describe())
			}
			built := regexp.MustCompile(`built links=\d+ objects=(\d+) heap=(\d+)`).FindStringSubmatch(res.Stdout)
			if built == nil {
				t.Fatalf("the app did not say what it built:\n%s", res.Describe())
			}
			heapB, _ := strconv.ParseFloat(built[2], 64)
			gaps := parseGaps(res.Stdout)
			for i := range runs {
				for _, g := range gaps {
					// a gap ends at g.end; it belongs to the run whose window holds its end
					if !g.end.Before(runs[i].t0) && !g.end.After(runs[i].t1.Add(100*time.Millisecond)) {
						runs[i].sumGap += g.ms
						runs[i].maxGap = max(runs[i].maxGap, g.ms)
					}
				}
				x := runs[i]
				own := "-"
				if x.ownPause >= 0 {
					own = fmt.Sprintf("%.0f", x.ownPause)
				}
				line := fmt.Sprintf("| %s | %.0f MB | %s | %s | %.0f | %.0f | %s | %.1f | %.0f | %.0f |\n", rt.Name, heapB/(1<<20), built[1], x.tool,
					x.maxGap, x.sumGap, own, x.t1.Sub(x.t0).Seconds(), x.peakMB, x.keptMB)
				if x.failed != "" {
					line = fmt.Sprintf("| %s | %.0f MB | %s | %s | %s | | | | | |\n", rt.Name, heapB/(1<<20), built[1], x.tool, x.failed)
				}
				table.WriteString(line)
				t.Log(strings.TrimSpace(line))
			}
			// medians and ratios
			med := func(tool string, f func(run) float64) float64 {
				var v []float64
				for _, x := range runs {
					if x.tool == tool && x.failed == "" {
						v = append(v, f(x))
					}
				}
				slices.Sort(v)
				if len(v) == 0 {
					return 0
				}
				return v[len(v)/2]
			}
			for _, m := range []struct {
				name string
				f    func(run) float64
			}{{"app pause", func(x run) float64 { return x.maxGap }}, {"wall", func(x run) float64 { return x.t1.Sub(x.t0).Seconds() }}, {"peak memory", func(x run) float64 { return x.peakMB }}} {
				a, b := med("heapsnap", m.f), med("dotnet-gcdump", m.f)
				t.Logf("%s %d MB: %s median heapsnap %.1f, dotnet-gcdump %.1f: ratio %.2f", rt.Name, mb, m.name, a, b, a/b)
				fmt.Fprintf(&table, "| %s | %d MB | | median ratio heapsnap / dotnet-gcdump, %s | %.2f | | | | | |\n", rt.Name, mb, m.name, a/b)
			}
		}
	})
	t.Logf("\n%s", table.String())
}

func resetHWM(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// status returns a /proc/PID/status field in kB.
func status(pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

var ownPauseRe = regexp.MustCompile(`pause ([0-9.]+)(µs|ms|s)`)

// ownPause reads the pause heapsnap's report gives in its first line, in ms.
func ownPause(txt string) float64 {
	data, _ := os.ReadFile(txt)
	m := ownPauseRe.FindStringSubmatch(string(data))
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	switch m[2] {
	case "µs":
		v /= 1000
	case "s":
		v *= 1000
	}
	return v
}

type gap struct {
	end time.Time
	ms  float64
}

func parseGaps(stdout string) []gap {
	var out []gap
	for _, m := range regexp.MustCompile(`(?m)^gap (\d+) ([0-9.]+)$`).FindAllStringSubmatch(stdout, -1) {
		endMS, _ := strconv.ParseInt(m[1], 10, 64)
		ms, _ := strconv.ParseFloat(m[2], 64)
		out = append(out, gap{time.UnixMilli(endMS), ms})
	}
	return out
}
