package soak

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/diag"
	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

// Mono's compiler and the reference assemblies it compiles against
// (scripts/setup.sh installs them with the Debian package mono-mcs).
const (
	mcsExe  = "/usr/lib/mono/4.5/mcs.exe"
	monoLib = "/usr/lib/mono/4.5/"
)

// The runtime mcs runs on in the autotrace and gotrace soaks, and the ones
// TestMCSSoak runs it on: .NET 8 and the runtimes in support.
const mcsRuntime = "net8.0.4"

var mcsRuntimes = []string{"net8.0.4", "net10.0.15", "net11.0.0"}

// The samples' CLSIDs (from their package comments).
const (
	jitlogCLSID    = "{8A5D2C3E-1F4B-4E6A-9D7C-0B3E5F1A2C4D}"
	ilcountCLSID   = "{B5A4F2C1-6D3E-4A8B-9F07-2C1E5D4A3B69}"
	cpuprofCLSID   = "{B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58}"
	allocprofCLSID = "{C4E8A1B7-2F59-4D3C-8E6A-9B0D1F2C3E84}"
	calltraceCLSID = "{E7A3C5B9-4D21-4F6E-9B8A-1C3D5E7F9A02}"
	attachCLSID    = "{3B8E1D6F-2C4A-4F9B-A7E5-6D0C9B8A7F21}"
	contprofCLSID  = "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}"
)

// soakSize is the number of generated classes and the timeout of one
// compile: a short soak by default, a long one with CLRPROF_SOAK=long;
// CLRPROF_SOAK_CLASSES overrides the number of classes.
func soakSize(t *testing.T) (int, time.Duration) {
	classes, timeout := 200, 5*time.Minute
	if os.Getenv("CLRPROF_SOAK") == "long" {
		classes, timeout = 1000, 30*time.Minute
	}
	if v := os.Getenv("CLRPROF_SOAK_CLASSES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("CLRPROF_SOAK_CLASSES=%q: want a positive number", v)
		}
		classes = n
	}
	return classes, timeout
}

// compile is one run of mcs on the generated program and what came of it.
type compile struct {
	name     string
	res      harness.Result
	assembly []byte
	// stderr is mcs's stderr without the profiler's own lines, which are
	// in profLines.
	stderr    string
	profLines []string
}

// mcsArgs compiles p.cs in the working directory into p.exe against Mono's
// reference assemblies. The names are relative so that the diagnostics
// ("p.cs(line,col): warning ...") and the assembly (which records its file
// name) are the same in every working directory.
var mcsArgs = []string{"-nostdlib", "-r:" + monoLib + "mscorlib.dll", "-r:" + monoLib + "System.dll", "-r:" + monoLib + "System.Core.dll", "-out:p.exe", "p.cs"}

