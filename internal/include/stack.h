// Stack snapshots (DoStackSnapshot); see stack.go.
#ifndef CLRPROF_STACK_H
#define CLRPROF_STACK_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

// clrprof_stack_collect walks `thread` (0: the calling thread) with
// DoStackSnapshot through info (an ICorProfilerInfo2 or later) and stores
// up to max function IDs and IPs, innermost first; *n gets the number of
// frames stored, *more 1 if frames were cut off. Returns the HRESULT.
int32_t clrprof_stack_collect(void *info, uintptr_t thread, uintptr_t *fids, uintptr_t *ips, int max, int *n, int *more);

// clrprof_stack_walk walks with a callback into Go per frame
// (clrprofGoStackFrame with handle h).
int32_t clrprof_stack_walk(void *info, uintptr_t thread, uintptr_t h);

#pragma GCC visibility pop

#endif
