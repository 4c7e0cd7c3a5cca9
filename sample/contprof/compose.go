package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
)

// with lists the profilers built into this library beside contprof: files
// behind build tags add them (with_jitlog.go: -tags contprof_jitlog), and
// the library then registers contprof and them composed
// (profiler.Compose), contprof first. Each keeps its own event mask and
// callbacks.
var with []func() profiler.Callback

// addWith is how such a file adds its profiler (from a package-level
// variable's initializer, which runs before init).
//
//lint:ignore U1000 called by the build-tagged files (with_jitlog.go)
func addWith(f func() profiler.Callback) bool {
	with = append(with, f)
	return true
}

// composed is contprof alone, or contprof and the profilers of with.
func composed(c *contprof) profiler.Callback {
	if len(with) == 0 {
		return c
	}
	members := []profiler.Callback{c}
	for _, f := range with {
		members = append(members, f())
	}
	comp, err := profiler.Compose(members...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "contprof: running alone:", err)
		return c
	}
	return comp
}