// TestMCSSoak compiles a large generated C# program with Mono's mcs running
// on .NET 8, 10 and 11, on each once without a profiler and once under each sample profiler,
// and checks that the profilers change nothing and report sane figures.
// See the package comment for exactly what is compared.
func TestMCSSoak(t *testing.T) {
	harness.Integration(t)
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	var chosen []harness.Runtime
	for _, r := range rts {
		if slices.Contains(mcsRuntimes, r.Name) {
			chosen = append(chosen, r)
		}
	}
	if len(chosen) == 0 {
		t.Skipf("none of %v is available (installed by scripts/setup.sh, or excluded by CLRPROF_RUNTIMES); mcs.exe is run on them", mcsRuntimes)
	}
	if _, err := os.Stat(mcsExe); err != nil {
		t.Fatalf("%v: scripts/setup.sh installs mcs.exe (Debian package mono-mcs)", err)
	}
	classes, timeout := soakSize(t)
	prog := Generate(classes)
	t.Logf("generated program: %d classes, %d lines, %d bytes", prog.Classes, prog.Lines, len(prog.Source))

	testStart := time.Now()
	libs := map[string]string{}
	for _, s := range []string{"jitlog", "ilcount", "cpuprof", "allocprof", "calltrace", "attachjit", "contprof"} {
		libs[s] = harness.BuildProfiler(t, "./sample/"+s)
	}
	clrattach := filepath.Join(t.TempDir(), "clrattach")
	if out, err := exec.Command("go", "build", "-o", clrattach, "../cmd/clrattach").CombinedOutput(); err != nil {
		t.Fatalf("go build clrattach: %v\n%s", err, out)
	}
	t.Logf("profilers and clrattach built in %v", time.Since(testStart).Round(time.Millisecond))

	for _, rt := range chosen {
		t.Run(rt.Name, func(t *testing.T) {
			// run compiles the program once; prefix marks the profiler's own lines
			// on stderr.
			run := func(name, prefix string, opts harness.RunOptions) compile {
				t.Helper()
				opts.Dir = t.TempDir()
				opts.Args = mcsArgs
				opts.Timeout = timeout
				if err := os.WriteFile(filepath.Join(opts.Dir, "p.cs"), []byte(prog.Source), 0o644); err != nil {
					t.Fatal(err)
				}
				res := harness.Run(t, rt, mcsExe, opts)
				return finish(t, name, prefix, res, opts.Dir)
			}

			out := t.TempDir()
			base1 := run("baseline", "", harness.RunOptions{})
			base1.res.MustSucceed(t)
			if len(base1.assembly) == 0 || !strings.Contains(base1.res.Stdout, "Compilation succeeded - 3 warning(s)") || strings.Count(base1.stderr, ": warning CS") != 3 {
				t.Fatalf("baseline compile: want success, p.exe, and the program's 3 deliberate warnings (got a %d-byte p.exe):\n%s", len(base1.assembly), base1.res.Describe())
			}

			jitFile := filepath.Join(out, "jit.txt")
			jit := run("jitlog", "jitlog: ", harness.RunOptions{ProfilerPath: libs["jitlog"], ProfilerCLSID: jitlogCLSID, Env: []string{"JITLOG_FILE=" + jitFile}})
			ilFile := filepath.Join(out, "ilcount.txt")
			il := run("ilcount", "ilcount: ", harness.RunOptions{ProfilerPath: libs["ilcount"], ProfilerCLSID: ilcountCLSID, Env: []string{"ILCOUNT_OUT=" + ilFile}})
			cpuFile := filepath.Join(out, "cpu.pprof")
			cpu := run("cpuprof (suspend)", "cpuprof: ", harness.RunOptions{ProfilerPath: libs["cpuprof"], ProfilerCLSID: cpuprofCLSID, Env: []string{"CPUPROF_OUT=" + cpuFile, "CPUPROF_MODE=suspend"}})
			cpuPerfFile := filepath.Join(out, "cpu-perf.pprof")
			cpuPerf := run("cpuprof (perf)", "cpuprof: ", harness.RunOptions{ProfilerPath: libs["cpuprof"], ProfilerCLSID: cpuprofCLSID, Env: []string{"CPUPROF_OUT=" + cpuPerfFile, "CPUPROF_MODE=perf"}})
			allocFile := filepath.Join(out, "alloc.pprof")
			alloc := run("allocprof", "allocprof: ", harness.RunOptions{ProfilerPath: libs["allocprof"], ProfilerCLSID: allocprofCLSID, Env: []string{"ALLOCPROF_OUT=" + allocFile}})
			ctFile := filepath.Join(out, "calltrace.txt")
			ct := run("calltrace", "calltrace: ", harness.RunOptions{ProfilerPath: libs["calltrace"], ProfilerCLSID: calltraceCLSID, Env: []string{"CALLTRACE_OUT=" + ctFile}})
			ctNoInlineFile := filepath.Join(out, "calltrace-noinline.txt")
			ctNoInline := run("calltrace (no inlining)", "calltrace: ", harness.RunOptions{ProfilerPath: libs["calltrace"], ProfilerCLSID: calltraceCLSID,
				Env: []string{"CALLTRACE_OUT=" + ctNoInlineFile, "CALLTRACE_NOINLINE=1", "DOTNET_TailCallLoopOpt=0"}})
			// contprof writes the directory and ships the same profiles to
			// Pyroscope and to the OpenTelemetry Collector (gRPC), both real
			// receivers on loopback: the three copies must agree.
			cpDir := filepath.Join(out, "contprof")
			pyro := exporttest.StartPyroscope(t, "")
			col := exporttest.StartCollector(t)
			cp := run("contprof", "contprof: ", harness.RunOptions{ProfilerPath: libs["contprof"], ProfilerCLSID: contprofCLSID,
				Env: []string{"CONTPROF_DIR=" + cpDir, "CONTPROF_PERIOD=1", "CONTPROF_PYROSCOPE_URL=" + pyro.URL(),
					"CONTPROF_OTLP=1", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc", "OTEL_EXPORTER_OTLP_ENDPOINT=" + col.GRPCEndpoint(), "OTEL_SERVICE_NAME=mcs"}})
			attachReport := filepath.Join(out, "attachjit.txt")
			att := attachCompile(t, rt, prog, clrattach, libs["attachjit"], attachReport, timeout)
			base2 := run("baseline again", "", harness.RunOptions{})
			base2.res.MustSucceed(t)

			// mcs is deterministic: two compiles without a profiler give the same
			// bytes (its PE timestamp is 0 and its MVID is not random), so every
			// profiled compile must give exactly those bytes too; nothing is masked.
			if !bytes.Equal(base1.assembly, base2.assembly) {
				t.Fatalf("two compiles without a profiler differ, at %s: mcs is no longer deterministic; compare more carefully", diffOffsets(base1.assembly, base2.assembly))
			}
			if base1.res.Stdout != base2.res.Stdout || base1.stderr != base2.stderr {
				t.Fatalf("two compiles without a profiler printed differently:\n%s\n%s", base1.res.Describe(), base2.res.Describe())
			}
			t.Logf("baseline: exit 0, %d-byte assembly, stdout %q, %d stderr lines, identical twice", len(base1.assembly), strings.TrimSpace(base1.res.Stdout), strings.Count(base1.stderr, "\n"))

			profiled := []compile{jit, il, cpu, cpuPerf, alloc, ct, ctNoInline, att, cp}
			for _, c := range profiled {
				if !c.res.Succeeded() {
					t.Errorf("%s: mcs did not succeed:\n%s", c.name, c.res.Describe())
					continue
				}
				if c.res.Stdout != base1.res.Stdout {
					t.Errorf("%s: mcs's stdout differs from the baseline's:\n%s\n--- baseline:\n%s", c.name, c.res.Stdout, base1.res.Stdout)
				}
				if c.stderr != base1.stderr {
					t.Errorf("%s: mcs's stderr (without the profiler's lines) differs from the baseline's:\n%s\n--- baseline:\n%s", c.name, c.stderr, base1.stderr)
				}
				if !bytes.Equal(c.assembly, base1.assembly) {
					t.Errorf("%s: the assembly differs from the baseline's (%d vs %d bytes), at %s", c.name, len(c.assembly), len(base1.assembly), diffOffsets(c.assembly, base1.assembly))
				}
			}

			// Wall time, CPU time and peak RSS against the mean of the baselines.
			baseWall := (base1.res.Duration + base2.res.Duration) / 2
			baseCPU := (base1.res.CPU + base2.res.CPU) / 2
			baseRSS := (base1.res.MaxRSS + base2.res.MaxRSS) / 2
			t.Logf("baselines: wall %v and %v, cpu %v and %v, max RSS %d and %d MiB",
				base1.res.Duration.Round(time.Millisecond), base2.res.Duration.Round(time.Millisecond),
				base1.res.CPU.Round(time.Millisecond), base2.res.CPU.Round(time.Millisecond), base1.res.MaxRSS>>20, base2.res.MaxRSS>>20)
			for _, c := range profiled {
				t.Logf("%-9s wall %7v (x%.2f)  cpu %7v (x%.2f)  max RSS %4d MiB (x%.2f)", c.name,
					c.res.Duration.Round(time.Millisecond), ratio(c.res.Duration, baseWall),
					c.res.CPU.Round(time.Millisecond), ratio(c.res.CPU, baseCPU),
					c.res.MaxRSS>>20, float64(c.res.MaxRSS)/float64(max(baseRSS, 1)))
			}

			// Each sample's own report.
			jitNames := checkJitlog(t, jitFile)
			checkILCount(t, ilFile, jitNames)
			checkPprof(t, "cpuprof", cpuFile, cpu.profLines)
			checkPprof(t, "cpuprof (perf)", cpuPerfFile, cpuPerf.profLines)
			compareCPUModes(t, cpuFile, cpuPerfFile)
			checkPprof(t, "allocprof", allocFile, alloc.profLines)
			checkContprof(t, cpDir, cp.profLines)
			checkContprofCopies(t, cpDir, cp.profLines, pyro, col)
			exact := checkCalltrace(t, ctNoInline.profLines, ctNoInlineFile, ilFile, true, nil)
			checkCalltrace(t, ct.profLines, ctFile, ilFile, false, exact)
			checkAttachReport(t, attachReport, att)

			// The compiled program runs on every runtime and prints what the
			// generator computed. (The profiled compiles produced the same bytes,
			// checked above, so this covers their output too.)
			app := filepath.Join(t.TempDir(), "p.exe")
			if err := os.WriteFile(app, base1.assembly, 0o644); err != nil {
				t.Fatal(err)
			}
			var ran []string
			for _, r := range rts {
				res := harness.Run(t, r, app, harness.RunOptions{Timeout: timeout})
				if !res.Succeeded() || res.Stdout != prog.Expected || res.Stderr != "" {
					t.Errorf("the compiled program on %s: want exit 0 and\n%s\ngot:\n%s", r.Name, prog.Expected, res.Describe())
					continue
				}
				ran = append(ran, fmt.Sprintf("%s (%v)", r.Name, res.Duration.Round(time.Millisecond)))
			}
			t.Logf("the compiled program printed the expected output on %s:\n%s", strings.Join(ran, ", "), prog.Expected)
			t.Logf("soak of %d classes took %v", classes, time.Since(testStart).Round(time.Second))
		})
	}
}

// finish reads what a compile in dir produced.
func finish(t *testing.T, name, prefix string, res harness.Result, dir string) compile {
	t.Helper()
	c := compile{name: name, res: res}
	c.assembly, _ = os.ReadFile(filepath.Join(dir, "p.exe"))
	var kept []string
	for _, l := range res.StderrLines() {
		if prefix != "" && strings.HasPrefix(l, prefix) {
			c.profLines = append(c.profLines, l)
		} else {
			kept = append(kept, l)
		}
	}
	if len(kept) > 0 {
		c.stderr = strings.Join(kept, "\n") + "\n"
	}
	t.Logf("%s: %s in %v, cpu %v, max RSS %d MiB, %d-byte assembly, %d profiler lines on stderr", name, res.Status(),
		res.Duration.Round(time.Millisecond), res.CPU.Round(time.Millisecond), res.MaxRSS>>20, len(c.assembly), len(c.profLines))
	return c
}

// attachCompile starts mcs without a profiler and attaches attachjit with
// clrattach as soon as the runtime's diagnostics socket exists, early in
// the compile: attachjit collects for half a second, reports and detaches.
// (A compile of the short program takes about 1.2 s on a quiet machine
// here. With a 1 s collection the detach was still pending when mcs exited;
// the runtime then calls neither ProfilerDetachSucceeded nor Shutdown, and
// attachjit, which then wrote its report at the detach, wrote none: seen in
// a CI run. It now reports before it asks to detach.)
func attachCompile(t *testing.T, rt harness.Runtime, prog Program, clrattach, lib, report string, timeout time.Duration) compile {
	t.Helper()
	tmp, err := os.MkdirTemp("", "soak")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(tmp) })
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.cs"), []byte(prog.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	p := harness.Start(t, rt, mcsExe, harness.RunOptions{Args: mcsArgs, Dir: dir, Timeout: timeout, Env: []string{"TMPDIR=" + tmp}})
	start := time.Now()
	var sock string
	for sock == "" {
		if s, err := diag.SocketPath(p.Pid); err == nil {
			sock = s
		} else if p.Exited() || time.Since(start) > time.Minute {
			t.Fatalf("attachjit: no diagnostics socket for pid %d after %v (exited: %v): %v", p.Pid, time.Since(start), p.Exited(), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	socketAfter := time.Since(start)
	// The socket exists before the runtime can take a profiler: until the
	// GC heap is initialized, SetEventMask (in attachjit's
	// InitializeForAttach) fails with CORPROF_E_NOT_YET_AVAILABLE and the
	// runtime refuses the attach with it. Then clrattach is run again.
	var out []byte
	tries := 0
	for {
		tries++
		cmd := exec.Command(clrattach, "-pid", strconv.Itoa(p.Pid), "-clsid", attachCLSID, "-path", lib, "-data", "seconds=0.5 top=100000 out="+report)
		out, err = cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "CORPROF_E_NOT_YET_AVAILABLE") || p.Exited() || time.Since(start) > time.Minute {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	attachedAfter := time.Since(start)
	if err != nil {
		t.Errorf("clrattach (try %d): %v (mcs ended already: %v)\n%s", tries, err, p.Exited(), out)
	}
	t.Logf("attachjit: socket %s after %v; clrattach done after %v and %d tries (the first %d answered CORPROF_E_NOT_YET_AVAILABLE): %s",
		filepath.Base(sock), socketAfter.Round(time.Millisecond), attachedAfter.Round(time.Millisecond), tries, tries-1, strings.TrimSpace(string(out)))
	return finish(t, "attachjit", "attachjit: ", p.Wait(), dir)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, 1)) }

// diffOffsets lists where a and b differ (the first few offsets).
func diffOffsets(a, b []byte) string {
	var offs []string
	n := 0
	for i := 0; i < min(len(a), len(b)); i++ {
		if a[i] != b[i] {
			if n++; n <= 16 {
				offs = append(offs, fmt.Sprintf("%#x", i))
			}
		}
	}
	s := fmt.Sprintf("%d differing bytes [%s]", n, strings.Join(offs, " "))
	if len(a) != len(b) {
		s += fmt.Sprintf(", lengths %d and %d", len(a), len(b))
	}
	return s
}

var (
	jitlogTotalRe = regexp.MustCompile(`(?m)^jitlog: (\d+) functions compiled$`)
	ilHeaderRe    = regexp.MustCompile(`(?m)^ilcount: (\d+) methods rewritten, (\d+) errors$`)
	ilCountRe     = regexp.MustCompile(`(?m)^ilcount: (\d+) (\S.*)$`)
	calltraceRe   = regexp.MustCompile(`^calltrace: summary calls=(\d+) functions=(\d+) threads=(\d+) lost=(\d+) refused=(\d+) unmapped=(\d+) `)
	ctLineRe      = regexp.MustCompile(`^(\d+) (\d+) (\S.*)$`)
	attachRe      = regexp.MustCompile(`^attachjit: pid (\d+), (.+) after (\S+)s: (\d+) JIT compilations of (\d+) methods\n`)
	genericArgsRe = regexp.MustCompile("`\\d+")
)

// mcsType reports whether a type name belongs to mcs.exe, whose types are
// all in the Mono.* (Mono.CSharp, Mono.CompilerServices) and IKVM.*
// (IKVM.Reflection, which mcs embeds) namespaces.
func mcsType(name string) bool {
	return strings.HasPrefix(name, "Mono.") || strings.HasPrefix(name, "IKVM.")
}

// normalize turns both jitlog's names ("Ns.Outer+Inner<int>.Method<T>",
// "Ns.Type..ctor", "Ns.Type.System.IDisposable.Dispose") and ilcount's
// ("Ns.Outer/Inner`1::Method", "Ns.Type::.ctor",
// "Ns.Type::System.IDisposable.Dispose") into one form,
// "Ns.Outer/Inner.Method": no generic arguments or arities, "/" for
// nesting, "." between type and method (jitlog's names do not say where the
// type ends: explicit interface implementations have dots in their method
// names). Names that differ only in generic arguments (instantiations,
// overloads by arity) become one, and compiler-generated names such as
// "<Main>c__AnonStorey0" lose their angle-bracketed part on both sides.
func normalize(name string) string {
	var b strings.Builder
	depth := 0
	for _, r := range name {
		switch {
		case r == '<':
			depth++
		case r == '>' && depth > 0:
			depth--
		case depth == 0:
			b.WriteRune(r)
		}
	}
	s := genericArgsRe.ReplaceAllString(b.String(), "")
	s = strings.ReplaceAll(s, "+", "/")
	return strings.Replace(s, "::", ".", 1)
}

// checkJitlog checks jitlog's list of compilations and returns the
// normalized names of the mcs.exe methods in it.
func checkJitlog(t *testing.T, file string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("jitlog: %v", err)
		return nil
	}
	m := jitlogTotalRe.FindStringSubmatch(string(data))
	lines := strings.Count(string(data), "\njit: ")
	if strings.HasPrefix(string(data), "jit: ") {
		lines++
	}
	if m == nil {
		t.Errorf("jitlog: no total line in %s", file)
		return nil
	}
	total, _ := strconv.Atoi(m[1])
	names := map[string]bool{}
	var mcsComp int
	for _, l := range strings.Split(string(data), "\n") {
		if n, ok := strings.CutPrefix(l, "jit: "); ok && mcsType(n) {
			mcsComp++
			names[normalize(n)] = true
		}
	}
	t.Logf("jitlog: %d compilations (%d lines), %d of mcs.exe methods, %d distinct mcs.exe methods by name", total, lines, mcsComp, len(names))
	if total != lines {
		t.Errorf("jitlog: says %d functions compiled but listed %d", total, lines)
	}
	if total < 2000 || len(names) < 1000 {
		t.Errorf("jitlog: only %d compilations, %d mcs.exe methods: too few for mcs compiling thousands of lines", total, len(names))
	}
	return names
}

// checkILCount checks that ilcount rewrote, without error, every method of
// mcs.exe that was JIT-compiled: each rewritten method was then called and
// counted (one count line per rewritten method, all of mcs.exe), and every
// mcs.exe method that jitlog saw compiled in its own run is among them.
// jitlog's run has inlining on, ilcount's off (ilcount disables it), so
// ilcount's run compiles at least those methods.
func checkILCount(t *testing.T, file string, jitNames map[string]bool) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("ilcount: %v", err)
		return
	}
	h := ilHeaderRe.FindStringSubmatch(string(data))
	if h == nil {
		t.Errorf("ilcount: no header in %s", file)
		return
	}
	rewritten, _ := strconv.Atoi(h[1])
	if h[2] != "0" {
		t.Errorf("ilcount: %s errors rewriting", h[2])
	}
	counted := map[string]bool{}
	entries := 0
	var calls int64
	notMCS := 0
	for _, m := range ilCountRe.FindAllStringSubmatch(string(data), -1) {
		if strings.HasSuffix(m[0], " methods rewritten, "+h[2]+" errors") {
			continue
		}
		entries++
		n, _ := strconv.ParseInt(m[1], 10, 64)
		calls += n
		if !mcsType(m[2]) {
			notMCS++
		}
		counted[normalize(m[2])] = true
	}
	var missing []string
	for n := range jitNames {
		if !counted[n] {
			missing = append(missing, n)
		}
	}
	slices.Sort(missing)
	t.Logf("ilcount: %d methods of mcs.exe rewritten, %d counted (%d calls in all), %d distinct by name; of jitlog's %d mcs.exe methods, %d not counted",
		rewritten, entries, calls, len(counted), len(jitNames), len(missing))
	if rewritten < 1000 {
		t.Errorf("ilcount: only %d methods rewritten", rewritten)
	}
	if entries != rewritten {
		t.Errorf("ilcount: %d methods rewritten but %d counted: a rewritten method never ran, or a counted one was not rewritten", rewritten, entries)
	}
	if notMCS > 0 {
		t.Errorf("ilcount: %d counted methods outside mcs.exe's namespaces (the framework must be left alone)", notMCS)
	}
	if len(missing) > 0 {
		t.Errorf("ilcount: %d mcs.exe methods that jitlog saw compiled were not rewritten and counted, e.g. %q", len(missing), missing[:min(len(missing), 10)])
	}
}

