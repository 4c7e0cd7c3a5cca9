//go:build contprof_jitlog

package main

import (
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/sample/jitlog/jitlog"
)

// Built with -tags contprof_jitlog, the library runs jitlog beside
// contprof: two profilers, one library, one Go runtime.
var _ = addWith(func() profiler.Callback { return jitlog.New() })
