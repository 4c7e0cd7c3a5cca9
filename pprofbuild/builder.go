package pprofbuild

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"io"
	"sync"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/profiler"
	"github.com/google/pprof/profile"
)

// Names resolves function and class IDs to names, once each: a function
// as Info.FunctionName gives it ("Namespace.Class.Method"), 0 as "[native
// code]", an ID the runtime cannot name as "[function 0x...]". Safe for
// concurrent use. IDs are not forgotten: a process that unloads
// collectible code and reuses IDs gets the old names.
type Names struct {
	info    *profiler.Info
	mu      sync.Mutex
	funcs   map[profiler.FunctionID]string
	classes map[profiler.ClassID]string
}

// NewNames returns a Names for info.
func NewNames(info *profiler.Info) *Names {
	return &Names{info: info, funcs: map[profiler.FunctionID]string{}, classes: map[profiler.ClassID]string{}}
}

// Function names f.
func (n *Names) Function(f profiler.FunctionID) string {
	if f == 0 {
		return "[native code]"
	}
	n.mu.Lock()
	s, ok := n.funcs[f]
	n.mu.Unlock()
	if ok {
		return s
	}
	s, err := n.info.FunctionName(f)
	if err != nil {
		s = fmt.Sprintf("[function %#x]", uintptr(f))
	}
	n.mu.Lock()
	n.funcs[f] = s
	n.mu.Unlock()
	return s
}

// Class names c (Info.ClassName), "[class 0x...]" if the runtime cannot.
func (n *Names) Class(c profiler.ClassID) string {
	n.mu.Lock()
	s, ok := n.classes[c]
	n.mu.Unlock()
	if ok {
		return s
	}
	s, err := n.info.ClassName(c)
	if err != nil {
		s = fmt.Sprintf("[class %#x]", uintptr(c))
	}
	n.mu.Lock()
	n.classes[c] = s
	n.mu.Unlock()
	return s
}

// SampleType is one value of a sample: its type and unit, as pprof shows
// them ("cpu"/"nanoseconds", "inuse_space"/"bytes").
type SampleType struct {
	// Type is what the value counts ("cpu", "alloc_space", ...); Unit
	// its unit ("nanoseconds", "bytes", "count").
	Type, Unit string
}

// Label is a sample label: pprof's string label Key=Value (a thread
// name, a span ID), which tools can group or filter samples by.
type Label struct {
	// Key is the label's name and Value its value.
	Key, Value string
}

type agg struct {
	frames []profiler.FunctionID
	pseudo []string // named frames, innermost first (instead of frames)
	labels []Label
	values []int64
}

// OverflowFrame is the frame of the one sample that holds what did not fit
// a full Builder.
const OverflowFrame = "[stack table full]"

// Builder aggregates samples by stack and labels into a pprof profile. At
// most Max distinct stacks are kept: later new stacks are added to one
// sample with the frame OverflowFrame (and counted in Overflowed), so
// memory stays bounded and the totals stay right. Safe for concurrent use.
type Builder struct {
	types      []SampleType
	defType    string
	max        int
	mu         sync.Mutex
	aggs       map[string]*agg
	overflowed int64
}

// NewBuilder returns a Builder for samples of the given types (each Add
// gives one value per type); defaultType is the type pprof shows first
// ("" for the last); max bounds the distinct stacks (at least 1).
func NewBuilder(types []SampleType, defaultType string, maxStacks int) *Builder {
	return &Builder{types: types, defType: defaultType, max: max(maxStacks, 1), aggs: map[string]*agg{}}
}

func key(frames []profiler.FunctionID, pseudo []string, labels []Label) string {
	// The frame count, each frame's 8 bytes, then the pseudo frames and
	// the labels' parts, each ended by a 0 byte, the two lists apart by a
	// 1 byte: one allocation, no formatting.
	n := binary.MaxVarintLen64 + 8*len(frames) + 1
	for _, p := range pseudo {
		n += len(p) + 1
	}
	for _, l := range labels {
		n += len(l.Key) + len(l.Value) + 2
	}
	b := make([]byte, 0, n)
	b = binary.AppendUvarint(b, uint64(len(frames)))
	for _, f := range frames {
		b = binary.LittleEndian.AppendUint64(b, uint64(f))
	}
	for _, p := range pseudo {
		b = append(b, p...)
		b = append(b, 0)
	}
	b = append(b, 1)
	for _, l := range labels {
		b = append(b, l.Key...)
		b = append(b, 0)
		b = append(b, l.Value...)
		b = append(b, 0)
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// Add adds values (one per sample type) to the sample of stack (innermost
// first) and labels. The Builder keeps stack and labels: do not change
// them afterwards.
func (b *Builder) Add(stack []profiler.FunctionID, labels []Label, values ...int64) {
	b.add(stack, nil, labels, values)
}

// AddNamed is Add for a stack of named pseudo-frames (innermost first),
// such as "[GC gen 2]".
func (b *Builder) AddNamed(frames []string, labels []Label, values ...int64) {
	b.add(nil, frames, labels, values)
}

func (b *Builder) add(frames []profiler.FunctionID, pseudo []string, labels []Label, values []int64) {
	if len(values) != len(b.types) {
		panic(fmt.Sprintf("profiles: Builder.Add: %d values for %d sample types", len(values), len(b.types)))
	}
	k := key(frames, pseudo, labels)
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.aggs[k]
	if a == nil {
		if len(b.aggs) >= b.max {
			b.overflowed++
			k = key(nil, []string{OverflowFrame}, nil)
			if a = b.aggs[k]; a == nil {
				a = &agg{pseudo: []string{OverflowFrame}, values: make([]int64, len(b.types))}
				b.aggs[k] = a
			}
		} else {
			a = &agg{frames: frames, pseudo: pseudo, labels: labels, values: make([]int64, len(b.types))}
			b.aggs[k] = a
		}
	}
	for i, v := range values {
		a.values[i] += v
	}
}

// Len is the number of distinct samples.
func (b *Builder) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.aggs)
}

