// Package gotrace is the gotrace sample's tracer as a package, so that a
// library can run it beside other profilers (profiler.Compose; see
// sample/contprof's with_gotrace.go). The methods that GOTRACE_TARGETS
// names call Go hooks (instr.GoHooks); each call becomes an OpenTelemetry
// span, exported through OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set, and
// a JSON line. sample/gotrace's package doc describes the environment, the
// lines and the spans.
//
// With Options.Spans set, the tracer also records the span each managed
// thread is in there (ThreadSpans.Enter when a call starts, Exit when it
// ends, keyed by the managed thread's ID), so that a sampler in the same
// library labels the samples it takes inside a span with the span's IDs:
// sample/contprof built with -tags contprof_gotrace. Without an OTLP
// endpoint the spans are not exported, but each call still gets a span ID
// (random; the trace ID is its outermost enclosing call's), written in its
// JSON line.
package gotrace

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/tracecontext"
)

// capacity is how many methods the summary counts in its array (ids
// beyond go to a map).
const capacity = 1 << 16

type method struct {
	json  []byte // JSON-quoted TYPE::METHOD
	name  string
	attrs []attribute.KeyValue
}

type frame struct {
	id     int32
	serial uint32 // the call's number in its stack (Enter's state names it)
	depth  int    // instrumented calls on the thread's stack at Enter, this one included
	start  time.Time
	span   trace.Span
	ids    pprofbuild.Span   // the span's IDs (zero: no span)
	tid    profiler.ThreadID // the managed thread it was entered on (0: not recorded in spans)
}

// stack holds the calls in progress that were entered on one thread,
// innermost last. A call usually exits on the thread it entered on, from
// the top; a runtime-async call that suspended at an await exits on
// whichever thread runs its continuation: its Exit finds the frame through
// the state Enter returned (the stack's id and the frame's serial) and
// takes it out of the stack it is in. The lock is uncontended but for
// those exits (and for a thread whose runtime-async calls go synchronous
// while its other calls are delivered deferred).
type stack struct {
	mu     sync.Mutex
	id     uint32
	tid    uint64
	serial uint32
	dead   bool // taken out of the maps: get another
	frames []frame
}

// CLSID is the class ID of the gotrace sample library (sample/gotrace).
const CLSID = "{8F2D4C61-7B3E-4A90-B5D2-1E6C9A3F7D08}"

// Options configure a Tracer.
type Options struct {
	// Spans, when not nil, is told which span each managed thread is in
	// (pprofbuild.Spans is the one sample/contprof reads). Each call then
	// costs one more ICorProfilerInfo::GetCurrentThreadID and the
	// ThreadSpans' lock twice.
	Spans *pprofbuild.ThreadSpans
}

// New returns a tracer configured by o and the environment (read at
// Initialize).
func New(o Options) *Tracer { return &Tracer{spans: o.Spans} }

// Tracer is the gotrace profiler.
type Tracer struct {
	profiler.Base
	info     *profiler.Info
	in       *instr.Instrumenter
	summary  bool
	deferred bool // GOTRACE_DEFERRED=1: deferred Go hooks
	activity bool // root spans are children of the caller's current activity (GOTRACE_ACTIVITY)
	mark     bool // an undecided activity whose call is traced is marked recorded (GOTRACE_MARK)
	start    time.Time
	otlp     *otlp // nil: no spans exported
	spans    *pprofbuild.ThreadSpans

	methods sync.Map // int32 -> *method
	stacks  sync.Map // uint64 (tid) -> *stack
	byID    sync.Map // uint32 (stack.id) -> *stack
	nstacks atomic.Int64
	stackID atomic.Uint32

	counters []atomic.Int64 // 4 per method id: calls, total ns, exceptions, entries

	badParent atomic.Int64 // current activities whose Id is no traceparent: root spans
	badState  atomic.Int64 // tracestates dropped (invalid)
	marked    atomic.Int64 // undecided activities marked recorded

	mu   sync.Mutex
	w    *bufio.Writer
	file *os.File
	slow map[int32]*[3]int64
	line []byte
	done bool
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "gotrace: "+format+"\n", args...)
}

