package main_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

// TestAgainstGCDump compares a heapsnap snapshot with dotnet-gcdump, an
// independent reader of the same heap (EventPipe's heap dump events,
// through the diagnostics IPC), on the same process at the same moment:
// the app leaks, then sleeps while dotnet-gcdump collects once (its first
// collection allocates in the target, so it is thrown away), heapsnap
// takes a snapshot, and dotnet-gcdump collects again. The per-type object
// counts must agree.
func TestAgainstGCDump(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a profiler into a .NET runtime")
	}
	gcdump := filepath.Join(harness.CacheDir(), "dotnet", "bin", "dotnet-gcdump")
	if _, err := os.Stat(gcdump); err != nil {
		t.Fatalf("dotnet-gcdump is not installed (%v); scripts/setup.sh lays it out from ../shared/dotnet", err)
	}
	lib := harness.BuildProfiler(t, "./sample/heapsnap")
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if rt.Major < 10 {
			t.Skip("dotnet-gcdump 10 attaches to .NET 10 and later here (the diagnostics IPC of older runtimes differs)")
		}
		app := harness.CompileCS(t, []string{"testdata/leak.cs"}, "", harness.For(rt))
		dir := t.TempDir()
		type outcome struct {
			ours, before, theirs map[string]int64
			log                  string
			err                  error
		}
		done := make(chan outcome, 1)
		go func() {
			var o outcome
			defer func() { os.WriteFile(filepath.Join(dir, "quit"), nil, 0o644); done <- o }()
			pid, err := waitReady(dir)
			if err != nil {
				o.err = err
				return
			}
			run := func(args ...string) (string, error) {
				out, err := exec.Command(gcdump, args...).CombinedOutput()
				o.log += fmt.Sprintf("$ dotnet-gcdump %s\n%s\n", strings.Join(args, " "), out)
				return string(out), err
			}
			if _, err := run("collect", "-p", strconv.Itoa(pid), "-o", filepath.Join(dir, "warm.gcdump")); err != nil {
				o.err = fmt.Errorf("dotnet-gcdump collect (first): %v", err)
				return
			}
			// a second one, just before heapsnap's: how much dotnet-gcdump's
			// own sessions change the heap from one to the next
			b := filepath.Join(dir, "before.gcdump")
			if _, err := run("collect", "-p", strconv.Itoa(pid), "-o", b); err != nil {
				o.err = fmt.Errorf("dotnet-gcdump collect (second): %v", err)
				return
			}
			rep, err := run("report", b)
			if err != nil {
				o.err = fmt.Errorf("dotnet-gcdump report: %v", err)
				return
			}
			o.before = parseGCDumpReport(rep)
			if err := syscall.Kill(pid, syscall.SIGUSR2); err != nil {
				o.err = err
				return
			}
			if o.ours, err = waitProfileCounts(filepath.Join(dir, "heap-1.pb.gz")); err != nil {
				o.err = err
				return
			}
			g := filepath.Join(dir, "after.gcdump")
			if _, err := run("collect", "-p", strconv.Itoa(pid), "-o", g); err != nil {
				o.err = fmt.Errorf("dotnet-gcdump collect: %v", err)
				return
			}
			rep, err = run("report", g)
			if lines := strings.SplitN(rep, "\n", 31); len(lines) > 30 {
				o.log = strings.Join(lines[:30], "\n")
			}
			if err != nil {
				o.err = fmt.Errorf("dotnet-gcdump report: %v", err)
				return
			}
			o.theirs = parseGCDumpReport(rep)
		}()
		res := harness.Run(t, rt, app, harness.RunOptions{Args: []string{"serve"}, ProfilerPath: lib, ProfilerCLSID: clsid,
			Env: []string{"HEAPSNAP_DIR=" + dir, "HEAPSNAP_EXIT=0"}, Timeout: 6 * time.Minute})
		o := <-done
		res.MustSucceed(t)
		if o.err != nil {
			t.Fatalf("%v\n%s\n%s", o.err, o.log, res.Describe())
		}
		if len(o.theirs) == 0 {
			t.Fatalf("no types in dotnet-gcdump's report:\n%s", o.log)
		}
		t.Logf("dotnet-gcdump report (first lines):\n%s", o.log)
		if rep, err := os.ReadFile(filepath.Join(dir, "heap-1.txt")); err == nil {
			t.Logf("heapsnap's report (first lines):\n%s", strings.Join(strings.SplitN(string(rep), "\n", 16)[:15], "\n"))
		}
		compareCounts(t, o.ours, o.before, o.theirs)
	})
}

