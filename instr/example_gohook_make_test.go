package instr_test

import (
	"fmt"
	"time"

	"github.com/clrprof/clrprof/instr"
)

// priceHooks are the hooks under test: each call of a Price(int) method a
// line with its argument, its duration and how it ended.
func priceHooks(out *[]string) *instr.GoHooks {
	started := map[uint64]time.Time{}
	var next uint64
	return &instr.GoHooks{
		Args: true, Deferred: true, Timestamps: true,
		Enter: func(c *instr.Call) uint64 {
			next++
			started[next] = c.Time()
			return next
		},
		Exit: func(r *instr.Return) {
			took := r.Time().Sub(started[r.State()])
			delete(started, r.State())
			if r.Exception() {
				*out = append(*out, fmt.Sprintf("thread %d: threw %s after %v", r.Thread(), r.ExceptionType(), took))
				return
			}
			*out = append(*out, fmt.Sprintf("thread %d: returned %s after %v", r.Thread(), r.Value(), took))
		},
	}
}

// A hook's unit test: NewCall and NewReturn make what the SDK hands the
// hooks, and the Value constructors the arguments and return values, so
// that the hooks run without a runtime.
func ExampleNewCall() {
	var lines []string
	h := priceHooks(&lines)
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)

	s := h.Enter(instr.NewCall(instr.CallFields{Method: 3, Thread: 42, Args: []instr.Value{instr.IntValue("System.Int32", 7)}, Time: t0}))
	h.Exit(instr.NewReturn(instr.ReturnFields{Method: 3, Thread: 42, State: s, Value: instr.FloatValue("System.Double", 9.5),
		Time: t0.Add(1500 * time.Microsecond)}))

	s = h.Enter(instr.NewCall(instr.CallFields{Method: 3, Thread: 43, Args: []instr.Value{instr.IntValue("System.Int32", -1)}, Time: t0}))
	h.Exit(instr.NewReturn(instr.ReturnFields{Method: 3, Thread: 43, State: s, Value: instr.FloatValue("System.Double", 0),
		Exception: true, ExceptionType: "System.ArgumentOutOfRangeException", Time: t0.Add(20 * time.Microsecond)}))

	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// thread 42: returned 9.5 after 1.5ms
	// thread 43: threw System.ArgumentOutOfRangeException after 20µs
}