func (p *Tracer) Initialize(info *profiler.Info) error {
	p.info = info
	p.start = time.Now()
	spec := os.Getenv("GOTRACE_TARGETS")
	if strings.TrimSpace(spec) == "" {
		err := errors.New("GOTRACE_TARGETS is empty: nothing to trace")
		logf("%v", err)
		return err
	}
	targets, err := target.ParseList(spec)
	if err != nil {
		logf("%v", err)
		return err
	}
	p.summary = os.Getenv("GOTRACE_SUMMARY") == "1"
	if endpointSet() {
		if p.otlp, err = newOTLP(info); err != nil {
			logf("OTLP: %v", err)
			return err
		}
	}
	var out io.Writer = os.Stderr
	if path := os.Getenv("GOTRACE_OUTPUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			logf("%v", err)
			return err
		}
		p.file, out = f, f
	} else if p.otlp != nil && !p.summary {
		out = io.Discard
	}
	p.w = bufio.NewWriterSize(out, 1<<16)
	p.slow = map[int32]*[3]int64{}
	if p.summary {
		p.counters = make([]atomic.Int64, 4*capacity)
	}
	p.deferred = os.Getenv("GOTRACE_DEFERRED") == "1"
	if p.deferred && p.spans != nil {
		// The hooks run on a goroutine, not on the app's threads: they
		// cannot tell a profiler beside them which thread is in a span.
		logf("GOTRACE_DEFERRED=1: the spans are not shared with the profiler beside gotrace (deferred hooks do not run on the app's threads)")
		p.spans = nil
	}
	hooks := &instr.GoHooks{Enter: p.enter, Exit: p.exit, Deferred: p.deferred, Timestamps: p.deferred}
	if p.otlp != nil && os.Getenv("GOTRACE_ACTIVITY") != "0" {
		// The caller's current activity (an ASP.NET Core request's, say)
		// is the parent of a root span: read at every call's entry.
		// Optional: a framework without DiagnosticSource, or Activity
		// without TraceStateString (before .NET Core 3.0), still traces.
		p.activity = true
		// Its trace and span IDs and flags, not its Id: the Id is made
		// once, on its first read, with the flags of then, and what the
		// app propagates is that string; read here before the activity is
		// marked recorded (below), it would say "not sampled" for good.
		// Its parent's span ID and its parent's own (null when the parent
		// is not an activity of this process) tell a remote parent.
		hooks.Members = activityMembers()
		if !p.deferred && os.Getenv("GOTRACE_MARK") != "0" {
			// An undecided activity (no listener sampled it) whose call
			// is traced is marked recorded, so that the traceparent the
			// app sends on (HttpClient's) says the trace is sampled and
			// the next service records its part. Optional: .NET Core
			// 2.x's Activity has no trace flags. A deferred Enter runs
			// too late to act.
			p.mark = true
			hooks.Actions = []instr.Action{{Arg: instr.Static, Type: instr.ActivityType, Path: "Current",
				Method: "set_ActivityTraceFlags", Kinds: []instr.ParamKind{instr.ParamInt32}, Optional: true}}
		}
	}
	p.in, err = instr.New(info, instr.Config{
		Rules: []instr.Rule{{Targets: targets, Go: hooks}},
		ReJIT: true,
	})
	if err != nil {
		logf("%v", err)
		return err
	}
	var names []string
	for _, t := range targets {
		names = append(names, t.String())
	}
	mode := "a line per call"
	if p.summary {
		mode = "a summary at shutdown"
	} else if out == io.Discard {
		mode = "no lines"
	}
	dest := "no spans (OTEL_EXPORTER_OTLP_ENDPOINT is not set)"
	if p.otlp != nil {
		dest = "spans to " + p.otlp.String()
	}
	if p.deferred {
		mode += "; deferred hooks"
	}
	logf("tracing %s (%s; %s)", strings.Join(names, ", "), mode, dest)
	mask := p.in.EventMask()
	if p.spans != nil {
		mask |= profiler.MonitorThreads // ThreadDestroyed
	}
	return info.SetEventMask(mask)
}

