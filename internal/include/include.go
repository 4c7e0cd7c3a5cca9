// Package include holds the C headers shared by the cgo packages of clrprof
// (internal/sigguard, profiler, instr, metadata, ...), which add this
// directory to their include path: comtypes.h, the PAL base types;
// guard.h and signals.h, the C API of internal/sigguard; ringcore.h, the
// producer's half of the per-thread rings (profiler's and instr's). cprofiler.h is the scaffolding of the
// hand-written C profilers of the tests and benchmarks
// (internal/harness/testdata/cprof, bench/cref).
//
// The profiler object's C API, object.h, and the generated interface
// header it includes, corprof_gen.h (cmd/comgen), are here because the C
// of both profiler and internal/chain uses them.
package include
