package main

import (
	"fmt"
	"syscall"
	"time"

	"github.com/clrprof/clrprof/perfevent"
	"github.com/clrprof/clrprof/profiler"
)

// perfMode is CPUPROF_MODE=perf: the kernel samples each managed thread on
// its own (package perfevent: a task-clock perf event per thread, its
// registers and the top CPUPROF_STACK_BYTES of its stack into a ring
// buffer), and a goroutine reads the rings every drainInterval, unwinds
// each sample (the runtime's native code by its call frame information,
// JIT-compiled code by its frame pointers) and maps each address to its
// managed function (GetFunctionFromIP). Nothing is suspended and no signal
// is sent. CPUPROF_STACK_BYTES=0 takes the kernel's frame-pointer call
// chains instead, which end in the runtime's native code.
type perfMode struct {
	s *perfevent.Sampler
	// fns caches GetFunctionFromIP by address (0: not managed code).
	fns map[uint64]profiler.FunctionID
	// what could not be sampled
	noManaged     int64 // samples whose chain reached no managed frame
	noManagedNs   int64
	nativeTop     int64 // samples in native code above a managed frame
	truncated     int64 // samples whose chain reached the depth limit
	enumErrors    int
	period        int64 // ns of CPU per sample
	stackBytes    int   // the stack copied with each sample (0: the kernel's frame-pointer call chains)
	depth         int
	frames        []profiler.FunctionID
	threadsPolled int
	ticks         int
}

// The rings are read every drainInterval, the managed threads listed every
// threadsEvery reads.
const (
	drainInterval = 50 * time.Millisecond
	threadsEvery  = 4
)

func (p *cpuprof) startPerf() error {
	stackBytes, err := envInt("CPUPROF_STACK_BYTES", 32768, 0, 65528)
	if err != nil {
		return err
	}
	depth := p.depth
	if stackBytes == 0 {
		depth = min(depth, 127)
	}
	s, err := perfevent.New(perfevent.Options{Period: time.Second / time.Duration(p.hz), MaxDepth: depth, StackBytes: stackBytes})
	if err != nil {
		return err
	}
	p.perf = &perfMode{s: s, stackBytes: stackBytes, depth: depth, fns: map[uint64]profiler.FunctionID{}, period: int64(time.Second) / int64(p.hz)}
	// The calling thread (Initialize's, the one that goes on to run Main)
	// must be sampleable, or the mode cannot work here at all.
	if err := s.Add(uint32(syscall.Gettid())); err != nil {
		s.Close()
		p.perf = nil
		return err
	}
	return nil
}

// managedThreads are the OS thread IDs of the runtime's managed threads.
func (p *cpuprof) managedThreads() []uint32 {
	en, err := p.info.EnumThreads()
	if err != nil {
		if p.perf != nil {
			p.perf.enumErrors++
		}
		return nil
	}
	defer en.Release()
	var out []uint32
	for {
		ids, err := en.Next()
		if err != nil || len(ids) == 0 {
			return out
		}
		for _, t := range ids {
			if os, err := p.info.GetThreadInfo(t); err == nil && os != 0 {
				out = append(out, os)
			}
		}
	}
}

// perfTick reads the samples, and every threadsEvery ticks follows the
// managed threads.
func (p *cpuprof) perfTick() {
	m := p.perf
	if m.ticks%threadsEvery == 0 {
		if tids := p.managedThreads(); tids != nil {
			m.threadsPolled = len(tids)
			m.s.SetThreads(tids, p.perfSample)
		}
	}
	m.ticks++
	m.s.Drain(p.perfSample)
}

