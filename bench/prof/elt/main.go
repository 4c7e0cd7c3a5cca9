// Command elt is the Go profiler of the benchmarks' ELT fast-path row: it
// records every enter, leave and tailcall through the SDK's fast path
// (elt.NewRecorder: assembly stubs appending to per-thread buffers in C,
// drained by the SDK on a goroutine), and its Batch callback does the same
// work as bench/cref's elt mode does in C: it counts the events by kind and
// pairs every leave or tailcall with its thread's enters on a shadow stack
// of function IDs (which shows that the IDs recorded are real).
//
// The SDK's buffers are bounded (bench/cref's grow instead): the row uses
// the SDK's default configuration (1<<16 events, 1 MiB, per thread, at
// most 64 MiB for all threads; a thread whose buffer is full waits for the
// draining goroutine, which a half-full buffer wakes, rather than drop);
// the runner reports a run that dropped anything as invalid.
// BENCH_ELT_EVENTS and BENCH_ELT_INTERVAL override the buffer size and the
// drain interval.
//
// At Shutdown it closes the recorder (a final flush) and prints
// "goelt: Shutdown mode=elt enters=E leaves=L tailcalls=T unwinds=U
// paired=P unpaired=X unwound=W open=O overflows=F dropped=D lost=L
// waited=W batches=B threads=N" on stderr.
//
// BENCH_ELT_MODE=count uses elt.NewCallCounter instead (the counting is
// done in C by the hooks, per function, with a shadow stack per thread for
// inclusive time; no events): it prints "goelt: Shutdown mode=count
// enters=E functions=F unpaired=U unwound=W overflows=O dropped=L
// threads=N", enters being the sum of every function's calls.
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

// Pairing limits, as in bench/cref: a leave may close a frame at most
// pairSearch frames below the top (the frames above it were unwound), and
// a shadow stack holds at most stackMax frames.
const (
	pairSearch = 64
	stackMax   = 1 << 16
)

type eltprof struct {
	profiler.Base
	rec *elt.Recorder
	cc  *elt.CallCounter
	// Touched only by batch (one goroutine).
	enters, leaves, tailcalls, unwinds  uint64
	paired, unpaired, unwound, overflow uint64
	dropped, batches                    uint64
	stacks                              map[uint32][]profiler.FunctionID
}

func (p *eltprof) batch(b elt.Batch) {
	p.batches++
	p.dropped += b.Dropped
	st := p.stacks[b.Thread.OSThreadID]
	for _, e := range b.Events {
		switch e.Kind {
		case elt.Enter:
			p.enters++
			if len(st) == stackMax {
				p.overflow++
				continue
			}
			st = append(st, e.Function)
		case elt.Leave, elt.Tailcall:
			if e.Kind == elt.Leave {
				p.leaves++
			} else {
				p.tailcalls++
			}
			st = p.pair(st, e.Function)
		default:
			p.unwinds++
		}
	}
	p.stacks[b.Thread.OSThreadID] = st
}

// pair closes the innermost frame of f on st.
func (p *eltprof) pair(st []profiler.FunctionID, f profiler.FunctionID) []profiler.FunctionID {
	n := len(st)
	if n > 0 && st[n-1] == f {
		p.paired++
		return st[:n-1]
	}
	for k := 1; k < min(n, pairSearch); k++ {
		if st[n-1-k] == f {
			p.unwound += uint64(k)
			p.paired++
			return st[:n-1-k]
		}
	}
	p.unpaired++
	return st
}

func (p *eltprof) Initialize(info *profiler.Info) error {
	p.stacks = map[uint32][]profiler.FunctionID{}
	if os.Getenv("BENCH_ELT_MODE") == "count" {
		cc, err := elt.NewCallCounter(info, elt.CallCountOptions{})
		if err != nil {
			fmt.Fprintf(os.Stderr, "goelt: %v\n", err)
			return err
		}
		p.cc = cc
		fmt.Fprintln(os.Stderr, "goelt: Initialize mode=count")
		return nil
	}
	opts := elt.Options{Batch: p.batch}
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
	rec, err := elt.NewRecorder(info, opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "goelt: %v\n", err)
		return err
	}
	p.rec = rec
	fmt.Fprintln(os.Stderr, "goelt: Initialize mode=elt")
	return nil
}

func (p *eltprof) Shutdown() error {
	if p.cc != nil {
		p.cc.Close()
		var enters uint64
		snap := p.cc.Snapshot()
		for _, f := range snap {
			enters += f.Calls
		}
		s := p.cc.Stats()
		fmt.Fprintf(os.Stderr, "goelt: Shutdown mode=count enters=%d functions=%d unpaired=%d unwound=%d overflows=%d dropped=%d threads=%d\n",
			enters, len(snap), s.Unmatched, s.Unwound, s.Overflow, s.Lost+s.Refused+s.Unmapped, s.Threads)
		return nil
	}
	var st elt.Stats
	if p.rec != nil {
		if err := p.rec.Close(); err != nil {
			fmt.Fprintf(os.Stderr, "goelt: Close: %v\n", err)
		}
		st = p.rec.Stats()
	}
	open := 0
	for _, st := range p.stacks {
		open += len(st)
	}
	fmt.Fprintf(os.Stderr, "goelt: Shutdown mode=elt enters=%d leaves=%d tailcalls=%d unwinds=%d paired=%d unpaired=%d unwound=%d open=%d overflows=%d dropped=%d lost=%d waited=%d batches=%d threads=%d\n",
		p.enters, p.leaves, p.tailcalls, p.unwinds, p.paired, p.unpaired, p.unwound, open, p.overflow, p.dropped, st.Lost, st.Waited, p.batches, st.Threads)
	return nil
}

func init() { profiler.Register("{4E9A2C71-6B3D-4F85-9A1E-8C2D7B5F3E06}", &eltprof{}) }

func main() {}
