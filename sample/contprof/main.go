// Command contprof is a continuous profiler for .NET, written with
// clrprof: every CONTPROF_PERIOD seconds, and once more at Shutdown, it
// writes into CONTPROF_DIR one pprof file per profile, each readable by
// `go tool pprof`, function names resolved as in the SDK's other samples:
//
//	cpu.N.pprof         samples/count, cpu/nanoseconds: managed threads that
//	                    ran since the last tick, by stack, weighted by the CPU
//	                    time they used (/proc/self/task/TID/schedstat)
//	wall.N.pprof        samples/count, wall/nanoseconds: every managed
//	                    thread at every tick, running or waiting, by stack
//	                    (wall = samples × the tick interval; ticks that took
//	                    no snapshot are counted in the comments)
//	exceptions.N.pprof  exceptions/count: exceptions thrown, by throwing
//	                    stack, with the type as the label "exception"
//	contention.N.pprof  contentions/count, delay/nanoseconds: waits for a
//	                    contended lock, by waiting stack
//	heap.N.pprof        inuse_objects/count, inuse_space/bytes: sampled
//	                    allocations still alive, by allocation stack and
//	                    class (label "object"), scaled to estimates (see
//	                    "Allocation samples" below); followed by weak
//	                    handles on .NET 7+ (dead once the handle reads 0)
//	                    and through the GC callbacks before (MonitorGC:
//	                    moved and surviving references)
//	alloc.N.pprof       alloc_objects/count, alloc_space/bytes: the
//	                    allocations of the period, by allocation stack and
//	                    class (label "object"), estimated from the same
//	                    samples; written whenever the heap profile is
//	gc.N.pprof          gc_collections/count, gc_pause/nanoseconds: per
//	                    generation, under the frames "[GC gen N]"
//
// At Shutdown it prints "contprof: Shutdown periods=N exceptions=E
// live_objects=L sampled_allocations=S gcs=G event_stacks=T
// event_frames=F" (T: the runtime's events whose stack contprof walks,
// allocation samples and contentions; F: those of them the runtime
// delivered with frames of its own, none on every runtime so far:
// docs/cost.md) and what profiling cost the application, measured as it
// ran (package pprofbuild/overhead):
// "cost_wall_us=W cost_cpu_us=C held_us=H snapshots=K callbacks_us=B
// callbacks=M sampler_cpu_us=S goruntime_cpu_us=G output_wall_us=O
// output_cpu_us=P": the runtime held for snapshots, the callbacks on the
// application's threads (an allocation tick's stack walk, an exception's),
// the sampler's and the Go runtime's CPU time, the output; W is what the
// application's wall time can have grown by, C the CPU time profiling
// used (an upper bound: it counts the callbacks at their wall time, B,
// which on a loaded machine is several times their CPU time). Start-up
// (loading the library, the Go runtime, the runtime's own work for an
// in-process EventPipe session) is not in it (measured once:
// docs/contprof.md). Last, "go_mem_kb=M go_alloc_kb=A go_gcs=G": the
// memory the Go runtime holds (overhead.GoMemory; the library's own mapped
// code and data are not in it), what contprof allocated on the Go heap in
// all and how many times Go collected it (overhead.GoHeapChurn).
//
// N counts the periods from 1; the heap profile is a snapshot, the others
// hold what happened in the period.
//
// Allocation samples, the source of the heap and alloc profiles, by runtime
// (each profile's comments name the source, the estimator and, on .NET
// 10+, the error of the period's estimate):
//
//   - .NET 10 and later: the runtime's randomized allocation sampling
//     (AllocationSampled, event 303: keyword 0x80000000000 of
//     Microsoft-Windows-DotNETRuntime at Informational level, in the
//     in-process EventPipe session; the runtime picks each allocated byte
//     with probability p = 1/102400 and reports an object when one of its
//     bytes is picked). contprof keeps each event with probability k =
//     102400/CONTPROF_HEAP_RATE (1 at 102400 or less: the runtime samples
//     no finer), in C, so that one in about CONTPROF_HEAP_RATE bytes enters
//     Go. A kept sample of an object of s bytes stands for 1/π objects and
//     s/π bytes, π = k·(1-(1-p)^s): the unbiased estimator of the runtime's
//     design document (docs/design/features/RandomizedAllocationSampling.md
//     in dotnet/runtime). Its variance is V = Σ s²(1-π)/π over the objects
//     allocated; the alloc profile's comments give the period's estimate of
//     √V, and with k = 1 V is at most N·(1/p-1) for N bytes (about 3% of
//     100 MB). The runtime sends no GCAllocationTick while the event is
//     enabled (seen on 10.0.15 and 11.0.0; by design, dotnet/runtime
//     #100356: the GC skips the tick when AllocationSampled is enabled in
//     the process, so a tool enabling it stops the ticks for every
//     session), so the ticks are not asked for.
//   - .NET 5 to 9: the runtime's allocation ticks (GCAllocationTick, Verbose
//     level: about every 100 KB, the object whose allocation crossed the
//     mark); one kept every CONTPROF_HEAP_RATE bytes on average, chosen in
//     C inside the runtime's callback (alloc.NewTickSampler), each
//     standing for the bytes allocated since the previous kept one. Totals
//     are right to within a tick; the split by type and stack is not a
//     random sample and has no error bound.
//   - before .NET 5: allocations recorded in C every CONTPROF_HEAP_RATE
//     bytes on average (ObjectAllocated), scaled as Go's heap profile
//     scales; off unless CONTPROF_HEAP=1 (it puts every allocation on the
//     runtime's slow path).
//
// Every profile's comments name the runtime version, the process (pid and
// command line) and the period, and say what was lost (ticks that took no
// snapshot, by cause; samples past the memory bounds).
//
// What each runtime gives: CPU and wall time need SuspendRuntime (.NET
// Core 3.0+); lock contention needs the runtime's events in process
// (EventPipe, .NET 5+); GC pauses come from the runtime's events on .NET
// 5+ and from the suspension and GC callbacks before. Where a profile is
// not available contprof writes no file for it and says so on stderr at
// start ("contprof: contention: not available on .NET Core 3.1.23: ...").
//
// What it costs: task bench (docs/benchmarks.md) and TestContprofOverhead
// measure it; figures measured by hand are in docs/contprof.md. The live
// heap before .NET 5 needs ObjectAllocated, which puts every allocation on
// the runtime's slow path, hence off by default there.
//
// Every snapshot suspends the runtime; with more busy threads than cores a
// suspension waits for each thread to be scheduled and reach a safe point
// (docs/contprof.md), so contprof
// keeps the time the runtime spends suspended for it within
// CONTPROF_SUSPEND_BUDGET (2% by default) by skipping ticks after a long
// snapshot. The budget is charged the time suspending and walking
// (Snapshot.Cost), not the time a snapshot first waits for a garbage
// collection's suspension to end (the collection, not the sampler, has
// the threads stopped then); each period's cpu and wall profiles say both
// ("sampling: ticks=N ... held=H waited=W longest=L (suspending S)", L
// the costliest snapshot, S its time bringing the threads to a stop). No tick or thread goes without a sample silently: the same
// comment (and the "wrote period" log line) counts the ticks whose
// snapshot failed, by cause ("failures=M (cause:n)"), those skipped for the
// budget ("skipped=K (overhead budget)"), and the threads of a snapshot
// whose walk failed ("thread_failures=F (cause:n)") or that had no managed
// frame ("threads_without_frames=E"); docs/contprof.md says what was seen
// on each runtime.
//
// Memory is bounded: CONTPROF_MAX_STACKS distinct stacks per profile and
// period (default 10000; more are summed under "[stack table full]"),
// CONTPROF_MAX_OBJECTS tracked live objects (default 100000).
//
// Exporting: with CONTPROF_PYROSCOPE_URL, CONTPROF_OTLP=1 or both,
// contprof also ships every profile (the bytes of the directory's copy)
// to Pyroscope's push API and/or over OTLP's profiles signal
// (experimental; package pprofbuild/export), as the profile types "cpu",
// "wall", "exceptions", "contention", "heap" and "gc" (the OTLP attribute
// profile.name; Pyroscope's __name__, but "process_cpu" for "cpu", the
// name of Grafana's default CPU profile type), with the resource of
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES plus the process, the
// host and the runtime. CPU and wall samples taken while the thread was
// inside a span of a tracer in the same library (pprofbuild.Spans) carry
// the labels trace_id and span_id (the OTLP samples' link): build contprof
// with -tags contprof_gotrace to run the gotrace tracer (package
// sample/gotrace/gotrace) beside it, GOTRACE_TARGETS naming the methods
// whose calls become spans (GOTRACE_OUTPUT for its lines, with each
// call's IDs; OTEL_EXPORTER_OTLP_ENDPOINT exports the spans too). Exporting
// happens on goroutines of the exporters, never in the sampler's tick
// or a runtime callback: a backend that is down or slow only fills a
// bounded queue (512 profiles, 64 MiB, per backend), retried with
// back-off; what is dropped is counted, logged and said in the next
// profile's comments. At Shutdown, after writing the last period,
// contprof waits at most CONTPROF_FLUSH_TIMEOUT seconds for the
// exporters (together) and logs "contprof: export to ...: sent=N
// dropped=D rejected=R lost=L retries=T". A malformed URL, header or
// attribute is refused at start with a message naming the variable, and
// contprof runs on without that exporter. What exporting costs:
// docs/contprof.md. The exporters are a third of the library (HTTP/2,
// TLS: 17 MB against 11 MB, and about 4.5 MiB more resident in the
// process, docs/cost.md "Memory"): build with -tags
// contprof_noexport for the directory alone (the variables above are then
// reported at start and not acted on).
//
// Environment:
//
//	CONTPROF_DIR          output directory (default "contprof" when no
//	                      exporter is on; with an exporter, no directory
//	                      unless set; created)
//	CONTPROF_PERIOD       seconds between writes (default 60, 1..86400)
//	CONTPROF_HZ           CPU and wall snapshots per second (default 19, 1..1000)
//	CONTPROF_DEPTH        frames per stack (default 64, 1..256)
//	CONTPROF_HEAP_RATE    mean bytes between heap and alloc samples (default
//	                      524288; on .NET 10+ at least 102400)
//	CONTPROF_MAX_STACKS   distinct stacks per profile and period (default 10000)
//	CONTPROF_MAX_OBJECTS  live objects tracked (default 100000)
//	CONTPROF_GOGC         the Go collector's GOGC for contprof's own heap
//	                      (default 25: its live heap is about 1.3 MB, and at
//	                      Go's default of 100 the collector's 4 MB minimum
//	                      heap stays resident; GOGC in the environment is
//	                      the application's and is ignored, as with every
//	                      clrprof profiler)
//	CONTPROF_RETURN_MEMORY  1 (default): after writing a period, give the
//	                      Go heap's free pages back to the system (one
//	                      collection a period; the "wrote period" line says
//	                      how much, returned_kb); 0: leave it to Go's
//	                      scavenger
//	CONTPROF_RELEASE_CODE 1 (default): after Initialize and after each
//	                      periodic write, give back the library's resident
//	                      code and constant pages (profiler.ReleaseCodePages:
//	                      about 4 MB of the shop's RSS; the lines say
//	                      released_code_kb); 0: keep them mapped
//	CONTPROF_SUSPEND_BUDGET  percentage of the time the CPU and wall snapshots
//	                      may keep the runtime suspended (default 2; 0: no
//	                      limit): after a snapshot that took longer, ticks
//	                      are skipped (counted as "skipped" in the comments)
//	                      and the next sample stands for them in wall time
//	CONTPROF_CPU, CONTPROF_WALL, CONTPROF_EXCEPTIONS, CONTPROF_CONTENTION
//	                      0: that profile off (default 1: on); with both
//	                      CPU and wall off no snapshot is taken, without
//	                      exceptions no ExceptionThrown callback, without
//	                      contention the runtime's Contention keyword is off
//	CONTPROF_HEAP         1: the live heap and alloc profiles; 0: none; unset (the
//	                      default): on .NET 5+, where it is sampled from the
//	                      runtime's allocation ticks, and off before, where
//	                      it needs ObjectAllocated (every allocation of the
//	                      process on the runtime's slow path:
//	                      docs/contprof.md). Without the live heap
//	                      on .NET Core 2.x the GC profile counts suspensions
//	                      for GC, generation not reported
//	CONTPROF_PYROSCOPE_URL     Pyroscope's base URL (http://host:4040): push there
//	CONTPROF_PYROSCOPE_AUTH    "user:password" (basic auth) or a bearer token
//	CONTPROF_PYROSCOPE_TENANT  the X-Scope-OrgID header (multi-tenant Pyroscope)
//	CONTPROF_OTLP         1: export over OTLP, configured by the standard
//	                      OTEL_EXPORTER_OTLP_PROFILES_ENDPOINT (the URL posted
//	                      to) or OTEL_EXPORTER_OTLP_ENDPOINT (the base URL;
//	                      default http://localhost:4318, :4317 for gRPC),
//	                      OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, the
//	                      default, or grpc), OTEL_EXPORTER_OTLP_HEADERS,
//	                      OTEL_EXPORTER_OTLP_COMPRESSION (gzip, the default, or
//	                      none), OTEL_EXPORTER_OTLP_TIMEOUT (ms, default 10000),
//	                      OTEL_EXPORTER_OTLP_CERTIFICATE (the CAs to trust),
//	                      OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and _CLIENT_KEY
//	                      (mutual TLS); each also as _PROFILES_ (it wins)
//	CONTPROF_HEAPSNAP     heap snapshots (package heapsnap: what retains each
//	                      byte) beside the profiles; off by default (being
//	                      able to take one turns background GC off for the
//	                      process's life, and each pauses the app for a full
//	                      blocking collection). A comma list of triggers:
//	                      signal (SIGUSR2), exit, every=10m, above=1G (when
//	                      the GC heap first passes it, then at each doubling)
//	CONTPROF_HEAPSNAP_DIR where they go, heap-N.pb.gz and heap-N.txt as
//	                      sample/heapsnap writes them (default
//	                      CONTPROF_DIR/heapsnap, or contprof/heapsnap)
//	CONTPROF_FLUSH_TIMEOUT  seconds Shutdown waits for the exporters to send
//	                      the last profiles (default 3, 0..60): the runtime
//	                      exits right after Shutdown, so this bounds how much
//	                      later the app ends when a backend is away; what is
//	                      left is lost and counted
package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/pprofbuild/overhead"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

