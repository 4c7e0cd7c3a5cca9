// Package bench measures what a Go profiler built with clrprof costs a .NET
// application, against the same application without a profiler and against
// a C profiler doing the same work, on the same machine in the same run.
//
// # What is here
//
//   - workloads/: C# programs (compiled by the harness for each runtime:
//     with Mono's mcs before .NET 10, with Roslyn against the runtime's
//     reference assemblies on 10 and 11; TestWorkloadsRun runs each once):
//     empty (start-up), startup (JIT-heavy, run with ReadyToRun disabled),
//     cpu (a CPU-bound loop, for sampling), alloc (an allocation storm on
//     4 threads), calls (deep recursion and tight calls, for enter/leave
//     hooks) and exceptions (throw/catch storms on 4 threads).
//   - cref/cref.c: the C reference profiler, plain C vtables, one mode per
//     kind of work (CREF_MODE=idle, unimpl, alloc, exc, elt, sample).
//   - prof/: the Go profilers under test, each a main package built with
//     -buildmode=c-shared: idle (Initialize/Shutdown only, or a wide event
//     mask with no callback implemented), alloc (the SDK's allocation fast
//     path, Info.EnableAllocationRecording), sync (synchronous Go
//     ObjectAllocated and ExceptionThrown handlers), elt (the SDK's ELT
//     fast path, Info.EnableELT), sample (a 99 Hz sampler), corpus
//     (collects IL bodies and signatures for the decoder benchmarks).
//     Each prints its counts at Shutdown, as cref does, and the runner
//     checks them ([Validity]): a row whose profiler dropped events, paired
//     a leave with no enter, or counted another number of allocations or
//     enters than the C reference is reported as invalid, not as a target
//     met.
//   - runner_test.go: the runner, behind the benchrun build tag so that
//     `go test ./...` never runs it. `task bench` builds everything, runs
//     each (workload × profiler configuration) several times, interleaved,
//     on every installed runtime, prints medians of wall time, CPU time
//     (user + system from the child's rusage) and peak RSS (ru_maxrss) with
//     ratios against no profiler and against the C reference, checks the
//     targets ([Targets]), compares with the last committed results
//     (bench/results.json, [Compare]) and writes docs/benchmarks.md
//     ([Markdown]) and results.json. `task bench -- -quick` (or
//     CLRPROF_BENCH_QUICK=1) uses smaller workloads and 3 runs and only
//     prints; CLRPROF_RUNTIMES limits the runtimes as in the tests.
//
// This package holds what the runner and the Go benchmarks share: the
// result model and its statistics ([Row.Median], [Row.Spread], [Ratio]),
// the targets, the regression check, the report writer, and the decoder
// throughput benchmarks ([BenchILDecode], [BenchILEncode],
// [BenchILRoundTrip], [BenchILRoundTripReuse], [BenchSigDecode],
// [BenchSigDecodeReuse], [BenchSigEncode]) over a [Corpus] collected from
// a real runtime.
// `go test -bench . ./bench` collects a corpus by itself (or reads
// CLRPROF_BENCH_CORPUS) and runs them.
package bench
