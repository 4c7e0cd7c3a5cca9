// Package pprofbuild holds the pieces a continuous profiler for .NET builds
// its pprof profiles from, on top of package profiler:
//
//   - [Builder] aggregates samples by stack and labels, in bounded memory,
//     and writes a pprof profile (github.com/google/pprof/profile) whose
//     functions are named by [Names] (Info.FunctionName, cached), the way
//     the SDK's samples name them;
//   - [LiveHeap] keeps the sampled allocations (alloc.Sample) that
//     are still alive across garbage collections, from the GC callbacks
//     (MovedReferences2, SurvivingReferences2), as Go's heap profile
//     reports in-use space;
//   - [GCStats] counts collections per generation and the time the runtime
//     spent suspended for them, fed by the runtime's GC events (.NET 5+,
//     package clrevents) or by the profiling API's GC and suspension
//     callbacks (every runtime);
//   - [Contention] pairs ContentionStart and ContentionStop events (.NET 5+)
//     of a thread into one sample with the wait's duration;
//   - [ThreadSpans] ([Spans]) records which tracing span each managed
//     thread is in, as a tracer in the same library says (sample/gotrace), for a sampler to label its samples trace_id and span_id.
//
// Package pprofbuild/export ships the profiles to Pyroscope and to
// OpenTelemetry Collectors (OTLP profiles, experimental).
//
// sample/contprof uses all of them.
package pprofbuild
