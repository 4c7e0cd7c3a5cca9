//go:build benchrun

// The benchmark runner: `task bench` (or `go test -tags benchrun -run
// '^TestBench$' -timeout 0 -v ./bench/ -args [-quick] [flags]`). It is a
// test only to reuse internal/harness; the build tag keeps it out of `go
// test ./...`.

package bench_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clrprof/clrprof/bench"
	"github.com/clrprof/clrprof/internal/exporttest"
	"github.com/clrprof/clrprof/internal/harness"
	"github.com/clrprof/clrprof/internal/procstat"
	"github.com/clrprof/clrprof/soak"
)

var (
	flagQuick      = flag.Bool("quick", false, "small workloads and 3 runs: a few minutes (also CLRPROF_BENCH_QUICK=1)")
	flagRuns       = flag.Int("runs", 0, "measured runs per configuration (default 5; 3 with -quick)")
	flagOut        = flag.String("out", "", "markdown report to write (default ../docs/benchmarks.md; none with -quick)")
	flagJSON       = flag.String("json", "", "results file to write (default results.json; none with -quick)")
	flagOnly       = flag.String("only", "", "comma-separated workloads to run (default all)")
	flagConfigs    = flag.String("configs", "", "comma-separated profiler configurations to run in those workloads (default all of each; a row's reference runs too)")
	flagRender     = flag.String("render", "", "only re-render the markdown (-out) from this results file, e.g. after editing notes.md")
	flagThroughput = flag.Bool("throughput", true, "measure IL and signature decoding throughput")
	flagMemory     = flag.Bool("memory", false, "sample each run's /proc/PID/smaps every 50 ms and print its peak: the profiler library's own resident pages, the Go runtime's (go_mem_kb, where the profiler prints it) and the rest (costs the runner CPU: measure time without it)")
)

// A lib is a profiler library the runner builds.
type lib struct {
	clsid string
	build func(t *testing.T) string
	path  string
}

// A config is one profiler configuration of a benchmark row.
type config struct {
	name string
	lib  string // "" for no profiler
	env  []string
	ref  string // the C reference config it is compared with
	what string
	// chain is the library the profiler chains (CLRPROF_CHAIN_PATH and
	// CLRPROF_CHAIN_CLSID), "" for none.
	chain string
	// shutdown is the start of the Shutdown line the profiler must print.
	shutdown string
	// nonzero are counts of that line that must be positive, or the
	// profiler did nothing here and the row is skipped.
	nonzero []string
	// valid says what the Shutdown counts of a run must show for the row
	// to count (nothing dropped, counts equal to the C reference's).
	valid bench.Validity
	// need says why the config cannot run on rt ("" if it can).
	need          func(rt harness.Runtime) string
	informational bool
	// args and quickArgs, when set, are the program's arguments instead
	// of the workload's (the same program doing more of its work, run
	// interleaved with the other configurations).
	args, quickArgs []string
}

type workload struct {
	name, src       string
	args, quickArgs []string
	noR2R           bool
	refs            []string
	stdout          string // what a successful run prints
	repsFactor      int    // runs this many times the default (cheap workloads)
	configs         []string
	what            string
	// mcs, if set, is the number of classes of the soak's generated
	// program that Mono's mcs.exe compiles (soak.Generate): the workload
	// is then mcs.exe, not src.
	mcs, quickMCS int
	// csc, if set, is the number of classes of the same generated program
	// that Roslyn's csc (../shared/dotnet's, the compiler .NET is built
	// with) compiles against the runtime's reference assemblies: the
	// workload is then csc.dll, on the runtimes with reference assemblies
	// (.NET 10 and later).
	csc, quickCSC int
	// runtimeAsync builds src as runtime async ([harness.RuntimeAsync]):
	// the workload runs on .NET 11 and later only (on 10 runtime async
	// needs DOTNET_RuntimeAsync=1, a preview switch).
	runtimeAsync bool
	// appCounts keeps the begins, ends and bad counts the app prints
	// (and checks itself) in the row's counts.
	appCounts bool
}

func needELT(rt harness.Runtime) string {
	if rt.Major == 2 && rt.Minor == 0 {
		return "the runtime never calls the ELT hooks on Linux (the SDK refuses with ErrNotAvailable and logs why)"
	}
	return ""
}

func needInfo10(rt harness.Runtime) string {
	if !rt.AtLeast(3, 0) {
		return "needs ICorProfilerInfo10 (SuspendRuntime), .NET Core 3.0+"
	}
	return ""
}

