// Package overhead accounts for what a sampling profiler costs the
// application it profiles, measured as it runs, so that the profiler can
// say it (in its log, in its profiles' comments) and a benchmark can check
// it where whole runs of the application are too noisy to show a few
// percent.
//
// An [Account] adds up, each measured where it happens:
//
//   - Held: the time the runtime was suspended and held for the
//     profiler's snapshots ([github.com/clrprof/clrprof/profiler.Snapshot.Cost]); every managed
//     thread that was running is stopped for at most that long
//     ([Account.Snapshot] also notes the sampler's CPU time meanwhile);
//   - Callbacks: the wall time of the profiler's callbacks on the
//     application's threads (an allocation tick walking its stack, say),
//     timed by the callback itself ([Account.Callback]);
//   - Sampler: the CPU time of the profiler's own goroutines that sample
//     (each locked to its thread while it runs, [Account.Thread]);
//   - GoRuntime: the Go runtime's garbage collection and scavenging, its
//     own estimate (runtime/metrics), since [Account.Start];
//   - Output: writing (and shipping) the profiles at exit, its wall time
//     and the process's CPU time meanwhile ([Account.Output]).
//
// [Report.Wall] is what the application's wall time can have grown by:
// all five, the sampler's CPU time outside the holds and the Go
// runtime's counted as if they had taken a core from the application. [Report.CPU] is the CPU time the
// profile cost: the same without Held (stopped threads use no CPU), with
// the output's CPU time.
//
// What it leaves out, because it happens inside the runtime where the
// profiler has no clock: the runtime's own work for what the profiler
// turned on (firing events, the ones a C sampler drops included; the
// transition into the profiler's library around each callback; a stopped
// thread's trip to its safe point), and the profiler's start-up and
// shutdown (loading the library, the Go runtime's start, the runtime's
// work at Initialize), which a benchmark measures on an empty program.
// Package overhead needs no cgo.
package overhead

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/internal/procstat"
)

// An Account adds up a profiler's costs. Its methods are safe for
// concurrent use; the zero value is ready, and Start sets the point from
// which the Go runtime's own costs are counted.
type Account struct {
	held, heldCPU, callbacks, sampler atomic.Int64
	outWall, outCPU                   atomic.Int64
	nCallbacks, nHeld                 atomic.Int64
	goStart                           atomic.Int64 // GoRuntimeCPU at Start, +1 once set
}

// Start notes the Go runtime's costs so far, so that Report counts only
// what came after (the profiler's Initialize calls it).
func (a *Account) Start() {
	a.goStart.Store(int64(GoRuntimeCPU()) + 1)
}

// Held adds d, the time the runtime was held for one snapshot
// ([github.com/clrprof/clrprof/profiler.Snapshot.Cost]).
func (a *Account) Held(d time.Duration) {
	a.held.Add(int64(d))
	a.nHeld.Add(1)
}

// Snapshot runs take, which takes one snapshot and returns the time the
// runtime was held for it, adds that as Held does, and notes the calling
// thread's CPU time meanwhile, which the sampler spent while the
// application's threads were held (inside Thread: it is part of the
// sampler's CPU time, and Wall does not count it twice).
func (a *Account) Snapshot(take func() time.Duration) {
	c0, ok := ThreadCPU()
	held := take()
	if c1, ok1 := ThreadCPU(); ok && ok1 {
		a.heldCPU.Add(int64(min(c1-c0, held)))
	}
	a.Held(held)
}

// Callback adds the wall time since start, when a callback that began
// then returns: defer a.Callback(time.Now()) as a callback's first line.
func (a *Account) Callback(start time.Time) {
	a.callbacks.Add(int64(time.Since(start)))
	a.nCallbacks.Add(1)
}

// Thread runs f with the calling goroutine locked to its thread and adds
// the CPU time that thread used meanwhile, which is f's own (no other
// goroutine runs on a locked thread): the profiler's sampling loop runs
// in it. Where the thread's CPU time cannot be read it adds f's wall time.
func (a *Account) Thread(f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	w0 := time.Now()
	c0, ok := ThreadCPU()
	defer func() {
		c1, ok1 := ThreadCPU()
		d := c1 - c0
		if !ok || !ok1 {
			d = time.Since(w0)
		}
		a.sampler.Add(int64(d))
	}()
	f()
}

