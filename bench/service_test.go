//go:build benchrun

// The service benchmark (issue 43): `task bench-service`. The shop of
// ../shared/dotnet/apps/shop (ASP.NET Core, PostgreSQL through Npgsql,
// Redis, a payment instance) under load, with no profiler, under the SDK's
// profilers, and with Microsoft's dotnet-trace attached, in interleaved
// rounds: each round starts the stack once per configuration, in an order
// that rotates from round to round.

package bench_test

import (
	"context"
	"flag"
	"fmt"
	"math"
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

	"github.com/clrprof/clrprof/bench"
	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/internal/loadgen"
	"github.com/clrprof/clrprof/internal/procstat"
)

var (
	flagSvcRounds  = flag.Int("service-rounds", 5, "interleaved rounds (each runs every configuration once)")
	flagSvcSeconds = flag.Int("service-seconds", 10, "seconds of each measured phase (closed loop, then fixed rate)")
	flagSvcConns   = flag.Int("service-conns", 16, "connections of the closed loop")
	flagSvcRate    = flag.Float64("service-rate", 500, "requests/s of the fixed-rate phase (latency)")
	flagSvcConfigs = flag.String("service-configs", "", "comma-separated configurations (default all)")
	flagSvcOut     = flag.String("service-out", "", "markdown report to write (default none: printed only)")
)

const (
	contprofCLSID = "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}"
	cpuprofCLSID  = "{B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58}"
	apmCLSID      = "{7E4C2A91-5B3D-4F60-8A17-2C9E6D4B1F35}"
	goidleCLSID   = "{9C4E7A12-3B5D-4F68-8E91-2A7C6B5D4E30}"
)

// svcConfig is one way of running the shop: a profiler's environment, or a
// dotnet-trace session attached after start-up.
type svcConfig struct {
	name, what string
	env        func(t *testing.T, dir string) []string
	trace      []string // dotnet-trace collect arguments (besides -p, -o)
	variant    string   // harness.ShopOptions.Variant ("otel": OpenTelemetry .NET built in)
	spans      bool     // exports spans to the benchmark's collector
}

// svcRun is what one run of one configuration measured.
type svcRun struct {
	rps        float64  // closed loop
	cpuPerReq  float64  // ms of the shop process's CPU per request, closed loop
	rssMB      float64  // VmRSS at the end of the closed loop
	hwmMB      float64  // VmHWM (peak RSS) then
	mem        memSplit // what holds rssMB
	p50, p99   float64  // ms, fixed rate
	errs       int
	rateErrs   int
	rateAchvd  float64
	profilerOK string // what the profiler or dotnet-trace left behind
}