const clsid = "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}"

// exceptionHook, when set (by the test build, spanhook.go), is called
// with the type of every exception thrown, on the throwing thread.
var exceptionHook func(p *contprof, typ string)

// afterSnapshot, when set (by the test build, spanhook.go), is called by
// the sampler after each snapshot, the runtime resumed: a delay there
// widens the window in which a thread can move on before its sample is
// recorded.
var afterSnapshot func()

type contprof struct {
	// cost accounts for what profiling costs the application (package
	// pprofbuild/overhead): the snapshots' suspensions, the callbacks on the
	// application's threads, the sampler's and the Go runtime's CPU time,
	// and the output (the exporters' set-up at Initialize and the last
	// period's writing and shipping at exit), reported on the Shutdown
	// line.
	cost overhead.Account

	profiler.Base
	info *profiler.Info

	dir                   string
	period                time.Duration
	hz, depth, rate       int
	heapOn                bool
	cpuOn, wallOn         bool // CONTPROF_CPU, CONTPROF_WALL
	excOn, contOn         bool // CONTPROF_EXCEPTIONS, CONTPROF_CONTENTION
	heapAuto              bool // CONTPROF_HEAP unset: on where it is cheap (.NET 5+)
	weakHeap              bool // the live heap tracks objects by weak handles
	maxStacks, maxObjects int
	runtime               string
	names                 *pprofbuild.Names

	cpu, wall, exc, cont, heapB, gcB *pprofbuild.Builder
	heap                             *pprofbuild.LiveHeap
	rec                              *alloc.Recorder
	gc                               *pprofbuild.GCStats
	contention                       *pprofbuild.Contention
	gcFromEvents                     bool
	session                          profiler.EventPipeSession
	runtimeProvider                  atomic.Uintptr // the runtime's EventPipeProvider, once seen

	mu      sync.Mutex // the sampler's state
	lastCPU map[uint32]int64
	ticks   pprofbuild.Ticks
	// the suspension budget: the fraction of time snapshots may take, the
	// ticks still to skip, and those skipped since the last snapshot
	// (sampler goroutine only)
	budget             float64
	skip, skippedSince int
	// spanAt holds, for one snapshot, the span labels of the threads
	// inside a span (readSpan; sampler goroutine only).
	spanAt map[profiler.ThreadID][]pprofbuild.Label
	// in the period, the time the runtime was suspended and held for
	// snapshots (Snapshot.Cost) and the time they waited for another
	// suspension (a GC) to end first (sampler goroutine only)
	held, waited time.Duration
	// the period's costliest snapshot (Snapshot.Cost) and its time
	// suspending: what made the budget skip ticks (sampler goroutine only)
	longest, longestSuspending time.Duration
	excErrors                  int
	excTotal                   atomic.Int64
	// allocation ticks that gave no live heap sample
	ticksWithoutObject atomic.Int64
	// which allocation ticks (.NET 5 to 9) or AllocationSampled events
	// (.NET 10+) become samples: decided in C, so that the others never
	// enter Go
	heapTicks *alloc.TickSampler
	// allocSampling: the samples are the runtime's AllocationSampled
	// events (.NET 10+), not its allocation ticks
	allocSampling bool
	// the allocation profile (with the live heap's samples), and the
	// period's estimate of the bytes allocated, with its variance (.NET
	// 10+; under allocMu)
	allocB   *pprofbuild.Builder
	allocMu  sync.Mutex
	allocEst clrevents.AllocationEstimate
	// samples without a stack (counted in the allocation profile under
	// stackUnavailable)
	allocNoStack atomic.Int64
	// The events whose stack contprof takes (AllocationSampled,
	// GCAllocationTick, ContentionStart, in Go), and how many of them the
	// runtime delivered with frames (stackFrames of
	// EventPipeEventDelivered). It delivers none to a profiler's
	// in-process session: the session is synchronous and only a buffered
	// session's events are walked by the runtime (docs/cost.md), so
	// contprof walks the stack itself; the Shutdown line reports both
	// counts (event_stacks, event_frames) and the tests check the second
	// is 0, so that a runtime that starts delivering them is noticed.
	eventStacks, eventFrames atomic.Int64

	seq         int
	periodStart time.Time
	// the exporters (CONTPROF_PYROSCOPE_URL, CONTPROF_OTLP) and the bound
	// of their final flush
	exporters    []exporter
	flushTimeout time.Duration
	gogc         int // CONTPROF_GOGC
	returnMem    int // CONTPROF_RETURN_MEMORY
	releaseCode  int // CONTPROF_RELEASE_CODE
	stop, done   chan struct{}
	shutdown     sync.Once
}

