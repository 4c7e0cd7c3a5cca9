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
extern __thread clrprof_ring *clrprof_elt_ring __attribute__((tls_model("initial-exec")));

// clrprof_elt_on gates the hooks (0 after Close or Shutdown: hooks that
// still fire do nothing); clrprof_elt_force_slow makes every event take
// the stubs' full-save path (a diagnostic, for the register tests).
extern volatile uint8_t clrprof_elt_on;
extern volatile uint8_t clrprof_elt_force_slow;

// The size of the XSAVE area the stubs' slow path uses (0: FXSAVE).
extern uint64_t clrprof_elt_xsave_size;
uint64_t clrprof_xsave_size(void);

// clrprof_elt_filtered: the function ID mapper asks Go's filter.
extern volatile uint8_t clrprof_elt_filtered;
// clrprof_elt_filter_allows asks Go's filter (when one is set) whether f
// gets hooks (bit 0) and, for call counting, whether it is the runtime's
// continuation dispatcher (bit 1) or may be an async variant (bit 2); the
// function ID mappers of elt.c and eltcount.c call it.
int clrprof_elt_filter_allows(uintptr_t f);

// Back-pressure of the event recorder (ring.h); the stubs read its wake
// flag.
extern clrprof_backpressure clrprof_elt_bp;

// ---- call counting (eltcount.c) ----
#define CLRPROF_CNT_MAX_FUNCS (1u << 22)
extern volatile uint8_t clrprof_elt_counting;
void clrprof_cnt_enter3(uint64_t id);
void clrprof_cnt_leave3(uint64_t id);
void clrprof_cnt_tailcall3(uint64_t id);
int clrprof_cnt_hook(uint64_t id, uint64_t kind, uint64_t sp);
void clrprof_cnt_slow(uint64_t id, uint64_t kind);
int clrprof_cnt_setup(uint64_t stack_frames, void *info);
void *clrprof_cnt_mapper2(void);
void *clrprof_cnt_mapper1(void);
void *clrprof_cnt_hookaddr(int which);
uint64_t clrprof_cnt_functions(void);
void clrprof_cnt_snapshot(uint64_t n, uint64_t *fids, uint64_t *calls, uint64_t *ticks);
void clrprof_cnt_stats(uint64_t *out);
uint64_t clrprof_cnt_stacks(uint64_t max, uint64_t frames, uint64_t *tids, uint64_t *fids);

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
