// Package profiler writes .NET CoreCLR profilers in Go.
//
// A profiler is a Go main package built with -buildmode=c-shared. CoreCLR
// loads it when CORECLR_ENABLE_PROFILING=1, CORECLR_PROFILER (the CLSID)
// and CORECLR_PROFILER_PATH (the library) say so, and calls it back through
// the ICorProfilerCallback interfaces ([Callback] .. [Callback11]); the
// profiler asks and steers the runtime through [Info]. The package is the
// whole COM layer: a profiler never imports "C".
//
// To write one, embed [Base] in a type (every callback answered S_OK in C,
// without entering Go), declare the callbacks you need, set the event mask
// in Initialize ([Info.SetEventMask]) and call [Register] from init; see
// Example_exceptionLogger and ExampleRegister. Only the callbacks the type
// declares reach Go; [CheckCallbacks] and an interface assertion
// (var _ profiler.Callback11 = (*T)(nil)) catch a callback whose signature
// keeps it from being called. Callbacks and Info methods use Go types and
// return errors: an [HRESULT] in the chain, [ErrNotAvailable] for a method
// the runtime lacks. [Info.FunctionName] names functions; package idmap
// keeps IDs valid across unloads, package typeref finds what a TypeRef
// names; the recorders record hot events in C, over an Info, and hand Go
// batches: package elt (enter/leave events, call counts), package alloc
// (allocations, allocation ticks), package heapwalk (a GC's heap walk);
// [Compose] runs several profilers in one library.
//
// Read more in docs/guide.md of the repository (callbacks, Info methods,
// names, logging with CLRPROF_LOG_LEVEL, the safety rules, hot paths,
// EventPipe, sharing the process) and in docs/internals.md (signals,
// chaining, the C files). Linux x64 with glibc only.
package profiler