// Overflowed is how many Adds went to the overflow sample.
func (b *Builder) Overflowed() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.overflowed
}

// Meta is what a built profile says of itself.
type Meta struct {
	// Start is when the profile's samples begin (pprof's time_nanos).
	Start time.Time
	// Duration is how long the profile covers (pprof's duration_nanos).
	Duration time.Duration
	// PeriodType and Period, for sampled profiles ("" for none).
	PeriodType SampleType
	Period     int64
	// Comments are free-form lines pprof shows with the profile (what a
	// number means, or how it is wrong).
	Comments []string
}

// Build writes the samples so far into a pprof profile, names resolved by
// names, and with reset starts over (the next profile holds only what is
// added after).
func (b *Builder) Build(names *Names, m Meta, reset bool) *profile.Profile {
	b.mu.Lock()
	aggs := b.aggs
	overflowed := b.overflowed
	if reset {
		b.aggs = map[string]*agg{}
		b.overflowed = 0
	}
	b.mu.Unlock()
	p := &profile.Profile{
		DefaultSampleType: b.defType,
		TimeNanos:         m.Start.UnixNano(),
		DurationNanos:     int64(m.Duration),
		Period:            m.Period,
		Comments:          append([]string(nil), m.Comments...),
	}
	if m.PeriodType.Type != "" {
		p.PeriodType = &profile.ValueType{Type: m.PeriodType.Type, Unit: m.PeriodType.Unit}
	}
	if overflowed > 0 {
		p.Comments = append(p.Comments, fmt.Sprintf("%d samples of new stacks past the limit of %d are under %s", overflowed, b.max, OverflowFrame))
	}
	for _, t := range b.types {
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: t.Type, Unit: t.Unit})
	}
	locs := map[string]*profile.Location{}
	loc := func(name string) *profile.Location {
		if l := locs[name]; l != nil {
			return l
		}
		// No SystemName: pprof takes a function whose Name equals its
		// SystemName for one not yet demangled, and "simplifies" any such
		// name holding '<', '>', '[', ']' or "::" as if it were C++,
		// cutting out everything between angle brackets:
		// Ops+<Stream>d__9.MoveNext became Ops+d__9.MoveNext and
		// List<int>.Add List.Add in `go tool pprof -top`. The name here is
		// final, what the runtime's metadata says.
		fn := &profile.Function{ID: uint64(len(p.Function) + 1), Name: name}
		p.Function = append(p.Function, fn)
		l := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
		p.Location = append(p.Location, l)
		locs[name] = l
		return l
	}
	for _, a := range aggs {
		s := &profile.Sample{Value: append([]int64(nil), a.values...)}
		for _, f := range a.frames {
			s.Location = append(s.Location, loc(names.Function(f)))
		}
		for _, f := range a.pseudo {
			s.Location = append(s.Location, loc(f))
		}
		if len(a.labels) > 0 {
			s.Label = map[string][]string{}
			for _, l := range a.labels {
				s.Label[l.Key] = append(s.Label[l.Key], l.Value)
			}
		}
		p.Sample = append(p.Sample, s)
	}
	return p
}

// gzipWriters holds gzip writers at BestSpeed for Write: a new writer at
// the default level allocates about a megabyte of compressor state, which
// a continuous profiler writing several small profiles per period paid on
// every file (measured: 2-3 ms per file at Shutdown on .NET 8).
var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

// Write writes p to w as pprof's gzip-compressed protocol buffer, as
// [profile.Profile.Write] does, but compressed at gzip.BestSpeed with a
// reused compressor: the profiles a profiler writes periodically are
// small, and this keeps writing them from costing the profiled process
// more than the encoding itself. `go tool pprof` reads either.
func Write(w io.Writer, p *profile.Profile) error {
	var buf bytes.Buffer
	if err := p.WriteUncompressed(&buf); err != nil {
		return err
	}
	zw := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(zw)
	zw.Reset(w)
	if _, err := zw.Write(buf.Bytes()); err != nil {
		return err
	}
	return zw.Close()
}
