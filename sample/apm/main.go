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
// hands each recorded activity to the profiler when it stops; the profiler
// exports it as a span with the activity's own IDs, parent, times, kind,
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
}

var active atomic.Pointer[tracer]

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "apm: "+format+"\n", args...)
}

func (t *tracer) Initialize(info *profiler.Info) error {
	t.info = info
	var err error
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
	})
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
	t.done.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
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

//export clrprof_apm_span
func clrprof_apm_span(p *C.uint8_t, n C.int32_t) {
	defer func() {
		if recover() != nil {
			if t := active.Load(); t != nil {
				t.bad.Add(1)
			}
		}
	}()
	t := active.Load()
	if t == nil || t.done.Load() || n == 0 {
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
	t.received.Add(1)
	s, err := decodeSpan(unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)))
	if err != nil {
		if t.bad.Add(1) == 1 {
			logf("%v", err)
		}
		return
	}
	t.p.Record(s)
}

func init() { profiler.Register(clsid, &tracer{}) }

func main() {}
