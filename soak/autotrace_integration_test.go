package soak

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/harness"
)

const autotraceCLSID = "{5C1F0B7E-3A64-4D28-9E51-8B7A2D6C4F13}"

var hostRe = regexp.MustCompile(`^autotrace: (\S+) was not traced: it hosts the integration's loader`)

// TestMCSAutotrace compiles the generated program with mcs.exe on .NET 8
// with every method of mcs instrumented by sample/autotrace
// (AUTOTRACE_TARGETS='mcs!*::*', AUTOTRACE_SUMMARY=1), and checks that:
// the compiled assembly is byte-identical to the one compiled without a
// profiler; nothing threw InvalidProgramException (or any other error of
// the rewritten code: mcs's output is the baseline's); autotrace could
// instrument every matched method it saw compiled; every mcs method that
// jitlog saw compiled (its own run) is among the instrumented ones; and each
// method's calls are ilcount's (its own run, by normalized name, with
// soak's tolerance for run-to-run variation: at most ten methods off by one
// call or 1%, from hash lookups under randomized string hashing). The
// program's size is soakSize's, at most 50 classes in `task test` (full in
// `task soak`).
func TestMCSAutotrace(t *testing.T) {
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
		// In `task test`: 50 classes already make mcs compile every one of
		// the ~3760 methods the full size does (measured: 20 classes gave
		// the same set), at a quarter of the time.
		classes = min(classes, 50)
	}
	prog := Generate(classes)
	t.Logf("generated program: %d classes", prog.Classes)
	libs := map[string]string{}
	for _, s := range []string{"jitlog", "ilcount", "autotrace"} {
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
	sumFile := filepath.Join(out, "autotrace.jsonl")
	at := run("autotrace", "autotrace: ", harness.RunOptions{ProfilerPath: libs["autotrace"], ProfilerCLSID: autotraceCLSID,
		Env: []string{"AUTOTRACE_TARGETS=mcs!*::*", "AUTOTRACE_SUMMARY=1", "AUTOTRACE_OUTPUT=" + sumFile}})
	at.res.MustSucceed(t)
	t.Logf("autotrace said:\n%s", strings.Join(at.profLines, "\n"))
	t.Logf("cost (one compile each, not a benchmark: see bench's mcs-jit row): mcs took %v wall, %v CPU without a profiler; %v wall (%.2fx), %v CPU (%.2fx) with every mcs method traced",
		base.res.Duration.Round(time.Millisecond), base.res.CPU.Round(time.Millisecond),
		at.res.Duration.Round(time.Millisecond), ratio(at.res.Duration, base.res.Duration),
		at.res.CPU.Round(time.Millisecond), ratio(at.res.CPU, base.res.CPU))

	if !bytes.Equal(at.assembly, base.assembly) {
		t.Errorf("the assembly compiled under autotrace differs from the baseline's (%d vs %d bytes), at %s", len(at.assembly), len(base.assembly), diffOffsets(at.assembly, base.assembly))
	}
	if at.res.Stdout != base.res.Stdout || at.stderr != base.stderr {
		t.Errorf("mcs's output changed under autotrace:\n%s%s\n--- baseline:\n%s%s", at.res.Stdout, at.stderr, base.res.Stdout, base.stderr)
	}
	for _, c := range []compile{at} {
		if strings.Contains(c.res.Stdout+c.res.Stderr, "InvalidProgramException") {
			t.Errorf("%s: InvalidProgramException", c.name)
		}
	}
	for _, l := range at.profLines {
		if strings.Contains(l, "could not instrument") || strings.Contains(l, "not delivered") || strings.Contains(l, "integration threw") {
			t.Errorf("autotrace: %s", l)
		}
	}

	jitNames := checkJitlog(t, jitFile)
	calls, methods, total := readTraceSummary(t, sumFile)
	ilCalls := readILCounts(t, ilFile)
	// The method whose entry loads the integration (mcs's Main) runs once,
	// and that call started before the integration existed: autotrace says
	// so; it is the one method allowed to be missing, with one call.
	host := ""
	for _, l := range at.profLines {
		if m := hostRe.FindStringSubmatch(l); m != nil {
			host = normalize(strings.TrimPrefix(m[1], "mcs!"))
		}
	}
	if host == "" {
		t.Errorf("autotrace did not say which method hosts the loader")
	} else {
		if _, ok := calls[host]; ok {
			t.Errorf("the loader's host %s is in the summary", host)
		}
		if ilCalls[host] != 1 {
			t.Errorf("the loader's host %s: ilcount counted %d calls, want 1", host, ilCalls[host])
		}
		t.Logf("the loader's host, %s (1 call, running when the integration was loaded), is not traced", host)
		delete(ilCalls, host)
		delete(jitNames, host)
	}
	var missing []string
	for n := range jitNames {
		if _, ok := calls[n]; !ok {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("%d mcs methods that jitlog saw compiled were not instrumented by autotrace, e.g. %q", len(missing), missing[:min(len(missing), 10)])
	}
	same, varied, bad := compareTraceCounts("autotrace", calls, ilCalls)
	t.Logf("autotrace: %d calls traced", total)
	t.Logf("autotrace: %d instrumented methods in the summary (%d by normalized name); ilcount counted %d names: %d equal, %d within run-to-run variation, %d differ; jitlog's %d mcs methods all instrumented: %v",
		methods, len(calls), len(ilCalls), same, len(varied), len(bad), len(jitNames), len(missing) == 0)
	if len(bad) > 0 {
		t.Errorf("autotrace and ilcount disagree on %d mcs methods, e.g.:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
	if len(varied) > 10 {
		t.Errorf("%d methods differ by up to 1%% between the two runs (at most 10 allowed):\n%s", len(varied), strings.Join(varied, "\n"))
	} else if len(varied) > 0 {
		t.Logf("methods that differ by at most 1%% (or one call) between the two processes:\n%s", strings.Join(varied, "\n"))
	}
	if len(calls) < 1000 {
		t.Errorf("only %d mcs methods in autotrace's summary", len(calls))
	}
}
