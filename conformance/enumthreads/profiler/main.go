// Command profiler is the enumthreads scenario's profiler: with GC and
// suspend events on, collections must start before they finish, and
// EnumThreads must work from RuntimeSuspendFinished of a suspension the
// runtime made for itself, listing at least one managed thread.
package main

import (
	"sync/atomic"

	"github.com/clrprof/clrprof/conformance/internal/check"
	"github.com/clrprof/clrprof/profiler"
)

type enumthreads struct {
	profiler.Base
	info                   *profiler.Info
	starts, finishes, enum atomic.Int64
}

func (p *enumthreads) Initialize(info *profiler.Info) error {
	p.info = info
	if err := info.SetEventMask(profiler.MonitorGC | profiler.MonitorSuspends); err != nil {
		check.Failf("SetEventMask: %v", err)
		return err
	}
	return nil
}

func (p *enumthreads) GarbageCollectionStarted([]bool, profiler.GCReason) error {
	if s := p.starts.Add(1); s < p.finishes.Load() {
		check.Failf("GarbageCollectionStarted: %d starts after %d finishes", s, p.finishes.Load())
	}
	return nil
}

func (p *enumthreads) GarbageCollectionFinished() error {
	if f := p.finishes.Add(1); p.starts.Load() < f {
		check.Failf("GarbageCollectionFinished: %d finishes after %d starts", f, p.starts.Load())
	}
	return nil
}

func (p *enumthreads) RuntimeSuspendFinished() error {
	e, err := p.info.EnumThreads()
	if err != nil {
		check.Failf("EnumThreads in RuntimeSuspendFinished: %v", err)
		return err
	}
	defer e.Release()
	n := 0
	for {
		batch, err := e.Next()
		if err != nil {
			check.Failf("ThreadEnum.Next: %v", err)
			return nil
		}
		if len(batch) == 0 {
			break
		}
		n += len(batch)
	}
	check.That(n > 0, "EnumThreads listed no thread")
	p.enum.Add(1)
	return nil
}

func (p *enumthreads) Shutdown() error {
	var final string
	switch {
	case p.starts.Load() == 0:
		final = "no GarbageCollectionStarted"
	case p.finishes.Load() == 0:
		final = "no GarbageCollectionFinished"
	case p.enum.Load() == 0:
		final = "no RuntimeSuspendFinished with a completed EnumThreads"
	}
	check.Done(final)
	return nil
}

func init() {
	profiler.Register("{8E4A2C67-1B9D-4F30-A5E8-6C3D7B1F9E14}", &enumthreads{})
}

func main() {}
