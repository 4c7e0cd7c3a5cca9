// Command apm is a tracer for services: loaded into any .NET application
// unchanged, it turns what the application's own libraries report into
// OpenTelemetry spans and exports them through OTLP, configured by the
// standard OTEL_* variables (package spanexport lists them).
//
// On .NET 10 and later, ASP.NET Core (incoming requests), HttpClient
// (outgoing requests, traceparent included) and Npgsql (database commands)
// report their work as System.Diagnostics.Activity objects from their own
// ActivitySources. apm delivers a small helper of its own into the
// application (Listener.cs, embedded as Clrprof.Apm.dll; the application
// references nothing and no file is put beside it) whose ActivityListener
// hands each recorded activity to the profiler when it stops (in batches:
// every 64 KiB, every 200 ms and at process exit); the profiler exports it
// as a span with the activity's own IDs, parent, times, kind,
// status, tags and events. The activity's context is what the runtime
// flows across awaits (ExecutionContext), so parents are right whatever
// thread a continuation runs on.
//
// Environment:
//
//	OTEL_EXPORTER_OTLP_ENDPOINT  the collector (required; OTEL_* as in package spanexport)
//	CLRPROF_APM_SOURCES          the ActivitySource names listened to
//	                             (default Microsoft.AspNetCore,System.Net.Http,Npgsql)
//	CLRPROF_APM_REDIS=0          no StackExchange.Redis spans
//	CLRPROF_APM_GOGC             the Go collector's GOGC for apm's own heap (default
//	                             100, Go's). GOGC in the environment is the
//	                             application's: like every clrprof profiler, apm
//	                             ignores it (profiler.WithGoEnvironment)
//
// StackExchange.Redis has no ActivitySource: apm wraps
// ConnectionMultiplexer.GetDatabase (package instr, a managed integration
// in the same helper) to register the library's own profiling hook, and
// turns the commands made under a recorded activity into client spans
// under it when it stops.
//
// At Shutdown apm prints one line: the spans received, exported, dropped
// and lost, the records it could not decode, and the failures of the
// helper's own code (helper_faults: an exception in encoding a span, e.g.
// from a tag value's ToString, or in enriching a request; the application
// never sees it; the first is logged with its type and message).
//
// Not yet: ADO.NET providers without a source, runtimes before .NET 10 (the helper is built
// against the net10.0 reference assemblies). docs/apm.md says what is
// planned.
//
// Regenerate the helper with `go generate ./sample/apm` (Roslyn);
// TestHelperFresh fails when Clrprof.Apm.dll is stale against Listener.cs.
package main

//go:generate go run github.com/clrprof/clrprof/internal/cmd/csgen -roslyn net10.0 -out Clrprof.Apm.dll -arg -unsafe -r ../../instr/loader/Clrprof.Instr.Loader.dll Listener.cs

/*
#include <stdint.h>
*/
import "C"

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/clrprof/clrprof/instr"
	"github.com/clrprof/clrprof/instr/target"
	"github.com/clrprof/clrprof/metadata"
	"github.com/clrprof/clrprof/pprofbuild"
	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/spanexport"
)

//go:embed Clrprof.Apm.dll
var helperDLL []byte

const clsid = "{7E4C2A91-5B3D-4F60-8A17-2C9E6D4B1F35}"

// redis is the helper's StackExchange.Redis integration: its Begin, at
// ConnectionMultiplexer.GetDatabase, registers the library's profiling hook
// on the multiplexer (Listener.cs).
var redis = instr.Integration{
	Assembly: metadata.AssemblyName{Name: "Clrprof.Apm", Version: metadata.Version{Major: 1}},
	Type:     "Clrprof.Apm.Redis",
}

const redisTargets = "StackExchange.Redis!StackExchange.Redis.ConnectionMultiplexer::GetDatabase"