// checkPprof parses a sample's pprof profile and checks that it has
// samples with mcs.exe frames.
func checkPprof(t *testing.T, name, file string, lines []string) {
	t.Helper()
	if len(lines) > 0 {
		t.Logf("%s said:\n%s", name, strings.Join(lines, "\n"))
	}
	f, err := os.Open(file)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	defer f.Close()
	prof, err := profile.Parse(f)
	if err != nil {
		t.Errorf("%s: parse %s: %v", name, file, err)
		return
	}
	var total, inMCS int64
	for _, s := range prof.Sample {
		total += s.Value[0]
		for _, loc := range s.Location {
			if len(loc.Line) > 0 && mcsType(loc.Line[0].Function.Name) {
				inMCS += s.Value[0]
				break
			}
		}
	}
	var types []string
	for _, st := range prof.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	t.Logf("%s: profile %s with %d stacks, %d functions; %s total %d, %.1f%% under an mcs.exe frame",
		name, strings.Join(types, ","), len(prof.Sample), len(prof.Function), types[0], total, 100*float64(inMCS)/float64(max(total, 1)))
	if len(prof.Sample) < 10 || inMCS == 0 {
		t.Errorf("%s: %d stacks, %d %s under an mcs.exe frame: not a profile of mcs", name, len(prof.Sample), inMCS, types[0])
	}
}

