// Package check is the little reporting kit of the conformance profilers:
// failures are counted and printed as they happen ("FAIL: ..."), and Done
// prints upstream's verdict line at shutdown.
package check

import (
	"fmt"
	"os"
	"sync/atomic"
)

// Pass is the line a scenario's profiler prints when every check held.
const Pass = "PROFILER TEST PASSES"

var failures atomic.Int64

// Failf records a failed check and prints it on stdout.
func Failf(format string, args ...any) {
	failures.Add(1)
	fmt.Fprintf(os.Stdout, "FAIL: "+format+"\n", args...)
}

// That records a failed check unless cond holds.
func That(cond bool, format string, args ...any) {
	if !cond {
		Failf(format, args...)
	}
}

// Failures is how many checks failed so far.
func Failures() int64 { return failures.Load() }

// Logf prints an informational line on stdout.
func Logf(format string, args ...any) {
	fmt.Fprintf(os.Stdout, format+"\n", args...)
}

// Done prints Pass if no check failed and the extra final checks (each a
// failure message, empty when the check held) are all empty.
func Done(final ...string) {
	for _, f := range final {
		if f != "" {
			Failf("%s", f)
		}
	}
	if failures.Load() == 0 {
		fmt.Fprintln(os.Stdout, Pass)
	} else {
		fmt.Fprintf(os.Stdout, "PROFILER TEST FAILS: %d failed checks\n", failures.Load())
	}
	os.Stdout.Sync()
}
