// Command gotrace is a tracer whose integration is written in Go: the
// methods that GOTRACE_TARGETS names call Go hooks in this library directly
// (instr.GoHooks: a P/Invoke the SDK defines in the method's own module;
// no managed helper assembly), and each call becomes an OpenTelemetry span
// built with the OpenTelemetry Go SDK and, when OTEL_EXPORTER_OTLP_ENDPOINT
// is set, exported through OTLP.
//
// It writes the same JSON lines as sample/autotrace, one per completed
// call:
//
//	{"method":"Shop.Orders::Total","thread":4711,"depth":1,"start_ns":1834211,"dur_ns":5120,"exception":null}
//
// and, when the call has a span (spans are exported, or the tracer records
// spans for a profiler beside it: package gotrace's Options.Spans), the
// span's IDs in lowercase hex before "exception":
// "trace_id":"0af7651916cd43dd8448eb211c80319c","span_id":"b7ad6b7169203331".
//
// method: TYPE::METHOD as a target spells it; thread: the OS thread id
// (autotrace writes the managed thread id); depth: instrumented calls on
// the thread's stack, this one included; start_ns: since the profiler
// started (monotonic clock); dur_ns: the call's duration; exception: null
// or the full name of the exception's type when one left the call. A
// runtime-async call (.NET 11, or .NET 10 with DOTNET_RuntimeAsync=1) is
// traced to its completion, awaits included; it may complete on another
// thread (thread is then that one; depth and the parent span are those
// of the thread it started on), and with GOTRACE_DEFERRED=1 its hooks run
// synchronously (docs/instrumentation.md, "Async methods"). A classic
// async method, and any method declared to return Task, Task<T>,
// ValueTask or ValueTask<T>, likewise: traced to the completion of the
// task it returns, with the exception the task faulted with.
//
// Environment:
//
//	GOTRACE_TARGETS     comma-separated targets, ASSEMBLY!TYPE::METHOD (package instr/target); required
//	GOTRACE_OUTPUT      the file for the lines (default stderr, or none when spans go to OTLP)
//	GOTRACE_SUMMARY=1   no line per call; at Shutdown one line per instrumented method:
//	                    {"method":...,"calls":...,"total_ns":...,"exceptions":...}
//	                    (completed calls; those still running at Shutdown, such as Main
//	                    when the app ends with Environment.Exit, are listed on stderr)
//	GOTRACE_QUEUE       the span queue's bound (default OTEL_BSP_MAX_QUEUE_SIZE, else 8192 spans)
//	GOTRACE_ACTIVITY=0  root spans are not parented by the caller's current activity (below)
//	GOTRACE_MARK=0      an undecided current activity is not marked recorded (below)
//	GOTRACE_DEFERRED=1  deferred Go hooks (instr.GoHooks.Deferred): the calls are recorded
//	                    with their times in C and the spans and lines built after the fact
//	                    by a goroutine (from the recorded times); much cheaper per call, but
//	                    calls a thread makes faster than they are traced are dropped (the
//	                    count is reported at Shutdown); the spans are not shared with a
//	                    profiler beside gotrace (Options.Spans)
//	OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT
//	                    export spans through OTLP to this collector (unset: no spans)
//	OTEL_EXPORTER_OTLP_PROTOCOL  grpc or http/protobuf (the default)
//	OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
//	                    as the OpenTelemetry specification says
//
// Spans: one per call, named TYPE::METHOD, child of the instrumented call
// that encloses it on the same thread. The outermost is the child of the
// caller's current activity (Activity.Current, read at the call's entry:
// an ASP.NET Core request's, say; it follows the call across awaits), with
// the activity's tracestate, and a root span when there is none, or when
// its Id is not a W3C traceparent (the hierarchical format of .NET Core
// 2.x, and of 3.x unless the app asks for W3C: counted and reported). An
// activity that is not sampled is taken as undecided (an app without an
// ActivityListener makes all of them so) and its spans are recorded, unless
// its parent is remote (its ParentId is set and it has no Parent in the
// process): that parent's decision not to sample is honoured. An undecided
// activity whose call is traced is marked recorded (its ActivityTraceFlags
// set, by an instr action, with synchronous hooks from .NET Core 3.0 on),
// so that the traceparent the app sends on says the trace is sampled and a
// service it calls, traced by gotrace or anything else that honours the
// flag, records its part of the trace; GOTRACE_MARK=0 leaves activities
// alone (the next service then sees "not sampled"). With
// OTEL_TRACES_SAMPLER's ratio samplers, an undecided activity's spans are
// recorded all the same (the ratio applies to roots). Reading the activity
// costs each call four members (GoHooks.Members); GOTRACE_ACTIVITY=0 turns
// it off. With
// the attributes code.namespace (the type), code.function (the method),
// thread.id; an exception leaving the call sets the span's status to Error
// with the exception's type as its description and adds an "exception"
// event with exception.type. The resource: service.name (OTEL_SERVICE_NAME,
// else unknown_service:<executable>), OTEL_RESOURCE_ATTRIBUTES, process.pid,
// process.executable.name/.path, process.command_line, host.name and the
// .NET runtime (process.runtime.name, .version, .description).
//
// Delivery (package spanexport, with its OTEL_BSP_* and OTEL_TRACES_SAMPLER
// variables): ended spans go to a bounded queue (GOTRACE_QUEUE) that a
// goroutine exports in batches of up to 512, at least once a second. A
// batch the collector does not take is retried (back-off up to 2 s) until
// it is, while the queue keeps filling: an unreachable collector never
// blocks or slows the application; spans that find the queue full are
// dropped, counted, and reported on stderr (at most every 10 s, and the
// total at Shutdown). Spans queued while the collector restarts are
// delivered once it is back. At Shutdown what is queued is flushed for at
// most 5 s; what could not be delivered is reported.
//
// gotrace's own messages go to stderr, prefixed "gotrace: ".
//
// Build and run (the CLSID is gotrace's):
//
//	go build -buildmode=c-shared -o libgotrace.so ./sample/gotrace
//	CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER={8F2D4C61-7B3E-4A90-B5D2-1E6C9A3F7D08} \
//	CORECLR_PROFILER_PATH=$PWD/libgotrace.so GOTRACE_TARGETS='app!*::*' \
//	OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 dotnet app.dll
//
// The tracer itself is package gotrace (sample/gotrace/gotrace), which
// other libraries compose with theirs (profiler.Compose): sample/contprof
// built with -tags contprof_gotrace runs it beside contprof, and contprof's
// CPU and wall samples taken inside a span carry its span_id and trace_id.
package main

import (
	"fmt"
	"os"

	"github.com/clrprof/clrprof/profiler"
	"github.com/clrprof/clrprof/sample/gotrace/gotrace"
)

func init() {
	if err := profiler.Register(gotrace.CLSID, gotrace.New(gotrace.Options{})); err != nil {
		fmt.Fprintln(os.Stderr, "gotrace:", err)
	}
}

func main() {}