// ThreadDestroyed forgets the spans a thread that ends inside them was
// in (Options.Spans), so that a thread given its ID later is not taken to
// be in them.
func (p *Tracer) ThreadDestroyed(t profiler.ThreadID) error {
	if p.spans != nil {
		p.spans.Forget(t)
	}
	return nil
}

func (p *Tracer) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
}

func (p *Tracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *Tracer) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *Tracer) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *Tracer) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, tok, f, hr)
}

func (p *Tracer) method(id int32) *method {
	if m, ok := p.methods.Load(id); ok {
		return m.(*method)
	}
	s := fmt.Sprintf("<unknown method %d>", id)
	if m, ok := p.in.Method(id); ok {
		s = m.Name
		if i := strings.IndexByte(s, '!'); i >= 0 {
			s = s[i+1:]
		}
	}
	q, _ := json.Marshal(s)
	m := &method{json: q, name: s}
	typ, fn := s, ""
	if i := strings.LastIndex(s, "::"); i >= 0 {
		typ, fn = s[:i], s[i+2:]
	}
	m.attrs = []attribute.KeyValue{attribute.String("code.namespace", typ), attribute.String("code.function", fn)}
	v, _ := p.methods.LoadOrStore(id, m)
	return v.(*method)
}

func (p *Tracer) stack(tid uint64) *stack {
	if s, ok := p.stacks.Load(tid); ok {
		return s.(*stack)
	}
	s := &stack{id: p.stackID.Add(1), tid: tid}
	p.byID.Store(s.id, s)
	if v, loaded := p.stacks.LoadOrStore(tid, s); loaded {
		p.byID.Delete(s.id)
		return v.(*stack)
	}
	p.nstacks.Add(1)
	return s
}

// The members of the current activity read at each call's entry, in
// order (GOTRACE_ACTIVITY).
const (
	memTraceID = iota
	memTraceState
	memSpanID
	memRecorded
	memParentSpanID
	memParentsOwn
)

func activityMembers() []instr.Member {
	ms := []instr.Member{
		memTraceID:      instr.CurrentActivity("TraceId"),
		memTraceState:   instr.CurrentActivity("TraceStateString"),
		memSpanID:       instr.CurrentActivity("SpanId"),
		memRecorded:     instr.CurrentActivity("Recorded"),
		memParentSpanID: instr.CurrentActivity("ParentSpanId"),
		memParentsOwn:   instr.CurrentActivity("Parent.SpanId"),
	}
	// Optional: a framework without DiagnosticSource, or an Activity
	// without trace IDs (.NET Core 2.x), still traces.
	for i := range ms {
		ms[i].Optional = true
	}
	return ms
}

// currentActivity returns the span context of the caller's current
// activity (invalid: none, or one whose IDs are not W3C's), whether it is
// undecided (not recorded, and its parent not remote), and whether its
// tracestate was invalid (dropped).
func currentActivity(c *instr.Call) (sc trace.SpanContext, undecided, badState bool, ok bool) {
	tid := c.Member(memTraceID)
	if tid.IsNull() {
		return sc, false, false, false
	}
	flags := "00"
	if c.Member(memRecorded).Bool() {
		flags = "01"
	}
	sc, err := tracecontext.Extract("00-"+tid.Str()+"-"+c.Member(memSpanID).Str()+"-"+flags, c.Member(memTraceState).Str())
	if !sc.IsValid() {
		return sc, false, false, true
	}
	ps := c.Member(memParentSpanID)
	remote := !ps.IsNull() && ps.Str() != "0000000000000000" && c.Member(memParentsOwn).IsNull()
	return sc, !sc.IsSampled() && !remote, err != nil, true
}

