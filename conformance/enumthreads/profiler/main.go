// Command profiler is the enumthreads scenario's profiler: with the GC and
// suspension events on, it enumerates the managed threads (EnumThreads)
// inside RuntimeSuspendFinished of a suspension the runtime made for a
// garbage collection, not one the profiler asked for. The enumeration must
// succeed there and list at least the thread that induced the collection;
// GarbageCollectionStarted and Finished must not have more finishes than
// starts; and at shutdown there must have been a collection and an
// enumeration.
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type enumthreads struct {
	profiler.Base
	info             *profiler.Info
	starts, finishes atomic.Int64
	enumerated       atomic.Int64
}

func (p *enumthreads) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask2(profiler.MonitorGC|profiler.MonitorSuspends, profiler.HighNone); err != nil {
		check.Failf("SetEventMask2: %v", err)
		return err
	}
	return nil
}

func (p *enumthreads) GarbageCollectionStarted(collected []bool, reason profiler.GCReason) error {
	if s, f := p.starts.Add(1), p.finishes.Load(); s < f {
		check.Failf("GarbageCollectionStarted: %d starts, %d finishes", s, f)
	}
	return nil
}

func (p *enumthreads) GarbageCollectionFinished() error {
	if f, s := p.finishes.Add(1), p.starts.Load(); s < f {
		check.Failf("GarbageCollectionFinished: %d starts, %d finishes", s, f)
	}
	return nil
}

func (p *enumthreads) RuntimeSuspendFinished() error {
	e, err := p.info.EnumThreads()
	if err != nil {
		check.Failf("EnumThreads in RuntimeSuspendFinished: %v", err)
		return nil
	}
	defer e.Release()
	n := 0
	for {
		ids, err := e.Next()
		if err != nil {
			check.Failf("ThreadEnum.Next: %v", err)
			return nil
		}
		if len(ids) == 0 {
			break
		}
		for _, id := range ids {
			check.That(id != 0, "EnumThreads: a null ThreadID")
		}
		n += len(ids)
	}
	check.That(n >= 1, "EnumThreads in RuntimeSuspendFinished: %d threads, want at least the one collecting", n)
	p.enumerated.Add(1)
	return nil
}

func (p *enumthreads) Shutdown() error {
	var final string
	switch {
	case p.starts.Load() == 0:
		final = "no GarbageCollectionStarted"
	case p.finishes.Load() == 0:
		final = "no GarbageCollectionFinished"
	case p.enumerated.Load() == 0:
		final = "no EnumThreads completed in RuntimeSuspendFinished"
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{0742962D-2ED3-44B0-BA84-06B1EF0A0A0B}", &enumthreads{})
}

func main() {}
