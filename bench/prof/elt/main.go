// Command elt is the Go profiler of the benchmarks' ELT fast-path row: it
// records every enter, leave and tailcall through the SDK's fast path
// (Info.EnableELT: assembly stubs appending to per-thread buffers in C,
// drained by the SDK on a goroutine) and counts the events by kind in its
// Batch callback, the same work bench/cref's elt mode does in C.
//
// At Shutdown it closes the recorder (a final flush) and prints
// "goelt: Shutdown mode=elt enters=E leaves=L tailcalls=T unwinds=U
// dropped=D" on stderr.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/clrprof/clrprof/profiler"
)

type eltprof struct {
	profiler.Base
	rec                                *profiler.ELTRecorder
	enters, leaves, tailcalls, unwinds uint64 // touched only by Batch
	dropped                            uint64
}

func (p *eltprof) batch(b profiler.ELTBatch) {
	p.dropped += b.Dropped
	for _, e := range b.Events {
		switch e.Kind {
		case profiler.ELTEnter:
			p.enters++
		case profiler.ELTLeave:
			p.leaves++
		case profiler.ELTTailcall:
			p.tailcalls++
		default:
			p.unwinds++
		}
	}
}

func (p *eltprof) Initialize(info *profiler.Info) error {
	// Buffers large enough, drained often enough, that a call storm loses
	// nothing (bench/cref never drops): 1<<20 events (16 MiB) per thread,
	// drained every millisecond. BENCH_ELT_EVENTS and BENCH_ELT_INTERVAL override.
	opts := profiler.ELTOptions{Batch: p.batch, BufferEvents: 1 << 20, Interval: time.Millisecond}
	if v := os.Getenv("BENCH_ELT_EVENTS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return fmt.Errorf("goelt: BENCH_ELT_EVENTS: %w", err)
		}
		opts.BufferEvents = n
	}
	if v := os.Getenv("BENCH_ELT_INTERVAL"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("goelt: BENCH_ELT_INTERVAL: %w", err)
		}
		opts.Interval = d
	}
	rec, err := info.EnableELT(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goelt: %v\n", err)
		return err
	}
	p.rec = rec
	fmt.Fprintln(os.Stderr, "goelt: Initialize mode=elt")
	return nil
}

func (p *eltprof) Shutdown() error {
	if p.rec != nil {
		if err := p.rec.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "goelt: Close: %v\n", err)
		}
	}
	fmt.Fprintf(os.Stderr, "goelt: Shutdown mode=elt enters=%d leaves=%d tailcalls=%d unwinds=%d dropped=%d\n",
		p.enters, p.leaves, p.tailcalls, p.unwinds, p.dropped)
	return nil
}

func init() { profiler.Register("{4E9A2C71-6B3D-4F85-9A1E-8C2D7B5F3E06}", &eltprof{}) }

func main() {}
