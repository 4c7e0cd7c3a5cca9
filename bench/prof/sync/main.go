// Command sync is the Go profiler of the benchmarks' synchronous-handler
// rows: the callbacks run in Go, on the runtime's thread, while the runtime
// waits (cooperative mode), with the SDK's signal guard around each call
// unless CLRPROF_SIGNAL_GUARD=0 (a diagnostic knob: unsafe, see risks.md
// item 1).
//
// BENCH_MODE selects the event mask:
//
//	alloc  ObjectAllocated: the object's size (Info.GetObjectSize) and class
//	       are summed per class in a lock-free table, the same per-event
//	       work bench/cref's alloc mode does in C (there through a
//	       per-thread buffer and a consumer thread);
//	exc    ExceptionThrown: one atomic counter, as bench/cref's exc mode.
//
// At Shutdown it prints "gosync: Shutdown mode=M ..." with its counts.
package main

import (
	"fmt"
	"os"
	"sync/atomic"

	"github.com/clrprof/clrprof/profiler"
)

const tableSize = 8192 // a power of two, as in bench/cref

type classSlot struct {
	cls, count, bytes atomic.Uint64
}

type syncprof struct {
	profiler.Base
	info        *profiler.Info
	mode        string
	table       [tableSize]classSlot
	classes     atomic.Int64
	allocations atomic.Uint64
	totalBytes  atomic.Uint64
	sizeErrors  atomic.Uint64
	exceptions  atomic.Uint64
}

func (p *syncprof) Initialize(info *profiler.Info) error {
	p.info = info
	p.mode = os.Getenv("BENCH_MODE")
	var err error
	switch p.mode {
	case "alloc":
		err = info.SetEventMask(profiler.MonitorObjectAllocated | profiler.EnableObjectAllocated)
	case "exc":
		err = info.SetEventMask(profiler.MonitorExceptions)
	default:
		err = fmt.Errorf("gosync: unknown BENCH_MODE %q", p.mode)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "gosync: %v\n", err)
		return err
	}
	fmt.Fprintf(os.Stderr, "gosync: Initialize mode=%s\n", p.mode)
	return nil
}

// slot finds or claims the table slot of cls (nil when the table is full).
func (p *syncprof) slot(cls uint64) *classSlot {
	k := uint32((cls>>3)*0x9E3779B97F4A7C15>>51) & (tableSize - 1)
	for range tableSize {
		s := &p.table[k]
		switch c := s.cls.Load(); {
		case c == cls:
			return s
		case c == 0:
			if s.cls.CompareAndSwap(0, cls) {
				p.classes.Add(1)
				return s
			}
			if s.cls.Load() == cls {
				return s
			}
		}
		k = (k + 1) & (tableSize - 1)
	}
	return nil
}

func (p *syncprof) ObjectAllocated(obj profiler.ObjectID, cls profiler.ClassID) error {
	p.allocations.Add(1)
	size, err := p.info.GetObjectSize(obj)
	if err != nil {
		p.sizeErrors.Add(1)
		return nil
	}
	if s := p.slot(uint64(cls)); s != nil {
		s.count.Add(1)
		s.bytes.Add(uint64(size))
	}
	p.totalBytes.Add(uint64(size))
	return nil
}

func (p *syncprof) ExceptionThrown(profiler.ObjectID) error {
	p.exceptions.Add(1)
	return nil
}

func (p *syncprof) Shutdown() error {
	switch p.mode {
	case "alloc":
		fmt.Fprintf(os.Stderr, "gosync: Shutdown mode=alloc allocations=%d bytes=%d classes=%d sizeErrors=%d\n",
			p.allocations.Load(), p.totalBytes.Load(), p.classes.Load(), p.sizeErrors.Load())
	case "exc":
		fmt.Fprintf(os.Stderr, "gosync: Shutdown mode=exc exceptions=%d\n", p.exceptions.Load())
	}
	return nil
}

// BENCH_MEMBERS=1 or 2 registers one or two of these profilers composed
// (profiler.Compose) instead of one alone: each member prints its own
// Shutdown line.
func init() {
	var impl profiler.Callback = &syncprof{}
	switch os.Getenv("BENCH_MEMBERS") {
	case "1", "2":
		members := []profiler.Callback{&syncprof{}}
		if os.Getenv("BENCH_MEMBERS") == "2" {
			members = append(members, &syncprof{})
		}
		c, err := profiler.Compose(members...)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gosync:", err)
			return
		}
		impl = c
	}
	profiler.Register("{5A8D3F27-6C1E-4B94-9D02-7E3F8A6C1B45}", impl)
}

func main() {}
