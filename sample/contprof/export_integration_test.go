package main_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/google/pprof/profile"
)

// spansLib builds contprof with the stand-in tracer of spanhook.go, for the
// app that drives it (testdata/spans.cs).
func spansLib(t *testing.T) string {
	t.Helper()
	return harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_spantest"))
}

// spansApp compiles the spans app for rt.
func spansApp(t *testing.T, rt harness.Runtime) string {
	t.Helper()
	return harness.CompileCS(t, []string{"testdata/spans.cs"}, "", harness.For(rt))
}

const (
	testTraceID = "0af7651916cd43dd8448eb211c80319c"
	testSpanID  = "b7ad6b7169203331"
)

// checkCopies checks that every profile of the directory arrived once at
// Pyroscope and once per sample type at the Collector, with its time
// range, labels and samples (exporttest.Compare).
func checkCopies(t *testing.T, rt harness.Runtime, dir profs, pyro []exporttest.Received, otlp []exporttest.Received) {
	t.Helper()
	for _, r := range pyro {
		if r.Labels["service_name"] != "contprof-test" || r.Labels["process_runtime_version"] != rt.Version || r.Labels["host_name"] == "" || r.Labels["process_pid"] == "" {
			t.Errorf("pyroscope labels %v", r.Labels)
			break
		}
	}
	for _, r := range otlp {
		if r.Labels["service.name"] != "contprof-test" || r.Labels["process.runtime.version"] != rt.Version || r.Labels["deployment.environment"] != "ci" {
			t.Errorf("otlp resource %v", r.Labels)
			break
		}
	}
	problems, n := exporttest.Compare(dir, pyro, otlp)
	for _, p := range problems {
		t.Error(p)
	}
	if n == 0 {
		t.Error("no profile in the directory")
	}
	t.Logf("%s: %d profiles: directory, Pyroscope and the Collector compared (%d OTLP profiles), %d problems", rt.Name, n, len(otlp), len(problems))
}

type profs = map[string][]*profile.Profile

// contprof with the directory, Pyroscope and the Collector (HTTP before
// .NET 5, gRPC after) on every runtime: the three copies agree, every
// period of every kind arrives once; the CPU and wall samples taken inside
// the app's span carry its IDs (as labels, and as the OTLP samples' link),
// those outside it none (.NET Core 3.0+, where contprof has CPU and wall).
func TestContprofExport(t *testing.T) {
	lib := spansLib(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := spansApp(t, rt)
		pyro := exporttest.StartPyroscope(t, "")
		col := exporttest.StartCollector(t)
		proto, ep := "http/protobuf", "http://"+col.HTTPAddr
		if rt.Major >= 5 {
			proto, ep = "grpc", col.GRPCEndpoint()
		}
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"1200", "2"},
			Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1",
				"CONTPROF_PYROSCOPE_URL=" + pyro.URL(), "CONTPROF_PYROSCOPE_AUTH=user:secret", "CONTPROF_PYROSCOPE_TENANT=team-a",
				"CONTPROF_OTLP=1", "OTEL_EXPORTER_OTLP_PROTOCOL=" + proto, "OTEL_EXPORTER_OTLP_ENDPOINT=" + ep,
				"OTEL_EXPORTER_OTLP_HEADERS=x-token=abc%20def", "OTEL_SERVICE_NAME=contprof-test", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done")
		// The Shutdown line times the output (the exporters' set-up, the
		// last period written and shipped): task bench's exporters' own
		// cost.
		if m := regexp.MustCompile(`contprof: Shutdown .* output_wall_us=(\d+) output_cpu_us=(\d+)`).FindStringSubmatch(res.Stderr); m == nil || m[1] == "0" {
			t.Errorf("Shutdown line without the output's timing: %q", m)
		} else {
			t.Logf("%s: the output (exporters' set-up, last period) took %s us wall, %s us CPU", rt.Name, m[1], m[2])
		}
		res.MustStderrContain(t, "contprof: exporting to pyroscope "+pyro.URL(), "contprof: exporting to otlp "+proto)
		for _, m := range regexp.MustCompile(`export to [^\n]*: sent=\d+ dropped=\d+ rejected=\d+ lost=\d+`).FindAllString(res.Stderr, -1) {
			t.Log(m)
			if !strings.Contains(m, "dropped=0 rejected=0 lost=0") {
				t.Errorf("loss: %s", m)
			}
		}
		d := load(t, dir)
		got, err := col.Received()
		if err != nil {
			t.Fatal(err)
		}
		checkCopies(t, rt, d, pyro.Received(), got)
		for _, h := range pyro.Headers() {
			if h.Get("X-Scope-OrgID") != "team-a" || !strings.HasPrefix(h.Get("Authorization"), "Basic ") {
				t.Errorf("pyroscope request headers %v", h)
				break
			}
		}

		if !rt.AtLeast(3, 0) {
			return
		}
		names := map[string]int{}
		for _, r := range pyro.Received() {
			names[r.Labels["__name__"]]++
		}
		if names["process_cpu"] == 0 || names["cpu"] != 0 {
			t.Errorf("Pyroscope series by __name__: %v, want the CPU profiles as process_cpu", names)
		}
		// the span: labels in the directory (and so in the copies, which equal it)
		checkSpanLabels(t, rt, d)
		var links int
		for _, r := range got {
			if strings.HasPrefix(r.SampleType, "cpu/") || strings.HasPrefix(r.SampleType, "wall/") {
				links += r.Links
			}
		}
		if links == 0 {
			t.Error("no OTLP cpu or wall sample has a link to the span")
		}
	})
}