func svcConfigs(t *testing.T, collector func() string) []svcConfig {
	contprof := goLibOnce(t, "./sample/contprof")
	cpuprof := goLibOnce(t, "./sample/cpuprof")
	apm := goLibOnce(t, "./sample/apm")
	goidle := goLibOnce(t, "./bench/prof/idle")
	contprofRelr := goLibOnce(t, "./sample/contprof", harness.BuildFlags("-ldflags=-extldflags=-Wl,-z,pack-relative-relocs"))
	// contprofEnv runs lib (contprof's library) with its output in dir and
	// the variables extra.
	contprofEnv := func(lib, dir string, extra ...string) []string {
		return append(append(harness.ProfilerEnv(lib, contprofCLSID), "CONTPROF_DIR="+filepath.Join(dir, "contprof")), extra...)
	}
	// contprofRun is a row's env: contprof's own library with extra.
	contprofRun := func(extra ...string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string { return contprofEnv(contprof(t), dir, extra...) }
	}
	// goidleRun is a row's env: bench/prof/idle in BENCH_MODE mode.
	goidleRun := func(mode string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			return append(harness.ProfilerEnv(goidle(t), goidleCLSID), "BENCH_MODE="+mode)
		}
	}
	all := []svcConfig{
		{name: "none", what: "no profiler"},
		{name: "contprof", what: "sample/contprof, its defaults (cpu, wall, heap, alloc, exceptions, contention; 60 s periods)",
			env: contprofRun()},
		// The memory's causes: what loading contprof costs before it
		// profiles anything, and the SDK's floor.
		{name: "contprof-off", what: "sample/contprof with every profile off (CONTPROF_CPU=0 CONTPROF_WALL=0 CONTPROF_EXCEPTIONS=0 CONTPROF_CONTENTION=0 CONTPROF_HEAP=0): its library, its Go runtime and its EventPipe session, no profile's data",
			env: contprofRun("CONTPROF_CPU=0", "CONTPROF_WALL=0", "CONTPROF_EXCEPTIONS=0", "CONTPROF_CONTENTION=0", "CONTPROF_HEAP=0")},
		// contprof's default period (60 s) ends after the run's RSS is
		// read; this row writes a period every 4 s, so that its RSS (read
		// after 8 s of load) includes what writing a period holds: the
		// steady state, at a write rate fifteen times the default's.
		{name: "contprof-period", what: "sample/contprof writing a period every 4 s (CONTPROF_PERIOD=4; the default is 60 s): its RSS is read after at least one period was written (checked)",
			env: contprofRun("CONTPROF_PERIOD=4")},
		{name: "contprof-period-keep", what: "contprof-period with CONTPROF_RETURN_MEMORY=0: the Go heap's free pages left to Go's scavenger after each write instead of given back at once",
			env: contprofRun("CONTPROF_PERIOD=4", "CONTPROF_RETURN_MEMORY=0")},
		{name: "contprof-keepcode", what: "sample/contprof with CONTPROF_RELEASE_CODE=0: the library's code and constant pages touched at start-up stay mapped (the default gives them back after Initialize and after each period's write)",
			env: contprofRun("CONTPROF_RELEASE_CODE=0")},
		{name: "contprof-period-keepcode", what: "contprof-period with CONTPROF_RELEASE_CODE=0",
			env: contprofRun("CONTPROF_PERIOD=4", "CONTPROF_RELEASE_CODE=0")},
		{name: "contprof-period-gogc50", what: "contprof-period with CONTPROF_GOGC=50: the Go heap's minimum goal 2 MB (4 MB at Go's default 100, 1 MB at contprof's 25)",
			env: contprofRun("CONTPROF_PERIOD=4", "CONTPROF_GOGC=50")},
		{name: "contprof-period-gogc100", what: "contprof-period with CONTPROF_GOGC=100 (Go's default collector setting): the steady state with a 4 MB minimum Go heap",
			env: contprofRun("CONTPROF_PERIOD=4", "CONTPROF_GOGC=100")},
		{name: "contprof-nosnap", what: "sample/contprof without its stack snapshots (CONTPROF_CPU=0 CONTPROF_WALL=0): no runtime suspension 19 times a second; heap, allocation, exception and contention profiles on",
			env: contprofRun("CONTPROF_CPU=0", "CONTPROF_WALL=0")},
		{name: "contprof-gogc100", what: "sample/contprof with CONTPROF_GOGC=100 (Go's default collector setting; contprof's default is 25): what a 4 MB minimum Go heap holds",
			env: contprofRun("CONTPROF_GOGC=100")},
		{name: "contprof-relr", what: "sample/contprof linked with -ldflags=-extldflags=-Wl,-z,pack-relative-relocs (relative relocations packed, DT_RELR: needs glibc 2.36 or later to load, so not the default)",
			env: func(t *testing.T, dir string) []string {
				return contprofEnv(contprofRelr(t), dir)
			}},
		{name: "go-idle", what: "bench/prof/idle: a Go profiler that asks for no event (Initialize and Shutdown only): the SDK's floor",
			env: goidleRun("idle")},
		{name: "go-idle-snapshot", what: "bench/prof/idle with BENCH_MODE=snapshot: EnableStackSnapshot alone, no callback, no snapshot taken: what the flag costs the runtime",
			env: goidleRun("snapshot")},
		{name: "go-idle-eventpipe", what: "bench/prof/idle with BENCH_MODE=eventpipe: an in-process EventPipe session of the runtime's provider, GC keyword at Informational, as contprof opens it with its profiles off, events answered in C: what the session costs the runtime",
			env: goidleRun("eventpipe")},
		{name: "cpuprof", what: "sample/cpuprof, its defaults",
			env: func(t *testing.T, dir string) []string {
				return append(harness.ProfilerEnv(cpuprof(t), cpuprofCLSID), "CPUPROF_OUT="+filepath.Join(dir, "cpu.pprof"))
			}},
		{name: "apm", what: "sample/apm: spans of ASP.NET Core, Npgsql (and HttpClient, Redis) exported over OTLP/HTTP to a Collector's receiver on loopback, every span exported (checked)", spans: true,
			env: func(t *testing.T, dir string) []string {
				return append(harness.ProfilerEnv(apm(t), apmCLSID), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector(), "OTEL_SERVICE_NAME=shop")
			}},
		// apm's cost, taken apart (the table of causes): without the
		// export, and without listening at all.
		{name: "apm-noexport", what: "sample/apm with OTEL_SDK_DISABLED=true: the helper's listener encodes every span and hands it to Go, which decodes it; no SDK span, no export",
			env: func(t *testing.T, dir string) []string {
				return append(harness.ProfilerEnv(apm(t), apmCLSID), "OTEL_SDK_DISABLED=true", "OTEL_SERVICE_NAME=shop")
			}},
		{name: "apm-nolisten", what: "sample/apm listening to no source (CLRPROF_APM_SOURCES=None, CLRPROF_APM_REDIS=0): the profiler and its delivered helper, no activity recorded",
			env: func(t *testing.T, dir string) []string {
				return append(harness.ProfilerEnv(apm(t), apmCLSID), "OTEL_EXPORTER_OTLP_ENDPOINT="+collector(),
					"OTEL_SERVICE_NAME=shop", "CLRPROF_APM_SOURCES=None", "CLRPROF_APM_REDIS=0")
			}},
		{name: "otel-dotnet", what: "the shop built with OpenTelemetry .NET's own instrumentation (apps/shop/otel: ASP.NET Core, HttpClient, Npgsql, Redis; OTLP/HTTP to the same receiver), no profiler", variant: "otel", spans: true,
			env: func(t *testing.T, dir string) []string {
				return []string{"OTEL_EXPORTER_OTLP_ENDPOINT=" + collector(), "OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf", "OTEL_SERVICE_NAME=shop"}
			}},
		{name: "dotnet-trace", what: "dotnet-trace collect attached, its default providers", trace: []string{}},
		{name: "dotnet-trace-sample", what: "dotnet-trace collect attached, --providers Microsoft-DotNETCore-SampleProfiler (dotnet-trace 10.0.750501 then enables that provider alone, plus the rundown at the end: its banner says so and the trace holds no Microsoft-Windows-DotNETRuntime events, which the default's does)",
			trace: []string{"--providers", "Microsoft-DotNETCore-SampleProfiler"}},
	}
	if *flagSvcConfigs == "" {
		return all
	}
	var out []svcConfig
	for _, c := range all {
		if c.name == "none" || slices.Contains(strings.Split(*flagSvcConfigs, ","), c.name) {
			out = append(out, c)
		}
	}
	return out
}

