// Command rtevents is the profiler of TestRuntimeEvents: it starts an
// EventPipe session and adds the runtime's provider to it (GC, contention,
// exceptions, threading; Verbose), then adds the app's EventSource
// (created later) to it with EventPipeAddProviderToSession and decodes every event with clrevents.DecodeRuntime.
// Each payload must decode whole, and one byte less must not (every field
// of the version is read); it records the GC sequence, contention
// durations and allocation ticks of sbyte[100] (ObjectSize 128) for the
// test to check, and, with RTEVENTS_SAMPLING=1, the AllocationSampling
// keyword on (.NET 10+), the AllocationSampled events the C sampler let
// through, for the
// test to check. At Shutdown it prints, per event type and version, how many were
// decoded and how many had a stack, the mismatches, and the exception
// types seen. On runtimes before .NET 5 it prints what the session call
// answered.
package main

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/clrprof/clrprof/alloc"
	"github.com/clrprof/clrprof/clrevents"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/uuid"
)

type rtevents struct {
	profiler.Base
	info *profiler.Info

	mu           sync.Mutex
	names        map[profiler.EventPipeProvider]string
	counts       map[string]int
	withStack    map[string]int
	gcs          []string
	contentionNs []float64
	sbyteTicks   int
	mismatches   []string
	exceptions   map[string]int
	errs         []string

	// RTEVENTS_TICK_MEAN: the allocation ticks sampled in C
	// (alloc.NewTickSampler) with this mean; what reached Go.
	ticks                   *alloc.TickSampler
	tickMean                int
	ticksDelivered, keptSum uint64
	sampledDelivered        uint64
}

func (p *rtevents) Initialize(info *profiler.Info) error {
	p.info = info
	p.names = map[profiler.EventPipeProvider]string{}
	p.counts, p.withStack, p.exceptions = map[string]int{}, map[string]int{}, map[string]int{}
	kw := clrevents.KeywordGC | clrevents.KeywordContention | clrevents.KeywordException | clrevents.KeywordThreading
	if os.Getenv("RTEVENTS_SAMPLING") == "1" {
		// .NET 10+: AllocationSampled instead of the ticks (with this
		// keyword on, 10.0.15 and 11.0.0 send no GCAllocationTick).
		kw |= clrevents.KeywordAllocationSampling
	}
	sess, err := info.EventPipeStartSession([]profiler.EventPipeProviderSettings{{
		Name:     clrevents.RuntimeProvider,
		Keywords: kw,
		Level:    profiler.EventPipeVerbose,
	}}, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "rtevents: EventPipeStartSession: %v (ErrNotAvailable: %v)\n", err, errors.Is(err, profiler.ErrNotAvailable))
		return nil
	}
	if v := os.Getenv("RTEVENTS_TICK_MEAN"); v != "" {
		fmt.Sscan(v, &p.tickMean)
		if p.ticks, err = alloc.NewTickSampler(info, p.tickMean); err != nil {
			fmt.Fprintf(os.Stderr, "rtevents: alloc.NewTickSampler: %v\n", err)
			return err
		}
	}
	// The app's EventSource, created later, is added to the running
	// session (with filter arguments it receives).
	err = info.EventPipeAddProviderToSession(sess, profiler.EventPipeProviderSettings{
		Name: "Clrprof-Late-Source", Level: profiler.EventPipeVerbose, Filter: map[string]string{"mode": "test", "a;b": "x=y"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "rtevents: EventPipeAddProviderToSession: %v\n", err)
	}
	return info.SetEventMask2(0, profiler.HighEventPipe)
}