// compareCPUModes compares cpuprof's two ways of sampling on the same
// compile: suspending the runtime (the default) and CPUPROF_MODE=perf (the
// kernel samples each thread; no suspension, no signal). Their ten mcs.exe
// methods with the most cumulative CPU time (the compiler's driver and its
// passes, each under most of the samples) must be mostly the same: at least
// seven in common. Innermost frames are not compared: on a compile of a
// few seconds each holds a few percent, and the two modes weigh a sample
// differently (CPU since the last tick against a fixed CPU period).
func compareCPUModes(t *testing.T, suspendFile, perfFile string) {
	t.Helper()
	top := func(file string) ([]string, int) {
		f, err := os.Open(file)
		if err != nil {
			t.Errorf("%v", err)
			return nil, 0
		}
		defer f.Close()
		prof, err := profile.Parse(f)
		if err != nil {
			t.Errorf("parse %s: %v", file, err)
			return nil, 0
		}
		cum := map[string]int64{}
		inMCS := 0
		for _, s := range prof.Sample {
			seen := map[string]bool{}
			for _, loc := range s.Location {
				if len(loc.Line) == 0 {
					continue
				}
				n := loc.Line[0].Function.Name
				if mcsType(n) && !seen[n] {
					seen[n] = true
					cum[n] += s.Value[1]
				}
			}
		}
		var names []string
		for n := range cum {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int {
			if cum[a] != cum[b] {
				if cum[a] > cum[b] {
					return -1
				}
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, s := range prof.Sample {
			for _, loc := range s.Location {
				if len(loc.Line) > 0 && mcsType(loc.Line[0].Function.Name) {
					inMCS += int(s.Value[0])
					break
				}
			}
		}
		return names[:min(10, len(names))], inMCS
	}
	s, _ := top(suspendFile)
	p, perfN := top(perfFile)
	common := 0
	for _, n := range p {
		if slices.Contains(s, n) {
			common++
		}
	}
	t.Logf("cpuprof's two modes, top mcs.exe methods by cumulative CPU: suspend %q, perf %q: %d in common (perf: %d samples in mcs.exe)", s, p, common, perfN)
	// Perf mode leaves out the samples whose stack reaches no managed
	// frame (the runtime's background compilation thread); with fewer
	// than 100 samples left, the order of its top ten is noisy past the
	// first few.
	want := 7
	if perfN < 100 {
		want = 5
	}
	if len(s) < 10 || len(p) < 10 || common < want {
		t.Errorf("cpuprof's suspend and perf modes disagree on mcs's top methods (%d of 10 in common)", common)
	}
}

// checkCalltrace checks calltrace's report: its summary says every call
// was counted (nothing lost, no function refused, no unknown ID), and its
// count of every mcs.exe method (CALLTRACE_OUT, summed by normalized name)
// is exactly ilcount's, which counts by rewriting each method's IL (in its
// own run of the same deterministic compile, with inlining off). The only
// allowed difference: a method the JIT inlined somewhere in calltrace's
// run (calltrace lists them) may have fewer calls, since inlined calls have
// no hooks.
//
// With noInline (CALLTRACE_NOINLINE=1, as in ilcount's run, and
// DOTNET_TailCallLoopOpt=0, without which the JIT compiles a recursive
// call in tail position as a jump without hooks: seen for
// Mono.CSharp.Linq.AQueryClause.get_Tail, 1562 calls counted of 1800)
// the only allowance is run-to-run variation: at most ten methods whose
// counts differ by one call or 1% (hash lookups run as often as keys
// collide, and string hashes are randomized per process). That run's
// equal methods are returned.
//
// At the defaults, the JIT may also turn a method's recursive tail calls
// into a loop (calltrace prints a note saying so): a method not inlined
// anywhere may have fewer calls only if it is in exact, the methods the run
// without those optimisations counted exactly, and only a few of them
// (seen once in CI: get_Tail, 1797 of 1800, after tier-1 code with the loop
// replaced tier-0 code with hooks).
func checkCalltrace(t *testing.T, lines []string, ctFile, ilFile string, noInline bool, exact map[string]bool) map[string]bool {
	t.Helper()
	t.Logf("calltrace said:\n%s", strings.Join(lines, "\n"))
	var m []string
	top := 0
	for _, l := range lines {
		if s := calltraceRe.FindStringSubmatch(l); s != nil {
			m = s
		}
		if strings.HasPrefix(l, "calltrace: calls=") {
			top++
		}
		if strings.HasPrefix(l, "calltrace: WARNING") {
			t.Errorf("calltrace: %s", l)
		}
	}
	if m == nil || top == 0 {
		t.Errorf("calltrace: no summary or no functions reported")
		return nil
	}
	calls, _ := strconv.ParseInt(m[1], 10, 64)
	if calls < 1000000 {
		t.Errorf("calltrace: only %d calls for a compile of thousands of lines", calls)
	}
	if m[4] != "0" || m[5] != "0" || m[6] != "0" {
		t.Errorf("calltrace: not every call counted: lost=%s refused=%s unmapped=%s", m[4], m[5], m[6])
	}
	data, err := os.ReadFile(ctFile)
	if err != nil {
		t.Errorf("calltrace: %v", err)
		return nil
	}
	ct := map[string]int64{}
	inlined := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if n, ok := strings.CutPrefix(l, "inlined "); ok {
			if mcsType(n) {
				inlined[normalize(n)] = true
			}
			continue
		}
		f := ctLineRe.FindStringSubmatch(l)
		if f == nil {
			t.Errorf("calltrace: bad line in %s: %q", ctFile, l)
			continue
		}
		if mcsType(f[3]) {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			ct[normalize(f[3])] += n
		}
	}
	ildata, err := os.ReadFile(ilFile)
	if err != nil {
		t.Errorf("ilcount: %v", err)
		return nil
	}
	il := map[string]int64{}
	for _, f := range ilCountRe.FindAllStringSubmatch(string(ildata), -1) {
		if strings.Contains(f[0], " methods rewritten, ") {
			continue
		}
		n, _ := strconv.ParseInt(f[1], 10, 64)
		il[normalize(f[2])] += n
	}
	names := map[string]bool{}
	for n := range ct {
		names[n] = true
	}
	for n := range il {
		names[n] = true
	}
	var same, lowerInlined int
	var ctCalls, ilCalls int64
	var bad, tailLoops, varied []string
	equal := map[string]bool{}
	for n := range names {
		c, i := ct[n], il[n]
		ctCalls += c
		ilCalls += i
		switch {
		case c == i:
			same++
			equal[n] = true
		case !noInline && inlined[n] && c < i:
			lowerInlined++
		case !noInline && exact[n] && c < i:
			tailLoops = append(tailLoops, fmt.Sprintf("%s: calltrace %d, ilcount %d", n, c, i))
		case noInline && c != i && abs(c-i) <= max(1, i/100):
			// The two counts come from two processes: a method called
			// from hash lookups (Equals of a key type) runs as often as
			// keys collide, which string hash randomization changes from
			// one process to the next (seen in CI: TypeName's Equals and
			// op_Equality, 240 and 248 calls against 239 and 247).
			varied = append(varied, fmt.Sprintf("%s: calltrace %d, ilcount %d", n, c, i))
		default:
			bad = append(bad, fmt.Sprintf("%s: calltrace %d, ilcount %d (inlined: %v)", n, c, i, inlined[n]))
		}
	}
	slices.Sort(bad)
	t.Logf("calltrace (no inlining: %v) vs ilcount over %d mcs.exe methods (by normalized name): %d equal, %d fewer in calltrace and inlined there (%d methods inlined somewhere), %d differ; %d calls counted by calltrace, %d by ilcount",
		noInline, len(names), same, lowerInlined, len(inlined), len(bad), ctCalls, ilCalls)
	if len(bad) > 0 {
		t.Errorf("calltrace and ilcount disagree on %d mcs.exe methods, e.g.:\n%s", len(bad), strings.Join(bad[:min(len(bad), 20)], "\n"))
	}
	if len(tailLoops) > 0 {
		slices.Sort(tailLoops)
		t.Logf("calltrace: %d methods not inlined anywhere have fewer calls at the defaults but are exact without the JIT's loop optimisation of recursive tail calls:\n%s", len(tailLoops), strings.Join(tailLoops, "\n"))
	}
	if len(varied) > 0 {
		slices.Sort(varied)
		t.Logf("calltrace: %d methods differ by at most 1%% (or one call) between the two processes:\n%s", len(varied), strings.Join(varied, "\n"))
	}
	if len(varied) > 10 {
		t.Errorf("calltrace: %d methods differ slightly from ilcount; run-to-run variation explains a few", len(varied))
	}
	if len(tailLoops) > 5 {
		t.Errorf("calltrace: %d methods explained only by recursive tail calls compiled as loops; expected a few", len(tailLoops))
	}
	if same < 1000 {
		t.Errorf("calltrace and ilcount agree on only %d methods", same)
	}
	return equal
}

// checkAttachReport checks attachjit's report: written (at detach or at
// shutdown), for mcs's pid, with mcs.exe methods compiled while attached.
func checkAttachReport(t *testing.T, file string, c compile) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Errorf("attachjit: no report: %v", err)
		return
	}
	report := string(data)
	m := attachRe.FindStringSubmatch(report)
	if m == nil {
		t.Errorf("attachjit: report:\n%s", report)
		return
	}
	mcsMethods := 0
	for _, l := range strings.Split(report, "\n")[1:] {
		if f := strings.Fields(l); len(f) == 2 && mcsType(f[1]) {
			mcsMethods++
		}
	}
	t.Logf("attachjit: %s after %ss: %s compilations of %s methods, %d of them mcs.exe's; profiler lines on stderr: %q", m[2], m[3], m[4], m[5], mcsMethods, c.profLines)
	if mcsMethods == 0 {
		t.Errorf("attachjit: no mcs.exe method compiled while attached:\n%s", report)
	}
}

