// Enter/leave/tailcall hooks; see elt.go.
#ifndef CLRPROF_ELT_H
#define CLRPROF_ELT_H

#include <stdint.h>

#include "ring.h"

#pragma GCC visibility push(hidden)

// Kinds, in the top three bits of an event's second word (the time-stamp
// counter, in the low 61 bits, never reaches them).
#define CLRPROF_ELT_KIND_SHIFT 61
#define CLRPROF_ELT_ENTER (1ULL << 61)
#define CLRPROF_ELT_LEAVE (2ULL << 61)
#define CLRPROF_ELT_TAILCALL (3ULL << 61)
#define CLRPROF_ELT_UNWIND (4ULL << 61)

// The rings of the fast path, and the calling thread's ring (initial-exec
// TLS: the stubs read it with one %fs-relative load).
extern clrprof_ringset clrprof_elt_set;
extern __thread void *clrprof_elt_ring __attribute__((tls_model("initial-exec")));

// clrprof_elt_on gates the hooks (0 after Close or Shutdown: hooks that
// still fire do nothing); clrprof_elt_force_slow makes every event take
// the stubs' full-save path (a diagnostic, for the register tests).
extern volatile uint8_t clrprof_elt_on;
extern volatile uint8_t clrprof_elt_force_slow;

// clrprof_elt_counting: call counting (eltcount.c) owns the hooks; the
// slow path goes to clrprof_elt_divert, which eltcount.c sets (a layer
// above registering itself, so that this file never calls up).
extern volatile uint8_t clrprof_elt_counting;
extern void (*clrprof_elt_divert)(uint64_t id, uint64_t kind);

// Back-pressure of the event recorder (ring.h); the stubs read its wake
// flag.
extern clrprof_backpressure clrprof_elt_bp;


// The fast-path hooks (elt_linux_amd64.S): FunctionEnter3, FunctionLeave3,
// FunctionTailcall3. They preserve every register but the flags.
void clrprof_elt_enter3(uint64_t id);
void clrprof_elt_leave3(uint64_t id);
void clrprof_elt_tailcall3(uint64_t id);

// clrprof_elt_slow records one event from C (the stubs' slow path, with
// every register saved).
void clrprof_elt_slow(uint64_t id, uint64_t kind);

// clrprof_elt_setup prepares the rings and the XSAVE size; info is the
// ICorProfilerInfo used for the threads' managed IDs.
int clrprof_elt_setup(uint64_t slots, void *info);

// Addresses handed to the runtime.
void *clrprof_elt_hook(int which);   // 0 enter, 1 leave, 2 tailcall (fast path)
void *clrprof_elt_info_hook(int which); // the WithInfo hooks
void *clrprof_elt_mapper2(void);
void *clrprof_elt_mapper1(void);

// clrprof_elt_record_unwinds takes over ExceptionUnwindFunctionEnter and
// ...Leave (chaining to the Go callbacks if implemented) to record unwinds.
int clrprof_elt_record_unwinds(void);

// clrprof_elt_test_call runs a hook the way JIT'd code would, from C, with
// sentinel values in every argument and return register, and reports in
// *bad a bit for each register whose value changed (0 = preserved).
void clrprof_elt_test_call(int which, uint64_t id, uint64_t *bad);

#pragma GCC visibility pop

#endif
