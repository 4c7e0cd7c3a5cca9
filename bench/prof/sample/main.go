// Command sample is the Go profiler of the benchmarks' sampling row: a
// goroutine, locked to its OS thread (a thread that never runs managed
// code), wakes about 99 times a second, suspends the runtime
// (Info.SuspendRuntime, ICorProfilerInfo10: .NET Core 3.0 and later), walks
// every managed thread's stack with Info.StackTrace (DoStackSnapshot with a
// C per-frame callback inside the SDK) and resumes it, the same work
// bench/cref's sample mode does on a C thread; the function IDs go into a
// ring in C memory, so a walk costs two cgo calls per thread.
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

static void sample_record(sample_state *s, const uintptr_t *frames, int n, int stride) {
	for (int i = 0; i < n; i++) {
		s->ring[s->frames & (SAMPLE_FRAMES - 1)] = frames[i * stride];
		s->frames++;
	}
}
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

// sampleDepth bounds one stack walk.
const sampleDepth = 512

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
					if fr, err := p.info.StackTrace(t, sampleDepth); err == nil {
						// Record the function IDs in the C ring, as the C
						// reference's per-frame callback does.
						C.sample_record(p.state, (*C.uintptr_t)(unsafe.Pointer(unsafe.SliceData(fr))), C.int(len(fr)), C.int(unsafe.Sizeof(fr[0])/unsafe.Sizeof(fr[0].IP)))
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