func envInt(name string, def, lo, hi int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%s=%q: want an integer %d..%d", name, v, lo, hi)
	}
	return n, nil
}

func logf(format string, args ...any) { fmt.Fprintf(os.Stderr, "contprof: "+format+"\n", args...) }

func (p *contprof) config() error {
	var err error
	var period int
	for _, e := range []struct {
		name        string
		dst         *int
		def, lo, hi int
	}{
		{"CONTPROF_PERIOD", &period, 60, 1, 86400},
		{"CONTPROF_HZ", &p.hz, 19, 1, 1000},
		{"CONTPROF_DEPTH", &p.depth, 64, 1, 256},
		{"CONTPROF_HEAP_RATE", &p.rate, 512 << 10, 1, 1 << 30},
		{"CONTPROF_MAX_STACKS", &p.maxStacks, 10000, 1, 1 << 24},
		{"CONTPROF_MAX_OBJECTS", &p.maxObjects, 100000, 1, 1 << 24},
		{"CONTPROF_GOGC", &p.gogc, 25, 1, 10000},
		{"CONTPROF_RETURN_MEMORY", &p.returnMem, 1, 0, 1},
		{"CONTPROF_RELEASE_CODE", &p.releaseCode, 1, 0, 1},
	} {
		if *e.dst, err = envInt(e.name, e.def, e.lo, e.hi); err != nil {
			return err
		}
	}
	p.period = time.Duration(period) * time.Second
	// contprof's own live heap is about 1.3 MB (its names, stacks and
	// counts); at Go's default GOGC of 100 the collector lets a heap that
	// small grow to 4 MB before it collects (its minimum), which the
	// process keeps resident. At 25 the minimum is 1 MB and the heap stays
	// near its live size, for about one more collection a second of a
	// heap of 2 MB (docs/cost.md, "Memory").
	debug.SetGCPercent(p.gogc)
	p.budget = 0.02
	if v := os.Getenv("CONTPROF_SUSPEND_BUDGET"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 100 {
			return fmt.Errorf("CONTPROF_SUSPEND_BUDGET=%q: want a percentage 0..100", v)
		}
		p.budget = f / 100
	}
	for _, e := range []struct {
		name string
		dst  *bool
	}{
		{"CONTPROF_CPU", &p.cpuOn},
		{"CONTPROF_WALL", &p.wallOn},
		{"CONTPROF_EXCEPTIONS", &p.excOn},
		{"CONTPROF_CONTENTION", &p.contOn},
	} {
		switch v := os.Getenv(e.name); v {
		case "", "1":
			*e.dst = true
		case "0":
			*e.dst = false
		default:
			return fmt.Errorf("%s=%q: want 0 or 1 (default 1)", e.name, v)
		}
	}
	switch v := os.Getenv("CONTPROF_HEAP"); v {
	case "":
		p.heapAuto = true
	case "0", "1":
		p.heapOn = v == "1"
	default:
		return fmt.Errorf("CONTPROF_HEAP=%q: want 0 or 1 (unset: on where the runtime's allocation ticks reach the profiler, .NET 5+)", v)
	}
	p.dir = os.Getenv("CONTPROF_DIR")
	return nil
}