// goLibOnce builds pkg's library (with opts) the first time a configuration needs it,
// in the directory of top (the whole benchmark's test), so that it outlives
// the runtime's subtest that first asked: a library built with a subtest's
// t is removed with its directory when that subtest ends, and on the next
// runtime the shop then ran without the profiler, which the runtime does
// not report (seen on 2026-12-06: every .NET 11 row without its profiler,
// caught by the rows' output checks).
func goLibOnce(top *testing.T, pkg string, opts ...harness.BuildOption) func(t *testing.T) string {
	var path string
	return func(t *testing.T) string {
		if path == "" {
			path = harness.BuildProfiler(top, pkg, opts...)
		}
		return path
	}
}

func TestServiceBench(t *testing.T) {
	var col *exporttest.Collector
	collector := func() string {
		if col == nil {
			col = exporttest.StartDiscardingCollector(t)
		}
		return col.TracesEndpoint()
	}
	configs := svcConfigs(t, collector)
	trace := filepath.Join(harness.CacheDir(), "dotnet", "bin", "dotnet-trace")
	var report strings.Builder
	fmt.Fprintf(&report, "# The shop under load\n\nGenerated by `task bench-service` at %s (commit %s); load average %s at the start.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), gitOut("rev-parse", "--short", "HEAD"), loadavg())
	fmt.Fprintf(&report, "Each round starts the stack (PostgreSQL, Redis, the payment instance, the shop) once per configuration, "+
		"in an order rotated from round to round, warms up for 3 s, then runs `GET /products/{id}` (ids 1-1000 in turn) "+
		"for %d s at %d connections (closed loop: requests/s, the shop process's CPU per request, its RSS at the end), "+
		"then for %d s at %.0f requests/s (open loop, latency from when each request was due: p50, p99). "+
		"The load generator (internal/loadgen) runs in the benchmark's process on the same machine. "+
		"Ratios are per round against that round's run without a profiler; the table gives their median over %d rounds "+
		"and, in brackets with four rounds or more, a 95%% interval of that median (bootstrap of the rounds: bench.MedianInterval; "+
		"a target inside it is neither met nor missed by the run), "+
		"and, as noise, the spread (max-min over median) of the runs without a profiler.\n\n",
		*flagSvcSeconds, *flagSvcConns, *flagSvcSeconds, *flagSvcRate, *flagSvcRounds)
	harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
		if ok, why := harness.ShopRuntime(rt); !ok {
			t.Skip(why)
		}
		stackDir, err := os.MkdirTemp("", "clrprof-svcbench-")
		if err != nil {
			t.Fatal(err)
		}
		_ = os.Chmod(stackDir, 0o755)
		defer os.RemoveAll(stackDir)
		runs := map[string][]svcRun{}
		for round := 0; round < *flagSvcRounds; round++ {
			order := slices.Clone(configs)
			k := round % len(order)
			order = append(order[k:], order[:k]...)
			for _, c := range order {
				r := runService(t, rt, stackDir, trace, c)
				runs[c.name] = append(runs[c.name], r)
				t.Logf("%s round %d %s: %.0f req/s, %.3f ms CPU/req, RSS %.1f MB (peak %.1f), p50 %.2f ms p99 %.2f ms at %.0f/s; errors %d/%d; %s",
					rt.Name, round+1, c.name, r.rps, r.cpuPerReq, r.rssMB, r.hwmMB, r.p50, r.p99, r.rateAchvd, r.errs, r.rateErrs, r.profilerOK)
			}
		}
		fmt.Fprintf(&report, "## %s\n\n", rt.Name)
		fmt.Fprintf(&report, "| configuration | requests/s | vs none | CPU ms/request | vs none | RSS MB | vs none | p99 ms at %.0f/s | vs none | errors |\n|---|---|---|---|---|---|---|---|---|---|\n", *flagSvcRate)
		base := runs["none"]
		for _, c := range configs {
			rs := runs[c.name]
			ratio := func(f func(svcRun) float64, diff bool) string {
				var v []float64
				for i, r := range rs {
					if i < len(base) {
						if diff {
							v = append(v, f(r)-f(base[i]))
						} else if f(base[i]) > 0 {
							v = append(v, f(r)/f(base[i]))
						}
					}
				}
				if c.name == "none" {
					return "—"
				}
				if diff {
					return fmt.Sprintf("%+.1f", median(v))
				}
				if len(v) >= 4 {
					lo, hi := bench.MedianInterval(v)
					return fmt.Sprintf("%.3f× [%.3f–%.3f]", median(v), lo, hi)
				}
				return fmt.Sprintf("%.3f×", median(v))
			}
			col := func(f func(svcRun) float64) []float64 {
				var v []float64
				for _, r := range rs {
					v = append(v, f(r))
				}
				return v
			}
			rps := func(r svcRun) float64 { return r.rps }
			cpu := func(r svcRun) float64 { return r.cpuPerReq }
			rss := func(r svcRun) float64 { return r.rssMB }
			p99 := func(r svcRun) float64 { return r.p99 }
			errs := 0
			for _, r := range rs {
				errs += r.errs + r.rateErrs
			}
			fmt.Fprintf(&report, "| %s | %.0f | %s | %.3f | %s | %.1f | %s MB | %.2f | %s ms | %d |\n", c.name,
				median(col(rps)), ratio(rps, false), median(col(cpu)), ratio(cpu, false),
				median(col(rss)), ratio(rss, true), median(col(p99)), ratio(p99, true), errs)
		}
		fmt.Fprintf(&report, "\nWhat holds the RSS at the end of the closed loop (/proc/PID/smaps; MB, medians; the difference from none in brackets):\n\n")
		fmt.Fprintf(&report, "| configuration | the library's file pages | the library's written pages | Go heap arenas | other anonymous | other files |\n|---|---|---|---|---|---|\n")
		for _, c := range configs {
			rs := runs[c.name]
			cell := func(f func(memSplit) float64, diff bool) string {
				var v, d []float64
				for i, r := range rs {
					v = append(v, f(r.mem))
					if i < len(base) {
						d = append(d, f(r.mem)-f(base[i].mem))
					}
				}
				if !diff || c.name == "none" {
					return fmt.Sprintf("%.1f", median(v))
				}
				return fmt.Sprintf("%.1f (%+.1f)", median(v), median(d))
			}
			fmt.Fprintf(&report, "| %s | %s | %s | %s | %s | %s |\n", c.name,
				cell(func(m memSplit) float64 { return m.libFile }, false), cell(func(m memSplit) float64 { return m.libPriv }, false),
				cell(func(m memSplit) float64 { return m.goHeap }, false),
				cell(func(m memSplit) float64 { return m.anon }, true), cell(func(m memSplit) float64 { return m.files }, true))
		}
		fmt.Fprintf(&report, "\nNoise (spread of the %d runs without a profiler): requests/s ±%.1f%%, CPU/request ±%.1f%%, RSS ±%.1f%%, p99 ±%.1f%%.\n\n",
			len(base), 50*spread(base, func(r svcRun) float64 { return r.rps }), 50*spread(base, func(r svcRun) float64 { return r.cpuPerReq }),
			50*spread(base, func(r svcRun) float64 { return r.rssMB }), 50*spread(base, func(r svcRun) float64 { return r.p99 }))
		for _, c := range configs {
			fmt.Fprintf(&report, "- %s: %s\n", c.name, c.what)
		}
		report.WriteString("\n")
	})
	fmt.Fprintf(&report, "Load average at the end: %s.\n", loadavg())
	t.Log("\n" + report.String())
	if *flagSvcOut != "" {
		if err := os.WriteFile(*flagSvcOut, []byte(report.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// runService starts the stack with configuration c, loads it and stops it.
func runService(t *testing.T, rt harness.Runtime, stackDir, traceTool string, c svcConfig) svcRun {
	outDir := t.TempDir()
	var env []string
	if c.env != nil {
		env = c.env(t, outDir)
	}
	shop := harness.StartShop(t, rt, harness.ShopOptions{Env: env, PayEnv: []string{}, Dir: stackDir, Variant: c.variant})
	defer shop.Stop()
	var r svcRun
	var tr *exec.Cmd
	traceFile := filepath.Join(outDir, "trace.nettrace")
	if c.trace != nil {
		args := append([]string{"collect", "-p", strconv.Itoa(shop.PID), "-o", traceFile}, c.trace...)
		tr = exec.Command(traceTool, args...)
		tr.Stdout, tr.Stderr = nil, nil
		if err := tr.Start(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 300; i++ { // until the session wrote its header
			if st, err := os.Stat(traceFile); err == nil && st.Size() > 0 {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	var reqs []loadgen.Request
	for id := 1; id <= 1000; id++ {
		reqs = append(reqs, loadgen.Request{Path: "/products/" + strconv.Itoa(id)})
	}
	d := time.Duration(*flagSvcSeconds) * time.Second
	ctx := context.Background()
	// Warm-up, then the closed loop with the process's CPU read around it.
	if _, err := loadgen.Run(ctx, loadgen.Options{URL: shop.URL, Requests: reqs, Concurrency: *flagSvcConns, Duration: 3 * time.Second}); err != nil {
		t.Fatal(err)
	}
	cpu0 := procCPU(t, shop.PID)
	closed, err := loadgen.Run(ctx, loadgen.Options{URL: shop.URL, Requests: reqs, Concurrency: *flagSvcConns, Duration: d})
	if err != nil {
		t.Fatal(err)
	}
	cpu1 := procCPU(t, shop.PID)
	r.rps = closed.RequestsPerSecond()
	if closed.Requests > 0 {
		r.cpuPerReq = float64(cpu1-cpu0) / float64(time.Millisecond) / float64(closed.Requests)
	}
	r.rssMB, r.hwmMB = procRSS(t, shop.PID)
	r.mem = procMemSplit(t, shop.PID, profilerPath(env))
	if strings.HasPrefix(c.name, "contprof-period") && !strings.Contains(shop.Logs(), "contprof: wrote period 1 ") {
		t.Errorf("%s: no period written before its RSS was read\n%s", c.name, shop.Logs())
	}
	r.errs = closed.Errors
	open, err := loadgen.Run(ctx, loadgen.Options{URL: shop.URL, Requests: reqs, Rate: *flagSvcRate, Duration: d})
	if err != nil {
		t.Fatal(err)
	}
	r.p50, r.p99 = float64(open.Quantile(0.5))/1e6, float64(open.Quantile(0.99))/1e6
	r.rateErrs, r.rateAchvd = open.Errors, open.RequestsPerSecond()
	if closed.FirstErr != nil || open.FirstErr != nil {
		t.Logf("%s: first errors: %v; %v", c.name, closed.FirstErr, open.FirstErr)
	}
	if tr != nil {
		_ = tr.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- tr.Wait() }()
		select {
		case <-done:
		case <-time.After(60 * time.Second):
			_ = tr.Process.Kill()
			<-done
			t.Errorf("dotnet-trace did not stop 60 s after SIGINT")
		}
		if st, err := os.Stat(traceFile); err == nil {
			r.profilerOK = fmt.Sprintf("trace of %.1f MB", float64(st.Size())/1e6)
		} else {
			t.Errorf("dotnet-trace wrote no trace: %v", err)
		}
	}
	shop.Stop()
	if c.name == "apm-noexport" || c.name == "apm-nolisten" {
		m := regexp.MustCompile(`apm: Shutdown: received=(\d+) exported=(\d+)`).FindStringSubmatch(shop.Logs())
		switch {
		case !strings.Contains(shop.Logs(), "apm: listening (helper loaded"):
			t.Errorf("%s: the helper was not loaded\n%s", c.name, shop.Logs())
		case m == nil || m[2] != "0":
			t.Errorf("%s: want nothing exported: %v\n%s", c.name, m, shop.Logs())
		case c.name == "apm-noexport" && m[1] == "0":
			t.Errorf("apm-noexport received no span\n%s", shop.Logs())
		case c.name == "apm-nolisten" && m[1] != "0":
			t.Errorf("apm-nolisten received %s spans\n%s", m[1], shop.Logs())
		default:
			r.profilerOK = fmt.Sprintf("%s spans received, none exported", m[1])
		}
		return r
	}
	if c.name == "apm" {
		m := regexp.MustCompile(`apm: Shutdown: received=(\d+) exported=(\d+) dropped=(\d+) lost=(\d+)`).FindStringSubmatch(shop.Logs())
		if m == nil || m[1] != m[2] || m[3] != "0" || m[4] != "0" {
			t.Errorf("apm did not export every span: %v\n%s", m, shop.Logs())
		} else {
			r.profilerOK = fmt.Sprintf("%s spans, all exported", m[1])
		}
		return r
	}
	if c.spans {
		r.profilerOK = "spans to the receiver"
		return r
	}
	if mode, ok := strings.CutPrefix(c.name, "go-idle"); ok {
		mode = strings.TrimPrefix(mode, "-")
		if mode == "" {
			mode = "idle"
		}
		if m := regexp.MustCompile(`goidle: Shutdown mode=` + mode + ` go_mem_kb=\d+.*`).FindString(shop.Logs()); m != "" {
			r.profilerOK = m
		} else {
			t.Errorf("%s: no Shutdown line of mode %s\n%s", c.name, mode, shop.Logs())
		}
		return r
	}
	if c.env != nil {
		r.profilerOK = describeOutput(outDir)
		if r.profilerOK == "" {
			t.Errorf("%s left no output in %s\n%s", c.name, outDir, shop.Logs())
		}
		// contprof's own account of the Go runtime's CPU (its collector
		// and scavenger) over the run, which CONTPROF_GOGC trades for
		// memory: an accounted figure, beside the measured ones.
		if m := regexp.MustCompile(`contprof: Shutdown .*goruntime_cpu_us=(\d+).* go_mem_kb=(\d+).* go_heap_kb=(\d+) go_stacks_kb=(\d+) go_runtime_kb=(\d+)`).FindStringSubmatch(shop.Logs()); m != nil {
			us, _ := strconv.Atoi(m[1])
			r.profilerOK += fmt.Sprintf("; Go's collector and scavenger %.1f ms of CPU (accounted), Go holds %s KiB at exit (heap %s, stacks %s, its own structures %s)", float64(us)/1000, m[2], m[3], m[4], m[5])
		}
	}
	return r
}

// describeOutput lists the files a profiler wrote under dir.
func describeOutput(dir string) string {
	var n int
	var size int64
	_ = filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n++
			size += fi.Size()
		}
		return nil
	})
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%d files, %.1f MB", n, float64(size)/1e6)
}

// procCPU is the user and system time of process pid so far.
func procCPU(t *testing.T, pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := procstat.Split(b)
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		t.Fatalf("/proc/%d/stat: %q", pid, b)
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64) // utime is field 14; f[0] is field 3
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * time.Second / 100 // USER_HZ
}

// A memSplit is what holds a process's resident memory, in MB, from its
// /proc/PID/smaps.
type memSplit struct {
	libFile float64 // the profiler library's pages of its file (clean: shared with the page cache)
	libPriv float64 // the profiler library's pages written since mapping (the loader's relocations, its data)
	goHeap  float64 // the Go heap's arenas: anonymous memory below the executable (see procMemSplit)
	anon    float64 // all other anonymous memory: the CLR's GC heap and its own, threads' stacks, the Go runtime's memory outside its heap
	files   float64 // all other files' pages (libcoreclr, the assemblies, ...)
}

// procMemSplit reads the smaps of process pid; lib is the profiler
// library's path ("" for none). With a profiler loaded, anonymous memory
// mapped below every file is taken for the Go heap's arenas: Go 1.26 puts
// its heap at a random address below 1<<46 (runtime/malloc.go,
// randomizeHeapBase; seen at 0x11a84c000000 and 0x2dac58000000, 64 MiB
// reservations, parts of them read-write), and the kernel maps the
// executable (position-independent: 0x55...) and everything else above
// that. Go's memory outside its heap (its own tables, the threads' stacks)
// counts as other anonymous memory.
func procMemSplit(t *testing.T, pid int, lib string) memSplit {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ms, err := procstat.ParseSmaps(f)
	if err != nil {
		t.Fatal(err)
	}
	var m memSplit
	mb := func(b uint64) float64 { return float64(b) / 1e6 }
	lowestFile := uint64(math.MaxUint64)
	for _, x := range ms {
		if strings.HasPrefix(x.Path, "/") {
			lowestFile = min(lowestFile, x.Start)
		}
	}
	for _, x := range ms {
		anon := x.Path == "" || strings.HasPrefix(x.Path, "[")
		switch {
		case lib != "" && x.Path == lib:
			m.libFile += mb(x.RSS - x.Anon)
			m.libPriv += mb(x.Anon)
		case anon && x.Path == "" && x.End <= lowestFile && lib != "":
			m.goHeap += mb(x.RSS)
		case anon:
			m.anon += mb(x.RSS)
		default:
			m.files += mb(x.RSS)
		}
	}
	return m
}

// profilerPath is the library CORECLR_PROFILER_PATH names in env, or "".
func profilerPath(env []string) string {
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "CORECLR_PROFILER_PATH="); ok {
			return v
		}
	}
	return ""
}

// procRSS is VmRSS and VmHWM of process pid in MB.
func procRSS(t *testing.T, pid int) (rss, hwm float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "VmRSS:":
				rss = kb / 1024
			case "VmHWM:":
				hwm = kb / 1024
			}
		}
	}
	return rss, hwm
}

// quantile is the q-quantile of v, interpolated between the two nearest
// of its sorted values.
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	x := q * float64(len(s)-1)
	i := int(x)
	if i+1 >= len(s) {
		return s[len(s)-1]
	}
	return s[i] + (x-float64(i))*(s[i+1]-s[i])
}

func median(v []float64) float64 { return quantile(v, 0.5) }

// spread is (max-min)/median of f over rs.
func spread(rs []svcRun, f func(svcRun) float64) float64 {
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	if len(v) < 2 {
		return 0
	}
	m := median(v)
	if m == 0 {
		return 0
	}
	return (slices.Max(v) - slices.Min(v)) / m
}