// enter runs on the calling thread (or, deferred, on the drain for that
// thread). It returns the call's state: its stack's id and its serial
// there, never 0.
func (p *Tracer) enter(c *instr.Call) uint64 {
	st := p.stack(c.Thread())
	st.mu.Lock()
	for st.dead {
		st.mu.Unlock()
		st = p.stack(c.Thread())
		st.mu.Lock()
	}
	defer st.mu.Unlock()
	st.serial++
	if st.serial == 0 {
		st.serial = 1
	}
	f := frame{id: c.Method(), serial: st.serial, depth: len(st.frames) + 1, start: c.Time()} // deferred: the time recorded in the call
	if f.start.IsZero() {
		f.start = time.Now()
	}
	if p.otlp != nil {
		ctx := context.Background()
		undecided := false
		if n := len(st.frames); n > 0 && st.frames[n-1].span != nil {
			ctx = trace.ContextWithSpan(ctx, st.frames[n-1].span)
		} else if p.activity {
			// An activity with a hierarchical Id (.NET Core 3.x by
			// default) has no W3C trace ID: the span is then a root.
			if sc, undec, badState, ok := currentActivity(c); sc.IsValid() {
				if undec {
					// Not sampled, and not by a remote parent: no
					// listener decided (an app without one makes its
					// activities so, for logging, say). The span is
					// recorded, as a root would be by default, and the
					// activity marked recorded (ActivityTraceFlags) so
					// that what the app propagates says so.
					sc = sc.WithTraceFlags(sc.TraceFlags().WithSampled(true))
					undecided = true
				}
				ctx = trace.ContextWithRemoteSpanContext(ctx, sc)
				if badState {
					p.badState.Add(1)
				}
			} else if ok {
				p.badParent.Add(1)
			}
		}
		m := p.method(c.Method())
		_, f.span = p.otlp.tracer.Start(ctx, m.name, trace.WithTimestamp(f.start),
			trace.WithAttributes(append(m.attrs, attribute.Int64("thread.id", int64(c.Thread())))...))
		sc := f.span.SpanContext()
		if undecided && p.mark && sc.IsSampled() {
			if err := c.Act(0, 1); err == nil {
				p.marked.Add(1)
			}
		}
		f.ids = pprofbuild.Span{TraceID: sc.TraceID(), SpanID: sc.SpanID()}
	}
	if p.spans != nil {
		p.enterSpans(st, &f)
	}
	st.frames = append(st.frames, f)
	if p.summary && c.Method() >= 0 && c.Method() < capacity {
		p.counters[4*c.Method()+3].Add(1)
	}
	return uint64(st.id)<<32 | uint64(f.serial)
}

