// Package soak puts the sample profilers under a real application not
// written here: Mono's C# compiler, mcs.exe (/usr/lib/mono/4.5/mcs.exe,
// Debian package mono-mcs, installed by scripts/setup.sh), running on
// .NET 8.0.4 (and, in TestMCSSoak, on 10.0.15 and 11.0.0 too) and compiling
// a large generated C# program (issue 13).
//
// # The program
//
// [Generate] writes a deterministic C# program of n classes (about 115
// lines each). Every class has a static constructor, a nested struct,
// iterators (yield return, yield break), LINQ in query syntax (where,
// orderby, group by ... into, select of an anonymous type) and method syntax
// (Select, Where, Aggregate, Take, Sum, Count) over closures that capture
// and mutate locals, generic classes and methods with constraints
// (Box<T> where T : IComparable<T> over long and a reference type,
// Cell<T> where T : class, Fold<T, TR>, MaxOf<T>, Apply<TIn, TOut>),
// nested generics (Dictionary<int, List<Pair<long, string>>>), exceptions
// (a custom exception and a generic one deriving from it, nested
// try/finally, catch clauses with exception filters, one of which falls
// through to the next clause, and an InvalidCastException from the
// runtime), and interface and virtual dispatch (an abstract base, an
// interface, and for every fourth class a sealed subclass overriding two
// members). Main runs every class through the abstract base, hashes the
// results (64-bit FNV-style, unchecked) and prints five lines: the number
// of classes, of subclasses, of static constructors that ran, a sum of
// virtual calls, and the checksum. [Program].Expected is that output
// computed in Go by a model of the same arithmetic, so the program's output
// is checked against an independent computation, not just against itself.
// Main also carries three deliberate warnings (#warning, CS0168, CS0219),
// so that mcs's diagnostics are not empty and are compared too.
//
// # TestMCSSoak
//
// mcs runs as `dotnet exec --runtimeconfig <8.0.4> mcs.exe -nostdlib
// -r:<Mono's mscorlib, System, System.Core> -out:p.exe p.cs` through
// harness.Run (mcs uses IKVM.Reflection and compiles against Mono's
// reference assemblies, not the runtime's; the result runs on every
// CoreCLR through the framework's facades). Each compile runs in its own
// working directory with the same relative file names. The test compiles:
//
//   - once without a profiler (the baseline);
//   - under jitlog, ilcount, cpuprof (twice: suspending the runtime, and
//     with CPUPROF_MODE=perf), allocprof and calltrace (twice), each loaded
//     at startup (CORECLR_PROFILER...), with their reports sent to files
//     where the sample allows it (JITLOG_FILE, ILCOUNT_OUT, CPUPROF_OUT,
//     ALLOCPROF_OUT);
//   - under contprof (one-second periods) writing its directory and
//     shipping the same profiles to a Pyroscope push server and to the
//     OpenTelemetry Collector's OTLP receiver (gRPC), both started by the
//     test on loopback (internal/exporttest): the three copies must agree,
//     every period of every profile once with the directory's time range
//     and samples, and neither exporter may have dropped or lost one;
//   - with attachjit attached by cmd/clrattach to the running mcs as soon as
//     the runtime's diagnostics socket exists (it collects for half a second,
//     reports and detaches, or reports at shutdown if mcs ends first). An attach in the
//     first tens of milliseconds may be refused with
//     CORPROF_E_NOT_YET_AVAILABLE (the GC heap is not initialized yet, so
//     the profiler's SetEventMask fails); clrattach is then run again;
//   - once more without a profiler.
//
// What is compared, exactly: the two baselines must produce byte-identical
// assemblies and identical stdout and stderr. mcs is deterministic here:
// its PE timestamp is 0 and its MVID is not random (two compiles of the same
// source with the same output name are byte-identical; the MVID changes with
// the content, including the output file name, which is why every compile
// uses "p.exe"). So nothing is masked: every profiled compile must exit 0,
// print exactly the baseline's stdout, print exactly the baseline's stderr
// once the profiler's own lines (those starting with "<sample>: ") are
// removed, and write an assembly byte-identical to the baseline's. The
// baseline's assembly (hence every profiled one) must then run on every
// installed runtime (.NET Core 2.0, 2.1, 3.1, .NET 8) and print exactly
// [Program].Expected, with an empty stderr. Every run has a timeout; a
// hang is a failure.
//
// Each sample's own report is checked too: jitlog listed as many
// compilations as its total says, thousands, over a thousand of them mcs.exe
// methods; ilcount rewrote over a thousand methods with no error, every
// rewritten method was called and counted (one count line per rewritten
// method), every counted method is in mcs.exe's namespaces (Mono.*, IKVM.*:
// the framework is left alone), and every mcs.exe method that jitlog saw
// compiled in its run is among ilcount's counted methods (names normalized:
// no generic arguments, "/" for nesting, "." before the method; ilcount's
// run has inlining off, so it compiles at least what jitlog's run
// compiles); cpuprof's (both modes) and allocprof's profiles parse with
// github.com/google/pprof/profile and have samples under mcs.exe frames,
// and cpuprof's two modes agree on mcs's ten methods with the most
// cumulative CPU time (at least seven in common);
// calltrace (which counts in C, Info.EnableCallCounts) printed its top
// functions and a summary of at least a million calls with nothing lost,
// refused or unmapped, and its count of every mcs.exe method (CALLTRACE_OUT,
// summed by normalized name) equals ilcount's, except that a method the JIT
// inlined somewhere in calltrace's run (calltrace lists them) may have fewer;
// a second calltrace run with inlining off (CALLTRACE_NOINLINE=1) and
// DOTNET_TailCallLoopOpt=0 (without which the JIT compiles a recursive call
// in tail position as a jump, without hooks) must equal ilcount on every
// method; attachjit's report names mcs's pid and lists
// mcs.exe methods compiled while it was attached.
//
// The wall time, CPU time (user+system, from rusage) and peak RSS of each
// profiled compile are logged with their ratios to the mean of the two
// baselines. On a shared machine the wall-time ratio is noisy; CPU time is
// the better figure.
//
// # Size
//
// By default (part of `go test ./...` and `task test`) the program has 200
// classes (about 23,000 lines). CLRPROF_SOAK=long makes it 1000 classes
// (about 115,000 lines) with longer timeouts; `task reliability` runs that.
// CLRPROF_SOAK_CLASSES=n sets the number of classes directly.
package soak
