// Command autotrace is a tracer built on package instr: it wraps the
// methods that AUTOTRACE_TARGETS names with a managed integration (Hooks.cs,
// compiled into Autotrace.dll and embedded here; instr delivers it into the
// application, which never references it) and writes one JSON line per
// completed call:
//
//	{"method":"Shop.Orders::Total","thread":7,"depth":1,"start_ns":1834211,"dur_ns":5120,"exception":null}
//
// method: the method as a target spells it, without the assembly
// (TYPE::METHOD: the reflection full name of its type, with `N for generic
// arity and + for nesting); thread: the managed thread id; depth: how many
// instrumented calls are on the thread's stack, this one included (1 for
// the outermost); start_ns: when the call started, in nanoseconds since the
// profiler started (CLOCK_MONOTONIC); dur_ns: how long it took; exception:
// null, or the full name of the exception's type when the call ended with
// one.
//
// Async methods: a runtime-async method (.NET 11, or .NET 10 with
// DOTNET_RuntimeAsync=1) is traced from its start to its completion,
// awaits included, with the exception that faulted it; thread is then the
// thread it completed on, and depth is counted when it started (a call
// suspended at an await goes on counting for calls that start later on
// its thread, deeper or at the same point of the stack, until it
// completes). A classic async method (a state machine), and any method
// declared to return Task, Task<T>, ValueTask or ValueTask<T>, is traced
// likewise, to the completion of the task it returns, with the exception
// the task faulted with (a cancelled task: TaskCanceledException); thread
// is the thread that completed it (docs/instrumentation.md, "Async
// methods").
//
// Environment:
//
//	AUTOTRACE_TARGETS   comma-separated targets, ASSEMBLY!TYPE::METHOD (see package instr/target),
//	                    e.g. 'Shop!Shop.Orders::*,Shop!*::Get(System.Int32)'; required
//	AUTOTRACE_OUTPUT    the file to write the lines to (default stderr)
//	AUTOTRACE_SUMMARY=1 no line per call; at Shutdown one line per instrumented method:
//	                    {"method":...,"calls":...,"total_ns":...,"exceptions":...}
//
// autotrace's own messages go to stderr, prefixed "autotrace: ": the
// targets at start, and when the application's first method runs (the
// integration is loaded then) which targets matched nothing yet; at
// Shutdown how many methods it instrumented, which matched methods it
// could not instrument and why, which targets never matched (their
// assembly never loaded, or has no such method), and how often the
// integration threw in each method (once per method). A malformed target
// is reported with its position, and the application then runs without
// the tracer.
//
// Build and run (the CLSID is autotrace's):
//
//	go build -buildmode=c-shared -o libautotrace.so ./sample/autotrace
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={5C1F0B7E-3A64-4D28-9E51-8B7A2D6C4F13} \
//	CORECLR_PROFILER_PATH=$PWD/libautotrace.so AUTOTRACE_TARGETS='app!*::*' dotnet app.dll
//
// Cost: each traced call takes two timestamps and, in summary mode, two
// interlocked adds in the profiler's memory; in per-call mode a call into
// the profiler library (a Go //export, through a delegate) formats and
// buffers the line under a lock. With every method of mcs.exe traced in
// summary mode (46 million calls), compiling soak's 200-class program took
// 5.2 times the CPU time of the run without a profiler, on a loaded machine;
// see docs/instrumentation.md for what instrumentation alone costs.
//
// The integration is regenerated with `go generate ./sample/autotrace`
// (mcs); TestHelperFresh fails when Autotrace.dll is stale against Hooks.cs.
package main

//go:generate go run github.com/clrprof/clrprof/internal/cmd/csgen -out Autotrace.dll -arg -unsafe -r ../../instr/loader/Clrprof.Instr.Loader.dll Hooks.cs

/*
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static int64_t autotrace_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
*/
import "C"

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/profiler"
)

//go:embed Autotrace.dll
var helperDLL []byte

// The integration in Autotrace.dll.
var integration = instr.Integration{
	Assembly: metadata.AssemblyName{Name: "Autotrace", Version: metadata.Version{Major: 1}},
	Type:     "Autotrace.Hooks",
}

// capacity is how many methods the summary counts in shared memory (three
// int64 per method id: calls, total ns, exceptions); ids beyond it are
// counted through autotrace_record.
const capacity = 1 << 18

