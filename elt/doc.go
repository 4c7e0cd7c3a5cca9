// Package elt records the runtime's enter/leave/tailcall hooks (ELT) in C.
//
// [NewRecorder] installs assembly stubs that JIT'd code calls on every
// hooked method's entry and exit: each event (function, kind, time) goes
// to the calling thread's buffer without a lock or a call into Go, and a
// goroutine hands the events to [Options.Batch]. [NewCallCounter] counts
// calls and inclusive time per function in C instead, with nothing
// buffered. [EnableWithInfo] installs the runtime's slow-path hooks, which
// call Go synchronously with the arguments and return value ([Call]).
//
// All three take the profiler's *profiler.Info, are called from
// Initialize, and exclude each other: the runtime takes one set of hooks
// per process.
package elt
