// Command allocprof is an allocation profiler for .NET, written with
// clrprof, that writes a pprof profile (alloc_objects, alloc_space) with the
// allocating stacks.
//
// The SDK answers ObjectAllocated in C (alloc.NewRecorder):
// every allocation's class and size goes into a per-thread buffer, and about
// every ALLOCPROF_RATE bytes per thread (a Poisson process, as in Go's heap
// profiler) the allocating stack is taken too. Go drains the buffers; at
// Shutdown allocprof writes the sampled stacks, scaled to estimates of
// objects and bytes, with the class as the label "object", and prints the
// exact totals of the classes that allocated most:
//
//	allocprof: class NAME objects=N bytes=B
//	allocprof: wrote FILE events=N samples=S dropped=D
//
// Environment: ALLOCPROF_OUT (default alloc.pprof), ALLOCPROF_RATE (mean
// bytes between samples, default 524288), ALLOCPROF_TOP (classes printed,
// default 10).
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"
	"time"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
)

const clsid = "{C4E8A1B7-2F59-4D3C-8E6A-9B0D1F2C3E84}"

type classTotal struct{ objects, bytes uint64 }

type allocprof struct {
	profiler.Base
	info    *profiler.Info
	rec     *alloc.Recorder
	out     string
	rate    int
	top     int
	start   time.Time
	classes map[profiler.ClassID]*classTotal
	stacks  *pprofbuild.Builder
	names   *pprofbuild.Names
}

func envInt(name string, def int) (int, error) {
	v := os.Getenv(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q: want a non-negative integer", name, v)
	}
	return n, nil
}

func (p *allocprof) Initialize(info *profiler.Info) error {
	p.info = info
	var err error
	if p.rate, err = envInt("ALLOCPROF_RATE", 512<<10); err != nil {
		return err
	}
	if p.top, err = envInt("ALLOCPROF_TOP", 10); err != nil {
		return err
	}
	if p.out = os.Getenv("ALLOCPROF_OUT"); p.out == "" {
		p.out = "alloc.pprof"
	}
	p.classes = map[profiler.ClassID]*classTotal{}
	p.names = pprofbuild.NewNames(info)
	p.stacks = pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}}, "alloc_space", 1<<20)
	p.start = time.Now()
	p.rec, err = alloc.NewRecorder(info, alloc.Options{
		Batch:        p.batch,
		SampleBytes:  p.rate,
		BufferEvents: 1 << 20,
		Interval:     5 * time.Millisecond,
	})
	return err
}

func (p *allocprof) batch(b alloc.Batch) {
	for _, e := range b.Events {
		c := p.classes[e.Class]
		if c == nil {
			c = &classTotal{}
			p.classes[e.Class] = c
		}
		c.objects++
		c.bytes += e.Size
	}
	for _, s := range b.Samples {
		w := alloc.SampleWeight(s.Size, p.rate)
		p.stacks.Add(s.Stack, []pprofbuild.Label{{Key: "object", Value: p.names.Class(s.Class)}}, int64(w+0.5), int64(w*float64(s.Size)+0.5))
	}
}

func (p *allocprof) Shutdown() error {
	if p.rec == nil {
		return nil
	}
	p.rec.Close()
	type row struct {
		name string
		t    classTotal
	}
	var rows []row
	for c, t := range p.classes {
		rows = append(rows, row{p.names.Class(c), *t})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].t.bytes > rows[j].t.bytes })
	for i, r := range rows {
		if i >= p.top {
			break
		}
		fmt.Fprintf(os.Stderr, "allocprof: class %s objects=%d bytes=%d\n", r.name, r.t.objects, r.t.bytes)
	}
	st := p.rec.Stats()
	prof := p.stacks.Build(p.names, pprofbuild.Meta{
		Start: p.start, Duration: time.Since(p.start),
		PeriodType: pprofbuild.SampleType{Type: "space", Unit: "bytes"}, Period: int64(p.rate),
	}, false)
	f, err := os.Create(p.out)
	if err == nil {
		err = pprofbuild.Write(f, prof)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "allocprof: writing %s: %v\n", p.out, err)
		return nil
	}
	fmt.Fprintf(os.Stderr, "allocprof: wrote %s events=%d samples=%d dropped=%d threads=%d\n", p.out, st.Events, st.Samples, st.Dropped, st.Threads)
	return nil
}

func init() { profiler.Register(clsid, &allocprof{}) }

func main() {}