// take removes the frame of the call whose Enter returned state from the
// stack it is in: the exiting thread's (usually on top), or for a call
// that resumed elsewhere the stack of the thread it entered on.
func (p *Tracer) take(tid, state uint64) (frame, bool) {
	id, serial := uint32(state>>32), uint32(state)
	if state == 0 {
		return frame{}, false
	}
	var st *stack
	if s, ok := p.stacks.Load(tid); ok && s.(*stack).id == id {
		st = s.(*stack)
	} else if s, ok := p.byID.Load(id); ok {
		st = s.(*stack)
	} else {
		return frame{}, false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	for i := len(st.frames) - 1; i >= 0; i-- {
		if st.frames[i].serial != serial {
			continue
		}
		f := st.frames[i]
		copy(st.frames[i:], st.frames[i+1:])
		st.frames[len(st.frames)-1] = frame{}
		st.frames = st.frames[:len(st.frames)-1]
		if len(st.frames) == 0 && p.nstacks.Load() > 4096 {
			// Bound the per-thread state: threads die without telling Go.
			st.dead = true
			p.stacks.CompareAndDelete(st.tid, st)
			p.byID.Delete(st.id)
			p.nstacks.Add(-1)
		}
		return f, true
	}
	return frame{}, false
}

// enterSpans gives f IDs if it has none (spans are not exported: random
// ones, the trace ID of the enclosing call's span, a new one for an
// outermost call) and records that the calling managed thread is in it. A
// thread the runtime does not know as managed is not recorded.
func (p *Tracer) enterSpans(st *stack, f *frame) {
	if !f.ids.IsValid() {
		if n := len(st.frames); n > 0 && st.frames[n-1].ids.IsValid() {
			f.ids.TraceID = st.frames[n-1].ids.TraceID
		} else {
			for f.ids.TraceID == ([16]byte{}) {
				binary.LittleEndian.PutUint64(f.ids.TraceID[:8], rand.Uint64())
				binary.LittleEndian.PutUint64(f.ids.TraceID[8:], rand.Uint64())
			}
		}
		for f.ids.SpanID == ([8]byte{}) {
			binary.LittleEndian.PutUint64(f.ids.SpanID[:], rand.Uint64())
		}
	}
	tid, err := p.info.GetCurrentThreadID()
	if err != nil || tid == 0 {
		return
	}
	f.tid = tid
	p.spans.Enter(tid, f.ids)
}

func (p *Tracer) exit(r *instr.Return) {
	end := r.Time()
	if end.IsZero() {
		end = time.Now()
	}
	f, ok := p.take(r.Thread(), r.State())
	if !ok {
		// Enter did not run for this call (it panicked, or the hooks were
		// installed while the call was running): nothing to pair with.
		return
	}
	n := f.depth
	if f.tid != 0 {
		p.spans.Exit(f.tid, f.ids)
	}
	dur := end.Sub(f.start)
	if f.span != nil {
		if r.Exception() {
			f.span.SetStatus(codes.Error, r.ExceptionType())
			f.span.AddEvent("exception", trace.WithTimestamp(end),
				trace.WithAttributes(attribute.String("exception.type", r.ExceptionType())))
		}
		f.span.End(trace.WithTimestamp(end))
	}
	if p.summary {
		if id := r.Method(); id >= 0 && id < capacity {
			p.counters[4*id].Add(1)
			p.counters[4*id+1].Add(int64(dur))
			if r.Exception() {
				p.counters[4*id+2].Add(1)
			}
			return
		}
		p.mu.Lock()
		c := p.slow[r.Method()]
		if c == nil {
			c = new([3]int64)
			p.slow[r.Method()] = c
		}
		c[0]++
		c[1] += int64(dur)
		if r.Exception() {
			c[2]++
		}
		p.mu.Unlock()
		return
	}
	m := p.method(r.Method())
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	b := append(p.line[:0], `{"method":`...)
	b = append(b, m.json...)
	b = append(b, `,"thread":`...)
	b = strconv.AppendUint(b, r.Thread(), 10)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, `,"start_ns":`...)
	b = strconv.AppendInt(b, int64(f.start.Sub(p.start)), 10)
	b = append(b, `,"dur_ns":`...)
	b = strconv.AppendInt(b, int64(dur), 10)
	if f.ids.IsValid() {
		b = append(b, `,"trace_id":"`...)
		b = hex.AppendEncode(b, f.ids.TraceID[:])
		b = append(b, `","span_id":"`...)
		b = hex.AppendEncode(b, f.ids.SpanID[:])
		b = append(b, '"')
	}
	b = append(b, `,"exception":`...)
	if !r.Exception() {
		b = append(b, "null"...)
	} else {
		q, _ := json.Marshal(r.ExceptionType())
		b = append(b, q...)
	}
	b = append(b, "}\n"...)
	p.line = b
	p.w.Write(b)
}