type tracer struct {
	profiler.Base
	info *profiler.Info
	in   *instr.Instrumenter
	d    *instr.Delivery
	p    *spanexport.Pipeline

	received, bad atomic.Int64
	faults        atomic.Int64 // the helper's own failures (Listener.Fault)
	done          atomic.Bool
	inflight      atomic.Int64  // calls of clrprof_apm_span in progress
	batches       chan []byte   // to the decoder; nil stops it
	decoded       chan struct{} // closed when the decoder has stopped
}

var active atomic.Pointer[tracer]

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "apm: "+format+"\n", args...)
}

func (t *tracer) Initialize(info *profiler.Info) error {
	t.info = info
	var err error
	if v := os.Getenv("CLRPROF_APM_GOGC"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			err = fmt.Errorf("CLRPROF_APM_GOGC=%q: want an integer 1..10000", v)
			logf("%v", err)
			return err
		}
		debug.SetGCPercent(n)
		// Read back from the runtime, which the SDK's reset of the
		// application's GOGC has run before.
		logf("Go collects its own heap at GOGC=%d (CLRPROF_APM_GOGC)", debug.SetGCPercent(n))
	}
	t.p, err = spanexport.New(context.Background(), spanexport.Options{
		Runtime: pprofbuild.RuntimeVersion(info), Distro: "clrprof-apm",
		Logf: func(f string, a ...any) { logf(f, a...) }})
	if err != nil {
		logf("%v", err)
		return err
	}
	if t.d, err = instr.NewDelivery(info, helperDLL); err != nil {
		logf("%v", err)
		return err
	}
	var cfg instr.Config
	if os.Getenv("CLRPROF_APM_REDIS") != "0" {
		targets, err := target.ParseList(redisTargets)
		if err != nil {
			return err
		}
		cfg.Rules = append(cfg.Rules, instr.Rule{Targets: targets, Integration: redis})
	}
	t.d.Configure(&cfg)
	if t.in, err = instr.New(info, cfg); err != nil {
		logf("%v", err)
		return err
	}
	t.d.OnLoaded(func() {
		t.in.HelperReady()
		logf("listening (helper loaded at %s); spans to %s", t.d.Host(), t.p)
		// The library's start-up pages (the OpenTelemetry SDK's init
		// among them) would stay in the process's RSS with nothing using
		// them again: give them back (profiler.ReleaseCodePages).
		if r, err := profiler.ReleaseCodePages(); err != nil {
			logf("code pages not given back: %v", err)
		} else {
			logf("released_code_kb=%d kept_kb=%d", r.Released>>10, r.Kept>>10)
		}
	})
	t.batches = make(chan []byte, maxPending)
	t.decoded = make(chan struct{})
	go t.decoder()
	active.Store(t)
	return info.SetEventMask(t.in.EventMask())
}

func (t *tracer) ModuleLoadFinished(m profiler.ModuleID, hr profiler.HRESULT) error {
	return t.in.ModuleLoadFinished(m, hr)
}

func (t *tracer) JITCompilationStarted(f profiler.FunctionID, safe bool) error {
	return t.in.JITCompilationStarted(f, safe)
}

func (t *tracer) JITInlining(caller, callee profiler.FunctionID) (bool, error) {
	return t.in.JITInlining(caller, callee)
}

func (t *tracer) GetReJITParameters(m profiler.ModuleID, tok metadata.Token, fc *profiler.FunctionControl) error {
	return t.in.GetReJITParameters(m, tok, fc)
}

func (t *tracer) ReJITError(m profiler.ModuleID, tok metadata.Token, f profiler.FunctionID, hr profiler.HRESULT) error {
	return t.in.ReJITError(m, tok, f, hr)
}

