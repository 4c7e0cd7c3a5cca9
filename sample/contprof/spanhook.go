//go:build contprof_spantest

package main

// Test scaffolding, compiled only with the build tag contprof_spantest
// (TestContprofSpans): a stand-in for a tracer in the same library
// (sample/gotrace, to come), driven by the app. An exception of type
// SpanEnter thrown by a thread says that it enters the span testSpan,
// one of type SpanExit that it leaves it; contprof's CPU and wall samples
// of that thread in between must carry the span's labels.

import (
	"os"
	"time"

	"github.com/clrprof/clrprof/pprofbuild"
)

var testSpan = pprofbuild.Span{
	TraceID: [16]byte{0x0a, 0xf7, 0x65, 0x19, 0x16, 0xcd, 0x43, 0xdd, 0x84, 0x48, 0xeb, 0x21, 0x1c, 0x80, 0x31, 0x9c},
	SpanID:  [8]byte{0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31},
}

func init() {
	// SPANTEST_SNAPSHOT_DELAY (a duration) delays the sampler after each
	// snapshot (TestContprofSpanEdges).
	if d, err := time.ParseDuration(os.Getenv("SPANTEST_SNAPSHOT_DELAY")); err == nil && d > 0 {
		afterSnapshot = func() { time.Sleep(d) }
	}
	exceptionHook = func(p *contprof, typ string) {
		tid, err := p.info.GetCurrentThreadID()
		if err != nil {
			logf("spantest: GetCurrentThreadID: %v", err)
			return
		}
		switch typ {
		case "SpanEnter":
			pprofbuild.Spans.Enter(tid, testSpan)
		case "SpanExit":
			pprofbuild.Spans.Exit(tid, testSpan)
		}
	}
}
