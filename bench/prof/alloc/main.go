// Command alloc is the Go profiler of the benchmarks' allocation fast-path
// row: the SDK answers ObjectAllocated in C (alloc.NewRecorder:
// the class and GetObjectSize of every allocation go into the allocating
// thread's buffer, without entering Go), and the Batch callback, on the
// SDK's draining goroutine, sums the allocations per class in an
// open-addressing table: the same work bench/cref's alloc mode does in C
// (there the consumer is a C thread). No stacks are taken (SampleBytes 0),
// as cref takes none.
//
// The SDK's buffers are bounded (bench/cref's grow instead): the row uses
// the SDK's defaults (1<<15 slots, 512 KiB, per allocating thread; a
// thread whose buffer is full waits for the draining goroutine, which a
// half-full buffer wakes, rather than drop), and the runner reports a run
// that dropped anything, or that recorded another number of allocations
// than the C reference counted, as invalid.
// BENCH_ALLOC_EVENTS and BENCH_ALLOC_INTERVAL override the two settings.
//
// At Shutdown it closes the recorder (a final flush) and prints
// "goalloc: Shutdown mode=alloc allocations=N dropped=D bytes=B classes=C
// batches=K threads=T" on stderr.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/profiler"
)

const tableSize = 8192 // a power of two, as in bench/cref

type classSlot struct {
	cls, count, bytes uint64
}

type allocprof struct {
	profiler.Base
	rec *alloc.Recorder
	// Touched only by batch (one goroutine), then by Shutdown after Close.
	table                       [tableSize]classSlot
	allocations, bytes, dropped uint64
	classes, full, batches      uint64
}

func (p *allocprof) batch(b alloc.Batch) {
	p.batches++
	p.dropped += b.Dropped
	for _, e := range b.Events {
		c := uint64(e.Class)
		k := uint32((c>>3)*0x9E3779B97F4A7C15>>51) & (tableSize - 1)
		found := false
		for range tableSize {
			s := &p.table[k]
			if s.cls == c {
				found = true
				break
			}
			if s.cls == 0 {
				s.cls = c
				p.classes++
				found = true
				break
			}
			k = (k + 1) & (tableSize - 1)
		}
		if found {
			p.table[k].count++
			p.table[k].bytes += e.Size
		} else {
			p.full++
		}
		p.bytes += e.Size
	}
	p.allocations += uint64(len(b.Events))
}

func envSetting[T any](name string, parse func(string) (T, error), v *T) error {
	s := os.Getenv(name)
	if s == "" {
		return nil
	}
	x, err := parse(s)
	if err != nil {
		return fmt.Errorf("goalloc: %s: %w", name, err)
	}
	*v = x
	return nil
}

func (p *allocprof) Initialize(info *profiler.Info) error {
	opts := alloc.Options{Batch: p.batch}
	if err := envSetting("BENCH_ALLOC_EVENTS", strconv.Atoi, &opts.BufferEvents); err != nil {
		return err
	}
	if err := envSetting("BENCH_ALLOC_INTERVAL", time.ParseDuration, &opts.Interval); err != nil {
		return err
	}
	rec, err := alloc.NewRecorder(info, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goalloc: %v\n", err)
		return err
	}
	p.rec = rec
	fmt.Fprintln(os.Stderr, "goalloc: Initialize mode=alloc")
	return nil
}

func (p *allocprof) Shutdown() error {
	threads, waited := 0, uint64(0)
	if p.rec != nil {
		if err := p.rec.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "goalloc: Close: %v\n", err)
		}
		st := p.rec.Stats()
		threads, waited = st.Threads, st.Waited
	}
	fmt.Fprintf(os.Stderr, "goalloc: Shutdown mode=alloc allocations=%d dropped=%d waited=%d bytes=%d classes=%d tableFull=%d batches=%d threads=%d\n",
		p.allocations, p.dropped, waited, p.bytes, p.classes, p.full, p.batches, threads)
	return nil
}

func init() { profiler.Register("{8B3E5D19-7A2C-4F60-9E84-1D6C3B7A5F92}", &allocprof{}) }

func main() {}
