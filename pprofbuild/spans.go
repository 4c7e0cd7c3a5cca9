package pprofbuild

import (
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/clrprof/clrprof/profiler"
)

// Span identifies a tracing span: its trace's 16-byte ID and its own
// 8-byte ID, as W3C Trace Context and OpenTelemetry have them.
type Span struct {
	// TraceID is the trace's 16-byte ID; all zero means none.
	TraceID [16]byte
	// SpanID is the span's own 8-byte ID; all zero means none.
	SpanID [8]byte
}

// IsValid says whether both IDs are non-zero.
func (s Span) IsValid() bool { return s.TraceID != [16]byte{} && s.SpanID != [8]byte{} }

// Labels of a sample taken inside a span: the IDs in lowercase hex, the
// names Pyroscope and OpenTelemetry's profilers use.
const (
	LabelTraceID = "trace_id"
	LabelSpanID  = "span_id"
)

// ThreadSpans says which span each managed thread is in, for samplers to
// label the samples they take of it: a tracer in the same library calls
// Enter and Exit (from its callbacks, on any thread) and a sampler calls
// Labels for each thread it samples. Safe for concurrent use; Labels
// takes a read lock and, while no span was ever entered, nothing.
type ThreadSpans struct {
	used atomic.Bool
	mu   sync.RWMutex
	m    map[profiler.ThreadID][]spanEntry
}

type spanEntry struct {
	span   Span
	labels []Label
}

// Spans is the process's ThreadSpans: the one a tracer built with the
// SDK (sample/gotrace, once it exists) writes and sample/contprof's CPU
// and wall samples read.
var Spans = &ThreadSpans{}

// Enter records that thread entered span s (nested in the span it was
// in, if any). An invalid s is ignored.
func (t *ThreadSpans) Enter(thread profiler.ThreadID, s Span) {
	if !s.IsValid() {
		return
	}
	e := spanEntry{s, []Label{{LabelSpanID, hex.EncodeToString(s.SpanID[:])}, {LabelTraceID, hex.EncodeToString(s.TraceID[:])}}}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = map[profiler.ThreadID][]spanEntry{}
	}
	t.m[thread] = append(t.m[thread], e)
	t.used.Store(true)
}

// Exit records that thread left span s, and every span it entered inside
// s and did not exit; it is back in the span it was in before s. Exiting
// a span the thread is not in does nothing.
func (t *ThreadSpans) Exit(thread profiler.ThreadID, s Span) {
	t.mu.Lock()
	defer t.mu.Unlock()
	st := t.m[thread]
	for i := len(st) - 1; i >= 0; i-- {
		if st[i].span == s {
			if i == 0 {
				delete(t.m, thread)
			} else {
				t.m[thread] = st[:i]
			}
			return
		}
	}
}

// Forget forgets thread's spans (the thread is gone:
// ThreadDestroyed).
func (t *ThreadSpans) Forget(thread profiler.ThreadID) {
	if !t.used.Load() {
		return
	}
	t.mu.Lock()
	delete(t.m, thread)
	t.mu.Unlock()
}

// Current is the innermost span thread is in.
func (t *ThreadSpans) Current(thread profiler.ThreadID) (Span, bool) {
	if !t.used.Load() {
		return Span{}, false
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := t.m[thread]
	if len(st) == 0 {
		return Span{}, false
	}
	return st[len(st)-1].span, true
}

// Labels returns the span_id and trace_id labels of the innermost span
// thread is in, nil if none. The slice is shared: do not change it
// (Builder.Add keeps it as it is).
//
// A sampler that suspends the runtime reads a thread's labels while it is
// suspended, in the walk function of [profiler.Info.SnapshotThreads]:
// read after the runtime is resumed, they can be of a later moment than
// the stack (the thread has left the span since).
func (t *ThreadSpans) Labels(thread profiler.ThreadID) []Label {
	if !t.used.Load() {
		return nil
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	st := t.m[thread]
	if len(st) == 0 {
		return nil
	}
	return st[len(st)-1].labels
}
