//go:build contprof_gotrace

package main

import (
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/sample/gotrace/gotrace"
)

// Built with -tags contprof_gotrace, the library runs the gotrace tracer
// beside contprof and has it record its spans in pprofbuild.Spans: the CPU
// and wall samples contprof takes of a thread inside a span carry the
// span's span_id and trace_id (GOTRACE_TARGETS names the traced methods).
var _ = addWith(func() profiler.Callback { return gotrace.New(gotrace.Options{Spans: pprofbuild.Spans}) })