// Output runs f, writing or shipping profiles at exit when the
// application's threads are done, and adds its wall time and the
// process's CPU time meanwhile.
func (a *Account) Output(f func()) {
	w0, c0 := time.Now(), ProcessCPU()
	defer func() {
		a.outWall.Add(int64(time.Since(w0)))
		a.outCPU.Add(int64(ProcessCPU() - c0))
	}()
	f()
}

// A Report is an Account's totals.
type Report struct {
	Held          time.Duration // the runtime held for snapshots
	Snapshots     int64         // how many snapshots Held adds up
	HeldCPU       time.Duration // the sampler's CPU time while it held the runtime (in Sampler too)
	Callbacks     time.Duration // wall time in callbacks on the application's threads
	CallbackCount int64
	Sampler       time.Duration // CPU time of the sampling goroutines
	GoRuntime     time.Duration // the Go runtime's GC and scavenger CPU time since Start
	OutputWall    time.Duration // writing the profiles at exit
	OutputCPU     time.Duration // the process's CPU time meanwhile
}

// Report returns the totals so far.
func (a *Account) Report() Report {
	r := Report{
		Held:          time.Duration(a.held.Load()),
		Snapshots:     a.nHeld.Load(),
		HeldCPU:       time.Duration(a.heldCPU.Load()),
		Callbacks:     time.Duration(a.callbacks.Load()),
		CallbackCount: a.nCallbacks.Load(),
		Sampler:       time.Duration(a.sampler.Load()),
		OutputWall:    time.Duration(a.outWall.Load()),
		OutputCPU:     time.Duration(a.outCPU.Load()),
	}
	if s := a.goStart.Load(); s > 0 {
		r.GoRuntime = max(0, GoRuntimeCPU()-time.Duration(s-1))
	}
	return r
}

// Wall is what the application's wall time can have grown by: the time
// held, in callbacks and writing the output, and the sampler's CPU time
// outside the holds (inside them the application's threads were stopped
// anyway) and the Go runtime's, as if taken from the application's cores.
func (r Report) Wall() time.Duration {
	return r.Held + r.Callbacks + max(0, r.Sampler-r.HeldCPU) + r.GoRuntime + r.OutputWall
}

// CPU is the CPU time the profile cost: callbacks, sampler, Go runtime
// and output. The callbacks count at their wall time (their threads' CPU
// time is not read: a callback whose thread waited for a core counts in
// full), so CPU is an upper bound: on csc, which keeps both cores busy,
// the callbacks' wall time was 5 to 12 times their CPU time, quiet
// (docs/cost.md).
func (r Report) CPU() time.Duration {
	return r.Callbacks + r.Sampler + r.GoRuntime + r.OutputCPU
}

// String is the report as "key=value" fields in microseconds, for a log
// line that tools read: cost_wall_us cost_cpu_us held_us snapshots
// held_cpu_us callbacks_us callbacks sampler_cpu_us goruntime_cpu_us
// output_wall_us output_cpu_us.
func (r Report) String() string {
	us := func(d time.Duration) int64 { return d.Microseconds() }
	return fmt.Sprintf("cost_wall_us=%d cost_cpu_us=%d held_us=%d snapshots=%d held_cpu_us=%d callbacks_us=%d callbacks=%d sampler_cpu_us=%d goruntime_cpu_us=%d output_wall_us=%d output_cpu_us=%d",
		us(r.Wall()), us(r.CPU()), us(r.Held), r.Snapshots, us(r.HeldCPU), us(r.Callbacks), r.CallbackCount, us(r.Sampler), us(r.GoRuntime), us(r.OutputWall), us(r.OutputCPU))
}

