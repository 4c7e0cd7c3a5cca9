// Command cpuprof is a sampling CPU profiler for .NET, written with
// clrprof, that writes a pprof profile `go tool pprof` reads directly.
//
// By default (CPUPROF_MODE=perf) the kernel samples each managed thread on
// its own, without suspending the runtime or sending a signal (package
// perfevent): a perf event per thread takes, every 1/CPUPROF_HZ of that
// thread's CPU time, its registers and the top of its stack; a goroutine
// reads the samples every 50 ms (the threads listed every 200 ms), unwinds
// each (the runtime's and the system's native code by its call frame
// information, JIT-compiled code by its frame pointers), maps every
// address to its managed function (GetFunctionFromIP) and adds the stack,
// weighted by the sampling period. Native frames above the innermost
// managed one count for it, as with DoStackSnapshot. Where perf events are
// refused (perf_event_paranoid above 2, a seccomp profile) it says so and
// falls back to suspending.
//
// With CPUPROF_MODE=suspend (the fallback) a goroutine ticks at the
// sampling rate; at every tick it suspends the runtime
// (ICorProfilerInfo10::SuspendRuntime), reads the CPU time of each
// runtime thread since the last tick, takes the managed stack of every
// thread that ran (DoStackSnapshot), and resumes it; each such thread
// contributes one sample, weighted by the CPU time it used. That mode
// needs .NET Core 3.0 or later; on older runtimes it logs "cpuprof:
// unsupported" and the application runs unprofiled.
//
// At Shutdown the stacks get their names (Info.FunctionName) and the
// profile is written with two sample types: samples/count and
// cpu/nanoseconds; its comments say what could not be sampled (threads,
// lost samples, stacks without a managed frame, stack copies too short;
// ticks without a snapshot). Go's own SIGPROF profiler is never used.
//
// On exit it prints "cpuprof: wrote FILE samples=N stacks=S ..." with the
// mode's report (perf: "mode=perf threads=... lost=... nomanaged=...
// sampling=H of D (P%)", the time reading the samples; suspend:
// "ticks=T failures=F ... held=H of D (P%) waited=W", the time the runtime
// was suspended and held for snapshots (Snapshot.Cost) and, apart, the
// time they waited first for another suspension (a GC) to end), then the
// cost measured as it ran (package pprofbuild/overhead: cost_wall_us=...
// cost_cpu_us=... held_us=... sampler_cpu_us=... output_wall_us=... and
// the rest; start-up not included).
//
// Environment:
//
//	CPUPROF_OUT    the profile file (default cpu.pprof)
//	CPUPROF_HZ     samples per second of CPU (default 99, 1..1000)
//	CPUPROF_DEPTH  frames per stack (default 128; at most 127 with
//	               CPUPROF_STACK_BYTES=0)
//	CPUPROF_MODE   perf (the default) or suspend, as above
//	CPUPROF_STACK_BYTES  perf mode: the stack copied with each sample
//	               (default 32768, at most 65528; a deeper stack loses its
//	               outer frames and is counted); 0: the kernel's
//	               frame-pointer call chains instead (no copy; native code
//	               without frame pointers then hides its managed callers)
//
// Build and run:
//
//	go build -buildmode=c-shared -o libcpuprof.so ./sample/cpuprof
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58} \
//	CORECLR_PROFILER_PATH=$PWD/libcpuprof.so CPUPROF_OUT=app.pprof dotnet app.dll
//	go tool pprof -top app.pprof
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/pprofbuild/overhead"
	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{B1C7E2A4-5D36-4F89-A0B2-7C4D9E1F3A58}"

type cpuprof struct {
	profiler.Base
	info  *profiler.Info
	out   string
	hz    int
	depth int

	stop, done chan struct{}
	stacks     *pprofbuild.Builder
	lastCPU    map[uint32]int64
	ran        []int64          // in a tick, the CPU time of each thread walked since the last
	ticks      pprofbuild.Ticks // failed ticks by cause
	perf       *perfMode        // CPUPROF_MODE=perf
	spent      time.Duration    // perf mode: reading the samples
	held       time.Duration    // suspend mode: the runtime suspended and held for snapshots (Snapshot.Cost)
	waited     time.Duration    // suspend mode: waiting for another suspension to end first
	start      time.Time
	// cost accounts for what sampling costs (package pprofbuild/overhead)
	cost overhead.Account
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

func (p *cpuprof) Initialize(info *profiler.Info) error {
	p.info = info
	var err error
	if p.hz, err = envInt("CPUPROF_HZ", 99, 1, 1000); err != nil {
		return err
	}
	if p.depth, err = envInt("CPUPROF_DEPTH", 128, 1, 4096); err != nil {
		return err
	}
	p.out = os.Getenv("CPUPROF_OUT")
	if p.out == "" {
		p.out = "cpu.pprof"
	}
	mode := os.Getenv("CPUPROF_MODE")
	switch mode {
	case "":
		mode = "perf"
	case "suspend", "perf":
	default:
		return fmt.Errorf("CPUPROF_MODE=%q: want perf (the default) or suspend", mode)
	}
	if mode == "perf" {
		p.stacks = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, "", 1<<20)
		if err := p.startPerf(); err == nil {
			p.startLoop()
			releaseCode()
			return nil
		} else {
			fmt.Fprintf(os.Stderr, "cpuprof: CPUPROF_MODE=perf: %v; sampling by suspending the runtime instead\n", err)
		}
	}
	if info.Version() < 10 {
		fmt.Fprintf(os.Stderr, "cpuprof: unsupported: the runtime has ICorProfilerInfo%d; sampling other threads needs SuspendRuntime (ICorProfilerInfo10, .NET Core 3.0+)\n", info.Version())
		return nil
	}
	if err := info.SetEventMask(profiler.EnableStackSnapshot); err != nil {
		return err
	}
	p.stacks = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}}, "", 1<<20)
	p.lastCPU = map[uint32]int64{}
	p.startLoop()
	releaseCode()
	return nil
}

