// Enter/leave/tailcall hooks: the C half (the fast-path stubs are in
// elt_linux_amd64.S); see elt.go.
#define _GNU_SOURCE
#include <cpuid.h>
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "elt.h"
#include "eltcommon.h"
#include "object.h"
#include "guard.h"
#include "_cgo_export.h"

clrprof_ringset clrprof_elt_set;
__thread void *clrprof_elt_ring __attribute__((tls_model("initial-exec")));
volatile uint8_t clrprof_elt_on;
volatile uint8_t clrprof_elt_force_slow;
clrprof_backpressure clrprof_elt_bp;
volatile uint8_t clrprof_elt_counting;
void (*clrprof_elt_divert)(uint64_t id, uint64_t kind);

int clrprof_elt_setup(uint64_t slots, void *info) {
	clrprof_elt_xsave_size = clrprof_xsave_size();
	return clrprof_ring_init(&clrprof_elt_set, slots, info);
}

// record_waiting appends one event to r, waiting for room (ring.h).
static void record_waiting(clrprof_ring *r, uint64_t id, uint64_t kind) {
	uint64_t idx;
	uint64_t *s = clrprof_ring_reserve_wait(&clrprof_elt_bp, r, 1, &idx);
	if (s == NULL) {
		return;
	}
	s[0] = id;
	s[1] = clrprof_tsc() | kind;
	clrprof_ring_publish(r, 1);
}

void clrprof_elt_slow(uint64_t id, uint64_t kind) {
	if (!clrprof_elt_on) {
		return;
	}
	if (clrprof_elt_counting) {
		// Call counting (eltcount.c, a layer above) registered where the
		// slow path of its stubs goes (clrprof_cnt_slow).
		void (*divert)(uint64_t, uint64_t) = __atomic_load_n(&clrprof_elt_divert, __ATOMIC_ACQUIRE);
		if (divert != NULL) {
			divert(id, kind);
		}
		return;
	}
	clrprof_ring *r = clrprof_elt_ring;
	if (r == NULL && (r = clrprof_ring_acquire(&clrprof_elt_set, &clrprof_elt_ring)) == NULL) {
		return;
	}
	record_waiting(r, id, kind);
}

// ---- WithInfo hooks: called through the runtime's own register-saving
// stub, so plain C; they call Go synchronously under the signal guard. ----

static void STDMETHODCALLTYPE info_enter(FunctionIDOrClientID id, COR_PRF_ELT_INFO info) {
	if (!clrprof_elt_on) {
		return;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoELTCall(id.functionID, info, 1);
	clrprof_go_leave(&g);
}

static void STDMETHODCALLTYPE info_leave(FunctionIDOrClientID id, COR_PRF_ELT_INFO info) {
	if (!clrprof_elt_on) {
		return;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoELTCall(id.functionID, info, 2);
	clrprof_go_leave(&g);
}

static void STDMETHODCALLTYPE info_tailcall(FunctionIDOrClientID id, COR_PRF_ELT_INFO info) {
	if (!clrprof_elt_on) {
		return;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoELTCall(id.functionID, info, 3);
	clrprof_go_leave(&g);
}

void *clrprof_elt_hook(int which) {
	switch (which) {
	case 0:
		return (void *)clrprof_elt_enter3;
	case 1:
		return (void *)clrprof_elt_leave3;
	case 2:
		return (void *)clrprof_elt_tailcall3;
	}
	return NULL;
}

void *clrprof_elt_info_hook(int which) {
	switch (which) {
	case 0:
		return (void *)info_enter;
	case 1:
		return (void *)info_leave;
	case 2:
		return (void *)info_tailcall;
	}
	return NULL;
}

// ---- function ID mappers: once per function, when it is compiled ----

static UINT_PTR STDMETHODCALLTYPE mapper2(FunctionID f, void *data, BOOL *hook) {
	(void)data;
	int on = clrprof_elt_filter_allows(f) & 1;
	if (hook != NULL) {
		*hook = on ? 1 : 0;
	}
	return f;
}

static UINT_PTR STDMETHODCALLTYPE mapper1(FunctionID f, BOOL *hook) {
	return mapper2(f, NULL, hook);
}

void *clrprof_elt_mapper2(void) { return (void *)mapper2; }
void *clrprof_elt_mapper1(void) { return (void *)mapper1; }

// ---- exception unwinds, recorded into the same rings ----

typedef HRESULT(STDMETHODCALLTYPE *unwind_enter_fn)(void *, FunctionID);
typedef HRESULT(STDMETHODCALLTYPE *unwind_leave_fn)(void *);
static const void *orig_unwind_enter, *orig_unwind_leave;
static __thread FunctionID unwinding;

static HRESULT STDMETHODCALLTYPE unwind_enter(void *self, FunctionID f) {
	unwinding = f;
	return ((unwind_enter_fn)orig_unwind_enter)(self, f);
}

static HRESULT STDMETHODCALLTYPE unwind_leave(void *self) {
	if (clrprof_elt_on) {
		clrprof_elt_slow(unwinding, CLRPROF_ELT_UNWIND);
	}
	unwinding = 0;
	return ((unwind_leave_fn)orig_unwind_leave)(self);
}

int clrprof_elt_record_unwinds(void) {
	if (clrprof_callback_override(CLRPROF_CB_ExceptionUnwindFunctionEnter, (const void *)unwind_enter, &orig_unwind_enter) != 0) {
		return -1;
	}
	return clrprof_callback_override(CLRPROF_CB_ExceptionUnwindFunctionLeave, (const void *)unwind_leave, &orig_unwind_leave);
}

#ifdef CLRPROF_TESTHOOKS
// ---- register test ----

// The sentinels clrprof_elt_test_call loads: 16 general-purpose slots
// (rax rcx rdx rbx rsi r8 r9 r10 r11 r12 r13 r14 r15, then unused) and
// 16 xmm registers of two words each.
uint64_t clrprof_elt_sentinels[48] __attribute__((visibility("hidden")));

__attribute__((constructor)) static void init_sentinels(void) {
	for (int i = 0; i < 48; i++) {
		clrprof_elt_sentinels[i] = 0x5A00000000000000ULL ^ ((uint64_t)(i + 1) * 0x0001000100010001ULL) ^ ((uint64_t)i << 52);
	}
}

__attribute__((visibility("hidden"))) void clrprof_elt_test_check(const uint64_t *dump, uint64_t id, uint64_t *bad) {
	uint64_t b = 0;
	for (int i = 0; i < 13; i++) {
		uint64_t want = i == 11 ? id : clrprof_elt_sentinels[i]; // %r14 holds the ID
		if (dump[i] != want) {
			b |= 1ULL << i;
		}
	}
	if (dump[13] != id) { // %rdi
		b |= 1ULL << 13;
	}
	for (int i = 0; i < 16; i++) {
		if (dump[16 + 2 * i] != clrprof_elt_sentinels[16 + 2 * i] || dump[17 + 2 * i] != clrprof_elt_sentinels[17 + 2 * i]) {
			b |= 1ULL << (16 + i);
		}
	}
	*bad = b;
}

#endif // CLRPROF_TESTHOOKS
