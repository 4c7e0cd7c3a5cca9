//go:build cgo

package ilrw_test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

const ilprofCLSID = "{3E0B7C52-8A41-4F2D-9B6E-1C5D7A9F0E24}"

func ilprof(t *testing.T) string {
	t.Helper()
	return harness.BuildProfiler(t, "./ilrw/testdata/ilprof")
}

func subjectsApp(t *testing.T, rt harness.Runtime) string {
	return harness.CompileCS(t, []string{"testdata/subjects/app.cs", "testdata/subjects/workload.cs"}, "", harness.Optimize(),
		harness.Reference("System.Core.dll", "System.Numerics.dll"), harness.For(rt))
}

// ints parses the name=value pairs of the first stderr line that matches
// prefix.
func ints(t *testing.T, res harness.Result, prefix string) map[string]int {
	t.Helper()
	for _, l := range res.StderrLines() {
		if !strings.HasPrefix(l, prefix) {
			continue
		}
		m := map[string]int{}
		for _, f := range strings.Fields(strings.TrimPrefix(l, prefix)) {
			k, v, ok := strings.Cut(f, "=")
			if n, err := strconv.Atoi(v); ok && err == nil {
				m[k] = n
			}
		}
		return m
	}
	t.Fatalf("no line %q:\n%s", prefix, res.Describe())
	return nil
}

func notes(res harness.Result) string {
	var n []string
	for _, l := range res.StderrLines() {
		if strings.HasPrefix(l, "ilprof: note") || strings.HasPrefix(l, "  ") {
			n = append(n, l)
		}
	}
	return strings.Join(n, "\n")
}

// TestRoundTripEveryJITCompiledBody decodes and re-encodes every method
// body the runtime compiles (framework included: ReadyToRun is off) and
// checks the bytes are identical, that the max stack computed is never
// above the compiler's, and that dumps name tokens.
func TestRoundTripEveryJITCompiledBody(t *testing.T) {
	lib := ilprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := subjectsApp(t, rt)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath:      lib,
			ProfilerCLSID:     ilprofCLSID,
			DisableReadyToRun: true,
			Args:              []string{"workload"},
			Env:               []string{"ILPROF_MODE=roundtrip", "ILPROF_DUMP=Subjects.Work::Classify"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done\n")
		s := ints(t, res, "ilprof: roundtrip ")
		ms := ints(t, res, "ilprof: maxstack ")
		t.Logf("%s: %d bodies, %d IL bytes (%d tiny, %d fat, %d with %d EH clauses), %d mismatches, %d decode errors; max stack equal %d, lower %d, higher %d, errors %d; %d named member tokens in dumps",
			rt.Name, s["bodies"], s["bytes"], s["tiny"], s["fat"], s["withEH"], s["clauses"], s["mismatches"], s["decodeErrors"],
			ms["equal"], ms["lower"], ms["higher"], ms["errors"], ms["dumpTokens"])
		if s["bodies"] < 2000 {
			t.Errorf("only %d bodies compiled; is ReadyToRun off?", s["bodies"])
		}
		if s["mismatches"] != 0 || s["decodeErrors"] != 0 {
			t.Errorf("%d mismatches, %d decode errors:\n%s", s["mismatches"], s["decodeErrors"], notes(res))
		}
		if n, ok := s["reuseMismatches"]; !ok || n != 0 {
			t.Errorf("through ilrw.Decoder and AppendEncode: %d mismatches (reported: %v):\n%s", n, ok, notes(res))
		}
		if s["withEH"] == 0 || s["tiny"] == 0 || s["fat"] == 0 {
			t.Errorf("the sample lacks a kind of body: %v", s)
		}
		if ms["higher"] != 0 || ms["errors"] != 0 {
			t.Errorf("max stack above the compiler's %d times, %d errors:\n%s", ms["higher"], ms["errors"], notes(res))
		}
		// Most compilers' values are exact; ours must agree with nearly all.
		if ms["equal"] < 9*(ms["equal"]+ms["lower"])/10 {
			t.Errorf("max stack equal to the compiler's only %d times of %d", ms["equal"], ms["equal"]+ms["lower"])
		}
		res.MustStderrContain(t,
			"ilprof: dump // fat header",
			"ilprof: dump IL_0000: ldstr \"Subjects.Work::Classify\"",
			"call Manual::Count",
			"switch (IL_",
			"ldstr \"zero\"",
		)
	})
}

// lines returns stdout's lines, split into hook lines and the others.
func lines(res harness.Result) (hooks, other []string) {
	for _, l := range strings.Split(strings.TrimRight(res.Stdout, "\n"), "\n") {
		if strings.HasPrefix(l, "hook: ") {
			hooks = append(hooks, strings.TrimPrefix(l, "hook: "))
		} else {
			other = append(other, l)
		}
	}
	return
}

var (
	manualRe = regexp.MustCompile(`^manual (\S+)=(\d+)$`)
	hookRe   = regexp.MustCompile(`^(\S+) enter=(\d+) exit=(\d+) last=(.*)$`)
)