// releaseCode gives back the library's code and constant pages touched
// while it started (profiler.ReleaseCodePages): they would stay in the
// process's RSS, a few megabytes, with nothing using them again.
func releaseCode() {
	r, err := profiler.ReleaseCodePages()
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpuprof: code pages not given back: %v\n", err)
		return
	}
	fmt.Fprintf(os.Stderr, "cpuprof: released_code_kb=%d kept_kb=%d\n", r.Released>>10, r.Kept>>10)
}

// startLoop starts the sampling goroutine, its thread's CPU time
// accounted for (done is closed once it is).
func (p *cpuprof) startLoop() {
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	p.start = time.Now()
	p.cost.Start()
	go func() {
		defer close(p.done)
		p.cost.Thread(p.loop)
	}()
}

func (p *cpuprof) loop() {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "cpuprof: sampler stopped: %v\n", r)
		}
	}()
	iv := time.Second / time.Duration(p.hz)
	if p.perf != nil {
		iv = drainInterval
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			t0 := time.Now()
			if p.perf != nil {
				p.perfTick()
				p.spent += time.Since(t0)
				continue
			}
			p.tick()
		}
	}
}

func (p *cpuprof) tick() {
	var snap profiler.Snapshot
	var err error
	// Only the threads that ran since the last tick are walked: their
	// CPU time is read with the runtime suspended, and an idle thread's
	// walk would only lengthen the hold.
	ran := p.ran[:0]
	p.cost.Snapshot(func() time.Duration {
		snap, err = p.info.SnapshotThreads(p.depth, func(_ profiler.ThreadID, os uint32) bool {
			cpu, ok := pprofbuild.ThreadCPU(os)
			if !ok {
				return false
			}
			last, seen := p.lastCPU[os]
			p.lastCPU[os] = cpu
			if !seen || cpu <= last {
				return false // first sight, or idle since the last tick
			}
			ran = append(ran, cpu-last)
			return true
		})
		return snap.Cost()
	})
	p.ran = ran
	p.held += snap.Cost()
	p.waited += snap.Waited
	p.ticks.Tick(err)
	if err != nil {
		return
	}
	i := 0
	for _, ts := range snap.Stacks {
		if ts.Skipped {
			continue
		}
		d := ran[i]
		i++
		if ts.Err != nil || len(ts.Frames) == 0 {
			continue
		}
		p.stacks.Add(pprofbuild.Functions(ts.Frames), nil, 1, d)
	}
}

func (p *cpuprof) Shutdown() error {
	if p.stop == nil {
		return nil
	}
	close(p.stop)
	<-p.done
	elapsed := time.Since(p.start)
	var report string
	var samples, stacks int
	var err error
	p.cost.Output(func() { report, samples, stacks, err = p.write() })
	if err != nil {
		fmt.Fprintf(os.Stderr, "cpuprof: %v\n", err)
		return nil
	}
	// The cost: perf mode, the time reading the samples (the sampler's
	// thread; nothing is held); suspend mode, the time the runtime was
	// suspended and held for snapshots, and apart the time they waited
	// first for another suspension (a GC) to end, which held nothing of
	// theirs; then what profiling cost, measured as it ran (package
	// pprofbuild/overhead).
	cost := fmt.Sprintf("sampling=%v of %v (%.2f%%)", p.spent.Round(time.Microsecond), elapsed.Round(time.Millisecond), 100*p.spent.Seconds()/elapsed.Seconds())
	if p.perf == nil {
		cost = fmt.Sprintf("held=%v of %v (%.2f%%) waited=%v", p.held.Round(time.Microsecond), elapsed.Round(time.Millisecond), 100*p.held.Seconds()/elapsed.Seconds(), p.waited.Round(time.Microsecond))
	}
	fmt.Fprintf(os.Stderr, "cpuprof: wrote %s samples=%d stacks=%d %s %s %s\n", p.out, samples, stacks, report, cost, p.cost.Report())
	return nil
}

// write builds the profile and writes it to CPUPROF_OUT; report says what
// the samples leave out (ticks that took no snapshot; perf mode: threads,
// samples and frames it could not see).
func (p *cpuprof) write() (report string, samples, stacks int, err error) {
	var comments []string
	if p.perf != nil {
		p.perf.s.Drain(p.perfSample)
		p.perf.s.Close()
		report = p.perfReport()
		comments = p.perfComments()
	} else {
		report = p.ticks.Report(false)
		comments = []string{"cpuprof: " + report}
	}
	prof := p.stacks.Build(pprofbuild.NewNames(p.info), pprofbuild.Meta{
		Start: p.start, Duration: time.Since(p.start),
		PeriodType: pprofbuild.SampleType{Type: "cpu", Unit: "nanoseconds"}, Period: int64(time.Second) / int64(p.hz),
		Comments: comments,
	}, false)
	f, err := os.Create(p.out)
	if err != nil {
		return "", 0, 0, err
	}
	defer f.Close()
	if err := pprofbuild.Write(f, prof); err != nil {
		return "", 0, 0, fmt.Errorf("writing %s: %w", p.out, err)
	}
	for _, s := range prof.Sample {
		samples += int(s.Value[0])
	}
	return report, samples, len(prof.Sample), nil
}

func init() { profiler.Register(clsid, &cpuprof{}) }

func main() {}
