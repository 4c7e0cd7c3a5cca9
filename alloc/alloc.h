// Allocation recording; see alloc.go.
#ifndef CLRPROF_ALLOC_H
#define CLRPROF_ALLOC_H

#include <stdint.h>

#include "ring.h"

#pragma GCC visibility push(hidden)

// A stack sample's header slot: word 0 is the class with this bit set,
// word 1 the size in the low 40 bits and the frame count above; the next
// slot holds the object ID and the GC epoch it was allocated in
// (clrprof_alloc_epoch), then the frames follow, two function IDs per slot.
#define CLRPROF_ALLOC_SAMPLE (1ULL << 63)
#define CLRPROF_ALLOC_DEPTH_SHIFT 40

extern clrprof_ringset clrprof_alloc_set;
// The number of garbage collections started, as AllocRecorder.GCStarted
// counts them.
extern volatile uint64_t clrprof_alloc_epoch;

// clrprof_alloc_enable takes over ObjectAllocated (chaining to the Go
// callback if the profiler implements it) and starts recording. info is
// the ICorProfilerInfo2 (or later) pointer; mean_bytes the mean number of
// bytes a thread allocates between two stack samples (0: no stacks);
// depth the frames per stack (1..256); with samples_only, only the sampled
// allocations are recorded. Returns 0, or -1.
int clrprof_alloc_enable(void *info, uint64_t slots, uint64_t mean_bytes, int depth, int samples_only);
void clrprof_alloc_stop(void);
// The recorder's back-pressure (ring.h) and gate.
extern clrprof_backpressure clrprof_alloc_bp;
volatile uint8_t *clrprof_alloc_gate(void);
void clrprof_alloc_gc_started(void);
uint64_t clrprof_alloc_get_epoch(void);

#pragma GCC visibility pop

#endif