// checkContprof checks sample/contprof's run at its defaults (a period of
// one second): it wrote at least one period and a final one at Shutdown;
// the CPU, wall and live heap profiles of all periods together are
// profiles of mcs (checkPprof on their merge); the live heap says how many
// of the runtime's allocation ticks it kept; every period's CPU profile
// says how many ticks took no snapshot.
func checkContprof(t *testing.T, dir string, lines []string) {
	t.Helper()
	joined := strings.Join(lines, "\n")
	t.Logf("contprof said:\n%s", joined)
	if !strings.Contains(joined, "contprof: Shutdown periods=") || !strings.Contains(joined, "contprof: wrote period ") {
		t.Errorf("contprof: no period written or no Shutdown line:\n%s", joined)
		return
	}
	for _, kind := range []string{"cpu", "wall", "heap"} {
		files, _ := filepath.Glob(filepath.Join(dir, kind+".*.pprof"))
		if len(files) == 0 {
			t.Errorf("contprof: no %s profile in %s", kind, dir)
			continue
		}
		slices.SortFunc(files, func(a, b string) int { return periodOf(a) - periodOf(b) })
		var profs []*profile.Profile
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			p, err := profile.ParseData(b)
			if err != nil {
				t.Errorf("contprof: parse %s: %v", f, err)
				continue
			}
			c := strings.Join(p.Comments, "\n")
			switch {
			case kind == "cpu" && !regexp.MustCompile(`sampling: ticks=\d+ .*held=\S+ waited=\S+`).MatchString(c):
				t.Errorf("contprof: %s does not say how its ticks went:\n%s", f, c)
			case kind == "heap" && !regexp.MustCompile(`one kept every \d+ bytes on average: \d+ of \d+ kept`).MatchString(c):
				t.Errorf("contprof: %s does not say which allocation ticks it kept:\n%s", f, c)
			}
			profs = append(profs, p)
		}
		if kind == "heap" && len(profs) > 0 {
			// A snapshot per period: the last one is the live heap.
			profs = profs[len(profs)-1:]
		}
		merged, err := profile.Merge(profs)
		if err != nil {
			t.Errorf("contprof: merge %s: %v", kind, err)
			continue
		}
		mf := filepath.Join(t.TempDir(), kind+".pprof")
		f, err := os.Create(mf)
		if err != nil {
			t.Fatal(err)
		}
		if err := merged.Write(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		checkPprof(t, "contprof "+kind+" ("+strconv.Itoa(len(files))+" files)", mf, nil)
	}
}