func (p *contprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.cost.Start()
	if err := p.config(); err != nil {
		logf("%v", err)
		return err
	}
	p.runtime = pprofbuild.RuntimeVersion(info)
	p.cost.Output(p.configExport)
	if p.dir == "" && len(p.exporters) == 0 {
		p.dir = "contprof"
	}
	if p.dir != "" {
		if err := os.MkdirAll(p.dir, 0o755); err != nil {
			logf("%v", err)
			return err
		}
	}
	p.names = pprofbuild.NewNames(info)
	p.cpu = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, "cpu", p.maxStacks)
	p.wall = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "samples", Unit: "count"}, {Type: "wall", Unit: "nanoseconds"}}, "wall", p.maxStacks)
	p.exc = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "exceptions", Unit: "count"}}, "", p.maxStacks)
	p.cont = pprofbuild.NewBuilder(pprofbuild.ContentionTypes, "delay", p.maxStacks)
	p.heapB = pprofbuild.NewBuilder(pprofbuild.LiveHeapTypes, "inuse_space", p.maxStacks)
	p.allocB = pprofbuild.NewBuilder(allocTypes, "alloc_space", p.maxStacks)
	p.gcB = pprofbuild.NewBuilder(pprofbuild.GCTypes, "gc_pause", p.maxStacks)
	p.gc = pprofbuild.NewGCStats()
	p.lastCPU = map[uint32]int64{}
	p.spanAt = map[profiler.ThreadID][]pprofbuild.Label{}

	low := profiler.EnableStackSnapshot
	if p.excOn {
		low |= profiler.MonitorExceptions
	} else {
		logf("exceptions: off (CONTPROF_EXCEPTIONS=0)")
	}
	var high profiler.HighMonitor
	p.heap = pprofbuild.NewLiveHeap(info, p.rate, p.maxObjects)
	// .NET 5+: the runtime's events give contention (the waiting stack is
	// taken in the callback), GC pauses, and the live heap's samples
	// (GCAllocationTick, Verbose), without a callback per allocation.
	level := profiler.EventPipeInformational
	keywords := clrevents.KeywordGC
	if major, err := info.RuntimeMajor(); err == nil && major >= 10 && (p.heapOn || p.heapAuto) {
		// .NET 10+: the runtime's randomized allocation sampling
		// (AllocationSampled; keyword 0x80000000000 at Informational,
		// all it needs). With it on, 10.0.15 and 11.0.0 send no
		// GCAllocationTick.
		keywords |= clrevents.KeywordAllocationSampling
		p.allocSampling = true
	} else if p.heapOn || p.heapAuto {
		level = profiler.EventPipeVerbose // GCAllocationTick
	}
	if p.contOn {
		keywords |= clrevents.KeywordContention
	} else {
		logf("contention: off (CONTPROF_CONTENTION=0)")
	}
	sess, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
		Name:     clrevents.RuntimeProvider,
		Keywords: keywords,
		Level:    level,
	}}, false)
	switch {
	case err == nil:
		p.session, p.gcFromEvents = sess, true
		high |= profiler.HighEventPipe
		if p.contOn {
			p.contention = pprofbuild.NewContention(p.cont)
		}
	case errors.Is(err, profiler.ErrNotAvailable):
		logf("contention: not available on %s: %v", p.runtime, err)
	default:
		logf("contention: EventPipeStartSession: %v", err)
	}
	if !p.gcFromEvents {
		p.allocSampling = false
	}
	if p.heapAuto {
		// Without the runtime's allocation ticks the live heap needs
		// ObjectAllocated, which puts every allocation of the process on
		// the runtime's slow path: 1.3-1.5x on allocation-heavy code
		// whatever the profiler does (bench: c-unimpl against none).
		p.heapOn = p.gcFromEvents
	}
	var heapErr error
	if p.heapOn && p.gcFromEvents {
		// The runtime sends an allocation tick about every 100 KB; one
		// every CONTPROF_HEAP_RATE bytes on average is kept, in C, before
		// the runtime's events are on: the others never enter Go.
		if p.heapTicks, heapErr = alloc.NewTickSampler(info, p.rate); heapErr != nil {
			// Without the C sampler every tick would enter Go: the live
			// heap is off rather than costly.
			p.heapOn = false
		}
	}
	switch {
	case p.heapOn:
	case heapErr != nil:
		logf("heap: off: %v", heapErr)
	case p.heapAuto:
		logf("heap: off by default on %s: before .NET 5 the live heap needs ObjectAllocated, which puts every allocation on the runtime's slow path (1.3-1.5x on allocation-heavy code); CONTPROF_HEAP=1 turns it on", p.runtime)
	default:
		logf("heap: off (CONTPROF_HEAP=0)")
	}
	switch {
	case !p.heapOn && info.CheckHighEvents(profiler.HighBasicGC) == nil:
		high |= profiler.HighBasicGC // GarbageCollectionStarted/Finished only
	case !p.heapOn:
		// .NET Core 2.x: GarbageCollectionStarted comes only with
		// MonitorGC, which would cost what the heap being off saves.
		p.gc.WithoutGenerations()
		logf("gc: on %s collections are not reported without MonitorGC (HighBasicGC needs .NET Core 3.0), which the live heap would turn on: every suspension for GC counts as one collection under %q", p.runtime, pprofbuild.UnknownGenerationFrame)
	case p.gcFromEvents && p.heap.UseWeakHandles() == nil:
		// .NET 7+: sampled objects held by weak handles; no GC callbacks.
		p.weakHeap = true
	default:
		low |= profiler.MonitorGC // MovedReferences, SurvivingReferences
	}
	if !p.gcFromEvents {
		low |= profiler.MonitorSuspends
	}
	if err := info.SetEventMask2(low, high); err != nil {
		logf("%v", err)
		return err
	}
	if !p.gcFromEvents && p.heapOn {
		// Before .NET 5: ObjectAllocated answered in C, sampled every
		// CONTPROF_HEAP_RATE bytes.
		p.rec, err = alloc.NewRecorder(info, alloc.Options{
			Batch: func(b alloc.Batch) {
				defer p.cost.Callback(time.Now())
				p.heap.Add(b.Samples)
				for _, s := range b.Samples {
					w := alloc.SampleWeight(s.Size, p.rate)
					p.addAlloc(s.Stack, p.names.Class(s.Class), w, w*float64(s.Size))
				}
			},
			SampleBytes:  p.rate,
			SamplesOnly:  true,
			MaxDepth:     p.depth,
			BufferEvents: 1 << 14,
			Interval:     10 * time.Millisecond,
		})
		if err != nil {
			logf("heap: %v", err)
			return err
		}
		p.heap.SetRecorder(p.rec)
	}
	if !p.cpuOn {
		logf("cpu: off (CONTPROF_CPU=0)")
	}
	if !p.wallOn {
		logf("wall: off (CONTPROF_WALL=0)")
	}
	if info.Version() < 10 && (p.cpuOn || p.wallOn) {
		logf("cpu, wall: not available on %s: sampling other threads needs SuspendRuntime (ICorProfilerInfo10, .NET Core 3.0+); the runtime has ICorProfilerInfo%d", p.runtime, info.Version())
	}
	p.periodStart = time.Now()
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go func() {
		// done once the sampler's CPU time is accounted for
		defer close(p.done)
		p.cost.Thread(p.loop)
	}()
	var into []string
	if p.dir != "" {
		into = append(into, p.dir)
	}
	for _, e := range p.exporters {
		into = append(into, e.String())
	}
	logf("profiling %s into %s every %v; Go collects its own heap at GOGC=%d (CONTPROF_GOGC)", p.runtime, strings.Join(into, ", "), p.period, debug.SetGCPercent(p.gogc))
	if p.releaseCode == 1 {
		logf("start-up: %s", releaseCode())
	}
	return nil
}