// TestRewriteHooks rewrites every method of the test app's Subjects
// namespace (try/catch/filter/finally, nested EH, switch, a long loop,
// tiny methods, generics, a constructor, struct returns) with entry and
// exit hooks, and checks the app's output is unchanged but for what the
// rewrite adds, and that the hooks ran as often as the methods did.
func TestRewriteHooks(t *testing.T) {
	lib := ilprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := subjectsApp(t, rt)
		base := harness.Run(t, rt, app, harness.RunOptions{})
		base.MustSucceed(t)
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: ilprofCLSID,
			Env:           []string{"ILPROF_MODE=rewrite"},
		})
		res.MustSucceed(t)
		s := ints(t, res, "ilprof: rewriter ")
		t.Logf("%s: %v", rt.Name, s)
		if s["errors"] != 0 {
			t.Errorf("%d rewrite errors:\n%s", s["errors"], notes(res))
		}
		baseHooks, baseOut := lines(base)
		hooks, out := lines(res)
		if len(baseHooks) != 0 {
			t.Errorf("hooks ran without the profiler: %v", baseHooks)
		}
		// Output: identical, except the replaced call.
		want := strings.Join(baseOut, "\n")
		want = strings.Replace(want, "greet: original", "greet: replaced", 1)
		if got := strings.Join(out, "\n"); got != want {
			t.Errorf("output changed:\n--- without profiler (call replaced)\n%s\n--- with\n%s", want, got)
		}
		if s["replaced"] != 1 {
			t.Errorf("%d call sites replaced, want 1", s["replaced"])
		}
		manual := map[string]int{}
		for _, l := range out {
			if m := manualRe.FindStringSubmatch(l); m != nil {
				manual[m[1]], _ = strconv.Atoi(m[2])
			}
		}
		if len(manual) < 14 {
			t.Fatalf("only %d methods counted by hand:\n%s", len(manual), res.Stdout)
		}
		last := map[string]string{}
		for _, h := range hooks {
			if strings.HasPrefix(h, "ticks=") {
				continue
			}
			m := hookRe.FindStringSubmatch(h)
			if m == nil {
				t.Errorf("bad hook line %q", h)
				continue
			}
			e, _ := strconv.Atoi(m[2])
			x, _ := strconv.Atoi(m[3])
			n, ok := manual[m[1]]
			if !ok {
				t.Errorf("hook for %s, which the app does not count", m[1])
			}
			if e != n || x != n {
				t.Errorf("%s: called %d times, entry hook %d, exit hook %d", m[1], n, e, x)
			}
			last[m[1]] = m[4]
			delete(manual, m[1])
		}
		for name := range manual {
			t.Errorf("no hooks ran for %s", name)
		}
		// Return values reached the exit hook (the outermost call exits last).
		for name, want := range map[string]string{
			"Subjects.Work::Fib": "55", "Subjects.Work::Tiny": "5", "Subjects.Work::Classify": "many",
			"Subjects.Work::Make": "(3,4)", "Subjects.Work::Echo": "7", "Subjects.Work::Early": "null",
			"Subjects.Work::Nested": "abdeg", "Subjects.Work::.ctor": "null", "Subjects.Greeter::Say": "greet: replaced",
			"Subjects.Work::Thrower": "null", "Subjects.Work::Filtered": "odd",
		} {
			if last[name] != want {
				t.Errorf("%s: last value seen at exit %q, want %q", name, last[name], want)
			}
		}
		if s["widened"] == 0 {
			t.Error("no short branch was widened")
		}
		if s["tinyPromoted"] == 0 {
			t.Error("no tiny header was promoted")
		}
		ticks := 0
		for _, h := range hooks {
			if v, ok := strings.CutPrefix(h, "ticks="); ok {
				ticks, _ = strconv.Atoi(v)
			}
		}
		// A tick before each call of LoopLong(20): Manual.Count, 10 Appends
		// in each of 20 iterations, ToString.
		if ticks != 1+10*20+1 {
			t.Errorf("ticks=%d, want %d", ticks, 1+10*20+1)
		}
	})
}

// TestReJIT rewrites a method that already ran, then reverts it.
func TestReJIT(t *testing.T) {
	lib := ilprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/rejit/app.cs"}, "", harness.For(rt))
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: ilprofCLSID,
			Env:           []string{"ILPROF_MODE=rejit"},
		})
		res.MustSucceed(t)
		for _, l := range res.StderrLines() {
			if strings.HasPrefix(l, "ilprof: ") {
				t.Logf("%s: %s", rt.Name, l)
			}
		}
		res.MustStdoutContain(t, "before: hello\n", "after rejit: rewritten by ReJIT\n", "after revert: hello\n", "app done\n")
		res.MustStderrContain(t, "ilprof: RequestReJIT: <nil>", "ilprof: RequestRevert: <nil>")
		s := ints(t, res, "ilprof: rewriter ")
		if s["rejitted"] < 1 || s["errors"] != 0 {
			t.Errorf("stats %v", s)
		}
	})
}

// TestReJITWithInliners rewrites a method that was inlined into its only
// caller: the new body shows only because the runtime recompiles the caller
// too (with inlining of the method blocked), and the revert undoes it.
func TestReJITWithInliners(t *testing.T) {
	lib := ilprof(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/rejitinl/app.cs"}, "", harness.Optimize(), harness.For(rt))
		if rt.Major < 3 {
			t.Skipf("%s: RequestReJITWithInliners is ICorProfilerInfo10, new in .NET Core 3.0", rt.Name)
		}
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath:  lib,
			ProfilerCLSID: ilprofCLSID,
			// Tier-0 code inlines nothing.
			Env: []string{"ILPROF_MODE=rejitinl", "COMPlus_TieredCompilation=0", "DOTNET_TieredCompilation=0"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "before: hello\n", "after rejit: rewritten by ReJIT\n", "after revert: hello\n", "app done\n")
		res.MustStderrContain(t, "ilprof: RequestReJITWithInliners: <nil>", "ilprof: RequestRevert: <nil>")
		res.MustStderrNotContain(t, "ReJITError")
		s := ints(t, res, "ilprof: rewriter ")
		if s["rejitted"] < 1 || s["errors"] != 0 {
			t.Errorf("stats %v", s)
		}
	})
}