func (p *rtevents) EventPipeEventDelivered(provider profiler.EventPipeProvider, id, version uint32, meta, data []byte,
	_, _ uuid.UUID, _ profiler.ThreadID, stack []profiler.Address) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	name, ok := p.names[provider]
	if !ok {
		name, _ = p.info.EventPipeGetProviderInfo(provider)
		p.names[provider] = name
	}
	if name == "Clrprof-Late-Source" {
		if md, err := clrevents.ParseMetadata(meta); err == nil && md.Name == "Late" {
			vals, err := clrevents.DecodeFields(md.Params, data)
			fmt.Fprintf(os.Stderr, "rtevents: late source event %v %v\n", vals, err)
		}
		return nil
	}
	if name != clrevents.RuntimeProvider {
		return nil
	}
	ev, err := clrevents.DecodeRuntime(id, version, data)
	if err != nil {
		p.errs = append(p.errs, err.Error())
		return nil
	}
	if _, raw := ev.(*clrevents.Raw); raw {
		return nil
	}
	key := fmt.Sprintf("%s/%d/v%d", reflect.TypeOf(ev).Elem().Name(), id, version)
	p.counts[key]++
	if len(stack) > 0 {
		p.withStack[key]++
	}
	if e, ok := ev.(*clrevents.ExceptionThrown); ok {
		p.exceptions[e.ExceptionType]++
	}
	// The decoder reads exactly the runtime's payload: one byte less is
	// too short (so no field of this version is left unread).
	if len(data) > 0 {
		if _, err := clrevents.DecodeRuntime(id, version, data[:len(data)-1]); err == nil {
			p.mismatch(fmt.Sprintf("%s: %d bytes, and the first %d decode too: a field is not read", key, len(data), len(data)-1))
		}
	}
	switch e := ev.(type) {
	case *clrevents.GCStart:
		p.gcs = append(p.gcs, fmt.Sprintf("start#%d/gen%d/reason%d", e.Count, e.Depth, e.Reason))
	case *clrevents.GCEnd:
		p.gcs = append(p.gcs, fmt.Sprintf("end#%d/gen%d", e.Count, e.Depth))
	case *clrevents.ContentionStop:
		p.contentionNs = append(p.contentionNs, e.DurationNs)
	case *clrevents.AllocationSampled:
		p.sampledDelivered++
		if e.ObjectSize == 0 || e.SampledByteOffset >= e.ObjectSize || e.TypeName == "" || e.Address == 0 {
			p.mismatch(fmt.Sprintf("%s: %+v: want a named object with the sampled byte inside it", key, e))
		}
	case *clrevents.GCAllocationTick:
		if p.ticks != nil {
			kb := p.ticks.KeptBytes()
			n, _ := clrevents.AllocationTickBytes(version, data)
			p.ticksDelivered++
			p.keptSum += kb
			switch {
			case kb < n:
				p.mismatch(fmt.Sprintf("a kept tick of %d bytes stands for %d (KeptBytes)", n, kb))
			case p.tickMean == 1 && kb != n:
				p.mismatch(fmt.Sprintf("every tick kept, but one of %d bytes stands for %d", n, kb))
			}
		}
		if e.TypeName == "System.SByte[]" {
			p.sbyteTicks++
			if e.ObjectSize != 128 {
				p.mismatch(fmt.Sprintf("%s: System.SByte[] of 100 bytes has ObjectSize %d, want 128 (24 bytes of header and length, 100 of data, aligned to 8)", key, e.ObjectSize))
			}
		}
	}
	return nil
}

func (p *rtevents) mismatch(s string) {
	if len(p.mismatches) < 20 {
		p.mismatches = append(p.mismatches, s)
	}
}

func (p *rtevents) Shutdown() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	keys := make([]string, 0, len(p.counts))
	for k := range p.counts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(os.Stderr, "rtevents: event %s count=%d stacks=%d\n", k, p.counts[k], p.withStack[k])
	}
	for t, n := range p.exceptions {
		fmt.Fprintf(os.Stderr, "rtevents: exception %s %d\n", t, n)
	}
	fmt.Fprintf(os.Stderr, "rtevents: gcs %s\n", strings.Join(p.gcs, " "))
	fmt.Fprintf(os.Stderr, "rtevents: contention ns %v\n", p.contentionNs)
	fmt.Fprintf(os.Stderr, "rtevents: sbyte[] ticks %d\n", p.sbyteTicks)
	if p.ticks != nil {
		if kb := p.ticks.KeptBytes(); kb != 0 {
			p.mismatch(fmt.Sprintf("KeptBytes outside a kept tick's delivery: %d", kb))
		}
		c := p.ticks.Stats()
		fmt.Fprintf(os.Stderr, "rtevents: tick sampler mean=%d delivered=%d keptbytes=%d seen=%d kept=%d short=%d bytes=%d\n",
			p.tickMean, p.ticksDelivered, p.keptSum, c.Seen, c.Kept, c.Short, c.Bytes)
		fmt.Fprintf(os.Stderr, "rtevents: sampled keep=%g delivered=%d seen=%d kept=%d short=%d\n",
			p.ticks.SampledKeep(), p.sampledDelivered, c.Sampled, c.SampledKept, c.SampledShort)
	}
	for _, m := range p.mismatches {
		fmt.Fprintf(os.Stderr, "rtevents: mismatch %s\n", m)
	}
	for _, e := range p.errs {
		fmt.Fprintf(os.Stderr, "rtevents: error %s\n", e)
	}
	fmt.Fprintf(os.Stderr, "rtevents: done mismatches=%d errors=%d\n", len(p.mismatches), len(p.errs))
	return nil
}

func init() { profiler.Register("{5B1E7C3A-9D24-4F6B-8A0E-2C7D4B9F1E63}", &rtevents{}) }

func main() {}
