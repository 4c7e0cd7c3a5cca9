// Package ring is the home of the per-thread rings' shared core: the
// producer's half is header-only C, internal/include/ringcore.h (reserve
// and publish, static inline, used by profiler's ELT and allocation rings
// and by instr's deferred Go hook rings); this package tests it (with the
// build tag clrprof_testhooks, as task test-c runs it: several producer
// threads, one consumer, every record checked once and in order).
//
// The rings' cold half (allocating, listing, claiming or freeing rings at
// thread exit) is still each recorder's: see docs/internals.md, "One ring".
package ring
