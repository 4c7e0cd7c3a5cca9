// What the ELT recorders share (eltcommon.c): the stubs' XSAVE size and
// the function filter.
#ifndef CLRPROF_ELTCOMMON_H
#define CLRPROF_ELTCOMMON_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

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

#pragma GCC visibility pop

#endif
