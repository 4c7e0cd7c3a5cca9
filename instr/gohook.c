//go:build cgo

#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "guard.h"
#include "_cgo_export.h"

// The P/Invoke entries of Go hooks (gohook_wrap.go defines the managed
// side). One entry per shape: the enter entries differ by their number of
// arguments, each widened to 64 bits by the wrap; one exit entry. They
// bracket the call into Go with the profiler's signal guard (the thread is
// in preemptive mode, but a GC suspension's activation signal sent while it
// was still in managed code may arrive while Go code runs: see
// docs/reliability.md). In test builds only (testhooks.go),
// CLRPROF_GOHOOK_GUARD=0 leaves it out of these entries (a diagnostic
// switch for the storm test and the benchmark).

#ifdef CLRPROF_TESTHOOKS
static int gohook_guard_off = -1;

static int guard_off(void) {
	int v = __atomic_load_n(&gohook_guard_off, __ATOMIC_RELAXED);
	if (v < 0) {
		const char *e = getenv("CLRPROF_GOHOOK_GUARD");
		v = e != NULL && strcmp(e, "0") == 0;
		__atomic_store_n(&gohook_guard_off, v, __ATOMIC_RELAXED);
	}
	return v;
}
#else
static inline int guard_off(void) { return 0; }
#endif

static __thread uint64_t gohook_tid;

static inline uint64_t tid(void) {
	if (gohook_tid == 0) {
		gohook_tid = (uint64_t)syscall(SYS_gettid);
	}
	return gohook_tid;
}

static inline int64_t enter(int32_t id, int32_t n, int64_t *a) {
	int64_t r;
	if (guard_off()) {
		return clrprofGoEnter(id, tid(), n, a);
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	r = clrprofGoEnter(id, tid(), n, a);
	clrprof_go_leave(&g);
	return r;
}

#define EXPORT __attribute__((visibility("default")))

EXPORT int64_t clrprof_gohook_enter0(int32_t id) { return enter(id, 0, NULL); }
EXPORT int64_t clrprof_gohook_enter1(int32_t id, int64_t a0) {
	int64_t a[] = {a0};
	return enter(id, 1, a);
}
EXPORT int64_t clrprof_gohook_enter2(int32_t id, int64_t a0, int64_t a1) {
	int64_t a[] = {a0, a1};
	return enter(id, 2, a);
}
EXPORT int64_t clrprof_gohook_enter3(int32_t id, int64_t a0, int64_t a1, int64_t a2) {
	int64_t a[] = {a0, a1, a2};
	return enter(id, 3, a);
}
EXPORT int64_t clrprof_gohook_enter4(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3) {
	int64_t a[] = {a0, a1, a2, a3};
	return enter(id, 4, a);
}
EXPORT int64_t clrprof_gohook_enter5(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4) {
	int64_t a[] = {a0, a1, a2, a3, a4};
	return enter(id, 5, a);
}
EXPORT int64_t clrprof_gohook_enter6(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                     int64_t a5) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5};
	return enter(id, 6, a);
}
EXPORT int64_t clrprof_gohook_enter7(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                     int64_t a5, int64_t a6) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5, a6};
	return enter(id, 7, a);
}
EXPORT int64_t clrprof_gohook_enter8(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                     int64_t a5, int64_t a6, int64_t a7) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5, a6, a7};
	return enter(id, 8, a);
}

