// Command stormprof is the profiler of the signal storm tests (risks.md
// item 1, after golang/go#78883): it handles ObjectAllocated and
// ExceptionThrown synchronously in Go (cooperative-mode callbacks: the
// runtime cannot suspend the thread for a GC while they run), remembers the
// OS thread of each, and from Initialize to Shutdown a goroutine sends the
// runtime's GC-suspension activation signal (SIGRTMIN) with tgkill to every
// thread it has seen, every STORMPROF_INTERVAL (default 10µs). At Shutdown
// it prints what it did:
//
//	stormprof: signals=N threads=T allocations=A exceptions=E throttled=R
//
// With STORMPROF_PERF=HZ it also samples every thread it has seen with the
// kernel's perf events (package perfevent, as sample/cpuprof's
// CPUPROF_MODE=perf) at HZ per second of each thread's CPU, reads the
// samples every 10 ms (each with its registers and top 32 KiB of stack,
// unwound as cpuprof does; STORMPROF_PERF_STACK sets the size, 0 for the
// kernel's frame-pointer chains) and maps every address with
// GetFunctionFromIP, during the storm, and prints
//
//	stormprof: perf samples=S managed=M lost=L threads=T failed=F broken=B short=H stopped=P
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/perfevent"
	"github.com/clrprof/clrprof/profiler"
)

// sigrtmin is glibc's SIGRTMIN on Linux (the kernel's 32 and 33 are taken by
// the threading library).
const sigrtmin = syscall.Signal(34)

type stormprof struct {
	profiler.Base
	threads     sync.Map // tid → struct{}
	nthreads    atomic.Int64
	allocations atomic.Int64
	exceptions  atomic.Int64
	signals     atomic.Int64
	throttled   atomic.Int64 // rounds skipped because maxQueued signals were queued
	stop        chan struct{}
	done        chan struct{}
	// goAlloc is how many bytes each callback allocates on the Go heap
	// (STORMPROF_GOALLOC, default 0): with it, and the runtime.GC loop
	// STORMPROF_GOGC=1 starts, the Go runtime collects often and preempts
	// goroutines running in callbacks, as a profiler that allocates does.
	goAlloc int
	// sigs are the signals the storm sends each thread each round
	// (STORMPROF_SIGNALS: a comma-separated list of "rtmin" and "urg",
	// default rtmin). SIGURG is the Go runtime's preemption signal, which
	// runs Go's handler on the thread's alternate signal stack.
	sigs []syscall.Signal
	// spin is how many iterations of a call-free loop each callback runs
	// (STORMPROF_SPIN, default 0): a callback that runs long enough to be
	// preempted by a signal (Go's async preemption) rather than at a
	// function call.
	spin int
	sink atomic.Pointer[[]byte]

	// STORMPROF_PERF
	perf                 *perfevent.Sampler
	perfDone             chan struct{}
	perfSamples, perfMgd int64
}

