package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/clrprof/clrprof/internal/harness"
)

var jitlogCountRe = regexp.MustCompile(`(?m)^jitlog: (\d+) functions compiled$`)

// TestContprofWithJitlog: contprof and the jitlog sample composed in one
// library (-tags contprof_jitlog, profiler.Compose), on every runtime.
// contprof's profiles are what they are alone (exact exception counts, the
// live heap's top, CPU or wall where the runtime has them), and jitlog
// names every compilation: as many "jit:" lines as it counts, the app's hot
// methods among them. Each has its own event mask: contprof does not ask
// for JIT compilations, jitlog for nothing else than class loads (its
// names of shared generic code) and, on .NET 5+, its own EventPipe session
// (the runtime's JIT events: the compiled signatures).
func TestContprofWithJitlog(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_jitlog"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_HEAP=1", "CONTPROF_HEAP_RATE=65536")
		res.MustStdoutContain(t, "app done")
		res.MustStderrContain(t, "contprof: wrote period ", "jit: Hot.Thrower", "jit: Hot.Retain")
		m := jitlogCountRe.FindStringSubmatch(res.Stderr)
		if m == nil {
			t.Fatalf("%s: no jitlog count:\n%s", rt.Name, res.Describe())
		}
		n, _ := strconv.Atoi(m[1])
		lines := strings.Count(res.Stderr, "\njit: ")
		if n == 0 || lines != n {
			t.Errorf("%s: jitlog counted %d compilations and printed %d", rt.Name, n, lines)
		}
		profs := load(t, dir)
		exc := map[string]int64{}
		for _, p := range profs["exceptions"] {
			for _, s := range p.Sample {
				exc[appFrame(s)+" "+strings.Join(s.Label["exception"], ",")] += s.Value[0]
			}
		}
		if exc["Hot.Thrower System.InvalidOperationException"] != 200 || exc["Hot.RareThrower System.ArgumentException"] != 20 {
			t.Errorf("%s: composed, contprof's exceptions: %v; want Hot.Thrower 200, Hot.RareThrower 20", rt.Name, exc)
		}
		heaps := profs["heap"]
		if len(heaps) == 0 {
			t.Fatalf("%s: no heap profile", rt.Name)
		}
		f, v, total := top(byAppFrame(heaps[len(heaps)-1:], 1))
		if f != "Hot.Retain" || 2*v <= total {
			t.Errorf("%s: composed, final live heap top %s with %d of %d bytes, want Hot.Retain", rt.Name, f, v, total)
		}
		t.Logf("%s: contprof and jitlog composed: %d compilations named; exceptions %v; live heap top %s %d KB of %d KB", rt.Name, n, exc, f, v>>10, total>>10)
	})
}

// TestContprofWithGotrace: contprof and the gotrace tracer composed in one
// library (-tags contprof_gotrace), gotrace tracing Spans.InSpan of
// testdata/spans.cs (two calls, 1.2 s of spinning each, then as long in
// Spans.OutOfSpan, untraced). gotrace's JSON lines name each call's
// span_id and trace_id; on the runtimes where contprof takes CPU and wall
// samples (.NET Core 3.0+), every sample taken while Spans.Spin runs
// inside Spans.InSpan carries the span_id and trace_id of one of those
// calls, each call's span is on some sample, and no sample outside
// Spans.InSpan carries a span_id or trace_id. (Samples in InSpan but not
// in Spin, inside the hooks' own instructions at the call's start and
// end, are not checked: the span is entered and left there.) On 2.x the
// two still run composed and gotrace reports the spans.
func TestContprofWithGotrace(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_gotrace"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := harness.CompileCS(t, []string{"testdata/spans.cs"}, "", harness.For(rt))
		out := filepath.Join(t.TempDir(), "spans.jsonl")
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"1200", "2"},
			Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1",
				"GOTRACE_TARGETS=spans!Spans::InSpan", "GOTRACE_OUTPUT=" + out},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done")
		res.MustStderrContain(t, "gotrace: tracing spans!Spans::InSpan", "contprof: wrote period ")
		data, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		type pair struct{ trace, span string }
		reported := map[pair]int64{}
		for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var l struct {
				Method  string `json:"method"`
				TraceID string `json:"trace_id"`
				SpanID  string `json:"span_id"`
			}
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				t.Fatalf("%s: %q: %v", rt.Name, line, err)
			}
			if l.Method != "Spans::InSpan" || len(l.TraceID) != 32 || len(l.SpanID) != 16 {
				t.Errorf("%s: line %s: want Spans::InSpan with a trace_id and a span_id", rt.Name, line)
			}
			reported[pair{l.TraceID, l.SpanID}] = 0
		}
		if len(reported) != 2 {
			t.Fatalf("%s: gotrace reported %d distinct spans, want the 2 calls':\n%s", rt.Name, len(reported), data)
		}
		if !rt.AtLeast(3, 0) {
			t.Logf("%s: composed; gotrace reported the 2 spans %v (no CPU or wall samples before .NET Core 3.0)", rt.Name, reported)
			return
		}
		profs := load(t, dir)
		for _, kind := range []string{"cpu", "wall"} {
			var in, inLabelled, out, outLabelled int64
			for _, p := range profs[kind] {
				for _, s := range p.Sample {
					sp := pair{strings.Join(s.Label["trace_id"], ","), strings.Join(s.Label["span_id"], ",")}
					switch {
					case hasFrame(s, "Spans.InSpan") && hasFrame(s, "Spans.Spin"):
						in += s.Value[0]
						if _, ok := reported[sp]; ok {
							inLabelled += s.Value[0]
							reported[sp] += s.Value[0]
						}
					case !hasFrame(s, "Spans.InSpan"):
						out += s.Value[0]
						if sp.trace != "" || sp.span != "" {
							outLabelled += s.Value[0]
						}
					}
				}
			}
			t.Logf("%s %s: in a span %d samples (%d with a span gotrace reported), outside %d (%d labelled)", rt.Name, kind, in, inLabelled, out, outLabelled)
			if in == 0 || inLabelled != in || out == 0 || outLabelled != 0 {
				t.Errorf("%s %s: span labels wrong: in %d/%d labelled with a reported span, out %d/%d labelled", rt.Name, kind, inLabelled, in, outLabelled, out)
			}
		}
		for sp, n := range reported {
			if n == 0 {
				t.Errorf("%s: span %v reported by gotrace is on no sample", rt.Name, sp)
			}
		}
	})
}