func (p *contprof) loop() {
	defer func() {
		if r := recover(); r != nil {
			logf("sampler stopped: %v", r)
		}
	}()
	var tick <-chan time.Time
	if p.snapshots() {
		t := time.NewTicker(time.Second / time.Duration(p.hz))
		defer t.Stop()
		tick = t.C
	}
	flush := time.NewTicker(p.period)
	defer flush.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick:
			p.sample()
		case <-flush.C:
			p.write(true)
		}
	}
}

// snapshots says whether the sampler takes snapshots: CPU or wall on,
// and the runtime able to suspend (ICorProfilerInfo10).
func (p *contprof) snapshots() bool {
	return (p.cpuOn || p.wallOn) && p.info.Version() >= 10
}

// sample takes one snapshot of every managed thread: a wall sample for
// each, a CPU sample for those that ran since the last one.
func (p *contprof) sample() {
	if p.skip > 0 {
		p.skip--
		p.skippedSince++
		p.ticks.Skip()
		return
	}
	interval := time.Second / time.Duration(p.hz)
	// The budget is charged the time the runtime was suspended and held
	// for the snapshot, not the time waited first for a garbage
	// collection's suspension to end (the application was stopped by the
	// collection then, not by the sampler).
	var snap profiler.Snapshot
	var err error
	// The span labels are read with the runtime suspended, in the walk
	// function, beside the stack: read after ResumeRuntime they could be
	// of a later moment than the stack (a sample at the end of a span's
	// method, its thread gone on to leave the span before the read, lost
	// its labels; TestContprofExport saw it once in CI).
	clear(p.spanAt)
	p.cost.Snapshot(func() time.Duration {
		snap, err = p.info.SnapshotThreads(p.depth, p.readSpan)
		return snap.Cost()
	})
	if afterSnapshot != nil {
		afterSnapshot()
	}
	stacks := snap.Stacks
	p.held += snap.Cost()
	p.waited += snap.Waited
	if snap.Cost() > p.longest {
		p.longest, p.longestSuspending = snap.Cost(), snap.Suspending
	}
	p.skip = budgetSkip(snap.Cost(), interval, p.budget, p.hz)
	p.ticks.Tick(err)
	// A sample stands for its own tick and the ticks skipped before it.
	covers := int64(1 + p.skippedSince)
	p.skippedSince = 0
	if err != nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	// Only the threads of this snapshot are kept: the map does not grow
	// with threads that are gone.
	lastCPU := make(map[uint32]int64, len(stacks))
	defer func() { p.lastCPU = lastCPU }()
	for _, ts := range stacks {
		if ts.Err != nil || len(ts.Frames) == 0 {
			// no sample of this thread: said in the comments, by cause
			p.ticks.Thread(ts.Err)
			continue
		}
		st := pprofbuild.Functions(ts.Frames)
		// inside a span of a tracer in this library: its IDs as labels
		spanLabels := p.spanAt[ts.Thread]
		if p.wallOn {
			p.wall.Add(st, spanLabels, covers, covers*int64(interval))
		}
		if !p.cpuOn || ts.OSThreadID == 0 {
			continue
		}
		cpu, ok := pprofbuild.ThreadCPU(ts.OSThreadID)
		if !ok {
			continue
		}
		last, seen := p.lastCPU[ts.OSThreadID]
		lastCPU[ts.OSThreadID] = cpu
		if seen && cpu > last {
			p.cpu.Add(st, spanLabels, 1, cpu-last)
		}
	}
}

