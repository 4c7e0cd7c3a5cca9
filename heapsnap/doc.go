// Package heapsnap holds a heap snapshot of a .NET process — every live
// object with its type, size and references, and the roots with their
// kinds — and answers what keeps memory alive: the dominator tree,
// retained sizes per object and per type, the path from a root to each
// retainer, and the difference between two snapshots.
//
// A snapshot is built with a [Builder] from what a profiler saw during a
// garbage collection (package heapsnap/collect does that in-process) or
// read back with [Read]. [Snapshot.Analyze] computes the dominator tree;
// the [Analysis] writes a pprof profile ([Analysis.Profile]: shallow and
// retained bytes by type along the retention path, which `go tool pprof
// -http` shows as a flame graph) and a text report ([Analysis.Report]).
// [Diff] compares two analyses by type and by retention path.
//
// The package is pure Go and builds without cgo.
package heapsnap
