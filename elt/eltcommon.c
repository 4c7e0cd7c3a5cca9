// What the two ELT recorders (elt.c: the event rings; eltcount.c: call
// counts) share: the XSAVE area size of the stubs' slow path and the
// function filter the function ID mappers ask. See eltcommon.h. Both
// recorders call down into this file; it calls neither.
#include <cpuid.h>
#include <stdint.h>

#include "corprof_gen.h"
#include "eltcommon.h"
#include "guard.h"
#include "_cgo_export.h"

uint64_t clrprof_elt_xsave_size;
volatile uint8_t clrprof_elt_filtered;

uint64_t clrprof_xsave_size(void) {
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d)) {
		return 0;
	}
	if (!(c & (1u << 26)) || !(c & (1u << 27))) { // XSAVE, OSXSAVE
		return 0;
	}
	if (__get_cpuid_max(0, NULL) < 0xD) {
		return 0;
	}
	__cpuid_count(0xD, 0, a, b, c, d);
	if (b < 576) {
		return 0;
	}
	return ((uint64_t)b + 63) & ~(uint64_t)63;
}

int clrprof_elt_filter_allows(uintptr_t f) {
	if (!clrprof_elt_filtered) {
		return 1;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	int on = clrprofGoELTFilter(f);
	clrprof_go_leave(&g);
	return on;
}