type tracer struct {
	profiler.Base
	info    *profiler.Info
	in      *instr.Instrumenter
	d       *instr.Delivery
	targets []target.Target
	summary bool
	start   int64
	// counters: 3*capacity int64 in C memory, written by the integration.
	counters *[3 * capacity]int64

	mu    sync.Mutex
	w     *bufio.Writer
	file  *os.File
	names map[int32][]byte // JSON-quoted method names by id
	slow  map[int32]*[3]int64
	line  []byte
	done  bool
}

var active atomic.Pointer[tracer]

func (p *tracer) Initialize(info *profiler.Info) error {
	p.info = info
	p.start = int64(C.autotrace_now())
	spec := os.Getenv("AUTOTRACE_TARGETS")
	if strings.TrimSpace(spec) == "" {
		err := errors.New("AUTOTRACE_TARGETS is empty: nothing to trace")
		fmt.Fprintln(os.Stderr, "autotrace:", err)
		return err
	}
	targets, err := target.ParseList(spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, "autotrace:", err)
		return err
	}
	p.targets = targets
	p.summary = os.Getenv("AUTOTRACE_SUMMARY") == "1"
	var out io.Writer = os.Stderr
	if path := os.Getenv("AUTOTRACE_OUTPUT"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			fmt.Fprintln(os.Stderr, "autotrace:", err)
			return err
		}
		p.file, out = f, f
	}
	p.w = bufio.NewWriterSize(out, 1<<16)
	p.names = map[int32][]byte{}
	p.slow = map[int32]*[3]int64{}
	if p.summary {
		p.counters = (*[3 * capacity]int64)(C.calloc(3*capacity, 8))
	}
	if p.d, err = instr.NewDelivery(info, helperDLL); err != nil {
		fmt.Fprintln(os.Stderr, "autotrace:", err)
		return err
	}
	cfg := instr.Config{Rules: []instr.Rule{{Targets: targets, Integration: integration}}}
	p.d.Configure(&cfg)
	p.in, err = instr.New(info, cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "autotrace:", err)
		return err
	}
	p.d.OnLoaded(func() {
		p.in.HelperReady()
		var un []string
		for _, t := range p.in.Report().Unmatched {
			un = append(un, t.String())
		}
		if m, ok := p.hostTarget(); ok {
			fmt.Fprintf(os.Stderr, "autotrace: %s hosts the integration's loader: its call running now is not traced (later calls are, through ReJIT)\n", m.Name)
		}
		if len(un) > 0 {
			fmt.Fprintf(os.Stderr, "autotrace: the application started (%s); targets that matched nothing yet: %s\n", p.d.Host(), strings.Join(un, ", "))
		} else {
			fmt.Fprintf(os.Stderr, "autotrace: the application started (%s); every target matched\n", p.d.Host())
		}
	})
	active.Store(p)
	var names []string
	for _, t := range targets {
		names = append(names, t.String())
	}
	mode := "a line per call"
	if p.summary {
		mode = "a summary at shutdown"
	}
	fmt.Fprintf(os.Stderr, "autotrace: tracing %s (%s)\n", strings.Join(names, ", "), mode)
	return info.SetEventMask(p.in.EventMask())
}

func (p *tracer) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return p.in.ModuleLoadFinished(m, hr)
}

func (p *tracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return p.in.JITCompilationStarted(f, safe)
}

func (p *tracer) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return p.in.JITInlining(caller, callee)
}

func (p *tracer) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return p.in.GetReJITParameters(m, tok, fc)
}

func (p *tracer) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return p.in.ReJITError(m, tok, f, hr)
}

// hostTarget returns the loader's host method when a target matched it.
func (p *tracer) hostTarget() (instr.Method, bool) {
	mod, tok := p.d.HostMethod()
	r := p.in.Report()
	for _, l := range [][]instr.Method{r.Pending, r.Instrumented} {
		for _, m := range l {
			if m.Module == mod && m.Token == tok {
				return m, true
			}
		}
	}
	return instr.Method{}, false
}

// name returns the JSON-quoted name of method id (TYPE::METHOD); p.mu held.
func (p *tracer) name(id int32) []byte {
	if n, ok := p.names[id]; ok {
		return n
	}
	s := fmt.Sprintf("<unknown method %d>", id)
	if m, ok := p.in.Method(id); ok {
		s = m.Name
		if i := strings.IndexByte(s, '!'); i >= 0 {
			s = s[i+1:]
		}
	}
	q, _ := json.Marshal(s)
	p.names[id] = q
	return q
}

