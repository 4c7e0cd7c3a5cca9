// The per-thread rings' shared core: the producer's half is header-only C,
// internal/include/ringcore.h (reserve and publish, static inline, used by
// profiler's ELT and allocation rings and by instr's deferred Go hook
// rings). This package tests it (core_testhooks*.go, with the build tag
// clrprof_testhooks, as task test-c runs it: several producer threads,
// one consumer, every record checked once and in order).
//
// (Not the package doc: the package that owns the rings' cold half, which
// is to move here, documents the package; see docs/internals.md, "One
// ring".)

package ring
