package soak

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

const gotraceCLSID = "{8F2D4C61-7B3E-4A90-B5D2-1E6C9A3F7D08}"

// TestMCSGotrace is TestMCSAutotrace with sample/gotrace, whose
// integration is Go hooks (GOTRACE_TARGETS='mcs!*::*', GOTRACE_SUMMARY=1):
// mcs.exe on .NET 8 compiles the generated program with every mcs method
// calling Go at entry and exit; the compiled assembly is byte-identical to
// the baseline's, mcs's output unchanged, nothing failed to instrument,
// every mcs method jitlog saw compiled is in the summary, and each
// method's calls equal ilcount's (same tolerance as TestMCSAutotrace). No
// helper assembly, so no loader's host: Main is traced too.
func TestMCSGotrace(t *testing.T) {
	harness.Integration(t)
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	var rt harness.Runtime
	found := false
	for _, r := range rts {
		if r.Name == mcsRuntime {
			rt, found = r, true
		}
	}
	if !found {
		t.Skipf("runtime %s is not available; mcs.exe is run on it", mcsRuntime)
	}
	if _, err := os.Stat(mcsExe); err != nil {
		t.Fatalf("%v: scripts/setup.sh installs mcs.exe (Debian package mono-mcs)", err)
	}
	classes, timeout := soakSize(t)
	if os.Getenv("CLRPROF_SOAK") != "long" && os.Getenv("CLRPROF_SOAK_CLASSES") == "" {
		classes = min(classes, 50) // as TestMCSAutotrace: the same set of mcs methods
	}
	prog := Generate(classes)
	libs := map[string]string{}
	for _, s := range []string{"jitlog", "ilcount", "gotrace"} {
		libs[s] = harness.BuildProfiler(t, "./sample/"+s)
	}
	run := func(name, prefix string, opts harness.RunOptions) compile {
		t.Helper()
		opts.Dir = t.TempDir()
		opts.Args = mcsArgs
		opts.Timeout = timeout
		if err := os.WriteFile(filepath.Join(opts.Dir, "p.cs"), []byte(prog.Source), 0o644); err != nil {
			t.Fatal(err)
		}
		return finish(t, name, prefix, harness.Run(t, rt, mcsExe, opts), opts.Dir)
	}
	out := t.TempDir()
	base := run("baseline", "", harness.RunOptions{})
	base.res.MustSucceed(t)
	jitFile := filepath.Join(out, "jit.txt")
	jit := run("jitlog", "jitlog: ", harness.RunOptions{ProfilerPath: libs["jitlog"], ProfilerCLSID: jitlogCLSID, Env: []string{"JITLOG_FILE=" + jitFile}})
	jit.res.MustSucceed(t)
	ilFile := filepath.Join(out, "ilcount.txt")
	il := run("ilcount", "ilcount: ", harness.RunOptions{ProfilerPath: libs["ilcount"], ProfilerCLSID: ilcountCLSID, Env: []string{"ILCOUNT_OUT=" + ilFile}})
	il.res.MustSucceed(t)
	sumFile := filepath.Join(out, "gotrace.jsonl")
	gt := run("gotrace", "gotrace: ", harness.RunOptions{ProfilerPath: libs["gotrace"], ProfilerCLSID: gotraceCLSID,
		Env: []string{"GOTRACE_TARGETS=mcs!*::*", "GOTRACE_SUMMARY=1", "GOTRACE_OUTPUT=" + sumFile}})
	gt.res.MustSucceed(t)
	t.Logf("gotrace said:\n%s", strings.Join(gt.profLines, "\n"))
	t.Logf("mcs took %v without a profiler, %v with every mcs method calling Go hooks (%.2fx; wall time of one compile, not a benchmark)",
		base.res.Duration.Round(time.Millisecond), gt.res.Duration.Round(time.Millisecond), ratio(gt.res.Duration, base.res.Duration))

	if !bytes.Equal(gt.assembly, base.assembly) {
		t.Errorf("the assembly compiled under gotrace differs from the baseline's (%d vs %d bytes), at %s", len(gt.assembly), len(base.assembly), diffOffsets(gt.assembly, base.assembly))
	}
	if gt.res.Stdout != base.res.Stdout || gt.stderr != base.stderr {
		t.Errorf("mcs's output changed under gotrace:\n%s%s\n--- baseline:\n%s%s", gt.res.Stdout, gt.stderr, base.res.Stdout, base.stderr)
	}
	for _, l := range gt.profLines {
		if strings.Contains(l, "could not instrument") || strings.Contains(l, "panicked") {
			t.Errorf("gotrace: %s", l)
		}
	}
	jitNames := checkJitlog(t, jitFile)
	calls, methods, total := readTraceSummary(t, sumFile)
	ilCalls := readILCounts(t, ilFile)
	// Calls still running at Shutdown (mcs's Main ends in
	// Environment.Exit: its exit hook never runs) are listed by gotrace,
	// not counted in the summary; ilcount counts entries.
	for _, l := range gt.profLines {
		if rest, ok := strings.CutPrefix(l, "gotrace: calls that had not returned at shutdown (not in the summary): "); ok {
			for _, item := range strings.Split(rest, ", ") {
				name, n, _ := strings.Cut(item, " (")
				k, _ := strconv.ParseInt(strings.TrimSuffix(n, ")"), 10, 64)
				calls[normalize(name)] += k
				t.Logf("still running at shutdown: %s, %d calls", name, k)
			}
		}
	}
	var missing []string
	for n := range jitNames {
		if _, ok := calls[n]; !ok {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d mcs methods that jitlog saw compiled were not instrumented by gotrace, e.g. %q", len(missing), missing[:min(len(missing), 10)])
	}
	same, varied, bad := compareTraceCounts("gotrace", calls, ilCalls)
	t.Logf("gotrace: %d calls traced; %d instrumented methods in the summary (%d by normalized name); ilcount counted %d names: %d equal, %d within run-to-run variation, %d differ; jitlog's %d mcs methods all instrumented: %v",
		total, methods, len(calls), len(ilCalls), same, len(varied), len(bad), len(jitNames), len(missing) == 0)
	if len(bad) > 0 {
		t.Errorf("gotrace and ilcount disagree on %d mcs methods, e.g.:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
	if len(varied) > 10 {
		t.Errorf("%d methods differ by up to 1%% between the two runs (at most 10 allowed):\n%s", len(varied), strings.Join(varied, "\n"))
	} else if len(varied) > 0 {
		t.Logf("methods that differ by at most 1%% (or one call) between the two processes:\n%s", strings.Join(varied, "\n"))
	}
	if len(calls) < 1000 {
		t.Errorf("only %d mcs methods in gotrace's summary", len(calls))
	}
}