func (t *tracer) Shutdown() error {
	// Ends of task-returning calls still running on the threads that
	// completed their tasks (Main may return before them): give them
	// 200 ms; a task not complete by then is not traced, and said so.
	wctx, wcancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	if n, _ := instr.WaitTaskEnds(wctx); n > 0 {
		logf("shutdown: %d calls' tasks not complete: not traced", n)
	}
	wcancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.stopDecoding(ctx); err != nil {
		logf("shutdown: %v", err)
	}
	st, err := t.p.Shutdown(ctx)
	if err != nil {
		logf("shutdown: %v", err)
	}
	if err := t.d.Err(); err != nil {
		logf("the helper was not delivered: %v", err)
	}
	rep := t.in.Report()
	for _, f := range rep.Failed {
		logf("could not instrument %s: %s", f.Method, f.Reason)
	}
	for _, f := range t.d.IntegrationErrors() {
		logf("the helper threw %d times (%s)", f.Count, f.Type)
	}
	logf("Shutdown: received=%d exported=%d dropped=%d lost=%d undecodable=%d helper_faults=%d", t.received.Load(), st.Exported, st.Dropped, st.Lost, t.bad.Load(), t.faults.Load())
	return nil
}

// clrprof_apm_span is the helper's hand-over (Listener.Send): n > 0 is a
// batch of span records, each preceded by its i32 length; n < 0 is a
// failure of the helper's own code, -n bytes of text. A batch is copied
// and decoded by the decoder goroutine, so the application's thread that
// filled it returns at once; when that goroutine is behind by
// maxPending batches, the caller decodes it (it waits, nothing is lost).
//
//export clrprof_apm_span
func clrprof_apm_span(p *C.uint8_t, n C.int32_t) {
	t := active.Load()
	if t == nil || n == 0 {
		return
	}
	t.inflight.Add(1)
	defer t.inflight.Add(-1)
	defer func() {
		if recover() != nil {
			t.bad.Add(1)
		}
	}()
	if t.done.Load() {
		return
	}
	if n < 0 {
		// The helper's code failed (Listener.Fault); the application's
		// call went on. Counted; the first is logged.
		if t.faults.Add(1) == 1 {
			logf("the helper failed, without reaching the application (logged once, counted in helper_faults): %s",
				unsafe.String((*byte)(unsafe.Pointer(p)), int(-n)))
		}
		return
	}
	b := make([]byte, int(n))
	copy(b, unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
	select {
	case t.batches <- b:
	default:
		t.decodeBatch(b)
	}
}

// maxPending is how many batches (of at most 64 KiB each) wait for the
// decoder before the helper's thread decodes its own.
const maxPending = 16

// decoder decodes the batches the helper hands over until it gets nil.
func (t *tracer) decoder() {
	defer close(t.decoded)
	for b := range t.batches {
		if b == nil {
			return
		}
		t.decodeBatch(b)
	}
}

// decodeBatch decodes each record of a batch and records its span. A
// record that cannot be decoded is counted (the first is logged); a batch
// whose framing is broken counts its rest as one.
func (t *tracer) decodeBatch(b []byte) {
	defer func() {
		if recover() != nil {
			t.bad.Add(1)
		}
	}()
	err := splitBatch(b, func(rec []byte) {
		t.received.Add(1)
		s, err := decodeSpan(rec)
		if err != nil {
			if t.bad.Add(1) == 1 {
				logf("%v", err)
			}
			return
		}
		t.p.Record(s)
	})
	if err != nil && t.bad.Add(1) == 1 {
		logf("%v", err)
	}
}

// stopDecoding waits (at most until ctx ends) for the helper's calls in
// progress to return and for the decoder to finish the batches before
// them; later calls are ignored (done).
func (t *tracer) stopDecoding(ctx context.Context) error {
	t.done.Store(true)
	for t.inflight.Load() > 0 {
		if ctx.Err() != nil {
			return fmt.Errorf("the helper's hand-over did not return: %w", ctx.Err())
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case t.batches <- nil:
	case <-ctx.Done():
		return fmt.Errorf("the span decoder is behind: %w", ctx.Err())
	}
	select {
	case <-t.decoded:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("the span decoder is behind: %w", ctx.Err())
	}
}

func init() { profiler.Register(clsid, &tracer{}) }

func main() {}