// checkContprofCopies checks that what contprof shipped to Pyroscope and
// to the Collector agrees with its directory: every period of every
// profile once, same time range, same samples (exporttest.Compare), and
// that its exporters lost nothing.
func checkContprofCopies(t *testing.T, dir string, lines []string, pyro *exporttest.Pyroscope, col *exporttest.Collector) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.pprof"))
	profs := map[string][]*profile.Profile{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p, err := profile.ParseData(b)
		if err != nil {
			t.Errorf("contprof: parse %s: %v", f, err)
			continue
		}
		kind := strings.SplitN(filepath.Base(f), ".", 2)[0]
		profs[kind] = append(profs[kind], p)
	}
	otlp, err := col.Received()
	if err != nil {
		t.Fatal(err)
	}
	problems, n := exporttest.Compare(profs, pyro.Received(), otlp)
	for _, p := range problems {
		t.Errorf("contprof copies: %s", p)
	}
	var exports []string
	for _, l := range lines {
		if strings.Contains(l, ": sent=") {
			exports = append(exports, l)
			if !strings.Contains(l, "dropped=0 rejected=0 lost=0") {
				t.Errorf("contprof: an exporter lost profiles: %s", l)
			}
		}
	}
	if len(exports) != 2 {
		t.Errorf("contprof: %d exporters reported, want 2:\n%s", len(exports), strings.Join(lines, "\n"))
	}
	t.Logf("contprof: %d profiles in the directory, at Pyroscope and at the Collector (%d OTLP profiles) agree: %d problems; %s", n, len(otlp), len(problems), strings.Join(exports, "; "))
}

// periodOf is N of a contprof file name kind.N.pprof.
func periodOf(path string) int {
	parts := strings.Split(filepath.Base(path), ".")
	if len(parts) < 3 {
		return -1
	}
	n, _ := strconv.Atoi(parts[1])
	return n
}

func abs(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}