// readSpan is the snapshot's walk function: with the runtime suspended,
// it notes the span thread is in (pprofbuild.Spans) and walks every thread.
func (p *contprof) readSpan(thread profiler.ThreadID, _ uint32) bool {
	if l := pprofbuild.Spans.Labels(thread); l != nil {
		p.spanAt[thread] = l
	}
	return true
}

func (p *contprof) ExceptionThrown(obj profiler.ObjectID) error {
	defer p.cost.Callback(time.Now())
	class, err := p.info.GetClassFromObject(obj)
	typ := "[unknown type]"
	if err == nil {
		typ = p.names.Class(class)
	}
	st, err := p.info.StackTrace(0, p.depth)
	if err != nil {
		p.mu.Lock()
		p.excErrors++
		p.mu.Unlock()
	}
	p.exc.Add(pprofbuild.Functions(st), []pprofbuild.Label{{Key: "exception", Value: typ}}, 1)
	if exceptionHook != nil {
		exceptionHook(p, typ)
	}
	p.excTotal.Add(1)
	return nil
}

// GC: the live heap on every runtime; pauses from the callbacks only
// where the runtime's events are not read.
func (p *contprof) GarbageCollectionStarted(collected []bool, reason profiler.GCReason) error {
	defer p.cost.Callback(time.Now())
	p.heap.GCStarted(collected)
	if !p.gcFromEvents {
		p.gc.Collection(pprofbuild.OldestCollected(collected))
	}
	return nil
}

func (p *contprof) MovedReferences2(oldStarts, newStarts []profiler.ObjectID, lengths []uint64) error {
	defer p.cost.Callback(time.Now())
	p.heap.Moved(oldStarts, newStarts, lengths)
	return nil
}

func (p *contprof) SurvivingReferences2(starts []profiler.ObjectID, lengths []uint64) error {
	defer p.cost.Callback(time.Now())
	p.heap.Surviving(starts, lengths)
	return nil
}

func (p *contprof) GarbageCollectionFinished() error {
	defer p.cost.Callback(time.Now())
	p.heap.GCFinished()
	return nil
}

func (p *contprof) RuntimeSuspendStarted(reason profiler.SuspendReason) error {
	defer p.cost.Callback(time.Now())
	if !p.gcFromEvents {
		p.gc.SuspendStarted(reason == profiler.SuspendForGC)
	}
	return nil
}

func (p *contprof) RuntimeResumeFinished() error {
	defer p.cost.Callback(time.Now())
	if !p.gcFromEvents {
		p.gc.Resumed()
	}
	return nil
}

func (p *contprof) EventPipeEventDelivered(provider profiler.EventPipeProvider, id, version uint32, _, data []byte,
	_, _ uuid.UUID, thread profiler.ThreadID, frames []profiler.Address) error {
	defer p.cost.Callback(time.Now())
	if rp := profiler.EventPipeProvider(p.runtimeProvider.Load()); rp == 0 {
		if name, err := p.info.EventPipeGetProviderInfo(provider); err != nil || name != clrevents.RuntimeProvider {
			return nil
		}
		p.runtimeProvider.Store(uintptr(provider))
	} else if provider != rp {
		return nil
	}
	// Allocation ticks and AllocationSampled: only the kept ones get here
	// (the sampler decides in C); a tick stands for the bytes since the
	// previous kept one.
	if id == clrevents.IDAllocationSampled && (!p.heapOn || p.heapTicks == nil) {
		return nil
	}
	var tickBytes uint64
	if id == clrevents.IDGCAllocationTick {
		if !p.heapOn || p.heapTicks == nil {
			return nil
		}
		if tickBytes = p.heapTicks.KeptBytes(); tickBytes == 0 {
			return nil // not delivered by the sampler (cannot happen)
		}
	}
	ev, err := clrevents.DecodeRuntime(id, version, data)
	if err != nil {
		return nil
	}
	switch ev.(type) {
	case *clrevents.ContentionStart, *clrevents.GCAllocationTick, *clrevents.AllocationSampled:
		p.eventStacks.Add(1)
		if len(frames) > 0 {
			p.eventFrames.Add(1)
		}
	}
	switch e := ev.(type) {
	case *clrevents.ContentionStart:
		if p.contention == nil {
			return nil
		}
		// Delivered on the waiting thread: its stack is the contended one.
		st, err := p.info.StackTrace(0, p.depth)
		if err == nil {
			p.contention.Start(thread, pprofbuild.Functions(st))
		}
	case *clrevents.GCAllocationTick:
		// A kept tick (above), on the allocating thread: the object is
		// where the event says until the next collection.
		st, err := p.info.StackTrace(0, p.depth)
		var stack []profiler.FunctionID
		if err == nil {
			stack = pprofbuild.Functions(st)
		}
		var objects float64
		if e.ObjectSize > 0 {
			objects = float64(tickBytes) / float64(e.ObjectSize)
		}
		p.addAlloc(stack, e.TypeName, objects, float64(tickBytes))
		if e.Address == 0 || e.ObjectSize == 0 || err != nil {
			p.ticksWithoutObject.Add(1) // versions before 4 carry no ObjectSize
			return nil
		}
		p.heap.AddObject(profiler.ObjectID(e.Address), e.TypeName, e.ObjectSize, objects, stack)
	case *clrevents.AllocationSampled:
		// .NET 10+: a kept sample (above), on the allocating thread;
		// it stands for 1/π objects of its size, π the probability
		// that such an object is sampled and kept.
		p.allocMu.Lock()
		objects, bytes := p.allocEst.Add(e.ObjectSize, p.heapTicks.SampledKeep())
		p.allocMu.Unlock()
		if objects == 0 {
			p.ticksWithoutObject.Add(1) // ObjectSize 0: nothing to weigh
			return nil
		}
		typ := e.TypeName
		if typ == "" {
			typ = p.names.Class(profiler.ClassID(e.TypeID))
		}
		st, err := p.info.StackTrace(0, p.depth)
		var stack []profiler.FunctionID
		if err == nil {
			stack = pprofbuild.Functions(st)
		}
		p.addAlloc(stack, typ, objects, bytes)
		if e.Address == 0 || err != nil {
			p.ticksWithoutObject.Add(1)
			return nil
		}
		p.heap.AddObject(profiler.ObjectID(e.Address), typ, e.ObjectSize, objects, stack)
	case *clrevents.ContentionStop:
		if p.contention == nil {
			return nil
		}
		d := e.DurationNs
		if e.Version == 0 {
			d = -1
		}
		p.contention.Stop(thread, d)
	default:
		p.gc.Event(ev)
	}
	return nil
}

