//go:build cgo

package instr_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/profiler"
)

// spanLogger records the calls of Shop.Orders::Price with deferred Go
// hooks: the calls only leave a record (with their times), and the hooks
// build the spans afterwards on a goroutine of the SDK.
type spanLogger struct {
	goTracer // the instr plumbing of ExampleGoHooks
}

func (p *spanLogger) Initialize(info *profiler.Info) error {
	targets, err := target.ParseList("Shop!Shop.Orders::Price(System.Int32)")
	if err != nil {
		return err
	}
	started := map[uint64]time.Time{} // the hooks run one at a time: no lock
	var next uint64
	hooks := &instr.GoHooks{
		Args: true, Deferred: true, Timestamps: true,
		Enter: func(c *instr.Call) uint64 {
			next++
			started[next] = c.Time() // when the call was entered, not now
			return next
		},
		Exit: func(r *instr.Return) {
			start := started[r.State()]
			delete(started, r.State())
			fmt.Fprintf(os.Stderr, "Price(thread %d) %v..%v returned %s\n", r.Thread(), start, r.Time(), r.Value())
		},
	}
	if p.in, err = instr.New(info, instr.Config{Rules: []instr.Rule{{Targets: targets, Go: hooks}}}); err != nil {
		return err
	}
	return info.SetEventMask(p.in.EventMask())
}

// Shutdown waits (briefly) for the exits of task-returning calls whose
// tasks completed as Main returned, delivers what is still queued and says
// what was lost.
func (p *spanLogger) Shutdown() error {
	wait, stop := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if n, _ := instr.WaitTaskEnds(wait); n > 0 {
		fmt.Fprintf(os.Stderr, "%d calls' tasks not complete: not traced\n", n)
	}
	stop()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := instr.FlushDeferred(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "not all calls delivered:", err)
	}
	st := instr.DeferredStats()
	fmt.Fprintf(os.Stderr, "%d calls traced, %d dropped (their thread's ring was full)\n", st.Delivered, st.Dropped)
	return nil
}

// GoHooks.Deferred: the wrapped method appends a record of the call to a
// ring of its thread (in C) and goes on; the hooks run later, in each
// thread's order, and may lose calls under overload (counted).
func ExampleGoHooks_deferred() {
	_ = profiler.Register("{5B1E7A42-3C9D-4F06-8E27-A4D1C6B9F315}", &spanLogger{})
}