// perfSample adds one kernel sample: each address mapped to its managed
// function (a return address looked up one byte back, inside its call
// instruction), runs of native frames folded into one frame 0 as
// DoStackSnapshot reports them.
func (p *cpuprof) perfSample(s perfevent.Sample) {
	m := p.perf
	if s.Truncated {
		m.truncated++
	}
	st := m.frames[:0]
	managed := false
	for i, a := range s.Stack {
		if i > 0 {
			a--
		}
		f, ok := m.fns[a]
		if !ok {
			f, _ = p.info.GetFunctionFromIP(profiler.Address(a))
			if len(m.fns) >= 1<<20 {
				clear(m.fns)
			}
			m.fns[a] = f
		}
		if f != 0 {
			managed = true
		} else if len(st) > 0 && st[len(st)-1] == 0 {
			continue
		}
		st = append(st, f)
	}
	m.frames = st
	if !managed {
		m.noManaged++
		m.noManagedNs += m.period
		return
	}
	// Native frames above the first managed one are the runtime working
	// for it (the JIT compiling what it calls, the GC making room for
	// what it allocates, a runtime helper): their time goes to the
	// innermost managed frame, as with DoStackSnapshot, which starts the
	// walk of a suspended thread there. (The native run below the last
	// managed frame, the thread's start-up, stays: DoStackSnapshot
	// reports it too.)
	if st[0] == 0 {
		st = st[1:]
		m.nativeTop++
	}
	p.stacks.Add(append([]profiler.FunctionID(nil), st...), nil, 1, m.period)
}

// perfReport says what perf mode could not sample.
func (p *cpuprof) perfReport() string {
	m := p.perf
	c := m.s.Stats()
	r := fmt.Sprintf("mode=perf threads=%d failed=%d lost=%d nomanaged=%d broken=%d short=%d stopped=%d", c.Threads, c.Failed, c.Lost, m.noManaged, c.Broken, c.Short, c.Stopped)
	if c.Err != nil {
		r += fmt.Sprintf(" (last failure: %v)", c.Err)
	}
	return r
}

func (p *cpuprof) perfComments() []string {
	m := p.perf
	c := m.s.Stats()
	how := fmt.Sprintf("call stacks unwound from each sample's registers and top %d bytes of stack: native code by its call frame information (.eh_frame), JIT-compiled code by its frame pointers", m.stackBytes)
	if m.stackBytes == 0 {
		how = "call chains follow frame pointers (the kernel's): native code without them hides its callers"
	}
	out := []string{
		"cpuprof: " + p.perfReport(),
		"sampled by the kernel (perf events, task clock, every " + time.Duration(m.period).String() + " of a thread's CPU time), without suspending the runtime or sending signals; " + how,
		fmt.Sprintf("not sampled: managed threads whose perf event could not be opened: %d; samples the kernel lost (ring full): %d; samples whose stack reached no managed frame (a thread running only native code, such as the runtime's background compilation): %d, %v of CPU, left out", c.Failed, c.Lost, m.noManaged, time.Duration(m.noManagedNs)),
		fmt.Sprintf("samples in native code (the runtime, the JIT) above a managed frame, counted for that frame: %d", m.nativeTop),
		fmt.Sprintf("samples whose stack reached an address that is not code, cut there: %d", c.Broken),
		fmt.Sprintf("samples whose stack was cut at %d frames (outer callers missing): %d", m.depth, m.truncated),
		fmt.Sprintf("samples whose stack copy ended before the outermost frame (outer callers missing): %d; whose unwinding stopped at a frame it cannot follow (a signal frame, a frame without call frame information or frame pointer): %d", c.Short, c.Stopped),
		fmt.Sprintf("ring buffers mapped smaller than asked (the locked-memory limit): %d", c.Smaller),
		fmt.Sprintf("threads are found every %v: a thread's CPU before it was first seen is not sampled; a JIT-compiled method that keeps no frame pointer (small optimized methods: at most one call, no loop) hides its caller", threadsEvery*drainInterval),
	}
	if m.enumErrors > 0 {
		out = append(out, fmt.Sprintf("EnumThreads failed %d times", m.enumErrors))
	}
	return out
}