// allocTypes are the sample types of the allocation profile, as in Go's
// heap profile: alloc_objects/count, alloc_space/bytes.
var allocTypes = []pprofbuild.SampleType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}

// stackUnavailable is the frame of allocation samples whose stack could
// not be taken: they still count in the totals.
const stackUnavailable = "[stack unavailable]"

// addAlloc adds one sample to the allocation profile: objects and bytes
// are what it stands for (estimates), typ the label "object".
func (p *contprof) addAlloc(stack []profiler.FunctionID, typ string, objects, bytes float64) {
	labels := []pprofbuild.Label{{Key: "object", Value: typ}}
	o, b := int64(math.Round(objects)), int64(math.Round(bytes))
	if len(stack) == 0 {
		p.allocNoStack.Add(1)
		p.allocB.AddNamed([]string{stackUnavailable}, labels, o, b)
		return
	}
	p.allocB.Add(stack, labels, o, b)
}

// budgetSkip is how many ticks to skip after a snapshot that took d (the
// runtime suspended, every managed thread walked, the runtime resumed), so
// that snapshots take at most budget (a fraction) of the time: one
// snapshot every k+1 ticks of interval costs d/((k+1)*interval). At most
// maxSkip; none when budget is 0.
func budgetSkip(d, interval time.Duration, budget float64, maxSkip int) int {
	if budget <= 0 || interval <= 0 {
		return 0
	}
	k := int(math.Ceil(float64(d)/(budget*float64(interval)))) - 1
	return max(0, min(k, maxSkip))
}

func (p *contprof) comments(kind string) []string {
	exe, _ := os.Executable()
	cmd, _ := os.ReadFile("/proc/self/cmdline")
	return []string{
		fmt.Sprintf("contprof %s profile; runtime %s; pid %d (%s) %s", kind, p.runtime, os.Getpid(), exe, strings.TrimSpace(strings.ReplaceAll(string(cmd), "\x00", " "))),
		fmt.Sprintf("period %d: %s, %v", p.seq, p.periodStart.UTC().Format(time.RFC3339), time.Since(p.periodStart).Round(time.Millisecond)),
	}
}

// write writes the period's profiles and starts the next period.
func (p *contprof) write(periodic bool) {
	p.seq++
	meta := func(kind string, extra ...string) pprofbuild.Meta {
		return pprofbuild.Meta{Start: p.periodStart, Duration: time.Since(p.periodStart), Comments: append(p.comments(kind), extra...)}
	}
	var written []string
	put := func(kind string, b *pprofbuild.Builder, m pprofbuild.Meta) {
		prof := b.Build(p.names, m, true)
		var buf bytes.Buffer
		if err := pprofbuild.Write(&buf, prof); err != nil {
			logf("encoding %s: %v", kind, err)
			return
		}
		// the same bytes to the directory and to every exporter
		p.exportProfile(kind, m.Start, m.Duration, buf.Bytes())
		written = append(written, fmt.Sprintf("%s=%d", kind, len(prof.Sample)))
		if p.dir == "" {
			return
		}
		path := filepath.Join(p.dir, fmt.Sprintf("%s.%d.pprof", kind, p.seq))
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			logf("writing %s: %v", path, err)
		}
	}
	if p.snapshots() {
		fr := fmt.Sprintf("sampling: %s held=%v waited=%v longest=%v (suspending %v)", p.ticks.Report(true), p.held.Round(time.Microsecond),
			p.waited.Round(time.Microsecond), p.longest.Round(time.Microsecond), p.longestSuspending.Round(time.Microsecond))
		p.held, p.waited, p.longest, p.longestSuspending = 0, 0, 0, 0
		written = append(written, fr)
		if p.cpuOn {
			m := meta("cpu", fr)
			m.PeriodType, m.Period = pprofbuild.SampleType{Type: "cpu", Unit: "nanoseconds"}, int64(time.Second)/int64(p.hz)
			put("cpu", p.cpu, m)
		}
		if p.wallOn {
			m := meta("wall", fr)
			m.PeriodType, m.Period = pprofbuild.SampleType{Type: "wall", Unit: "nanoseconds"}, int64(time.Second)/int64(p.hz)
			put("wall", p.wall, m)
		}
	}
	p.mu.Lock()
	excErr := p.excErrors
	p.excErrors = 0
	p.mu.Unlock()
	if p.excOn {
		put("exceptions", p.exc, meta("exceptions", fmt.Sprintf("throwing stacks that could not be taken: %d", excErr)))
	}
	if p.contention != nil {
		put("contention", p.cont, meta("contention", fmt.Sprintf("waits whose start was not seen: %d (cumulative)", p.contention.Unpaired())))
	}
	if p.heapOn {
		p.heap.AddTo(p.heapB, p.names)
	}
	hs := p.heap.Stats()
	src, allocNotes := p.allocSource()
	allocNotes = append([]string{"from " + src}, allocNotes...)
	if p.weakHeap {
		src += ", objects held by weak handles"
	} else {
		src += ", objects followed through the GC callbacks"
	}
	counts := fmt.Sprintf("live objects tracked=%d sampled=%d freed=%d stale=%d dropped-full=%d generation-errors=%d handle-errors=%d",
		hs.Tracked, hs.Added, hs.Freed, hs.Stale, hs.Full, hs.GenErrors, hs.HandleErrors)
	if !p.weakHeap {
		counts += fmt.Sprintf(" gcs-followed=%d", hs.GCs)
	}
	hm := meta("heap", "from "+src, counts+" (cumulative)")
	if !p.gcFromEvents {
		hm.PeriodType, hm.Period = pprofbuild.SampleType{Type: "space", Unit: "bytes"}, int64(p.rate)
	}
	if p.heapOn {
		put("heap", p.heapB, hm)
		am := meta("alloc", allocNotes...)
		if !p.gcFromEvents {
			am.PeriodType, am.Period = pprofbuild.SampleType{Type: "space", Unit: "bytes"}, int64(p.rate)
		}
		put("alloc", p.allocB, am)
	}
	gcsrc := "the profiling API's suspension and GC callbacks"
	if p.gcFromEvents {
		gcsrc = "the runtime's GC events"
	}
	p.gc.AddTo(p.gcB, true)
	put("gc", p.gcB, meta("gc", "from "+gcsrc))
	to := p.dir
	if len(p.exporters) > 0 {
		to = fmt.Sprintf("%s and %d exporters", p.dir, len(p.exporters))
		if p.dir == "" {
			to = fmt.Sprintf("%d exporters", len(p.exporters))
		}
	}
	if periodic && p.returnMem == 1 {
		written = append(written, p.returnMemory())
	}
	if periodic && p.releaseCode == 1 {
		written = append(written, releaseCode())
	}
	logf("wrote period %d to %s: %s", p.seq, to, strings.Join(written, " "))
	p.periodStart = time.Now()
}

