// Package conformance re-expresses, with this SDK, the scenarios that the
// .NET runtime team tests its profiling API with (dotnet/runtime,
// src/tests/profiler/). Each scenario is a directory: a C# app (app.cs,
// compiled with mcs) and a Go profiler (profiler/, built with
// -buildmode=c-shared) that checks what upstream's C++ profiler checks. A
// scenario passes, as upstream, when the profiler prints
// "PROFILER TEST PASSES" at shutdown and the app exits with 100.
//
// The package holds no library code: the scenarios run from its tests
// (TestConformance, one subtest per scenario and runtime), and
// docs/conformance.md holds the matrix, which TestConformanceMatrix keeps
// in step with the scenarios registered here. Conformance profilers import
// only the SDK and conformance/internal/check: no cgo, no unsafe.
package conformance
