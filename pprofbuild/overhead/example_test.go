package overhead_test

import (
	"fmt"
	"time"

	"github.com/clrprof/clrprof/pprofbuild/overhead"
)

// A sampler accounts for its snapshots and its own CPU time, its
// callbacks time themselves, and the output at exit is timed; the report
// goes on the profiler's last log line.
func ExampleAccount() {
	var cost overhead.Account
	cost.Start() // at Initialize

	// The sampling goroutine: its thread's CPU time is the sampler's.
	done := make(chan struct{})
	go func() {
		defer close(done)
		cost.Thread(func() {
			for i := 0; i < 3; i++ {
				// snap, err := info.Snapshot(64); cost.Held(snap.Cost())
				cost.Held(200 * time.Microsecond)
			}
		})
	}()
	<-done

	// A callback on the application's thread.
	func() {
		defer cost.Callback(time.Now())
		// walk the stack, record the sample
	}()

	// At Shutdown.
	cost.Output(func() { /* write the profiles */ })
	r := cost.Report()
	fmt.Println(r.Snapshots, r.Held, r.CallbackCount)
	// Output: 3 600µs 1
}
