// Command allocprof is an allocation profiler for .NET, written with
// clrprof, that writes a pprof profile (alloc_objects, alloc_space) with the
// allocating stacks.
//
// The SDK answers ObjectAllocated in C (Info.EnableAllocationRecording):
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
	"strings"
	"time"

	"github.com/clrprof/clrprof/profiler"
	"github.com/google/pprof/profile"
)

const clsid = "{C4E8A1B7-2F59-4D3C-8E6A-9B0D1F2C3E84}"

type classTotal struct{ objects, bytes uint64 }

type stackKey struct {
	stack string
	class profiler.ClassID
}

type stackAgg struct {
	frames  []profiler.FunctionID
	class   profiler.ClassID
	objects float64
	bytes   float64
}

type allocprof struct {
	profiler.Base
	info    *profiler.Info
	rec     *profiler.AllocRecorder
	out     string
	rate    int
	top     int
	start   time.Time
	classes map[profiler.ClassID]*classTotal
	stacks  map[stackKey]*stackAgg
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
	p.stacks = map[stackKey]*stackAgg{}
	p.start = time.Now()
	p.rec, err = info.EnableAllocationRecording(profiler.AllocOptions{
		Batch:        p.batch,
		SampleBytes:  p.rate,
		BufferEvents: 1 << 20,
		Interval:     5 * time.Millisecond,
	})
	return err
}

func (p *allocprof) batch(b profiler.AllocBatch) {
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
		var key strings.Builder
		for _, f := range s.Stack {
			fmt.Fprintf(&key, "%x,", uintptr(f))
		}
		k := stackKey{key.String(), s.Class}
		a := p.stacks[k]
		if a == nil {
			a = &stackAgg{frames: s.Stack, class: s.Class}
			p.stacks[k] = a
		}
		w := profiler.AllocSampleWeight(s.Size, p.rate)
		a.objects += w
		a.bytes += w * float64(s.Size)
	}
}

func (p *allocprof) className(c profiler.ClassID) string {
	n, err := p.info.ClassName(c)
	if err != nil {
		return fmt.Sprintf("[class %#x]", uintptr(c))
	}
	return n
}

func (p *allocprof) build() *profile.Profile {
	prof := &profile.Profile{
		SampleType:        []*profile.ValueType{{Type: "alloc_objects", Unit: "count"}, {Type: "alloc_space", Unit: "bytes"}},
		DefaultSampleType: "alloc_space",
		PeriodType:        &profile.ValueType{Type: "space", Unit: "bytes"},
		Period:            int64(p.rate),
		TimeNanos:         p.start.UnixNano(),
		DurationNanos:     int64(time.Since(p.start)),
	}
	locs := map[profiler.FunctionID]*profile.Location{}
	loc := func(f profiler.FunctionID) *profile.Location {
		if l := locs[f]; l != nil {
			return l
		}
		name := "[native code]"
		if f != 0 {
			if n, err := p.info.FunctionName(f); err == nil {
				name = n
			} else {
				name = fmt.Sprintf("[function %#x]", uintptr(f))
			}
		}
		fn := &profile.Function{ID: uint64(len(prof.Function) + 1), Name: name, SystemName: name}
		prof.Function = append(prof.Function, fn)
		l := &profile.Location{ID: uint64(len(prof.Location) + 1), Line: []profile.Line{{Function: fn}}}
		prof.Location = append(prof.Location, l)
		locs[f] = l
		return l
	}
	names := map[profiler.ClassID]string{}
	for _, a := range p.stacks {
		s := &profile.Sample{Value: []int64{int64(a.objects + 0.5), int64(a.bytes + 0.5)}}
		for _, f := range a.frames {
			s.Location = append(s.Location, loc(f))
		}
		n, ok := names[a.class]
		if !ok {
			n = p.className(a.class)
			names[a.class] = n
		}
		s.Label = map[string][]string{"object": {n}}
		prof.Sample = append(prof.Sample, s)
	}
	return prof
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
		rows = append(rows, row{p.className(c), *t})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].t.bytes > rows[j].t.bytes })
	for i, r := range rows {
		if i >= p.top {
			break
		}
		fmt.Fprintf(os.Stderr, "allocprof: class %s objects=%d bytes=%d\n", r.name, r.t.objects, r.t.bytes)
	}
	st := p.rec.Stats()
	prof := p.build()
	f, err := os.Create(p.out)
	if err == nil {
		err = prof.Write(f)
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