//export autotrace_setup
func autotrace_setup(summary, capac *C.int32_t) unsafe.Pointer {
	p := active.Load()
	if p == nil {
		return nil
	}
	if p.summary && p.counters != nil {
		*summary, *capac = 1, capacity
		return unsafe.Pointer(p.counters)
	}
	*summary, *capac = 0, 0
	return nil
}

//export autotrace_record
func autotrace_record(id, thread, depth C.int32_t, start, dur C.int64_t, exc *C.char) {
	defer func() { _ = recover() }()
	p := active.Load()
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if p.summary {
		c := p.slow[int32(id)]
		if c == nil {
			c = new([3]int64)
			p.slow[int32(id)] = c
		}
		c[0]++
		c[1] += int64(dur)
		if exc != nil {
			c[2]++
		}
		return
	}
	b := append(p.line[:0], `{"method":`...)
	b = append(b, p.name(int32(id))...)
	b = append(b, `,"thread":`...)
	b = strconv.AppendInt(b, int64(thread), 10)
	b = append(b, `,"depth":`...)
	b = strconv.AppendInt(b, int64(depth), 10)
	b = append(b, `,"start_ns":`...)
	b = strconv.AppendInt(b, int64(start)-p.start, 10)
	b = append(b, `,"dur_ns":`...)
	b = strconv.AppendInt(b, int64(dur), 10)
	b = append(b, `,"exception":`...)
	if exc == nil {
		b = append(b, "null"...)
	} else {
		q, _ := json.Marshal(C.GoString(exc))
		b = append(b, q...)
	}
	b = append(b, "}\n"...)
	p.line = b
	p.w.Write(b)
}

func (p *tracer) Shutdown() error {
	// Ends of task-returning calls still running on the threads that
	// completed their tasks: 200 ms for them (a task not complete by then
	// is not counted, and said so).
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if n, _ := instr.WaitTaskEnds(ctx); n > 0 {
		fmt.Fprintf(os.Stderr, "autotrace: shutdown: %d calls' tasks not complete: not counted\n", n)
	}
	cancel()
	rep := p.in.Report()
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
			r := row{id: m.ID, name: p.name(m.ID)}
			if m.ID >= 0 && m.ID < capacity {
				r.calls = atomic.LoadInt64(&p.counters[3*m.ID])
				r.ns = atomic.LoadInt64(&p.counters[3*m.ID+1])
				r.exc = atomic.LoadInt64(&p.counters[3*m.ID+2])
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

	fmt.Fprintf(os.Stderr, "autotrace: instrumented %d methods\n", len(rep.Instrumented))
	if len(rep.Failed) > 0 {
		fmt.Fprintf(os.Stderr, "autotrace: could not instrument %d methods:\n", len(rep.Failed))
		for _, f := range rep.Failed {
			fmt.Fprintf(os.Stderr, "autotrace:   %s: %s\n", f.Method, f.Reason)
		}
	}
	pending := len(rep.Pending)
	if m, ok := p.hostTarget(); ok && !m.Compiled {
		pending--
		fmt.Fprintf(os.Stderr, "autotrace: %s was not traced: it hosts the integration's loader, and its only call started before the integration was loaded\n", m.Name)
	}
	if pending > 0 {
		fmt.Fprintf(os.Stderr, "autotrace: %d matched methods were never compiled (never called)\n", pending)
	}
	for _, t := range rep.Unmatched {
		fmt.Fprintf(os.Stderr, "autotrace: target %s matched nothing (its assembly never loaded, or has no such method)\n", t)
	}
	if err := p.d.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "autotrace: the integration was not delivered:", err)
	}
	for _, e := range p.d.IntegrationErrors() {
		name := fmt.Sprintf("method %d", e.ID)
		if m, ok := p.in.Method(e.ID); ok {
			name = m.Name
		}
		fmt.Fprintf(os.Stderr, "autotrace: the integration threw %d times in %s (first: %s); the calls ran on\n", e.Count, name, e.Type)
	}
	if werr != nil {
		fmt.Fprintln(os.Stderr, "autotrace: writing the output:", werr)
	}
	return nil
}

func init() {
	profiler.Register("{5C1F0B7E-3A64-4D28-9E51-8B7A2D6C4F13}", &tracer{})
}

func main() {}