func (p *stormprof) Initialize(info *profiler.Info) error {
	interval := 10 * time.Microsecond
	if v := os.Getenv("STORMPROF_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		interval = d
	}
	if v := os.Getenv("STORMPROF_GOALLOC"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		p.goAlloc = n
	}
	p.sigs = []syscall.Signal{sigrtmin}
	if v := os.Getenv("STORMPROF_SIGNALS"); v != "" {
		p.sigs = nil
		for _, name := range strings.Split(v, ",") {
			switch name {
			case "rtmin":
				p.sigs = append(p.sigs, sigrtmin)
			case "urg":
				p.sigs = append(p.sigs, syscall.SIGURG)
			default:
				return fmt.Errorf("STORMPROF_SIGNALS: unknown signal %q", name)
			}
		}
	}
	if v := os.Getenv("STORMPROF_SPIN"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		p.spin = n
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	if v := os.Getenv("STORMPROF_PERF"); v != "" {
		hz, err := strconv.Atoi(v)
		if err != nil || hz < 1 {
			return fmt.Errorf("STORMPROF_PERF=%q: want samples per second", v)
		}
		// As cpuprof's perf mode: each sample's registers and top 32 KiB
		// of stack, unwound by the package (STORMPROF_PERF_STACK=0: the
		// kernel's frame-pointer chains instead).
		stack := 32768
		if v := os.Getenv("STORMPROF_PERF_STACK"); v != "" {
			if stack, err = strconv.Atoi(v); err != nil {
				return fmt.Errorf("STORMPROF_PERF_STACK=%q: %v", v, err)
			}
		}
		if p.perf, err = perfevent.New(perfevent.Options{Period: time.Second / time.Duration(hz), MaxDepth: 64, StackBytes: stack}); err != nil {
			return err
		}
		p.perfDone = make(chan struct{})
		go p.sample(info)
	}
	go p.storm(interval)
	if os.Getenv("STORMPROF_GOGC") == "1" {
		go func() {
			for {
				select {
				case <-p.stop:
					return
				default:
				}
				runtime.GC()
				time.Sleep(time.Millisecond)
			}
		}()
	}
	return info.SetEventMask(profiler.EnableObjectAllocated | profiler.MonitorObjectAllocated | profiler.MonitorExceptions)
}

func (p *stormprof) seen() {
	if p.goAlloc > 0 {
		b := make([]byte, p.goAlloc)
		p.sink.Store(&b)
	}
	if p.spin > 0 {
		x := uint64(p.spin)
		for i := 0; i < p.spin; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
		spinSink.Store(x)
	}
	tid := syscall.Gettid()
	if _, loaded := p.threads.LoadOrStore(tid, struct{}{}); !loaded {
		p.nthreads.Add(1)
	}
}

func (p *stormprof) ObjectAllocated(profiler.ObjectID, profiler.ClassID) error {
	p.allocations.Add(1)
	p.seen()
	return nil
}

func (p *stormprof) ExceptionThrown(profiler.ObjectID) error {
	p.exceptions.Add(1)
	p.seen()
	return nil
}

var spinSink atomic.Uint64

// maxQueued bounds the real-time signals queued for this user: SIGRTMIN is
// blocked while a thread runs Go code in a callback, and signals sent to it
// meanwhile queue up. Left unbounded, the storm would fill the user's
// RLIMIT_SIGPENDING queue, after which the runtime's own activation signals
// (and those of every other process of the user) fail to be sent and GC
// suspension stalls: a test artefact, not what CoreCLR does (it has at most
// one activation in flight per thread).
const maxQueued = 512

// queuedSignals reads the user's queued signal count ("SigQ: n/limit").
func queuedSignals() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "SigQ:"); ok {
			n, _, _ := strings.Cut(strings.TrimSpace(v), "/")
			q, _ := strconv.Atoi(n)
			return q
		}
	}
	return 0
}

func (p *stormprof) storm(interval time.Duration) {
	defer close(p.done)
	pid := os.Getpid()
	for {
		select {
		case <-p.stop:
			return
		default:
		}
		if queuedSignals() > maxQueued {
			p.throttled.Add(1)
			time.Sleep(interval)
			continue
		}
		p.threads.Range(func(k, _ any) bool {
			// A thread that has exited is simply gone (ESRCH).
			for _, sig := range p.sigs {
				if syscall.Tgkill(pid, k.(int), sig) == nil {
					p.signals.Add(1)
				}
			}
			return true
		})
		time.Sleep(interval)
	}
}

// sample follows the storm's threads with perf events and maps every
// sampled address to its managed function, as cpuprof's perf mode does.
func (p *stormprof) sample(info *profiler.Info) {
	defer close(p.perfDone)
	add := func(s perfevent.Sample) {
		p.perfSamples++
		for i, a := range s.Stack {
			if i > 0 {
				a--
			}
			if f, err := info.GetFunctionFromIP(profiler.Address(a)); err == nil && f != 0 {
				p.perfMgd++
				break
			}
		}
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			p.perf.Drain(add)
			p.perf.Close()
			return
		case <-t.C:
		}
		var tids []uint32
		p.threads.Range(func(k, _ any) bool {
			tids = append(tids, uint32(k.(int)))
			return true
		})
		p.perf.SetThreads(tids, add)
		p.perf.Drain(add)
	}
}

func (p *stormprof) Shutdown() error {
	close(p.stop)
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
	}
	if p.perf != nil {
		select {
		case <-p.perfDone:
			c := p.perf.Stats()
			fmt.Fprintf(os.Stderr, "stormprof: perf samples=%d managed=%d lost=%d threads=%d failed=%d broken=%d short=%d stopped=%d\n", p.perfSamples, p.perfMgd, c.Lost, c.Threads, c.Failed, c.Broken, c.Short, c.Stopped)
		case <-time.After(2 * time.Second):
			fmt.Fprintf(os.Stderr, "stormprof: perf sampler did not stop\n")
		}
	}
	fmt.Fprintf(os.Stderr, "stormprof: signals=%d threads=%d allocations=%d exceptions=%d throttled=%d\n",
		p.signals.Load(), p.nthreads.Load(), p.allocations.Load(), p.exceptions.Load(), p.throttled.Load())
	return nil
}

func init() {
	profiler.Register("{6E1D8C47-2B9A-4F3E-8D5C-1A7B9E2F4C60}", &stormprof{})
}

func main() {}
