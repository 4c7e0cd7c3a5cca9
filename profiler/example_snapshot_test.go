package profiler_test

import (
	"fmt"
	"os"
	"time"

	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
)

// cpuSampler samples, 99 times a second, the threads that used CPU time
// since its last tick, and keeps the time it holds the runtime within 2%
// by skipping ticks after a long snapshot.
type cpuSampler struct {
	profiler.Base
	info    *profiler.Info
	lastCPU map[uint32]int64
	samples map[profiler.FunctionID]int64 // innermost function -> CPU ns
	stop    chan struct{}
	done    chan struct{}
}

func (p *cpuSampler) Initialize(info *profiler.Info) error {
	p.info = info
	p.lastCPU, p.samples = map[uint32]int64{}, map[profiler.FunctionID]int64{}
	if err := info.SetEventMask(profiler.EnableStackSnapshot); err != nil {
		return err
	}
	p.stop, p.done = make(chan struct{}), make(chan struct{})
	go p.loop()
	return nil
}

func (p *cpuSampler) loop() {
	defer close(p.done)
	const interval = time.Second / 99
	const budget = interval * 2 / 100 // 2% of it
	t := time.NewTicker(interval)
	defer t.Stop()
	skip := 0
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		if skip > 0 {
			skip--
			continue
		}
		ran := map[uint32]int64{}
		snap, err := p.info.SnapshotThreads(64, func(_ profiler.ThreadID, tid uint32) bool {
			cpu, ok := pprofbuild.ThreadCPU(tid)
			last, seen := p.lastCPU[tid]
			p.lastCPU[tid] = cpu
			if !ok || !seen || cpu <= last {
				return false // idle since the last tick: not walked
			}
			ran[tid] = cpu - last
			return true
		})
		// Charge the hold, not the wait for a GC's suspension to end.
		skip = int(snap.Cost() / budget)
		if err != nil {
			continue // counted by cause in a real sampler (pprofbuild.Ticks)
		}
		for _, ts := range snap.Stacks {
			if !ts.Skipped && ts.Err == nil && len(ts.Frames) > 0 {
				p.samples[ts.Frames[0].Function] += ran[ts.OSThreadID]
			}
		}
	}
}

func (p *cpuSampler) Shutdown() error {
	if p.stop == nil {
		return nil
	}
	close(p.stop)
	<-p.done
	for f, ns := range p.samples {
		name, _ := p.info.FunctionName(f)
		fmt.Fprintf(os.Stderr, "%8.1f ms %s\n", float64(ns)/1e6, name)
	}
	return nil
}

// A CPU sampler that suspends the runtime, walks only the threads that
// ran since its last tick (Info.SnapshotThreads), and budgets the time it
// holds the runtime (Snapshot.Cost).
func ExampleInfo_SnapshotThreads() {
	_ = profiler.Register("{6A1D3F52-8C47-4B9E-9D21-5E7A0C3B8F14}", &cpuSampler{})
}
