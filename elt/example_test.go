package elt_test

import (
	"fmt"

	"github.com/clrprof/clrprof/elt"
	"github.com/clrprof/clrprof/profiler"
)

// callCounter counts calls per function with the fast enter/leave hooks.
type callCounter struct {
	profiler.Base
	rec   *elt.Recorder
	calls map[profiler.FunctionID]int // touched only by the Batch goroutine
}

func (c *callCounter) Initialize(info *profiler.Info) error {
	c.calls = map[profiler.FunctionID]int{}
	rec, err := elt.NewRecorder(info, elt.Options{
		Batch: func(b elt.Batch) {
			for _, e := range b.Events {
				if e.Kind == elt.Enter {
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

// A profiler that counts calls with elt.NewRecorder: register it from an init
// function of a main package built with -buildmode=c-shared.
func ExampleNewRecorder() {
	_ = profiler.Register("{0E6B1A52-7C3D-4F98-A2B1-C4D5E6F70819}", &callCounter{})
}

// elt.Kind values print as their names.
func ExampleKind() {
	fmt.Println(elt.Enter, elt.Leave, elt.Tailcall, elt.Unwind)
	// Output: enter leave tailcall unwind
}
