package pprofbuild_test

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
	"github.com/google/pprof/profile"
)

// A Builder aggregates samples by stack and labels and builds a pprof
// profile. In a profiler the stacks are FunctionIDs (Add) named by a Names
// on the profiler's Info; AddNamed takes frames already named, and the
// FunctionID 0 (a native frame) is named without asking the runtime, so
// this runs anywhere.
func ExampleBuilder() {
	b := pprofbuild.NewBuilder([]pprofbuild.SampleType{{Type: "cpu", Unit: "nanoseconds"}}, "cpu", 1000)
	thread := []pprofbuild.Label{{Key: "thread", Value: "worker"}}
	// Frames innermost first.
	b.AddNamed([]string{"Shop.Cart.Total", "Shop.Program.Main"}, thread, 30_000_000)
	b.AddNamed([]string{"Shop.Cart.Total", "Shop.Program.Main"}, thread, 10_000_000) // same stack and labels: summed
	b.AddNamed([]string{"Shop.Cart.Add", "Shop.Program.Main"}, nil, 20_000_000)
	b.Add([]profiler.FunctionID{0}, nil, 5_000_000)
	fmt.Println(b.Len(), "stacks")

	names := pprofbuild.NewNames(nil) // no runtime: only FunctionID 0 can be named
	p := b.Build(names, pprofbuild.Meta{Comments: []string{"example"}}, true)

	// Write gives the gzip-compressed protocol buffer `go tool pprof` reads.
	var buf bytes.Buffer
	if err := pprofbuild.Write(&buf, p); err != nil {
		fmt.Println(err)
		return
	}
	q, err := profile.Parse(&buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for _, s := range q.Sample {
		var frames []string
		for _, l := range s.Location {
			frames = append(frames, l.Line[0].Function.Name)
		}
		lines = append(lines, fmt.Sprintf("%v %s %v", s.Value, strings.Join(frames, " < "), s.Label))
	}
	sort.Strings(lines)
	fmt.Println(q.SampleType[0].Type, q.Comments)
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println(b.Len(), "stacks after the reset")
	// Output:
	// 3 stacks
	// cpu [example]
	// [20000000] Shop.Cart.Add < Shop.Program.Main map[]
	// [40000000] Shop.Cart.Total < Shop.Program.Main map[thread:[worker]]
	// [5000000] [native code] map[]
	// 0 stacks after the reset
}

// A LiveHeap tracks sampled objects until a garbage collection frees them
// and adds the live ones to a Builder as a heap profile (inuse_objects,
// inuse_space). In a profiler the objects come from an alloc.Recorder's
// batches (Add) or from the runtime's allocation ticks (AddObject), and the
// GC callbacks are forwarded to GCStarted, Moved, Surviving and GCFinished.
//
// Here the callbacks are fed by hand and there is no runtime (a nil Info):
// GCStarted cannot ask the generation of each object, counts that in
// GenErrors and takes every object as collected, so the moved and
// surviving ranges alone decide which objects live.
func ExampleLiveHeap() {
	h := pprofbuild.NewLiveHeap(nil, 512<<10, 1000)
	// An allocation tick's object stands for weight objects of its size.
	h.AddObject(0x1000, "Shop.Order", 48, 100, nil)
	h.AddObject(0x2000, "Shop.Line[]", 64, 50, nil)
	h.AddObject(0x3000, "System.String", 32, 10, nil)

	h.GCStarted([]bool{true})                                                       // GarbageCollectionStarted: generation 0 collected
	h.Surviving([]profiler.ObjectID{0x1000}, []uint64{48})                          // SurvivingReferences2
	h.Moved([]profiler.ObjectID{0x2000}, []profiler.ObjectID{0x9000}, []uint64{64}) // MovedReferences2
	h.GCFinished()                                                                  // the string is dead
	s := h.Stats()
	fmt.Printf("tracked=%d freed=%d gcs=%d generation_errors=%d\n", s.Tracked, s.Freed, s.GCs, s.GenErrors)

	b := pprofbuild.NewBuilder(pprofbuild.LiveHeapTypes, "inuse_space", 1000)
	h.AddTo(b, pprofbuild.NewNames(nil))
	p := b.Build(pprofbuild.NewNames(nil), pprofbuild.Meta{}, true)
	var lines []string
	for _, smp := range p.Sample {
		lines = append(lines, fmt.Sprintf("%s: %d objects, %d bytes", smp.Label["object"][0], smp.Value[0], smp.Value[1]))
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// tracked=2 freed=1 gcs=1 generation_errors=3
	// Shop.Line[]: 50 objects, 3200 bytes
	// Shop.Order: 100 objects, 4800 bytes
}