func (p *Tracer) Shutdown() error {
	// Exits of task-returning calls still running on the threads that
	// completed their tasks: 200 ms for them (a task not complete by then
	// is not traced, and said so).
	wctx, wcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if n, _ := instr.WaitTaskEnds(wctx); n > 0 {
		logf("shutdown: %d calls' tasks not complete: not traced", n)
	}
	wcancel()
	if p.deferred {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err := instr.FlushDeferred(ctx)
		cancel()
		st := instr.DeferredStats()
		logf("deferred hooks: %d calls delivered, %d dropped (their thread's ring was full: not traced, not counted in the output)", st.Delivered, st.Dropped)
		if err != nil {
			logf("deferred hooks: not all delivered at shutdown: %v", err)
		}
	}
	rep := p.in.Report()
	var running []string
	p.mu.Lock()
	p.done = true
	if p.summary {
		type row struct {
			id             int32
			name           []byte
			calls, ns, exc int64
		}
		var rows []row
		for _, m := range rep.Instrumented {
			r := row{id: m.ID, name: p.method(m.ID).json}
			if m.ID >= 0 && m.ID < capacity {
				r.calls = p.counters[4*m.ID].Load()
				r.ns = p.counters[4*m.ID+1].Load()
				r.exc = p.counters[4*m.ID+2].Load()
				if n := p.counters[4*m.ID+3].Load() - r.calls; n > 0 {
					running = append(running, fmt.Sprintf("%s (%d)", p.method(m.ID).name, n))
				}
			}
			if c := p.slow[m.ID]; c != nil {
				r.calls, r.ns, r.exc = r.calls+c[0], r.ns+c[1], r.exc+c[2]
			}
			rows = append(rows, r)
		}
		sort.Slice(rows, func(i, j int) bool { return rows[i].id < rows[j].id })
		for _, r := range rows {
			fmt.Fprintf(p.w, "{\"method\":%s,\"calls\":%d,\"total_ns\":%d,\"exceptions\":%d}\n", r.name, r.calls, r.ns, r.exc)
		}
	}
	werr := p.w.Flush()
	if p.file != nil {
		if err := p.file.Close(); werr == nil {
			werr = err
		}
	}
	p.mu.Unlock()

	logf("instrumented %d methods", len(rep.Instrumented))
	if len(running) > 0 {
		// Calls still on a stack: Main when the app ends with
		// Environment.Exit, threads still running. The summary counts
		// completed calls only.
		logf("calls that had not returned at shutdown (not in the summary): %s", strings.Join(running, ", "))
	}
	if len(rep.Absent) > 0 {
		// The same reasons for every method: say each once.
		n := map[string]int{}
		var reasons []string
		for _, a := range rep.Absent {
			if n[a.Reason]++; n[a.Reason] == 1 {
				reasons = append(reasons, a.Reason)
			}
		}
		for _, r := range reasons {
			logf("%d methods without the current activity's member or action: %s", n[r], r)
		}
	}
	if p.mark {
		logf("%d undecided activities marked recorded (GOTRACE_MARK=0: not)", p.marked.Load())
	}
	if n := p.badParent.Load(); n > 0 {
		logf("%d calls' current activity had an Id that is not a W3C traceparent (the hierarchical format): their spans are roots", n)
	}
	if n := p.badState.Load(); n > 0 {
		logf("%d calls' current activity had an invalid tracestate: dropped", n)
	}
	if len(rep.Failed) > 0 {
		logf("could not instrument %d methods:", len(rep.Failed))
		for _, f := range rep.Failed {
			logf("  %s: %s", f.Method, f.Reason)
		}
	}
	if len(rep.Pending) > 0 {
		logf("%d matched methods were never compiled (never called)", len(rep.Pending))
	}
	for _, t := range rep.Unmatched {
		logf("target %s matched nothing (its assembly never loaded, or has no such method)", t)
	}
	for _, hp := range instr.GoHookPanics() {
		logf("the Go hooks panicked %d times in %s (first: %s); the calls ran on", hp.Count, hp.Method, hp.First)
	}
	if werr != nil {
		logf("writing the output: %v", werr)
	}
	if p.otlp != nil {
		p.otlp.shutdown()
	}
	return nil
}
