// Package bench measures what a Go profiler built with clrprof costs a .NET
// application, against the same application without a profiler and against
// a C profiler doing the same work, on the same machine in the same run.
//
// The runner (runner_test.go, behind the benchrun build tag so that `go
// test ./...` never runs it) is started by `task bench`: it builds the C#
// workloads (workloads/: with mcs before .NET 10, with Roslyn on 10 and 11), the C reference profiler (cref/) and the Go
// profilers under test (prof/), runs them interleaved on every installed
// runtime and writes docs/benchmarks.md ([Markdown]) and results.json.
// This package holds what the runner and the Go benchmarks share: the
// result model and its statistics ([Row.Median], [Ratio]), the targets
// ([Targets]), the count checks ([Validity]), the regression check
// ([Compare]) and the IL and signature decoder benchmarks over a [Corpus]
// collected from a real runtime (`go test -bench . ./bench`).
//
// Read more in CONTRIBUTING.md ("Running the benchmark") of the repository;
// the figures are in docs/benchmarks.md.
package bench
