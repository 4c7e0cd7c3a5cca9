// The per-thread rings' shared core: the producer's half is header-only C,
// internal/include/ringcore.h (reserve and publish, static inline, used by
// the ELT and allocation rings and by instr's deferred Go hook rings).
// This package tests it (core_testhooks*.go, with the build tag
// clrprof_testhooks, as task test-c runs it: several producer threads,
// one consumer, every record checked once and in order). The package doc
// is ring.go's.

package ring