// Malformed exporter settings are refused at start with a message naming
// the variable; contprof runs on with the directory.
func TestContprofExportMisconfigured(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof")
	rt := latestRuntime(t)
	app := harness.CompileCS(t, []string{"testdata/spans.cs"}, "", harness.For(rt))
	for _, c := range [][]string{
		{"CONTPROF_PYROSCOPE_URL=localhost:4040", "OTEL_EXPORTER_OTLP_HEADERS=novalue"},
		{"CONTPROF_PYROSCOPE_URL=http://[::1", "OTEL_EXPORTER_OTLP_ENDPOINT=collector:4318"},
		{"CONTPROF_PYROSCOPE_AUTH=a\nb", "OTEL_EXPORTER_OTLP_PROTOCOL=http/json"},
		{"OTEL_RESOURCE_ATTRIBUTES=novalue"},
	} {
		t.Run(strings.Join(c, " "), func(t *testing.T) {
			dir := t.TempDir()
			res := harness.Run(t, rt, app, harness.RunOptions{
				ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"100", "1"},
				Env: append([]string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1", "CONTPROF_OTLP=1", "CONTPROF_PYROSCOPE_URL=http://127.0.0.1:1"}, c...),
			})
			res.MustSucceed(t)
			for _, kv := range c {
				name, _, _ := strings.Cut(kv, "=")
				res.MustStderrContain(t, "contprof: "+name)
			}
			res.MustStderrContain(t, "contprof: Shutdown")
			if strings.Contains(res.Stderr, "contprof: exporting to") && len(c) > 1 {
				t.Errorf("an exporter started despite malformed settings:\n%s", res.Stderr)
			}
			if len(load(t, dir)["exceptions"]) == 0 {
				t.Errorf("no exceptions profile in the directory:\n%s", res.Describe())
			}
		})
	}
}

// A backend that never answers (nothing listens): the app runs on, its
// profiles go to the directory, and the loss is reported at Shutdown,
// within CONTPROF_FLUSH_TIMEOUT. The run's time against a run writing
// the directory alone is logged, not asserted (the machine is shared).
func TestContprofExportBackendDown(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof")
	rt := latestRuntime(t)
	app := harness.CompileCS(t, []string{"testdata/spans.cs"}, "", harness.For(rt))
	addr := exporttest.FreeAddr(t) // nothing listens there
	run := func(env ...string) harness.Result {
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"1000", "1"},
			Env: append([]string{"CONTPROF_DIR=" + t.TempDir(), "CONTPROF_PERIOD=1"}, env...),
		})
		res.MustSucceed(t)
		return res
	}
	base := run()
	res := run("CONTPROF_PYROSCOPE_URL=http://"+addr, "CONTPROF_FLUSH_TIMEOUT=1")
	res.MustStderrContain(t, "contprof: export to pyroscope http://"+addr+" failing: ", "not sent within the bound", "contprof: Shutdown")
	m := regexp.MustCompile(`export to [^\n]*: sent=0 dropped=\d+ rejected=0 lost=(\d+)`).FindStringSubmatch(res.Stderr)
	if m == nil || m[1] == "0" {
		t.Errorf("no loss reported:\n%s", res.Stderr)
	}
	t.Logf("%s: run %v with the backend down (final flush bounded by 1 s), %v with the directory alone; %s", rt.Name, res.Duration, base.Duration, m[0])
}

// latestRuntime is the newest runtime installed: the configuration tests
// need one.
func latestRuntime(t *testing.T) harness.Runtime {
	t.Helper()
	harness.Integration(t)
	rts, err := harness.Runtimes()
	if err != nil || len(rts) == 0 {
		t.Skipf("no runtime: %v", err)
	}
	best := rts[0]
	for _, r := range rts {
		if r.AtLeast(best.Major, best.Minor+1) || r.Major > best.Major {
			best = r
		}
	}
	return best
}

