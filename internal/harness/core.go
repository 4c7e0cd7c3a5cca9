package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Crash evidence. A run that a signal ends must leave enough behind to
// diagnose it without a rerun: the harness lets the kernel write core files
// for its children (RLIMIT_CORE raised to its hard limit in the test process,
// which children inherit), and when a run dumped core it finds the file,
// keeps it under <cache>/cores/ and asks gdb (Debian's gdb, installed by
// scripts/setup.sh) for every thread's backtrace, the signal that ended the
// process, and the profiler library's signal audit when the library has one.
// [Result.Describe] prints that report.

// keptCores is how many core files <cache>/cores/ keeps (the newest).
const keptCores = 6

var coresOnce sync.Once

// enableCores raises the soft RLIMIT_CORE of this process to its hard limit
// once, so the programs it starts may dump core.
func enableCores() {
	coresOnce.Do(func() {
		var lim syscall.Rlimit
		if syscall.Getrlimit(syscall.RLIMIT_CORE, &lim) == nil && lim.Cur < lim.Max {
			lim.Cur = lim.Max
			_ = syscall.Setrlimit(syscall.RLIMIT_CORE, &lim)
		}
	})
}

// CorePattern is the kernel's core_pattern ("" when unreadable): where the
// cores of crashed runs go.
func CorePattern() string {
	b, err := os.ReadFile("/proc/sys/kernel/core_pattern")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// findCore looks for the core file of process pid that ran in dir, started
// at start: a pattern relative to the working directory ("core", the
// default, or "core.%p") or an absolute one. Piped patterns ("|...") hand the
// core to another program; it says so in the returned note.
func findCore(pattern, dir string, pid int, start time.Time) (path, note string) {
	if pattern == "" {
		return "", "core_pattern unreadable"
	}
	if strings.HasPrefix(pattern, "|") {
		return "", "core_pattern pipes cores to " + strings.Fields(pattern[1:])[0] + "; look there"
	}
	searchDir := dir
	if filepath.IsAbs(pattern) {
		searchDir = filepath.Dir(pattern)
	}
	entries, err := os.ReadDir(searchDir)
	if err != nil {
		return "", err.Error()
	}
	spid := strconv.Itoa(pid)
	var best string
	var bestTime time.Time
	for _, e := range entries {
		name := e.Name()
		if !strings.HasPrefix(name, "core") || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil || info.ModTime().Before(start.Add(-time.Second)) {
			continue
		}
		// With the pid in the name, only that pid's core will do.
		if strings.Contains(pattern, "%p") && !strings.Contains(name, spid) {
			continue
		}
		if best == "" || info.ModTime().After(bestTime) {
			best, bestTime = filepath.Join(searchDir, name), info.ModTime()
		}
	}
	if best == "" {
		return "", "no core file found for pid " + spid + " (core_pattern " + pattern + ")"
	}
	return best, ""
}

// keepCore moves core into <cache>/cores/ under a name that says which test
// and runtime it came from, keeping only the newest keptCores there.
func keepCore(core, testName, rtName string) string {
	dir := filepath.Join(CacheDir(), "cores")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return core
	}
	safe := strings.NewReplacer("/", "_", " ", "_").Replace(testName)
	dst := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.core", time.Now().UTC().Format("20060102T150405"), safe, rtName))
	if err := os.Rename(core, dst); err != nil {
		return core
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".core") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for len(names) > keptCores {
		_ = os.Remove(filepath.Join(dir, names[0]))
		names = names[1:]
	}
	return dst
}

// gdbReport runs gdb in batch mode over core of the program exe and returns
// what it printed: the signal, every thread's backtrace, and, when
// profilerLib is set, the profiler's signal audit (audit_recs in libraries
// built on package profiler) and its SIGSEGV router's state. It is bounded to two minutes.
func gdbReport(exe, core, profilerLib string) string {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return "gdb not found (scripts/setup.sh installs it): " + err.Error()
	}
	args := []string{"-batch", "-nx", "-q",
		"-iex", "set auto-load python-scripts off",
		"-ex", "set pagination off",
		"-ex", "set print frame-arguments none",
		"-ex", "echo === signal ===\\n",
		"-ex", "p $_siginfo",
		"-ex", "echo === crashing thread ===\\n",
		"-ex", "bt 40",
		"-ex", "info registers rip rsp rbp",
		"-ex", "echo === threads ===\\n",
		"-ex", "info threads",
		"-ex", "thread apply all bt 25",
	}
	if profilerLib != "" {
		args = append(args, "-ex", "echo === profiler signal audit ===\\n",
			"-ex", "p audit_count", "-ex", "p/x audit_recs[0]@audit_count",
			"-ex", "echo === SIGSEGV router (private stack of the crashing thread, counts) ===\\n",
			"-ex", "p/x segv_stack", "-ex", "p segv_private_runs", "-ex", "p clrprof_segv_private_returns",
			"-ex", "p segv_altstack_runs", "-ex", "p segv_reasserts", "-ex", "p have_outer_segv")
	}
	args = append(args, exe, core)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gdb, args...).CombinedOutput()
	// Drop gdb's chatter: one line per thread it found, and warnings
	// about sections and scripts that say nothing about the crash.
	var kept []string
	for _, line := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(line, "[New LWP ") || strings.HasPrefix(line, "warning: Section `.reg") ||
			strings.HasPrefix(line, "warning: Can't open file") || strings.TrimSpace(line) == "" {
			continue
		}
		kept = append(kept, line)
	}
	s := strings.Join(kept, "\n")
	if err != nil {
		s += "\n(gdb: " + err.Error() + ")"
	}
	const max = 64 << 10
	if len(s) > max {
		s = s[:max] + fmt.Sprintf("\n[... %d more bytes of gdb output ...]", len(s)-max)
	}
	return s
}

// collectCrash fills res.Core and res.Backtrace for a run that ended by a
// signal (unless opts.ExpectCrash). pid is the program's pid, dir its
// working directory.
func collectCrash(t interface{ Name() string }, res *Result, exe string, pid int, dir string, start time.Time, opts RunOptions) {
	if !res.Signaled || res.TimedOut {
		return
	}
	if opts.ExpectCrash {
		if core, _ := findCore(CorePattern(), dir, pid, start); core != "" {
			_ = os.Remove(core)
		}
		return
	}
	if !res.CoreDumped {
		var lim syscall.Rlimit
		_ = syscall.Getrlimit(syscall.RLIMIT_CORE, &lim)
		res.Backtrace = fmt.Sprintf("(no core dumped: RLIMIT_CORE %d, core_pattern %q)", lim.Cur, CorePattern())
		return
	}
	core, note := findCore(CorePattern(), dir, pid, start)
	if core == "" {
		res.Backtrace = "(" + note + ")"
		return
	}
	res.Core = keepCore(core, t.Name(), res.Runtime.Name)
	res.Backtrace = gdbReport(exe, res.Core, opts.ProfilerPath)
}