// ParseReport reads a Report back from a line that holds its String's
// fields (a profiler's log line); false if a field is missing.
func ParseReport(line string) (Report, bool) {
	f := map[string]int64{}
	for _, w := range strings.Fields(line) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			f[k] = n
		}
	}
	var r Report
	for _, x := range []struct {
		key string
		d   *time.Duration
		n   *int64
	}{
		{"held_us", &r.Held, nil}, {"snapshots", nil, &r.Snapshots}, {"held_cpu_us", &r.HeldCPU, nil},
		{"callbacks_us", &r.Callbacks, nil}, {"callbacks", nil, &r.CallbackCount}, {"sampler_cpu_us", &r.Sampler, nil},
		{"goruntime_cpu_us", &r.GoRuntime, nil}, {"output_wall_us", &r.OutputWall, nil}, {"output_cpu_us", &r.OutputCPU, nil},
	} {
		v, ok := f[x.key]
		if !ok {
			return Report{}, false
		}
		if x.d != nil {
			*x.d = time.Duration(v) * time.Microsecond
		} else {
			*x.n = v
		}
	}
	return r, true
}

// Fraction is d as a part of the time elapsed, "1.23%" for comments.
func Fraction(d, elapsed time.Duration) string {
	if elapsed <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f%%", 100*d.Seconds()/elapsed.Seconds())
}

// ThreadCPU is the calling thread's CPU time (its CPU-time clock,
// CLOCK_THREAD_CPUTIME_ID: the scheduler's count in nanoseconds, not
// sampled at ticks); false where it cannot be read. Lock the goroutine to
// its thread around the readings that are compared.
func ThreadCPU() (time.Duration, bool) {
	ns, ok := procstat.ClockNanos(procstat.ClockThreadCPUTime)
	return time.Duration(ns), ok
}

// ProcessCPU is the process's user and system CPU time so far (0 where
// it cannot be read).
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// goMetrics are the Go runtime's estimates of its own CPU time: garbage
// collection (background workers, assists, pauses) and returning memory
// to the system.
var goMetrics = []string{"/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/scavenge/total:cpu-seconds"}

// GoRuntimeCPU is the Go runtime's estimate of the CPU time it spent on
// garbage collection and scavenging since it started (runtime/metrics).
func GoRuntimeCPU() time.Duration {
	s := make([]metrics.Sample, len(goMetrics))
	for i, n := range goMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	var sec float64
	for _, x := range s {
		if x.Value.Kind() == metrics.KindFloat64 {
			sec += x.Value.Float64()
		}
	}
	return time.Duration(sec * float64(time.Second))
}

// GoMemory is the memory the Go runtime holds from the operating system
// and has not given back (runtime/metrics: /memory/classes/total:bytes
// less /memory/classes/heap/released:bytes): the heap, the goroutines'
// stacks and the runtime's own structures. It is the Go runtime's share of
// the process's resident memory at most (pages it holds and never touched
// are not resident); the library's code and data, mapped from its file,
// are not in it.
func GoMemory() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// GoMemoryParts splits GoMemory by what holds it (runtime/metrics'
// /memory/classes): the heap's pages (objects, fragments and free pages
// not given back), the goroutines' stacks, and everything else the runtime
// keeps for itself (its span and cache structures, the page allocator's
// and the collector's metadata, profiling buckets, other). Their sum is
// GoMemory. The heap's pages are in Go's arenas; the stacks too; the rest
// is mapped elsewhere, among the process's other anonymous memory.
func GoMemoryParts() (heap, stacks, runtime uint64) {
	names := []string{
		"/memory/classes/heap/objects:bytes", "/memory/classes/heap/unused:bytes", "/memory/classes/heap/free:bytes",
		"/memory/classes/heap/stacks:bytes", "/memory/classes/os-stacks:bytes",
		"/memory/classes/total:bytes", "/memory/classes/heap/released:bytes",
	}
	s := make([]metrics.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	metrics.Read(s)
	v := make([]uint64, len(s))
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return 0, 0, 0
		}
		v[i] = s[i].Value.Uint64()
	}
	heap, stacks = v[0]+v[1]+v[2], v[3]+v[4]
	held := v[5] - v[6]
	if held < heap+stacks {
		return heap, stacks, 0
	}
	return heap, stacks, held - heap - stacks
}

// GoHeapChurn is what the Go runtime has allocated on its heap since it
// started (runtime/metrics: /gc/heap/allocs:bytes, freed or not) and how
// many garbage collections it has finished (/gc/cycles/total:gc-cycles).
// A profiler that allocates less per sample collects less often: on a
// low GOGC, the collector's CPU time follows the bytes allocated.
func GoHeapChurn() (allocated, collections uint64) {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		allocated = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		collections = s[1].Value.Uint64()
	}
	return allocated, collections
}