// returnMemory gives the Go heap's free pages back to the system after a
// period's write (CONTPROF_RETURN_MEMORY=1, the default). Writing a period
// allocates several times contprof's live heap (building, encoding and
// compressing each profile), and the pages that took stay with the
// process until Go's background scavenger returns them, slowly: on the
// shop they were most of the RSS a period's write added (docs/cost.md).
// It costs one collection of a small heap per period, in the Go
// runtime's CPU time that the Shutdown line accounts. It returns
// "returned_kb=N": how much less memory Go held afterwards.
func (p *contprof) returnMemory() string {
	before := overhead.GoMemory()
	debug.FreeOSMemory()
	after := overhead.GoMemory()
	return fmt.Sprintf("returned_kb=%d", (int64(before)-int64(after))>>10)
}

// allocSource says where the allocation and live heap samples come from
// (the heap profile's "from ..." comment) and, for the allocation
// profile, how its numbers are estimated and how exact they are; it
// starts the next period's estimate.
func (p *contprof) allocSource() (string, []string) {
	var c alloc.TickStats
	if p.heapTicks != nil {
		c = p.heapTicks.Stats()
	}
	lost := fmt.Sprintf("samples without a stack (under %q): %d (cumulative)", stackUnavailable, p.allocNoStack.Load())
	switch {
	case p.allocSampling:
		p.allocMu.Lock()
		est := p.allocEst
		p.allocEst = clrevents.AllocationEstimate{}
		p.allocMu.Unlock()
		keep := p.heapTicks.SampledKeep()
		src := fmt.Sprintf("the runtime's allocation sampling (AllocationSampled, .NET 10+: each allocated byte picked with probability p = 1/%d, an object sampled when one of its bytes is; one kept every %d bytes on average: %d of %d kept, chosen in C with probability k = %.6g; %d gave no sample, %d of them unreadable)",
			clrevents.AllocationSamplingMean, max(p.rate, clrevents.AllocationSamplingMean), c.SampledKept, c.Sampled, keep, p.ticksWithoutObject.Load()+c.SampledShort, c.SampledShort)
		notes := []string{
			"estimator (the runtime's design, RandomizedAllocationSampling.md, weighted samples): a sample of an object of s bytes stands for 1/π objects and s/π bytes, π = k·(1-(1-p)^s), the probability that such an object is sampled and kept; unbiased for the whole profile and for any part of it (a stack, a type)",
			"error: the bytes' estimate has variance V = Σ s²(1-π)/π over the objects allocated, estimated from the samples as Σ s²(1-π)/π²; with many samples the error is about normal: within ±2√V 95% of the time, ±4√V all but 1 in 16,000; with k = 1, V ≤ N·(1/p-1) for N bytes allocated (relative error at most about 1/√samples); a part of the profile with m samples has a relative error of about 1/√m for objects much smaller than 1/p",
			fmt.Sprintf("this period: %d samples, estimate %.0f bytes, %.0f objects; standard error √V ≈ %.0f bytes (%.2f%%)",
				est.Samples, est.Bytes, est.Objects, est.StdErr(), 100*est.StdErr()/math.Max(est.Bytes, 1)),
			lost,
		}
		return src, notes
	case p.gcFromEvents:
		src := fmt.Sprintf("the runtime's allocation ticks (GCAllocationTick, about every 100 KB; one kept every %d bytes on average: %d of %d kept, chosen in C; %d ticks gave no sample, %d of them unreadable)", p.rate, c.Kept, c.Seen, p.ticksWithoutObject.Load()+c.Short, c.Short)
		return src, []string{
			"estimator: each kept tick stands for the bytes the ticks reported since the previous kept one, charged to the object whose allocation crossed the tick's mark (bytes/size objects of its size): the total is the runtime's count up to the last tick; the split by stack and type is not a random sample (the ticks fall every 100 KB: a periodic allocation pattern can charge one type for another's bytes) and has no error bound",
			lost,
		}
	default:
		src := fmt.Sprintf("allocations sampled every %d bytes on average (ObjectAllocated)", p.rate)
		return src, []string{
			fmt.Sprintf("estimator: a sampled allocation of s bytes stands for 1/π objects and s/π bytes, π = 1-exp(-s/%d) (as Go's heap profile scales): unbiased, with variance Σ s²(1-π)/π over the objects allocated", p.rate),
			lost,
		}
	}
}

func (p *contprof) Shutdown() error {
	p.shutdown.Do(func() {
		if p.stop == nil {
			return
		}
		close(p.stop)
		<-p.done
		if p.session != 0 {
			p.info.EventPipeStopSession(p.session)
		}
		if p.rec != nil {
			p.rec.Close()
		}
		// The last period's output, timed: the wall time it adds to the
		// app's exit and the process's CPU time meanwhile (the app's
		// threads have finished; task bench compares the two between
		// contprof with and without exporters).
		p.cost.Output(func() {
			p.write(false)
			p.flushExports()
		})
		hs := p.heap.Stats()
		goAlloc, goGCs := overhead.GoHeapChurn()
		goHeap, goStacks, goRuntime := overhead.GoMemoryParts()
		logf("Shutdown periods=%d exceptions=%d live_objects=%d sampled_allocations=%d gcs=%d event_stacks=%d event_frames=%d %s go_mem_kb=%d go_alloc_kb=%d go_gcs=%d go_heap_kb=%d go_stacks_kb=%d go_runtime_kb=%d",
			p.seq, p.excTotal.Load(), hs.Tracked, hs.Added, p.gc.Total(), p.eventStacks.Load(), p.eventFrames.Load(), p.cost.Report(), (goHeap+goStacks+goRuntime)>>10, goAlloc>>10, goGCs,
			goHeap>>10, goStacks>>10, goRuntime>>10)
	})
	return nil
}

func init() { profiler.Register(clsid, composed(&contprof{})) }

func main() {}
