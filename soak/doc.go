// Package soak puts the sample profilers under a real application not
// written here: Mono's C# compiler, mcs.exe (Debian package mono-mcs,
// installed by scripts/setup.sh), compiling a large generated C# program
// on .NET 8.0.4, 10.0.15 and 11.0.0 (issue 13).
//
// [Generate] writes the deterministic program and [Program].Expected is
// its output computed in Go. TestMCSSoak compiles it without a profiler
// and under each sample profiler (loaded at start-up, or attached by
// cmd/clrattach), and requires every profiled compile to give the
// baseline's output, diagnostics and byte-identical assembly, and each
// profiler's own report to be right. CLRPROF_SOAK=long (`task
// reliability`) and CLRPROF_SOAK_CLASSES=n make the program larger.
//
// Read more in docs/reliability.md of the repository ("The mcs soak
// test"): the program's contents, exactly what is compared, the sizes.
package soak