var configs = []config{
	{name: "none", what: "no profiler"},
	{name: "c-idle", lib: "cref", env: []string{"CREF_MODE=idle"}, shutdown: "cref: Shutdown mode=idle",
		what: "C reference: Initialize/Shutdown only"},
	{name: "go-idle", lib: "goidle", env: []string{"BENCH_MODE=idle"}, ref: "c-idle", shutdown: "goidle: Shutdown mode=idle",
		what: "clrprof (bench/prof/idle): Initialize/Shutdown only"},
	{name: "go-idle-snapshot", lib: "goidle", env: []string{"BENCH_MODE=snapshot"}, ref: "go-idle", shutdown: "goidle: Shutdown mode=snapshot",
		what: "clrprof (bench/prof/idle) asking EnableStackSnapshot alone, as every sampling profiler here does: what the flag changes in how the runtime runs, against go-idle"},
	{name: "go-idle-eventpipe", lib: "goidle", env: []string{"BENCH_MODE=eventpipe"}, ref: "go-idle", shutdown: "goidle: Shutdown mode=eventpipe",
		what: "clrprof (bench/prof/idle) with the in-process EventPipe session sample/contprof opens with its profiles off (the runtime's provider, GC keyword, Informational), its events answered in C: the runtime's own cost of the session, against go-idle"},
	{name: "c-unimpl", lib: "cref", env: []string{"CREF_MODE=unimpl"}, shutdown: "cref: Shutdown mode=unimpl",
		what: "C reference: a wide event mask (loads, JIT, threads, exceptions, GC, suspensions, allocations), every callback answering S_OK"},
	{name: "go-unimpl", lib: "goidle", env: []string{"BENCH_MODE=unimpl"}, ref: "c-unimpl", shutdown: "goidle: Shutdown mode=unimpl",
		what: "clrprof: the same mask, no callback implemented: the SDK answers them in C"},
	{name: "c-alloc", lib: "cref", env: []string{"CREF_MODE=alloc"}, shutdown: "cref: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"lost"}},
		what:  "C reference: ObjectAllocated records (class, GetObjectSize) in a per-thread buffer (unbounded: a full buffer goes to the consumer and the thread takes another); a consumer thread sums per class"},
	{name: "go-alloc-fast", lib: "goalloc", ref: "c-alloc", shutdown: "goalloc: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"dropped"}, MatchRef: []string{"allocations"}},
		what:  "clrprof (bench/prof/alloc): the SDK's allocation fast path at its defaults (alloc.NewRecorder, no stacks: ObjectAllocated answered in C, class and GetObjectSize into per-thread rings of 1<<15 slots, drained by a goroutine woken when a ring is half full; a thread whose ring is full waits for the drain instead of dropping); the Batch callback sums per class in Go. Invalid if it dropped anything or recorded another number of allocations than c-alloc"},
	{name: "go-alloc-sync", lib: "gosync", env: []string{"BENCH_MODE=alloc"}, ref: "c-alloc", shutdown: "gosync: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"sizeErrors"}, MatchRef: []string{"allocations"}},
		what:  "clrprof (bench/prof/sync): ObjectAllocated handled synchronously in Go (GetObjectSize, per-class lock-free table), with the SDK's signal guard"},
	{name: "go-alloc-sync-noguard", lib: "gosyncdiag", env: []string{"BENCH_MODE=alloc", "CLRPROF_SIGNAL_GUARD=0"}, ref: "c-alloc",
		shutdown: "gosync: Shutdown mode=alloc", nonzero: []string{"allocations"}, informational: true,
		valid: bench.Validity{Zero: []string{"sizeErrors"}, MatchRef: []string{"allocations"}},
		what:  "the same without the signal guard (CLRPROF_SIGNAL_GUARD=0, a switch compiled only into test builds: this library is built with the clrprof_testhooks tag): NOT safe (risks.md item 1), for comparison only"},
	{name: "c-exc", lib: "cref", env: []string{"CREF_MODE=exc"}, shutdown: "cref: Shutdown mode=exc", nonzero: []string{"exceptions"},
		what: "C reference: ExceptionThrown counts"},
	{name: "go-exc-sync", lib: "gosync", env: []string{"BENCH_MODE=exc"}, ref: "c-exc", shutdown: "gosync: Shutdown mode=exc", nonzero: []string{"exceptions"},
		valid: bench.Validity{MatchRef: []string{"exceptions"}},
		what:  "clrprof: ExceptionThrown handled synchronously in Go (one atomic counter), with the signal guard"},
	{name: "c-elt", lib: "cref", env: []string{"CREF_MODE=elt"}, shutdown: "cref: Shutdown mode=elt", nonzero: []string{"enters"}, need: needELT,
		valid: bench.Validity{Zero: []string{"lost", "unpaired", "overflows"}},
		what:  "C reference: SetEnterLeaveFunctionHooks3 with register-saving assembly stubs calling C (function ID from r14 on enter, rdi on leave and tailcall), which records (function, kind, timestamp) in per-thread buffers (unbounded, as for c-alloc); a consumer thread counts the events by kind and pairs each leave or tailcall with its thread's enters on a shadow stack. Invalid if any leave pairs with no enter"},
	{name: "go-elt-fast", lib: "goelt", ref: "c-elt", shutdown: "goelt: Shutdown mode=elt", nonzero: []string{"enters"}, need: needELT,
		valid: bench.Validity{Zero: []string{"dropped", "lost", "unpaired", "overflows"}, MatchRef: []string{"enters"}},
		what:  "clrprof (bench/prof/elt): the SDK's ELT fast path at its default configuration (elt.NewRecorder: assembly stubs recording into per-thread rings in C of 1<<16 events, at most 64 MiB for all threads, drained by a goroutine in chunks of 4096 events over one reused buffer, woken when a ring is half full; a thread whose ring is full waits for the drain instead of dropping); the Batch callback does c-elt's consumer work in Go. Invalid if it dropped or lost anything, a leave paired with no enter, or it saw another number of enters than c-elt"},
	{name: "go-elt-count", lib: "goelt", env: []string{"BENCH_ELT_MODE=count"}, ref: "c-elt", shutdown: "goelt: Shutdown mode=count", nonzero: []string{"enters"}, need: needELT,
		valid: bench.Validity{Zero: []string{"dropped", "unpaired", "overflows"}, MatchRef: []string{"enters"}},
		what:  "clrprof (bench/prof/elt, BENCH_ELT_MODE=count): elt.NewCallCounter: the hooks count every call per function and keep a shadow stack per thread for inclusive time, in C (no events, nothing to drain); the sum of the counts is compared with c-elt's enters. Invalid if a call was not counted, a leave matched no open call, or the sum differs from c-elt's enters"},
	{name: "c-sample", lib: "cref", env: []string{"CREF_MODE=sample"}, shutdown: "cref: Shutdown mode=sample", nonzero: []string{"samples"}, need: needInfo10,
		what: "C reference: a C thread at 99 Hz: SuspendRuntime, DoStackSnapshot of every managed thread, ResumeRuntime"},
	{name: "go-contprof", lib: "contprof", shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its default settings: CPU and wall snapshots at 19 Hz (.NET Core 3.0+) within a 2% suspension budget, exceptions, lock contention from the runtime's events (.NET 5+), GC pauses, and the live heap where the runtime's allocation ticks reach the profiler (.NET 5+: one tick kept every 512 KiB on average, with a stack and a weak handle on .NET 8; off by default before .NET 5); profiles written at Shutdown (the period, 60 s, is longer than the run)"},
	{name: "go-contprof-noheap", lib: "contprof", env: []string{"CONTPROF_HEAP=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof with the live heap off on every runtime (CONTPROF_HEAP=0; the same as go-contprof before .NET 5); on 2.x the GC profile then counts suspensions for GC, generation not reported"},
	{name: "go-contprof-heap", lib: "contprof", env: []string{"CONTPROF_HEAP=1"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof with everything on, the live heap on every runtime (CONTPROF_HEAP=1; the same as go-contprof on .NET 5+): before .NET 5 allocations recorded in C with a stack every 512 KiB (ObjectAllocated, which puts every allocation on the runtime's slow path: compare c-unimpl with none) and MonitorGC"},
	{name: "hand", env: []string{"WRAP_MODE=hand"},
		what: "no profiler; the hot method calls an empty integration through the try/filter/finally that package instr adds, written by hand in C# (bench/workloads/wrap.cs, AddHand)"},
	{name: "go-wrap", lib: "gowrap", ref: "hand", shutdown: "gowrap: Shutdown", nonzero: []string{"instrumented"},
		what: "clrprof (bench/prof/wrap): package instr wraps the hot method with an empty integration delivered from the profiler library (Assembly.Load of embedded bytes)"},
	{name: "go-wrap-start", lib: "gowrap", shutdown: "gowrap: Shutdown",
		what: "bench/prof/wrap on a program without its target: its start-up and shutdown (the Go runtime, instr, the delivery of the integration), taken out of go-wrap's per-call figures"},
	{name: "go-wrap-mcs", lib: "gowrap", env: []string{"BENCH_WRAP_TARGETS=mcs!*::*"}, shutdown: "gowrap: Shutdown", nonzero: []string{"instrumented"},
		what: "clrprof (bench/prof/wrap): package instr wraps every method of mcs (mcs!*::*) with an empty integration"},
	{name: "async-hand-await", env: []string{"ASYNC_MODE=await"},
		what: "no profiler; each call goes through an async method written in C# that calls Begin, awaits the target and calls End with its result or exception (bench/workloads/async.cs, WorkAwait): what a C# author writes for what instr's async wrap does; the integration counts (BenchAsyncHand.CountingHooks) and the app checks them"},
	{name: "async-hand-cw", env: []string{"ASYNC_MODE=cw"},
		what: "no profiler; what instr makes of the target, written in C# (bench/workloads/async.cs, WorkCW): Begin, the call in try/filter/finally, the task handed to Done (End with the result or exception) at once when complete, else through ContinueWith(new Action<Task, object>(Done), state, ExecuteSynchronously, TaskScheduler.Default)"},
	{name: "go-wrap-async", lib: "gowrap", ref: "async-hand-await", shutdown: "gowrap: Shutdown", nonzero: []string{"instrumented"},
		env:  []string{"BENCH_WRAP_TARGETS=async!Program::Work", "BENCH_WRAP_TYPE=BenchWrap.CountingHooks", "ASYNC_MODE=wrap"},
		what: "clrprof (bench/prof/wrap): package instr wraps the async target (Program::Work) with BenchWrap.CountingHooks, the same counting integration as the hand-written configurations', delivered from the profiler library; End at the task's completion; the app reads the integration's counts by reflection and checks them"},
	{name: "c-gohook", lib: "gohookdiag", env: []string{"CLRPROF_GOHOOK_ENTRY=c"}, shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"},
		what: "the hot method hooked by instr's Go hooks machinery (bench/prof/gohook) with the P/Invokes bound to empty C functions of the same library (CLRPROF_GOHOOK_ENTRY=c, test builds): the C hook bound the same way"},
	{name: "go-gohook", lib: "gohook", ref: "c-gohook", shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"},
		what: "clrprof (bench/prof/gohook): the hot method calls empty Go hooks (instr.GoHooks: P/Invoke into the library, signal guard, call into Go) at entry and exit"},
	{name: "go-gohook-noguard", lib: "gohookdiag", env: []string{"CLRPROF_GOHOOK_GUARD=0"}, ref: "c-gohook", shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"}, informational: true,
		what: "the same without the signal guard (CLRPROF_GOHOOK_GUARD=0, test builds only): NOT safe (docs/reliability.md), for comparison only"},
	{name: "go-gohook-deferred", lib: "gohook", env: []string{"BENCH_GOHOOK_DEFERRED=1", "BENCH_GOHOOK_RING=16777216"}, ref: "c-gohook", shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"},
		valid: bench.Validity{Zero: []string{"dropped"}},
		what:  "clrprof (bench/prof/gohook): empty deferred Go hooks (instr.GoHooks.Deferred: the P/Invoke appends a record to the thread's ring in C; a goroutine runs the hooks meanwhile and FlushDeferred at Shutdown the rest; delivered and dropped printed). The ring is 16 MiB (BENCH_GOHOOK_RING, advised into huge pages) so that none of the calls is dropped: the loop makes a call every 20-30 ns, and the drain, which keeps up on average, falls behind for a millisecond or two at times (its thread descheduled, a wake-up late); with the default 256 KiB rings 0.4-8% of the calls were dropped here, with 1 MiB rings 0.1-4%, with 4 MiB and 16 MiB none (7 runs each, .NET 8), and with 8 MiB, the size first used, one run of 15 of the 15,000,000-call configuration dropped 47,809 calls (.NET 8, 2026-11-27: the drain 8 MiB, some 10 ms, behind). A run that drops a call is invalid (its hooks would be missing from the CPU time): the row prints delivered and dropped. A larger ring costs more than its page faults: with 512 MiB rings (120 MB of records, every line of them new to the caches) the same run took half as long again as with 16 MiB"},
	{name: "c-gohook-x3", lib: "gohookdiag", env: []string{"CLRPROF_GOHOOK_ENTRY=c"}, shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"},
		args: []string{"15000000"}, quickArgs: []string{"6000000"},
		what: "c-gohook making three times the calls (15,000,000; 6,000,000 with -quick), run interleaved with the others: what it takes beyond c-gohook is the cost of the calls between, with everything paid once a run taken out"},
	{name: "go-gohook-deferred-x3", lib: "gohook", env: []string{"BENCH_GOHOOK_DEFERRED=1", "BENCH_GOHOOK_RING=16777216"}, ref: "c-gohook-x3", shutdown: "gohook: Shutdown", nonzero: []string{"instrumented"},
		valid: bench.Validity{Zero: []string{"dropped"}},
		args:  []string{"15000000"}, quickArgs: []string{"6000000"},
		what: "go-gohook-deferred making three times the calls, as c-gohook-x3: what it takes beyond go-gohook-deferred, against what c-gohook-x3 takes beyond c-gohook, is the deferred hooks' cost per call against the C hook's, without the costs paid once a run (start-up, instrumentation, the drain goroutine's start, the ring's first touch, the final flush)"},
	{name: "go-contprof-export", lib: "contprof", ref: "go-contprof", shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "go-contprof also shipping every profile to Pyroscope (push API) and over OTLP (gRPC) to the OpenTelemetry Collector's receiver, both on loopback (started by the runner), the directory kept: compared with go-contprof, the same profiler writing the directory alone; the final flush at Shutdown waits for the receivers"},
	{name: "go-contprof-nowall", lib: "contprof", env: []string{"CONTPROF_WALL=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults without the wall profile (CONTPROF_WALL=0): the snapshots still run, for the CPU profile"},
	{name: "go-contprof-nosnap", lib: "contprof", env: []string{"CONTPROF_WALL=0", "CONTPROF_CPU=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults without the CPU and wall profiles (CONTPROF_CPU=0 CONTPROF_WALL=0): no snapshots at all"},
	{name: "go-contprof-noexc", lib: "contprof", env: []string{"CONTPROF_EXCEPTIONS=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults without the exceptions profile (CONTPROF_EXCEPTIONS=0: no ExceptionThrown callback)"},
	{name: "go-contprof-heapdrop", lib: "contprof", env: []string{"CONTPROF_HEAP_RATE=1073741824"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults but keeping one allocation sample every GiB (CONTPROF_HEAP_RATE=1073741824): the runtime still samples allocations and raises every AllocationSampled event (.NET 10+) or allocation tick (.NET 5 to 9) into the session, and the C sampler drops nearly all of them before Go; against go-contprof-noheap, the runtime's share of the heap profile's cost; against go-contprof, contprof's (its callbacks: decoding, the stack walk, the profiles)"},
	{name: "go-contprof-noexport", lib: "contprofnoexp", shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults built with -tags contprof_noexport: the same profiler without the exporters' code in its library (11 MB against 17): what linking them costs in memory and start-up"},
	{name: "go-contprof-gogc100", lib: "contprof", env: []string{"CONTPROF_GOGC=100"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof with Go's default collector setting (CONTPROF_GOGC=100; contprof's default is 25): what collecting its small heap four times as often costs in CPU, and what the 4 MB minimum heap holds. (Until 2026-12-07 this row was go-contprof-gogc50 with GOGC=50 in the environment, which the SDK resets to Go's default: it measured go-contprof again.)"},
	{name: "go-contprof-gogc50", lib: "contprof", env: []string{"CONTPROF_GOGC=50"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof with CONTPROF_GOGC=50: between contprof's default (25) and Go's (100), a 2 MB minimum heap"},
	{name: "go-contprof-hz10", lib: "contprof", env: []string{"CONTPROF_HZ=10"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults but 10 CPU and wall snapshots a second instead of 19 (CONTPROF_HZ=10): what the snapshots' rate costs"},
	{name: "go-contprof-off", lib: "contprof", env: []string{"CONTPROF_CPU=0", "CONTPROF_WALL=0", "CONTPROF_EXCEPTIONS=0", "CONTPROF_CONTENTION=0", "CONTPROF_HEAP=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof with every profile off (CONTPROF_CPU=0 CONTPROF_WALL=0 CONTPROF_EXCEPTIONS=0 CONTPROF_CONTENTION=0 CONTPROF_HEAP=0): what is left is its in-process EventPipe session for the GC profile, its periods and its output"},
	{name: "go-contprof-nocont", lib: "contprof", env: []string{"CONTPROF_CONTENTION=0"}, shutdown: "contprof: Shutdown", nonzero: []string{"periods"},
		what: "sample/contprof at its defaults without the contention profile (CONTPROF_CONTENTION=0: the runtime's Contention keyword off)"},
	{name: "cpuprof-19", lib: "cpuprof", env: []string{"CPUPROF_HZ=19", "CPUPROF_OUT=cpuprof.pprof"}, shutdown: "cpuprof: wrote", nonzero: []string{"samples"},
		valid: bench.Validity{Zero: []string{"failed", "lost"}},
		what:  "sample/cpuprof at 19 Hz (CPUPROF_HZ=19), its default mode: the kernel samples each managed thread (a perf event per thread, its registers and top 32 KiB of stack, unwound by cpuprof), nothing suspended, no signal; read every 50 ms. Invalid if a thread could not be sampled or a sample was lost"},
	{name: "cpuprof-99", lib: "cpuprof", env: []string{"CPUPROF_OUT=cpuprof.pprof"}, shutdown: "cpuprof: wrote", nonzero: []string{"samples"},
		valid: bench.Validity{Zero: []string{"failed", "lost"}},
		what:  "sample/cpuprof at its defaults (99 Hz, perf mode)"},
	{name: "cpuprof-99-start", lib: "cpuprof", env: []string{"CPUPROF_OUT=cpuprof.pprof"}, shutdown: "cpuprof: wrote",
		what: "cpuprof-99 on the empty workload (too short for a sample): its start-up and shutdown, for cpuprof-99's accounted cost"},
	{name: "cpuprof-19-suspend", lib: "cpuprof", env: []string{"CPUPROF_HZ=19", "CPUPROF_MODE=suspend", "CPUPROF_OUT=cpuprof.pprof"}, shutdown: "cpuprof: wrote", nonzero: []string{"samples"}, need: needInfo10, informational: true,
		what: "sample/cpuprof at 19 Hz with CPUPROF_MODE=suspend (its fallback): each tick suspends the runtime, walks every managed thread that ran, resumes"},
	{name: "cpuprof-99-suspend", lib: "cpuprof", env: []string{"CPUPROF_MODE=suspend", "CPUPROF_OUT=cpuprof.pprof"}, shutdown: "cpuprof: wrote", nonzero: []string{"samples"}, need: needInfo10, informational: true,
		what: "sample/cpuprof at 99 Hz with CPUPROF_MODE=suspend"},
	// Issue 26: a chained native profiler and composed Go profilers.
	{name: "c-unimpl-chained", lib: "goidle", chain: "cref", env: []string{"BENCH_MODE=idle", "CREF_MODE=unimpl"}, ref: "c-unimpl", shutdown: "cref: Shutdown mode=unimpl",
		what: "c-unimpl's C profiler chained behind clrprof's idle Go profiler (CLRPROF_CHAIN_PATH): the callbacks only the C profiler asks for (all of them: the Go profiler asks for none) go to it straight through the SDK's direct vtable slots (a this-swapping trampoline); target at most 1.05x c-unimpl"},
	{name: "c-alloc-chained", lib: "goidle", chain: "cref", env: []string{"BENCH_MODE=idle", "CREF_MODE=alloc"}, ref: "c-alloc", shutdown: "cref: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"lost"}, MatchRef: []string{"allocations"}},
		what:  "c-alloc's C profiler chained behind clrprof's idle Go profiler: ObjectAllocated straight to it by the direct slot, GetObjectSize through the SDK's Info wrapper (a trampoline too); target at most 1.05x c-alloc"},
	{name: "go-alloc-compose1", lib: "gosync", env: []string{"BENCH_MODE=alloc", "BENCH_MEMBERS=1"}, ref: "go-alloc-sync", shutdown: "gosync: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"sizeErrors"}},
		what:  "go-alloc-sync's profiler as the one member of profiler.Compose: the composite's fan-out (mask filter, recover) and the member's Info wrapper"},
	{name: "go-alloc-compose2", lib: "gosync", env: []string{"BENCH_MODE=alloc", "BENCH_MEMBERS=2"}, ref: "go-alloc-compose1", shutdown: "gosync: Shutdown mode=alloc", nonzero: []string{"allocations"},
		valid: bench.Validity{Zero: []string{"sizeErrors"}},
		what:  "two go-alloc-sync profilers composed (each does the whole per-allocation work): against go-alloc-compose1, the second member's fan-out and work"},
	{name: "go-exc-compose1", lib: "gosync", env: []string{"BENCH_MODE=exc", "BENCH_MEMBERS=1"}, ref: "go-exc-sync", shutdown: "gosync: Shutdown mode=exc", nonzero: []string{"exceptions"},
		what: "go-exc-sync's profiler as the one member of profiler.Compose"},
	{name: "go-exc-compose2", lib: "gosync", env: []string{"BENCH_MODE=exc", "BENCH_MEMBERS=2"}, ref: "go-exc-compose1", shutdown: "gosync: Shutdown mode=exc", nonzero: []string{"exceptions"},
		what: "two go-exc-sync profilers composed: against go-exc-compose1, the second member's fan-out and work"},
	{name: "go-sample", lib: "gosample", ref: "c-sample", shutdown: "gosample: Shutdown mode=sample", nonzero: []string{"samples"}, need: needInfo10,
		what: "clrprof (bench/prof/sample): the same from a goroutine locked to its thread, through Info (frame callback in C)"},
}

var workloads = []workload{
	{name: "empty", src: "workloads/empty.cs", stdout: "empty: ok", repsFactor: 3,
		configs: []string{"none", "c-idle", "go-idle", "go-idle-snapshot", "go-idle-eventpipe", "go-contprof", "go-contprof-hz10", "go-contprof-noexport", "go-contprof-noheap", "go-contprof-heap", "go-contprof-export", "hand", "go-wrap-start", "cpuprof-99-start"},
		what:    "the smallest app: process start-up and shutdown"},
	{name: "startup", src: "workloads/startup.cs", noR2R: true, refs: []string{"System.Core.dll"}, stdout: "startup: n=", repsFactor: 3,
		configs: []string{"none", "c-idle", "go-idle", "c-unimpl", "go-unimpl"},
		what:    "JIT-heavy start-up with ReadyToRun disabled: collections, sorting, formatting, parsing, encoding, reflection, LINQ, tasks"},
	{name: "cpu", src: "workloads/cpu.cs", args: []string{"200"}, quickArgs: []string{"60"}, stdout: "cpu: primes=",
		configs: []string{"none", "c-idle", "go-idle", "c-sample", "go-sample", "go-contprof", "go-contprof-export"},
		what:    "CPU-bound loop (sieve and series) on one thread, no allocation in the loop"},
	{name: "alloc", src: "workloads/alloc.cs", args: []string{"500000", "4"}, quickArgs: []string{"250000", "4"}, stdout: "alloc: objects=",
		configs: []string{"none", "c-unimpl", "go-unimpl", "c-alloc", "go-alloc-fast", "go-alloc-sync", "go-alloc-sync-noguard", "go-contprof", "go-contprof-noheap",
			"c-unimpl-chained", "c-alloc-chained", "go-alloc-compose1", "go-alloc-compose2"},
		what: "allocation storm: 4 threads each allocating N small objects and arrays"},
	{name: "alloc-long", src: "workloads/alloc.cs", args: []string{"5000000", "4"}, quickArgs: []string{"1500000", "4"}, stdout: "alloc: objects=",
		configs: []string{"none", "go-contprof", "go-contprof-noheap", "go-contprof-heap", "go-contprof-export", "c-unimpl", "c-alloc", "c-unimpl-chained", "c-alloc-chained"},
		what:    "the allocation storm ten times longer (about 1 s on .NET 8 here): the continuous profiler's steady state, which the short storm's 60 ms of work after start-up leave to one or two snapshots; and a chained native profiler's per-callback cost, which the short storm's fixed costs (the Go runtime's start-up, the 20 ms Shutdown drain on .NET Core 2.x) hide"},
	{name: "calls", src: "workloads/calls.cs", args: []string{"3", "28"}, quickArgs: []string{"2", "27"}, stdout: "calls: fib=",
		configs: []string{"none", "c-elt", "go-elt-fast", "go-elt-count"},
		what:    "call-heavy: recursive Fib and tight calls to small non-inlined methods (int, double and struct arguments)"},
	{name: "wrap", src: "workloads/wrap.cs", args: []string{"500000000"}, quickArgs: []string{"100000000"}, stdout: "wrap: sum=",
		configs: []string{"none", "hand", "go-wrap"},
		what:    "a hot small method (int Add(int, int), not inlined) called N times: plain, wrapped by instr (go-wrap), or with the same wrap written by hand (hand)"},
	{name: "async-sync", src: "workloads/async.cs", args: []string{"20000000", "sync"}, quickArgs: []string{"4000000", "sync"}, stdout: "async: sum=", appCounts: true,
		configs: []string{"none", "async-hand-await", "async-hand-cw", "go-wrap-async"},
		what:    "an async method (async Task<int> Work(int), not inlined) called and awaited N times, completing without suspending (classic state machine; the caller's await finds the task complete): plain, wrapped by instr with a counting integration (go-wrap-async), or with the same Begin/End called from C# (async-hand-await, async-hand-cw); every configuration prints and checks its Begin and End counts"},
	{name: "async-yield", src: "workloads/async.cs", args: []string{"3000000", "yield"}, quickArgs: []string{"300000", "yield"}, stdout: "async: sum=", appCounts: true,
		configs: []string{"none", "async-hand-await", "async-hand-cw", "go-wrap-async"},
		what:    "async-sync's method suspending at await Task.Yield() in every call (it completes on a thread-pool thread; End there)"},
	{name: "async-ra-sync", src: "workloads/async.cs", runtimeAsync: true, args: []string{"20000000", "sync"}, quickArgs: []string{"4000000", "sync"}, stdout: "async: sum=", appCounts: true,
		configs: []string{"none", "async-hand-await", "async-hand-cw", "go-wrap-async"},
		what:    "async-sync built as runtime async (Roslyn -features:runtime-async=on; .NET 11 only): instr wraps Work's body, End when it completes"},
	{name: "async-ra-yield", src: "workloads/async.cs", runtimeAsync: true, args: []string{"3000000", "yield"}, quickArgs: []string{"300000", "yield"}, stdout: "async: sum=", appCounts: true,
		configs: []string{"none", "async-hand-await", "async-hand-cw", "go-wrap-async"},
		what:    "async-yield built as runtime async (.NET 11 only)"},
	{name: "gohook", src: "workloads/wrap.cs", args: []string{"5000000"}, quickArgs: []string{"2000000"}, stdout: "wrap: sum=",
		configs: []string{"none", "go-wrap", "c-gohook", "go-gohook", "go-gohook-noguard", "go-gohook-deferred"},
		what:    "the hot method of the wrap workload (fewer calls: a Go hook costs microseconds) hooked at entry and exit: by the managed integration (go-wrap), by empty C functions through instr's Go hook P/Invokes (c-gohook), by empty Go hooks (go-gohook), and by the same without the signal guard (go-gohook-noguard, not safe)"},
	{name: "gohook-calls", src: "workloads/wrap.cs", args: []string{"5000000"}, quickArgs: []string{"2000000"}, stdout: "wrap: sum=", repsFactor: 3,
		configs: []string{"c-gohook", "go-gohook-deferred", "c-gohook-x3", "go-gohook-deferred-x3"},
		what:    "the gohook workload's C hook and deferred Go hooks, each also making three times the calls (the -x3 configurations), interleaved and run three times as often as the other workloads (their runs take a second or less; five medians did not settle a per-call ratio on this machine): what each -x3 configuration takes beyond its twin is the cost of the calls between"},
	{name: "mcs-jit", mcs: 200, quickMCS: 60, stdout: "Compilation succeeded",
		configs: []string{"none", "go-wrap-mcs"},
		what:    "Mono's C# compiler (mcs.exe, as in soak/) compiling a generated program of 200 classes (60 with -quick): the cost of instrumenting every method of mcs with an empty integration, mostly JIT time"},
	{name: "exceptions", src: "workloads/exceptions.cs", args: []string{"5000", "4"}, quickArgs: []string{"2500", "4"}, stdout: "exceptions: caught=",
		configs: []string{"none", "c-unimpl", "go-unimpl", "c-exc", "go-exc-sync", "c-unimpl-chained", "go-exc-compose1", "go-exc-compose2"},
		what:    "4 threads throwing and catching through 3 frames with finally blocks, a third of them NullReferenceException"},
	{name: "exceptions-long", src: "workloads/exceptions.cs", args: []string{"50000", "4"}, quickArgs: []string{"10000", "4"}, stdout: "exceptions: caught=",
		configs: []string{"none", "c-exc", "go-exc-sync"},
		what:    "the exceptions workload ten times longer: the per-exception cost of a Go ExceptionThrown callback against the same in C, which the short workload's start-up leaves within its noise on .NET 11"},
	{name: "csc", csc: 300, quickCSC: 100, stdout: "warning CS1030", repsFactor: 2,
		configs: []string{"none", "c-idle", "go-idle", "go-idle-snapshot", "go-idle-eventpipe", "go-contprof", "go-contprof-gogc50", "go-contprof-gogc100", "go-contprof-hz10", "go-contprof-noexport", "go-contprof-noheap", "go-contprof-heapdrop", "go-contprof-nowall", "go-contprof-nosnap", "go-contprof-noexc", "go-contprof-nocont", "go-contprof-off", "cpuprof-19", "cpuprof-99", "cpuprof-19-suspend", "cpuprof-99-suspend", "c-sample"},
		what:    "a large real application: Roslyn's C# compiler (csc.dll from ../shared/dotnet, with its own server GC setting) compiling the soak's generated program (soak.Generate) against the runtime's reference assemblies, on .NET 10 and 11"},
	{name: "mcs", mcs: 300, quickMCS: 100, stdout: "Compilation succeeded", repsFactor: 2,
		configs: []string{"none", "c-idle", "go-idle", "go-idle-snapshot", "go-idle-eventpipe", "go-contprof", "go-contprof-hz10", "go-contprof-noexport", "go-contprof-noheap", "go-contprof-heapdrop", "go-contprof-nowall", "go-contprof-nosnap", "go-contprof-noexc", "go-contprof-nocont", "go-contprof-off", "cpuprof-19", "cpuprof-99", "cpuprof-19-suspend", "cpuprof-99-suspend", "c-sample"},
		what:    "a real application: Mono's C# compiler (mcs.exe, soak/) on .NET 8 compiling the soak's generated program (soak.Generate) against Mono's reference assemblies"},
}

// cscDLL is Roslyn's compiler as scripts/setup.sh lays it out.
func cscDLL() string { return filepath.Join(harness.CacheDir(), "dotnet", "roslyn", "csc.dll") }

// cscArgs compiles p.cs against rt's reference assemblies (the response
// file install.sh writes for each: -nostdlib and one -r per assembly).
func cscArgs(rt harness.Runtime) []string {
	rsp := filepath.Join(harness.CacheDir(), "dotnet", "ref", fmt.Sprintf("net%d.0.rsp", rt.Major))
	return []string{"-nologo", "-noconfig", "@" + rsp, "-t:library", "-out:p.dll", "p.cs"}
}

// mcsExe is Mono's C# compiler and monoLib the reference assemblies it
// compiles against (scripts/setup.sh installs both: Debian's mono-mcs).
const (
	mcsExe  = "/usr/lib/mono/4.5/mcs.exe"
	monoLib = "/usr/lib/mono/4.5/"
)

var mcsArgs = []string{"-nostdlib", "-r:" + monoLib + "mscorlib.dll", "-r:" + monoLib + "System.dll", "-r:" + monoLib + "System.Core.dll", "-out:p.exe", "p.cs"}

func findConfig(name string) *config {
	for i := range configs {
		if configs[i].name == name {
			return &configs[i]
		}
	}
	return nil
}

// appCountsRe finds the counts an async workload prints and checks.
var appCountsRe = regexp.MustCompile(`(?m)^async: .*? (begins=\d+ ends=\d+ bad=\d+)`)

var shutdownRe = regexp.MustCompile(`(?m)^(?:cref|go[a-z]+|contprof): Shutdown (.*)$|^cpuprof: wrote (.*)$`)

// counts parses "k=v k=v" into a map.
func counts(s string) map[string]int64 {
	m := map[string]int64{}
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			m[k] = n
		}
	}
	return m
}

type outcome struct {
	run    bench.Run
	counts string
	err    string
}

// runOnce runs app once with c and measures it.
func runOnce(t *testing.T, rt harness.Runtime, app, dir string, w *workload, c *config, libs map[string]*lib, quick bool) outcome {
	opts := harness.RunOptions{
		Args:              w.args,
		DisableReadyToRun: w.noR2R,
		Env:               c.env,
		Timeout:           10 * time.Minute,
		Dir:               dir,
	}
	if quick && w.quickArgs != nil {
		opts.Args = w.quickArgs
	}
	if c.args != nil {
		opts.Args = c.args
		if quick && c.quickArgs != nil {
			opts.Args = c.quickArgs
		}
	}
	if w.mcs > 0 {
		opts.Args = mcsArgs
	}
	if w.csc > 0 {
		opts.Args = cscArgs(rt)
		opts.ConfigProperties = map[string]any{"System.GC.Server": true} // as csc.runtimeconfig.json says
	}
	if c.lib != "" {
		l := libs[c.lib]
		opts.ProfilerPath, opts.ProfilerCLSID = l.path, l.clsid
	}
	if c.chain != "" {
		l := libs[c.chain]
		opts.Env = append(append([]string{}, c.env...), "CLRPROF_CHAIN_PATH="+l.path, "CLRPROF_CHAIN_CLSID="+l.clsid)
	}
	cmd, timeout := harness.Command(t, rt, app, opts)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return outcome{err: err.Error()}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var mem chan memPeak
	if *flagMemory {
		mem = make(chan memPeak, 1)
		lib := ""
		if c.lib != "" {
			lib = libs[c.lib].path
		}
		stop := make(chan struct{})
		defer close(stop)
		go func() { mem <- sampleMemory(cmd.Process.Pid, lib, stop) }()
	}
	var werr error
	select {
	case werr = <-done:
	case <-time.After(timeout):
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		return outcome{err: "timed out"}
	}
	wall := time.Since(start)
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	var peak memPeak
	if mem != nil {
		// The process is gone: its last readable smaps was the sampler's
		// last.
		peak = <-mem
	}
	var o outcome
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		o.run = bench.Run{
			Wall:   wall,
			CPU:    time.Duration(ru.Utime.Nano() + ru.Stime.Nano()),
			MaxRSS: ru.Maxrss * 1024,
		}
	}
	tail := func(s string) string {
		if len(s) > 2000 {
			s = "..." + s[len(s)-2000:]
		}
		return s
	}
	if werr != nil || !strings.Contains(stdout.String(), w.stdout) {
		o.err = fmt.Sprintf("%v\nstdout: %s\nstderr: %s", werr, tail(stdout.String()), tail(stderr.String()))
		return o
	}
	if c.shutdown != "" {
		m := shutdownRe.FindString(stderr.String())
		if !strings.HasPrefix(m, c.shutdown) {
			o.err = fmt.Sprintf("no %q line on stderr:\n%s", c.shutdown, tail(stderr.String()))
			return o
		}
		o.counts = strings.TrimSpace(strings.TrimPrefix(m, c.shutdown))
		o.run.Counts = o.counts
	}
	if w.appCounts {
		// The app's own counts (the async workloads' Begin and End
		// calls, which it has checked): kept with the row.
		if m := appCountsRe.FindStringSubmatch(stdout.String()); m != nil {
			o.counts = strings.TrimSpace(o.counts + " " + m[1])
			o.run.Counts = o.counts
		}
	}
	if mem != nil {
		fmt.Printf("%-14s %-10s %-22s memory: peak %s\n", rt.Name, w.name, c.name, peak.String(o.counts))
	}
	return o
}

// A memPeak is the split of a process's resident memory at its peak
// (of the samples taken).
type memPeak struct {
	total, lib, anon, files uint64
	samples                 int
}

// String says the peak in MiB: the total, the profiler library's own
// pages (its code and data as mapped from its file), the Go runtime's
// (go_mem_kb from the profiler's counts, where it prints it), anonymous
// memory and other files.
func (m memPeak) String(profCounts string) string {
	mib := func(b uint64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }
	gomem := "-"
	if v, ok := counts(profCounts)["go_mem_kb"]; ok {
		gomem = mib(uint64(v) << 10)
	}
	return fmt.Sprintf("%s MiB (library %s, Go runtime %s, anonymous %s, other files %s; %d samples)", mib(m.total), mib(m.lib), gomem, mib(m.anon), mib(m.files), m.samples)
}

// sampleMemory reads /proc/pid/smaps every 50 ms until stop is closed or
// the process is gone, and returns the split of the sample with the most
// resident memory; lib is the profiler library's path ("" for none).
func sampleMemory(pid int, lib string, stop <-chan struct{}) memPeak {
	var best memPeak
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
		if err != nil {
			return best
		}
		ms, err := procstat.ParseSmaps(f)
		f.Close()
		if err != nil || len(ms) == 0 {
			return best
		}
		var m memPeak
		for _, x := range ms {
			m.total += x.RSS
			switch {
			case lib != "" && x.Path == lib:
				m.lib += x.RSS
			case x.Path == "":
				m.anon += x.RSS
			default:
				m.files += x.RSS
			}
		}
		best.samples++
		if m.total > best.total {
			m.samples = best.samples
			best = m
		}
		select {
		case <-stop:
			return best
		case <-tick.C:
		}
	}
}

func TestBench(t *testing.T) {
	if *flagRender != "" {
		render(t)
		return
	}
	began := time.Now()
	quick := *flagQuick || os.Getenv("CLRPROF_BENCH_QUICK") == "1"
	reps := *flagRuns
	if reps <= 0 {
		reps = 5
		if quick {
			reps = 3
		}
	}
	outMD, outJSON := *flagOut, *flagJSON
	if !quick {
		if outMD == "" {
			outMD = "../docs/benchmarks.md"
		}
		if outJSON == "" {
			outJSON = "results.json"
		}
	}
	rts, err := harness.Runtimes()
	if err != nil {
		t.Fatal(err)
	}
	if len(rts) == 0 {
		t.Fatal("no runtime; run scripts/setup.sh")
	}
	startExportReceivers(t)
	rep := &bench.Report{
		Date:    began.UTC().Format(time.RFC3339),
		Commit:  gitOut("rev-parse", "--short", "HEAD"),
		Quick:   quick,
		Reps:    reps,
		Machine: machine(),
	}
	for _, rt := range rts {
		rep.Runtimes = append(rep.Runtimes, bench.RuntimeInfo{Name: rt.Name, Version: rt.Version, Source: rt.Source})
	}

	// Build everything.
	libs := map[string]*lib{
		"cref": {clsid: "{3B8F2A61-5D4C-4E97-A1B2-7C6D5E4F3A28}", build: func(t *testing.T) string {
			return harness.BuildCShared(t, []string{"cref/cref.c"}, "-I../internal/include", "-pthread", "-Wall")
		}},
		"goidle": {clsid: "{9C4E7A12-3B5D-4F68-8E91-2A7C6B5D4E30}", build: goLib("./bench/prof/idle")},
		"gosync": {clsid: "{5A8D3F27-6C1E-4B94-9D02-7E3F8A6C1B45}", build: goLib("./bench/prof/sync")},
		"gosyncdiag": {clsid: "{5A8D3F27-6C1E-4B94-9D02-7E3F8A6C1B45}", build: func(t *testing.T) string {
			// The diagnostic switch CLRPROF_SIGNAL_GUARD=0 exists only in
			// test builds.
			return harness.BuildProfiler(t, "./bench/prof/sync", harness.BuildTags(harness.TestHooksTag))
		}},
		"goelt":    {clsid: "{4E9A2C71-6B3D-4F85-9A1E-8C2D7B5F3E06}", build: goLib("./bench/prof/elt")},
		"goalloc":  {clsid: "{8B3E5D19-7A2C-4F60-9E84-1D6C3B7A5F92}", build: goLib("./bench/prof/alloc")},
		"gosample": {clsid: "{2D7B9E54-8A3C-4F16-B7E0-5C9D1A3F6B82}", build: goLib("./bench/prof/sample")},
		"gowrap":   {clsid: "{6E2B8D41-9C3A-4F57-8B16-3D5A7C9E2F48}", build: goLib("./bench/prof/wrap")},
		"gohook":   {clsid: "{1C7E3A95-4D2B-4F68-A0E3-9B5D7C2F4A16}", build: goLib("./bench/prof/gohook")},
		"gohookdiag": {clsid: "{1C7E3A95-4D2B-4F68-A0E3-9B5D7C2F4A16}", build: func(t *testing.T) string {
			// CLRPROF_GOHOOK_ENTRY and CLRPROF_GOHOOK_GUARD exist only in
			// test builds.
			return harness.BuildProfiler(t, "./bench/prof/gohook", harness.BuildTags(harness.TestHooksTag))
		}},
		"contprof": {clsid: "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}", build: goLib("./sample/contprof")},
		"contprofnoexp": {clsid: "{D3A9F1C5-7B42-4E8D-9C6A-1F5B3E7D2A94}", build: func(t *testing.T) string {
			return harness.BuildProfiler(t, "./sample/contprof", harness.BuildTags("contprof_noexport"))
		}},
		"cpuprof": {clsid: "{B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58}", build: goLib("./sample/cpuprof")},
	}
	var only []string
	if *flagOnly != "" {
		only = strings.Split(*flagOnly, ",")
	}
	var ws []*workload
	for i := range workloads {
		if only == nil || slices.Contains(only, workloads[i].name) {
			ws = append(ws, &workloads[i])
		}
	}
	if *flagConfigs != "" {
		keep := strings.Split(*flagConfigs, ",")
		for _, cn := range keep {
			if c := findConfig(cn); c != nil && c.ref != "" && !slices.Contains(keep, c.ref) {
				keep = append(keep, c.ref)
			}
		}
		for i, w := range ws {
			cp := *w
			cp.configs = slices.DeleteFunc(slices.Clone(w.configs), func(cn string) bool { return cn != "none" && !slices.Contains(keep, cn) })
			ws[i] = &cp
		}
	}
	needLib := map[string]bool{}
	for _, w := range ws {
		for _, cn := range w.configs {
			if c := findConfig(cn); c == nil {
				t.Fatalf("workload %s: unknown config %s", w.name, cn)
			} else if c.lib != "" {
				needLib[c.lib] = true
				if c.chain != "" {
					needLib[c.chain] = true
				}
			}
		}
	}
	for name, l := range libs {
		if needLib[name] {
			start := time.Now()
			l.path = l.build(t)
			fmt.Printf("built %s in %v\n", filepath.Base(l.path), time.Since(start).Round(time.Millisecond))
		}
	}
	apps, dirs := map[string]string{}, map[string]string{}
	for _, w := range ws {
		args := w.args
		if quick && w.quickArgs != nil {
			args = w.quickArgs
		}
		if w.csc > 0 {
			classes := w.csc
			if quick && w.quickCSC > 0 {
				classes = w.quickCSC
			}
			if _, err := os.Stat(cscDLL()); err != nil {
				t.Fatalf("workload %s: %v (scripts/setup.sh lays out Roslyn from ../shared/dotnet)", w.name, err)
			}
			prog := soak.Generate(classes)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.cs"), []byte(prog.Source), 0o644); err != nil {
				t.Fatal(err)
			}
			apps[w.name], dirs[w.name] = cscDLL(), dir
			args = []string{fmt.Sprintf("(%d classes, %d lines)", prog.Classes, prog.Lines), "-nologo", "-noconfig", "@<reference assemblies of the runtime>", "-t:library", "-out:p.dll", "p.cs"}
		} else if w.mcs > 0 {
			// mcs.exe compiles p.cs in a directory of its own (the same
			// for every run: each writes p.exe over the last one's).
			classes := w.mcs
			if quick && w.quickMCS > 0 {
				classes = w.quickMCS
			}
			if _, err := os.Stat(mcsExe); err != nil {
				t.Fatalf("workload %s: %v (scripts/setup.sh installs mono-mcs)", w.name, err)
			}
			prog := soak.Generate(classes)
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "p.cs"), []byte(prog.Source), 0o644); err != nil {
				t.Fatal(err)
			}
			apps[w.name], dirs[w.name] = mcsExe, dir
			args = append([]string{fmt.Sprintf("(%d classes, %d lines)", prog.Classes, prog.Lines)}, mcsArgs...)
		} else {
			// Compiled for each runtime family (mcs before .NET 10,
			// Roslyn from 10 on), cached by the harness.
			for _, rt := range rts {
				if w.runtimeAsync {
					if rt.Major >= 11 {
						apps[w.name+"\x00"+rt.Name] = harness.CompileCS(t, []string{w.src}, "", harness.Optimize(), harness.For(rt), harness.RuntimeAsync())
					}
					continue
				}
				apps[w.name+"\x00"+rt.Name] = workloadApp(t, rt, w.src, w.refs...)
			}
		}
		what := w.what
		if w.noR2R {
			what += " (COMPlus_ReadyToRun=0, COMPlus_ZapDisable=1)"
		}
		rep.Workloads = append(rep.Workloads, bench.Workload{Name: w.name, Args: strings.Join(args, " "), What: what})
	}
	seen := map[string]bool{}
	for _, w := range ws {
		for _, cn := range w.configs {
			if !seen[cn] {
				seen[cn] = true
				rep.Configs = append(rep.Configs, bench.ConfigInfo{Name: cn, What: findConfig(cn).what})
			}
		}
	}

	// Measure: per runtime and workload, every configuration once per
	// round (the first round is a discarded warm-up), in an order rotated
	// each round.
	for _, rt := range rts {
		for _, w := range ws {
			if only, ok := bench.WorkloadRuntime[w.name]; ok && rt.Name != only {
				continue // no rows: the workload runs on one runtime only
			}
			if w.csc > 0 && rt.Major < 10 {
				continue // no reference assemblies to compile against
			}
			if w.runtimeAsync && rt.Major < 11 {
				continue // runtime async is a preview switch on 10
			}
			var cs []*config
			rows := map[string]*bench.Row{}
			for _, cn := range w.configs {
				c := findConfig(cn)
				row := &bench.Row{Runtime: rt.Name, Workload: w.name, Config: c.name, Ref: c.ref, Informational: c.informational}
				rows[cn] = row
				if c.need != nil {
					if why := c.need(rt); why != "" {
						row.Skipped = why
						continue
					}
				}
				cs = append(cs, c)
			}
			wreps := reps * max(w.repsFactor, 1)
			for round := 0; round <= wreps; round++ {
				for i := range cs {
					c := cs[(i+round)%len(cs)]
					row := rows[c.name]
					if row.Skipped != "" {
						continue
					}
					app := apps[w.name]
					if w.mcs == 0 && w.csc == 0 {
						app = apps[w.name+"\x00"+rt.Name]
					}
					o := runOnce(t, rt, app, dirs[w.name], w, c, libs, quick)
					if o.err != "" {
						t.Errorf("%s %s %s: %s", rt.Name, w.name, c.name, o.err)
						row.Skipped = "failed: " + firstLine(o.err)
						row.Runs = nil
						continue
					}
					if round == 0 {
						cm := counts(o.counts)
						for _, k := range c.nonzero {
							if cm[k] <= 0 {
								row.Skipped = fmt.Sprintf("the profiler saw nothing here (%s)", o.counts)
							}
						}
						fmt.Printf("%-14s %-10s %-22s warm-up %8s  %s\n", rt.Name, w.name, c.name, fmtD(o.run.Wall), o.counts)
						continue
					}
					row.Runs = append(row.Runs, o.run)
					row.Counts = o.counts
				}
			}
			// The references first: a row is checked against its
			// reference's counts.
			for _, cn := range w.configs {
				if row := rows[cn]; row.Ref == "" && row.Skipped == "" {
					row.Invalid = findConfig(cn).valid.Check(row, nil)
				}
			}
			for _, cn := range w.configs {
				if row := rows[cn]; row.Ref != "" && row.Skipped == "" {
					row.Invalid = findConfig(cn).valid.Check(row, rows[row.Ref])
				}
			}
			for _, cn := range w.configs {
				row := rows[cn]
				rep.Rows = append(rep.Rows, *row)
				if row.Skipped != "" {
					fmt.Printf("%-14s %-10s %-22s skipped: %s\n", rt.Name, w.name, cn, row.Skipped)
					continue
				}
				m := row.Median()
				fmt.Printf("%-14s %-10s %-22s wall %8s  cpu %8s  rss %4d MiB  ±%.1f%%\n", rt.Name, w.name, cn, fmtD(m.Wall), fmtD(m.CPU), m.MaxRSS>>20, 100*row.Spread())
				if row.Invalid != "" {
					fmt.Printf("%-14s %-10s %-22s INVALID: %s\n", rt.Name, w.name, cn, row.Invalid)
				}
			}
		}
	}

	if *flagThroughput {
		rep.Throughput = throughput(t, rts[len(rts)-1])
	}
	rep.Machine.LoadEnd = loadavg()
	rep.Duration = time.Since(began).Round(time.Second)

	finish(t, rep, outMD, outJSON)
}

// finish checks the targets, compares with the last committed results and
// writes the report.
func finish(t *testing.T, rep *bench.Report, outMD, outJSON string) {
	outcomes := bench.Check(rep)
	for _, o := range outcomes {
		if !o.OK {
			continue
		}
		status := "met"
		switch {
		case o.Invalid != "":
			status = "INVALID: " + o.Invalid
		case !o.Met:
			status = "MISSED"
		}
		fmt.Printf("target %-55s %-14s %8.3f (limit %.2f) %s\n", o.Target.Name, o.Runtime, o.Measured, o.Target.Limit, status)
	}
	var regs []bench.Regression
	prevNote := ""
	if data := gitOut("show", "HEAD:bench/results.json"); data != "" {
		prev, err := bench.UnmarshalReport([]byte(data))
		switch {
		case err != nil:
			t.Errorf("last committed results: %v", err)
		case prev.Date == rep.Date:
			// Re-rendering the committed results: nothing to compare.
		default:
			regs = bench.Compare(prev, rep)
			prevNote = fmt.Sprintf("the results committed in bench/results.json (measured %s at commit %s)", prev.Date, prev.Commit)
			for _, g := range regs {
				fmt.Printf("REGRESSION %s\n", g)
			}
			fmt.Printf("regression check against %s: %d flagged\n", prevNote, len(regs))
		}
	}
	notes, _ := os.ReadFile("notes.md")
	md := bench.Markdown(rep, outcomes, regs, prevNote, string(notes))
	if outMD != "" {
		if err := os.MkdirAll(filepath.Dir(outMD), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(outMD, []byte(md), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("wrote %s\n", outMD)
	} else {
		fmt.Print(md)
	}
	if outJSON != "" {
		data, err := bench.MarshalReport(rep)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(outJSON, data, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("wrote %s\n", outJSON)
	}
}

// render re-renders the markdown from a saved results file.
func render(t *testing.T) {
	data, err := os.ReadFile(*flagRender)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := bench.UnmarshalReport(data)
	if err != nil {
		t.Fatal(err)
	}
	out := *flagOut
	if out == "" {
		out = "../docs/benchmarks.md"
	}
	finish(t, rep, out, "")
}

func goLib(pkg string) func(t *testing.T) string {
	return func(t *testing.T) string { return harness.BuildProfiler(t, pkg) }
}

// throughput collects a corpus on rt and runs the decoder benchmarks.
func throughput(t *testing.T, rt harness.Runtime) []bench.Throughput {
	c, err := collectCorpus(t, rt)
	if err != nil {
		t.Error(err)
		return nil
	}
	source := fmt.Sprintf("%s, startup workload, ReadyToRun disabled", rt.Name)
	mism := bench.CheckRoundTrip(c)
	sigs, sigBytes := len(c.MethodSigs)+len(c.LocalSigs), c.Bytes(bench.KindMethodSig)+c.Bytes(bench.KindLocalSig)
	var out []bench.Throughput
	for _, b := range []struct {
		name  string
		fn    func(*testing.B, *bench.Corpus)
		items int
		bytes int64
		unit  string
		mism  int
	}{
		{"IL decoding (ilrw.Decode)", bench.BenchILDecode, len(c.Bodies), c.Bytes(bench.KindBody), "body", 0},
		{"IL encoding (Body.Encode)", bench.BenchILEncode, len(c.Bodies), c.Bytes(bench.KindBody), "body", 0},
		{"IL round trip (ilrw.Decode + Body.Encode)", bench.BenchILRoundTrip, len(c.Bodies), c.Bytes(bench.KindBody), "body", mism},
		{"IL round trip, reused memory (ilrw.Decoder + Body.AppendEncode)", bench.BenchILRoundTripReuse, len(c.Bodies), c.Bytes(bench.KindBody), "body", mism},
		{"signature decoding (metadata.ParseMethodSig, ParseLocalVarSig)", bench.BenchSigDecode, sigs, sigBytes, "sig", 0},
		{"signature decoding, reused memory (metadata.SigDecoder)", bench.BenchSigDecodeReuse, sigs, sigBytes, "sig", 0},
		{"signature encoding (MethodSig.Encode, LocalVarSig.Encode)", bench.BenchSigEncode, sigs, sigBytes, "sig", 0},
	} {
		r := testing.Benchmark(func(tb *testing.B) { b.fn(tb, c) })
		if r.N == 0 {
			t.Errorf("%s: benchmark did not run", b.name)
			continue
		}
		secs := r.T.Seconds()
		tp := bench.Throughput{
			Name: b.name, Items: b.items, Bytes: b.bytes, Source: source, Mismatches: b.mism,
			MBPerSec:    float64(r.Bytes) * float64(r.N) / secs / 1e6,
			ItemsPerSec: float64(b.items) * float64(r.N) / secs,
			AllocsPer:   r.Extra["allocs/"+b.unit],
			BytesPer:    float64(r.MemBytes) / float64(r.N) / float64(max(b.items, 1)),
		}
		out = append(out, tp)
		fmt.Printf("throughput %-60s %8.1f MB/s %10.0f %ss/s %6.1f allocs/%s (corpus: %d items, %d bytes)\n",
			b.name, tp.MBPerSec, tp.ItemsPerSec, b.unit, tp.AllocsPer, b.unit, b.items, b.bytes)
	}
	return out
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

func fmtD(d time.Duration) string { return d.Round(time.Millisecond).String() }

// gitOut runs git in this package's real directory (it may be reached
// through a symlink from a snapshot of the tree).
func gitOut(args ...string) string {
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(wd); err == nil {
		wd = real
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = wd
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func machine() bench.Machine {
	m := bench.Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), LoadStart: loadavg()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "MemTotal:") {
				f := strings.Fields(l)
				if len(f) >= 2 {
					if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
						m.MemTotal = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
					}
				}
			}
		}
	}
	first := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).Output()
		if err != nil {
			return name + " (unknown version)"
		}
		return firstLine(strings.TrimSpace(string(out)))
	}
	m.GCC = first("gcc", "--version")
	m.MCS = first("mcs", "--version")
	return m
}

// startExportReceivers starts the receivers go-contprof-export ships to
// (a Pyroscope push server and the OpenTelemetry Collector's OTLP
// receiver, on loopback) when a selected workload runs it, and logs what
// they received at the end.
func startExportReceivers(t *testing.T) {
	c := findConfig("go-contprof-export")
	if *flagConfigs != "" && !slices.Contains(strings.Split(*flagConfigs, ","), c.name) {
		return
	}
	used := false
	for _, w := range workloads {
		if (*flagOnly == "" || slices.Contains(strings.Split(*flagOnly, ","), w.name)) && slices.Contains(w.configs, c.name) {
			used = true
		}
	}
	if !used {
		return
	}
	pyro := exporttest.StartPyroscope(t, "")
	col := exporttest.StartCollector(t)
	c.env = append(c.env, "CONTPROF_PYROSCOPE_URL="+pyro.URL(), "CONTPROF_OTLP=1", "OTEL_EXPORTER_OTLP_PROTOCOL=grpc",
		"OTEL_EXPORTER_OTLP_ENDPOINT="+col.GRPCEndpoint(), "OTEL_SERVICE_NAME=bench", "CONTPROF_DIR=contprof")
	t.Cleanup(func() {
		otlp, err := col.Requests()
		t.Logf("go-contprof-export: Pyroscope received %d profiles, the Collector %d requests (%v)", len(pyro.Received()), len(otlp), err)
	})
}