func waitReady(dir string) (int, error) {
	for range 1200 {
		data, err := os.ReadFile(filepath.Join(dir, "ready"))
		if err == nil && len(data) > 0 {
			return strconv.Atoi(strings.TrimSpace(string(data)))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return 0, fmt.Errorf("the app never got ready")
}

// waitProfileCounts waits for a snapshot's pprof file and returns its
// object count per type (the leaf frame).
func waitProfileCounts(path string) (map[string]int64, error) {
	p, err := waitProfile(path, 2*time.Minute)
	if err != nil {
		return nil, err
	}
	counts := map[string]int64{}
	for _, s := range p.Sample {
		counts[s.Location[0].Line[0].Function.Name] += s.Value[0]
	}
	return counts, nil
}

// waitProfile waits at most bound for a snapshot's pprof file to be
// whole (it is written while this reads).
func waitProfile(path string, bound time.Duration) (*profile.Profile, error) {
	deadline := time.Now().Add(bound)
	for {
		if f, err := os.Open(path); err == nil {
			p, err := profile.Parse(f)
			f.Close()
			if err == nil {
				return p, nil
			}
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("no snapshot at %s within %v", path, bound)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// dotnet-gcdump report lines: "   24,576   128  System.Byte[]  (Bytes > 1K)"
// after a header; the columns are Object Bytes, Count, Type.
var reportLine = regexp.MustCompile(`^\s*([\d,]+)\s+([\d,]+)\s+(\S.*?)\s*$`)

func parseGCDumpReport(rep string) map[string]int64 {
	counts := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(rep))
	for sc.Scan() {
		m := reportLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		n, _ := strconv.ParseInt(strings.ReplaceAll(m[2], ",", ""), 10, 64)
		// "System.String  [System.Private.CoreLib.dll]",
		// "System.Byte[] (Bytes > 10K)  [System.Private.CoreLib.dll]"
		name := m[3]
		if i := strings.Index(name, "  ["); i > 0 {
			name = name[:i]
		}
		if i := strings.Index(name, " (Bytes"); i > 0 {
			name = name[:i]
		}
		counts[strings.TrimSpace(name)] += n
	}
	return counts
}

// csKeywords maps the SDK's C# names of built-in types to the framework
// names dotnet-gcdump prints.
var csKeywords = map[string]string{
	"bool": "System.Boolean", "byte": "System.Byte", "sbyte": "System.SByte", "char": "System.Char",
	"short": "System.Int16", "ushort": "System.UInt16", "int": "System.Int32", "uint": "System.UInt32",
	"long": "System.Int64", "ulong": "System.UInt64", "float": "System.Single", "double": "System.Double",
	"decimal": "System.Decimal", "string": "System.String", "object": "System.Object",
	"nint": "System.IntPtr", "nuint": "System.UIntPtr",
}

var word = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_.]*`)

// normalize turns the SDK's name of a type into dotnet-gcdump's: C#
// keywords become framework names, and a nested type loses its declaring
// types, which dotnet-gcdump does not print (EventSource+OverrideEventProvider
// is OverrideEventProvider there; it prints Dictionary<K,V>+Entry[] as
// Entry<K,V>[], which this does not reproduce: such types are compared
// only if they are among the 20 most numerous, and then fail loudly).
func normalize(name string) string {
	depth, cut := 0, -1
	for i, c := range name {
		switch c {
		case '<':
			depth++
		case '>':
			depth--
		case '+':
			if depth == 0 {
				cut = i
			}
		}
	}
	if cut >= 0 {
		name = name[cut+1:]
	}
	// compiler-generated names: dotnet-gcdump prints <>c as []c
	if strings.HasPrefix(name, "<>") {
		name = "[]" + name[2:]
	}
	return word.ReplaceAllStringFunc(name, func(w string) string {
		if f, ok := csKeywords[w]; ok {
			return f
		}
		return w
	})
}

// compareCounts compares heapsnap's per-type counts with those of the
// dotnet-gcdump taken right after it (theirs), for the 20 types that one
// counts most. Each dotnet-gcdump session runs managed code in the target
// (its EventSources, reflection over them), whose objects come and go: the
// dump taken just before heapsnap's (before) shows how much. A type agrees
// when heapsnap's count is within 0.5% (at least 2 objects) of theirs,
// plus what theirs moved from before.
func compareCounts(t *testing.T, ours, before, theirs map[string]int64) {
	t.Helper()
	norm := map[string]int64{}
	for k, v := range ours {
		norm[normalize(k)] += v
	}
	type row struct {
		name                 string
		ours, before, theirs int64
	}
	var rows []row
	for k, v := range theirs {
		rows = append(rows, row{k, norm[k], before[k], v})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].theirs > rows[j].theirs })
	if len(rows) > 20 {
		rows = rows[:20]
	}
	var b strings.Builder
	bad := 0
	abs := func(x int64) int64 { return max(x, -x) }
	for _, r := range rows {
		diff := r.ours - r.theirs
		churn := abs(r.theirs - r.before)
		tol := max(2, r.theirs/200) + churn // 0.5%, at least 2 objects, plus dotnet-gcdump's own churn
		mark := ""
		if abs(diff) > tol {
			mark = "  <-- differs"
			bad++
		}
		fmt.Fprintf(&b, "%8d %8d %8d %+6d %6d  %s%s\n", r.ours, r.before, r.theirs, diff, churn, r.name, mark)
	}
	t.Logf("the 20 types dotnet-gcdump counts most (heapsnap; dotnet-gcdump before and after it; heapsnap - after; |after - before|):\n%s", b.String())
	if bad > 0 {
		t.Errorf("%d of the 20 types differ by more than 0.5%%", bad)
	}
	for _, name := range []string{"Shop.Leaked", "System.Byte[]"} {
		if norm[name] < 200 || theirs[name] < 200 {
			t.Errorf("%s: heapsnap %d, dotnet-gcdump %d; the app holds 200", name, norm[name], theirs[name])
		}
	}
}