EXPORT void clrprof_gohook_exit(int32_t id, int64_t state, int64_t ret, int64_t exc, int64_t type) {
	if (guard_off()) {
		clrprofGoExit(id, tid(), state, ret, exc, type);
		return;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoExit(id, tid(), state, ret, exc, type);
	clrprof_go_leave(&g);
}

// The exit entry of a method whose hooks read members of its return value
// (GoHooks.Members): as clrprof_gohook_exit, then minfo (the number of
// members and which are strings: the deferred entry's; unused here), the
// members' status word and up to four members.
EXPORT void clrprof_gohook_exitm(int32_t id, int64_t state, int64_t ret, int64_t exc, int64_t type, int32_t minfo,
                                 int64_t status, int64_t m0, int64_t m1, int64_t m2, int64_t m3) {
	int64_t a[] = {status, m0, m1, m2, m3};
	if (guard_off()) {
		clrprofGoExitM(id, tid(), state, ret, exc, type, a);
		return;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoExitM(id, tid(), state, ret, exc, type, a);
	clrprof_go_leave(&g);
}

// Empty C hooks with the same signatures: the benchmark's baseline for
// the cost of a Go hook (CLRPROF_GOHOOK_ENTRY=c in test builds binds the
// P/Invokes here instead).
EXPORT int64_t clrprof_gohook_c_enter0(int32_t id) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter1(int32_t id, int64_t a0) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter2(int32_t id, int64_t a0, int64_t a1) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter3(int32_t id, int64_t a0, int64_t a1, int64_t a2) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter4(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter5(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4) { return 0; }
EXPORT int64_t clrprof_gohook_c_enter6(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5) {
	return 0;
}
EXPORT int64_t clrprof_gohook_c_enter7(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5, int64_t a6) {
	return 0;
}
EXPORT int64_t clrprof_gohook_c_enter8(int32_t id, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5, int64_t a6, int64_t a7) {
	return 0;
}
EXPORT void clrprof_gohook_c_exit(int32_t id, int64_t state, int64_t ret, int64_t exc, int64_t type) {}
EXPORT void clrprof_gohook_c_exitm(int32_t id, int64_t state, int64_t ret, int64_t exc, int64_t type, int32_t minfo,
                                   int64_t status, int64_t m0, int64_t m1, int64_t m2, int64_t m3) {}

// Actions (GoHooks.Actions, gohook_act.go). An Enter hook that asked for
// actions leaves their block (malloc'd by clrprof_gohook_act_alloc, called
// from Go on this thread while Enter's entry runs) in a thread-local; the
// wrap takes it right after the entry returns, before any managed code
// that could enter another hook runs, reads it in IL, and hands it back to
// clrprof_gohook_act_done, which counts the actions that threw and frees
// it. The layout is gohook_act.go's (CLRPROF_ACT_HEADER and
// CLRPROF_ACT_REC: gohook.go's preamble, through _cgo_export.h).

static __thread void *gohook_act;

void *clrprof_gohook_act_alloc(size_t n) {
	// A block left by a call whose wrap did not take it (none should be):
	// freed, not leaked.
	free(gohook_act);
	gohook_act = malloc(n);
	if (gohook_act != NULL) {
		// No records until Go has written them all (gohook_act.go writes
		// the count last).
		memset(gohook_act, 0, CLRPROF_ACT_HEADER);
	}
	return gohook_act;
}

EXPORT intptr_t clrprof_gohook_act_take(void) {
	void *p = gohook_act;
	gohook_act = NULL;
	return (intptr_t)p;
}

EXPORT void clrprof_gohook_act_done(intptr_t blk) {
	unsigned char *b = (unsigned char *)blk;
	if (b == NULL) {
		return;
	}
	int32_t n, id;
	memcpy(&n, b, 4);
	memcpy(&id, b + 4, 4);
	for (int32_t r = 0; r < n; r++) {
		int32_t action, threw;
		memcpy(&action, b + CLRPROF_ACT_HEADER + (size_t)r * CLRPROF_ACT_REC, 4);
		memcpy(&threw, b + CLRPROF_ACT_HEADER + (size_t)r * CLRPROF_ACT_REC + 4, 4);
		if (threw == 0) {
			continue;
		}
		void *name;
		memcpy(&name, b + CLRPROF_ACT_HEADER + (size_t)r * CLRPROF_ACT_REC + CLRPROF_ACT_NAME, sizeof name);
		if (guard_off()) {
			clrprofGoActThrew(id, action, name);
		} else {
			clrprof_guard g;
			clrprof_go_enter(&g);
			clrprofGoActThrew(id, action, name);
			clrprof_go_leave(&g);
		}
		free(name);
	}
	free(b);
}

// clrprof_gohook_act_threw is called by the handler of an action that
// threw, with its record and the full name of the exception's type (a
// pinned System.String: its length at offset 8, its units from 12; or 0).
// It marks the record and copies the name (at most CLRPROF_ACT_NAME_MAX
// units) into the record's name slot, for clrprof_gohook_act_done. No Go
// runs here.
EXPORT void clrprof_gohook_act_threw(intptr_t rec, intptr_t str) {
	unsigned char *r = (unsigned char *)rec;
	if (r == NULL) {
		return;
	}
	int32_t one = 1;
	memcpy(r + 4, &one, 4);
	void *old;
	memcpy(&old, r + CLRPROF_ACT_NAME, sizeof old);
	if (str == 0 || old != NULL) {
		return;
	}
	int32_t n;
	memcpy(&n, (const void *)(str + 8), 4);
	if (n < 0) {
		return;
	}
	if (n > CLRPROF_ACT_NAME_MAX) {
		n = CLRPROF_ACT_NAME_MAX;
	}
	unsigned char *c = malloc(4 + (size_t)n * 2);
	if (c == NULL) {
		return;
	}
	memcpy(c, &n, 4);
	memcpy(c + 4, (const void *)(str + 12), (size_t)n * 2);
	memcpy(r + CLRPROF_ACT_NAME, &c, sizeof c);
}
