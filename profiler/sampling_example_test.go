package profiler_test

import (
	"fmt"

	"github.com/clrprof/clrprof/profiler"
)

// callCounter counts calls per function with the fast enter/leave hooks.
type callCounter struct {
	profiler.Base
	rec   *profiler.ELTRecorder
	calls map[profiler.FunctionID]int // touched only by the Batch goroutine
}

func (c *callCounter) Initialize(info *profiler.Info) error {
	c.calls = map[profiler.FunctionID]int{}
	rec, err := info.EnableELT(profiler.ELTOptions{
		Batch: func(b profiler.ELTBatch) {
			for _, e := range b.Events {
				if e.Kind == profiler.ELTEnter {
					c.calls[e.Function]++
				}
			}
		},
	})
	c.rec = rec
	return err
}

func (c *callCounter) Shutdown() error {
	if c.rec != nil {
		c.rec.Close() // the last batch is delivered before Close returns
		fmt.Println("functions called:", len(c.calls))
	}
	return nil
}

// A profiler that counts calls with Info.EnableELT: register it from an init
// function of a main package built with -buildmode=c-shared.
func ExampleInfo_EnableELT() {
	_ = profiler.Register("{0E6B1A52-7C3D-4F98-A2B1-C4D5E6F70819}", &callCounter{})
}

// The weight of an allocation sampled at a mean of 512 KiB: a 64-byte
// object stands for about 8193 such allocations, a 1 MiB one for itself.
func ExampleAllocSampleWeight() {
	fmt.Printf("%.0f %.2f\n", profiler.AllocSampleWeight(64, 512<<10), profiler.AllocSampleWeight(1<<20, 512<<10))
	// Output: 8193 1.16
}

// ELTKind values print as their names.
func ExampleELTKind() {
	fmt.Println(profiler.ELTEnter, profiler.ELTLeave, profiler.ELTTailcall, profiler.ELTUnwind)
	// Output: enter leave tailcall unwind
}
