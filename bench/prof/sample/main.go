// Command sample is the Go profiler of the benchmarks' sampling row: a
// goroutine, locked to its OS thread (a thread that never runs managed
// code), wakes about 99 times a second, suspends the runtime
// (Info.SuspendRuntime, ICorProfilerInfo10: .NET Core 3.0 and later), walks
// every managed thread's stack with Info.DoStackSnapshot and resumes it,
// the same work bench/cref's sample mode does on a C thread. The per-frame
// callback is C (it records the function ID in a ring, in C memory), so a
// walk costs one cgo call per thread.
//
// At Shutdown it prints "gosample: Shutdown mode=sample ticks=T samples=S
// frames=F errors=E" on stderr.
package main

/*
#include <stdint.h>
#include <stdlib.h>

enum { SAMPLE_FRAMES = 1 << 16 };

typedef struct {
	uint64_t frames;
	uintptr_t ring[SAMPLE_FRAMES];
} sample_state;

static int32_t sample_frame(uintptr_t func, uintptr_t ip, uintptr_t frame_info, uint32_t ctx_size, uint8_t *ctx, void *data) {
	sample_state *s = (sample_state *)data;
	(void)ip; (void)frame_info; (void)ctx_size; (void)ctx;
	s->ring[s->frames & (SAMPLE_FRAMES - 1)] = func;
	s->frames++;
	return 0;
}

static void *sample_frame_fn(void) { return (void *)sample_frame; }
static sample_state *sample_new(void) { return (sample_state *)calloc(1, sizeof(sample_state)); }
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/profiler"
)

const hz = 99

type sampler struct {
	profiler.Base
	info    *profiler.Info
	state   *C.sample_state
	stop    chan struct{}
	done    chan struct{}
	ticks   uint64
	samples uint64
	errs    uint64
}

func (p *sampler) Initialize(info *profiler.Info) error {
	p.info = info
	if info.Version() < 10 {
		err := errors.New("gosample: needs ICorProfilerInfo10 (SuspendRuntime)")
		fmt.Fprintln(os.Stderr, err)
		return err
	}
	if err := info.SetEventMask(profiler.EnableStackSnapshot); err != nil {
		return err
	}
	p.state = C.sample_new()
	if p.state == nil {
		return errors.New("gosample: out of memory")
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.loop()
	fmt.Fprintln(os.Stderr, "gosample: Initialize mode=sample")
	return nil
}

func (p *sampler) loop() {
	defer close(p.done)
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(os.Stderr, "gosample: sampler panicked: %v\n", r)
		}
	}()
	// SuspendRuntime and ResumeRuntime from one thread, which never runs
	// managed code.
	runtime.LockOSThread()
	period := time.Second / hz
	next := time.Now().Add(period)
	for {
		select {
		case <-p.stop:
			return
		case <-time.After(time.Until(next)):
		}
		next = next.Add(period)
		p.ticks++
		if err := p.info.SuspendRuntime(); err != nil {
			p.errs++
			continue
		}
		if e, err := p.info.EnumThreads(); err == nil {
			threads, err := e.Next()
			e.Release()
			if err == nil {
				for _, t := range threads {
					if p.info.DoStackSnapshot(t, C.sample_frame_fn(), 0, unsafe.Pointer(p.state), nil) == nil {
						p.samples++
					} else {
						p.errs++
					}
				}
			}
		}
		p.info.ResumeRuntime()
	}
}

func (p *sampler) Shutdown() error {
	if p.stop != nil {
		close(p.stop)
		select {
		case <-p.done:
		case <-time.After(2 * time.Second):
			fmt.Fprintln(os.Stderr, "gosample: sampler did not stop within 2s")
		}
	}
	var frames uint64
	if p.state != nil {
		frames = uint64(p.state.frames)
	}
	fmt.Fprintf(os.Stderr, "gosample: Shutdown mode=sample ticks=%d samples=%d frames=%d errors=%d\n", p.ticks, p.samples, frames, p.errs)
	return nil
}

func init() { profiler.Register("{2D7B9E54-8A3C-4F16-B7E0-5C9D1A3F6B82}", &sampler{}) }

func main() {}