// Both receivers go away for a few periods while the app runs and come
// back: every period still arrives exactly once at each (the exporters
// retried, nothing dropped or lost), and the copies agree with the
// directory.
func TestContprofExportReceiversRestart(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof")
	rt := latestRuntime(t)
	app := harness.CompileCS(t, []string{"testdata/spans.cs"}, "", harness.For(rt))
	pyro := exporttest.StartPyroscope(t, "")
	col := exporttest.StartCollector(t)
	dir := t.TempDir()
	go func() {
		time.Sleep(1500 * time.Millisecond)
		pyro.Stop()
		col.Stop()
		time.Sleep(2500 * time.Millisecond) // periods 2 and 3 written while they are away
		pyro.Restart()
		col.Start()
	}()
	res := harness.Run(t, rt, app, harness.RunOptions{
		ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"1500", "2"},
		Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1", "CONTPROF_PYROSCOPE_URL=" + pyro.URL(),
			"CONTPROF_OTLP=1", "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + col.HTTPAddr, "CONTPROF_FLUSH_TIMEOUT=10",
			"OTEL_SERVICE_NAME=contprof-test", "OTEL_RESOURCE_ATTRIBUTES=deployment.environment=ci"},
	})
	res.MustSucceed(t)
	res.MustStderrContain(t, "failing: ", "recovered after ")
	lines := regexp.MustCompile(`export to [^\n]*: sent=\d+ dropped=0 rejected=0 lost=0 retries=[1-9]\d*`).FindAllString(res.Stderr, -1)
	if len(lines) != 2 {
		t.Errorf("want both exporters to have retried and lost nothing:\n%s", res.Stderr)
	}
	for _, l := range lines {
		t.Log(l)
	}
	got, err := col.Received()
	if err != nil {
		t.Fatal(err)
	}
	checkCopies(t, rt, load(t, dir), pyro.Received(), got)
}

// checkSpanLabels checks the CPU and wall samples of spans.cs: those in
// Spans.InSpan carry the span's IDs, those in Spans.OutOfSpan none.
func checkSpanLabels(t *testing.T, rt harness.Runtime, d profs) {
	t.Helper()
	for _, kind := range []string{"cpu", "wall"} {
		in, inLabelled, out, outLabelled := int64(0), int64(0), int64(0), int64(0)
		for _, p := range d[kind] {
			for _, s := range p.Sample {
				labelled := slices.Equal(s.Label["span_id"], []string{testSpanID}) && slices.Equal(s.Label["trace_id"], []string{testTraceID})
				switch {
				case hasFrame(s, "Spans.InSpan"):
					in += s.Value[0]
					if labelled {
						inLabelled += s.Value[0]
					}
				case hasFrame(s, "Spans.OutOfSpan"):
					out += s.Value[0]
					if labelled || len(s.Label["span_id"]) > 0 {
						outLabelled += s.Value[0]
					}
				}
			}
		}
		t.Logf("%s %s: in the span %d samples (%d labelled), outside %d (%d labelled)", rt.Name, kind, in, inLabelled, out, outLabelled)
		if in == 0 || inLabelled != in || out == 0 || outLabelled != 0 {
			t.Errorf("%s: span labels wrong: in %d/%d labelled, out %d/%d labelled", kind, inLabelled, in, outLabelled, out)
		}
	}
}

// The span's edges: spans.cs enters and leaves the span every
// millisecond or so while contprof samples at 200 Hz, so that many
// samples are taken just before the thread leaves or enters the span.
// Each must carry the labels of the moment its stack was taken (contprof
// reads them with the runtime suspended), even when the sampler is slow
// to record the snapshot: the test build delays it by 2 ms after each
// (SPANTEST_SNAPSHOT_DELAY), time for the app to cross an edge or two.
// With the labels read after the runtime was resumed, as contprof first
// did (TestContprofExport caught it once in CI), this test fails.
func TestContprofSpanEdges(t *testing.T) {
	lib := spansLib(t)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := spansApp(t, rt)
		if !rt.AtLeast(3, 0) {
			t.Skipf("%s: no CPU or wall samples before .NET Core 3.0", rt.Name)
		}
		dir := t.TempDir()
		res := harness.Run(t, rt, app, harness.RunOptions{
			ProfilerPath: lib, ProfilerCLSID: clsid, Args: []string{"0", "0", "1500"},
			Env: []string{"CONTPROF_DIR=" + dir, "CONTPROF_PERIOD=1", "CONTPROF_HZ=200", "SPANTEST_SNAPSHOT_DELAY=2ms"},
		})
		res.MustSucceed(t)
		res.MustStdoutContain(t, "app done")
		checkSpanLabels(t, rt, load(t, dir))
	})
}

// Built with -tags contprof_noexport, contprof links none of the
// exporters' packages and writes its directory as before; a variable that
// asks for an exporter is reported, not ignored silently.
func TestContprofNoExport(t *testing.T) {
	lib := harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_noexport"))
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		app := hotspotsApp(t, rt)
		dir, res := runHotspots(t, rt, lib, app, "CONTPROF_PYROSCOPE_URL=http://127.0.0.1:1", "CONTPROF_OTLP=1")
		res.MustStderrContain(t,
			"contprof: CONTPROF_PYROSCOPE_URL=http://127.0.0.1:1: not exporting: this library was built with -tags contprof_noexport",
			"contprof: CONTPROF_OTLP=1: not exporting: this library was built with -tags contprof_noexport",
			"contprof: Shutdown")
		profs := load(t, dir)
		if len(profs["exceptions"]) == 0 || len(profs["gc"]) == 0 {
			t.Errorf("directory: %d exceptions and %d gc profiles, want some of each", len(profs["exceptions"]), len(profs["gc"]))
		}
	})
}
