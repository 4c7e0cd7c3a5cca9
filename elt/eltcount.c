// Call counting in C (Info.NewCallCounter): the enter/leave hooks keep,
// per thread, a shadow stack and a counter per function (calls, inclusive
// time-stamp-counter ticks); Go reads them as snapshots. See eltcount.go.
//
// Functions are numbered by the function ID mapper (FunctionIDMapper2),
// which the runtime calls once per function before it compiles the hooks
// into it: the number is the client ID the hooks then receive, so the hook
// finds the function's counter with two loads, without a hash table.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "corprof_gen.h"
#include "elt.h"
#include "eltcommon.h"
#include "eltcount.h"
#include "ring.h"
#include "_cgo_export.h"

#define CNT_PAGE_SHIFT 10
#define CNT_PAGE (1u << CNT_PAGE_SHIFT)
#define CNT_PAGES (CLRPROF_CNT_MAX_FUNCS >> CNT_PAGE_SHIFT)
#define CNT_SEARCH 64

typedef struct {
	uint64_t calls, ticks, active;
} cnt_ctr;

// A shadow frame: the function's index with the CNT_F_ flags in its high
// bits, when it was entered, and its caller's stack pointer (0: unknown).
typedef struct {
	uint64_t idx, t, sp;
} cnt_frame;

// Frame flags (in cnt_frame.idx) and function flags (cnt.fflags, set by
// the mapper from Go's answer).
#define CNT_F_RESUMED (1ULL << 63) // entered by a resumption, not a call
#define CNT_F_HIDDEN (1ULL << 62) // hooked only as a marker: not counted
#define CNT_F_DISPATCH (1ULL << 61) // the runtime's continuation dispatcher
#define CNT_IDX(x) ((x) & (CLRPROF_CNT_MAX_FUNCS - 1))
#define CNT_FF_HIDDEN 1
#define CNT_FF_DISPATCH 2
#define CNT_FF_MAYRESUME 4 // may be an async variant (resumed by the dispatcher)

typedef struct cnt_thread {
	cnt_ctr *pages[CNT_PAGES];
	cnt_frame *stack;
	volatile uint64_t depth; // may exceed cap (frames not stored)
	uint64_t cap;
	// Per-thread problem counts (see clrprof_cnt_stats).
	uint64_t overflow, unmatched, unwound, unmapped;
	uint64_t suspended, resumed;
	volatile int32_t state; // CLRPROF_RING_LIVE or _DEAD
	uint32_t os_tid;
	uint64_t managed_tid;
	struct cnt_thread *next;
	struct cnt_thread **tls;
} cnt_thread;

static __thread cnt_thread *cnt_tls __attribute__((tls_model("initial-exec")));
// The stack pointer of an event handed to the slow path.
static __thread uint64_t cnt_pending_sp __attribute__((tls_model("initial-exec")));

static struct {
	cnt_thread *volatile list;
	volatile uint64_t threads;
	uint64_t cap; // shadow stack frames per thread
	void *info;
	pthread_key_t key;
	int key_ok;
	pthread_mutex_t mu; // allocation of function pages
	uint64_t *volatile funcs[CNT_PAGES];
	uint8_t *volatile fflags[CNT_PAGES]; // CNT_FF_ per function index
	// FunctionID -> index, under mu: the runtime calls the mapper again for
	// another code version of a function (tiering, OSR), whose hooks must
	// find the same counter.
	uint64_t *map_keys, *map_vals;
	uint64_t map_cap, map_len;
	volatile uint64_t nfuncs; // next index (0 is never used)
	volatile uint64_t unhooked; // functions refused: the table is full
	volatile uint64_t lost; // events lost: no memory for a thread or page
	volatile uint64_t bytes;
	volatile uint64_t unwinds; // frames closed by ExceptionUnwindFunctionLeave
} cnt = {.mu = PTHREAD_MUTEX_INITIALIZER};


static void cnt_thread_exit(void *p) {
	cnt_thread *t = p;
	if (t == NULL) {
		return;
	}
	if (t->tls != NULL && *t->tls == t) {
		*t->tls = NULL;
	}
	__atomic_store_n(&t->state, CLRPROF_RING_DEAD, __ATOMIC_RELEASE);
}

int clrprof_cnt_setup(uint64_t stack_frames, void *info) {
	clrprof_elt_xsave_size = clrprof_xsave_size();
	cnt.cap = stack_frames;
	cnt.info = info;
	if (cnt.nfuncs == 0) {
		cnt.nfuncs = 1;
	}
	if (!cnt.key_ok) {
		int err = pthread_key_create(&cnt.key, cnt_thread_exit);
		if (err != 0) {
			return err;
		}
		cnt.key_ok = 1;
	}
	__atomic_store_n(&clrprof_elt_divert, clrprof_cnt_slow, __ATOMIC_RELEASE);
	clrprof_elt_counting = 1;
	return 0;
}

// The hot path: general-purpose registers only (the stubs save no vector
// register), no call.
#pragma GCC push_options
#pragma GCC target("general-regs-only")

static inline uint64_t cnt_tsc(void) {
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static inline uint8_t fflags_of(uint64_t idx) {
	uint8_t *pg = __atomic_load_n(&cnt.fflags[idx >> CNT_PAGE_SHIFT], __ATOMIC_ACQUIRE);
	return pg == NULL ? 0 : pg[idx & (CNT_PAGE - 1)];
}

static inline cnt_ctr *ctr_of(cnt_thread *t, uint64_t idx) {
	cnt_ctr *pg = t->pages[idx >> CNT_PAGE_SHIFT];
	return pg == NULL ? NULL : &pg[idx & (CNT_PAGE - 1)];
}

// close_frame ends frame f at now: its function's inclusive time grows
// when f was its outermost open call on the thread.
static void close_frame(cnt_thread *t, const cnt_frame *f, uint64_t now) {
	if (f->idx & CNT_F_HIDDEN) {
		return;
	}
	cnt_ctr *c = ctr_of(t, CNT_IDX(f->idx));
	if (c == NULL) {
		return;
	}
	if (c->active > 0 && --c->active == 0) {
		c->ticks += now - f->t;
	}
}

// clrprof_cnt_hook is the hooks' work. It uses general-purpose registers
// only and calls nothing (the stubs save only those); it returns 1 when
// the event needs clrprof_cnt_slow (no state for this thread yet, or no
// page of counters for this function), 0 when done. sp is the hooked
// frame's caller's stack pointer (0 when unknown).
//
// Frames that are no longer on the machine stack are closed first: at an
// enter, those whose caller's stack pointer is at or below the new
// frame's (the stack grows down: a live caller's is above it); at a
// leave or tail call, those below the leaving frame's. Such a frame
// returned without a leave: a runtime-async method that suspended (its
// Leave comes only when it completes, after its last resumption,
// possibly on another thread), or a frame whose unwind was not seen.
// An enter of a function that may be an async variant, directly under
// the runtime's continuation dispatcher, is a resumption: it is timed but
// not counted as a call.
int clrprof_cnt_hook(uint64_t id, uint64_t kind, uint64_t sp) {
	cnt_thread *t = cnt_tls;
	if (t == NULL) {
		cnt_pending_sp = sp;
		return 1;
	}
	uint64_t now = cnt_tsc();
	if (id == 0 || id >= CLRPROF_CNT_MAX_FUNCS) {
		t->unmapped++;
		return 0;
	}
	uint64_t d = t->depth;
	if (sp != 0 && d > 0 && d <= t->cap) {
		uint64_t n = d;
		while (n > 0) {
			uint64_t fsp = t->stack[n - 1].sp;
			if (fsp == 0 || fsp > sp || (fsp == sp && kind != CLRPROF_ELT_ENTER)) {
				break;
			}
			close_frame(t, &t->stack[n - 1], now);
			n--;
		}
		if (n != d) {
			t->suspended += d - n;
			d = n;
			__atomic_store_n(&t->depth, d, __ATOMIC_RELEASE);
		}
	}
	if (kind == CLRPROF_ELT_ENTER) {
		cnt_ctr *c = ctr_of(t, id);
		if (c == NULL) {
			cnt_pending_sp = sp;
			return 1;
		}
		uint8_t ff = fflags_of(id);
		uint64_t fl = 0;
		if (ff & CNT_FF_HIDDEN) {
			fl |= CNT_F_HIDDEN;
		}
		if (ff & CNT_FF_DISPATCH) {
			fl |= CNT_F_DISPATCH;
		}
		if ((ff & CNT_FF_MAYRESUME) && d > 0 && d <= t->cap && (t->stack[d - 1].idx & CNT_F_DISPATCH)) {
			fl |= CNT_F_RESUMED;
			t->resumed++;
		}
		if (!(fl & CNT_F_HIDDEN)) {
			if (!(fl & CNT_F_RESUMED)) {
				c->calls++;
			}
			c->active++;
		}
		if (d < t->cap) {
			t->stack[d].idx = id | fl;
			t->stack[d].t = now;
			t->stack[d].sp = sp;
		} else {
			t->overflow++;
		}
		__atomic_store_n(&t->depth, d + 1, __ATOMIC_RELEASE);
		return 0;
	}
	// Leave or tail call: close the innermost open call of id.
	if (d == 0) {
		t->unmatched++;
		return 0;
	}
	if (d > t->cap) {
		// The frame was not stored (the stack overflowed): trust the
		// runtime's nesting; its time is not measured.
		cnt_ctr *c = ctr_of(t, id);
		if (c != NULL && c->active > 0 && !(fflags_of(id) & CNT_FF_HIDDEN)) {
			c->active--;
		}
		__atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
		return 0;
	}
	if (CNT_IDX(t->stack[d - 1].idx) == id) {
		close_frame(t, &t->stack[d - 1], now);
		__atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
		return 0;
	}
	// Frames above it ended without a leave (an exception unwound them and
	// unwinds are not seen, or a hook was missed): close them here.
	uint64_t lim = d < CNT_SEARCH ? d : CNT_SEARCH;
	for (uint64_t k = 1; k < lim; k++) {
		if (CNT_IDX(t->stack[d - 1 - k].idx) == id) {
			for (uint64_t j = 0; j <= k; j++) {
				close_frame(t, &t->stack[d - 1 - j], now);
			}
			t->unwound += k;
			__atomic_store_n(&t->depth, d - 1 - k, __ATOMIC_RELEASE);
			return 0;
		}
	}
	t->unmatched++;
	return 0;
}

#pragma GCC pop_options

static uint64_t managed_tid(void) {
	ICorProfilerInfo *info = cnt.info;
	ThreadID tid = 0;
	if (info == NULL || info->lpVtbl->GetCurrentThreadID(info, &tid) < 0) {
		return 0;
	}
	return (uint64_t)tid;
}

static cnt_thread *cnt_claim(void) {
	cnt_thread *t = NULL;
	for (cnt_thread *x = __atomic_load_n(&cnt.list, __ATOMIC_ACQUIRE); x != NULL; x = x->next) {
		int32_t want = CLRPROF_RING_DEAD;
		if (__atomic_load_n(&x->state, __ATOMIC_ACQUIRE) == CLRPROF_RING_DEAD &&
		    __atomic_compare_exchange_n(&x->state, &want, CLRPROF_RING_LIVE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			t = x;
			break;
		}
	}
	if (t != NULL) {
		// The exited thread's open calls never return.
		uint64_t d = t->depth < t->cap ? t->depth : t->cap;
		for (uint64_t i = 0; i < d; i++) {
			if (t->stack[i].idx & CNT_F_HIDDEN) {
				continue;
			}
			cnt_ctr *c = ctr_of(t, CNT_IDX(t->stack[i].idx));
			if (c != NULL && c->active > 0) {
				c->active--;
			}
		}
		__atomic_store_n(&t->depth, 0, __ATOMIC_RELEASE);
	} else {
		t = calloc(1, sizeof *t);
		if (t == NULL) {
			return NULL;
		}
		t->cap = cnt.cap;
		if (t->cap > 0 && (t->stack = calloc(t->cap, sizeof(cnt_frame))) == NULL) {
			free(t);
			return NULL;
		}
		__atomic_add_fetch(&cnt.bytes, sizeof *t + t->cap * sizeof(cnt_frame), __ATOMIC_RELAXED);
		t->state = CLRPROF_RING_LIVE;
		cnt_thread *head = __atomic_load_n(&cnt.list, __ATOMIC_ACQUIRE);
		do {
			t->next = head;
		} while (!__atomic_compare_exchange_n(&cnt.list, &head, t, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
		__atomic_add_fetch(&cnt.threads, 1, __ATOMIC_RELAXED);
	}
	t->os_tid = (uint32_t)syscall(SYS_gettid);
	t->managed_tid = managed_tid();
	t->tls = &cnt_tls;
	cnt_tls = t;
	if (cnt.key_ok) {
		pthread_setspecific(cnt.key, t);
	}
	return t;
}

// clrprof_cnt_slow: the hooks' slow path (every register saved), and the
// unwind callback's (kind CLRPROF_ELT_UNWIND, id a FunctionID).
void clrprof_cnt_slow(uint64_t id, uint64_t kind) {
	cnt_thread *t = cnt_tls;
	if (t == NULL && (t = cnt_claim()) == NULL) {
		__atomic_add_fetch(&cnt.lost, 1, __ATOMIC_RELAXED);
		return;
	}
	if (kind == CLRPROF_ELT_UNWIND) {
		// An exception unwound the frame of FunctionID id: close the top
		// frame if it is that function's (the unwind may be of a function
		// without hooks).
		uint64_t d = t->depth;
		if (d == 0 || d > t->cap) {
			return;
		}
		uint64_t idx = CNT_IDX(t->stack[d - 1].idx);
		uint64_t *pg = cnt.funcs[idx >> CNT_PAGE_SHIFT];
		if (pg != NULL && pg[idx & (CNT_PAGE - 1)] == id) {
			close_frame(t, &t->stack[d - 1], clrprof_tsc());
			__atomic_store_n(&t->depth, d - 1, __ATOMIC_RELEASE);
			__atomic_add_fetch(&cnt.unwinds, 1, __ATOMIC_RELAXED);
		}
		return;
	}
	if (kind == CLRPROF_ELT_ENTER && id != 0 && id < CLRPROF_CNT_MAX_FUNCS && t->pages[id >> CNT_PAGE_SHIFT] == NULL) {
		cnt_ctr *pg = calloc(CNT_PAGE, sizeof(cnt_ctr));
		if (pg == NULL) {
			__atomic_add_fetch(&cnt.lost, 1, __ATOMIC_RELAXED);
			return;
		}
		__atomic_add_fetch(&cnt.bytes, CNT_PAGE * sizeof(cnt_ctr), __ATOMIC_RELAXED);
		__atomic_store_n(&t->pages[id >> CNT_PAGE_SHIFT], pg, __ATOMIC_RELEASE);
	}
	clrprof_cnt_hook(id, kind, cnt_pending_sp);
}

// ---- the function ID mapper: numbers the functions ----

static uint64_t map_hash(uint64_t f, uint64_t cap) { return ((f >> 3) * 0x9E3779B97F4A7C15ULL) >> 20 & (cap - 1); }

// map_find returns f's index, or 0 (under cnt.mu).
static uint64_t map_find(uint64_t f) {
	if (cnt.map_cap == 0) {
		return 0;
	}
	for (uint64_t k = map_hash(f, cnt.map_cap);; k = (k + 1) & (cnt.map_cap - 1)) {
		if (cnt.map_keys[k] == f) {
			return cnt.map_vals[k];
		}
		if (cnt.map_keys[k] == 0) {
			return 0;
		}
	}
}

static int map_put(uint64_t *keys, uint64_t *vals, uint64_t cap, uint64_t f, uint64_t idx) {
	for (uint64_t k = map_hash(f, cap);; k = (k + 1) & (cap - 1)) {
		if (keys[k] == 0) {
			keys[k] = f;
			vals[k] = idx;
			return 0;
		}
	}
}

// map_new gives f the next index (under cnt.mu); 0 if the table is full
// or memory short.
static uint64_t map_new(uint64_t f) {
	uint64_t idx = cnt.nfuncs;
	if (idx >= CLRPROF_CNT_MAX_FUNCS) {
		return 0;
	}
	if (2 * (cnt.map_len + 1) > cnt.map_cap) {
		uint64_t ncap = cnt.map_cap ? 2 * cnt.map_cap : 4096;
		uint64_t *nk = calloc(ncap, sizeof *nk), *nv = calloc(ncap, sizeof *nv);
		if (nk == NULL || nv == NULL) {
			free(nk);
			free(nv);
			return 0;
		}
		for (uint64_t i = 0; i < cnt.map_cap; i++) {
			if (cnt.map_keys[i] != 0) {
				map_put(nk, nv, ncap, cnt.map_keys[i], cnt.map_vals[i]);
			}
		}
		free(cnt.map_keys);
		free(cnt.map_vals);
		__atomic_add_fetch(&cnt.bytes, (ncap - cnt.map_cap) * 2 * sizeof(uint64_t), __ATOMIC_RELAXED);
		cnt.map_keys = nk;
		cnt.map_vals = nv;
		cnt.map_cap = ncap;
	}
	uint64_t *pg = cnt.funcs[idx >> CNT_PAGE_SHIFT];
	if (pg == NULL) {
		if ((pg = calloc(CNT_PAGE, sizeof(uint64_t))) == NULL) {
			return 0;
		}
		__atomic_add_fetch(&cnt.bytes, CNT_PAGE * sizeof(uint64_t), __ATOMIC_RELAXED);
		__atomic_store_n(&cnt.funcs[idx >> CNT_PAGE_SHIFT], pg, __ATOMIC_RELEASE);
	}
	__atomic_store_n(&pg[idx & (CNT_PAGE - 1)], f, __ATOMIC_RELEASE);
	map_put(cnt.map_keys, cnt.map_vals, cnt.map_cap, f, idx);
	cnt.map_len++;
	__atomic_store_n(&cnt.nfuncs, idx + 1, __ATOMIC_RELEASE);
	return idx;
}

static UINT_PTR STDMETHODCALLTYPE cnt_mapper(FunctionID f, void *data, BOOL *hook) {
	(void)data;
	// Bit 0: count it; bit 1: a continuation dispatcher (hooked as a
	// marker even when not counted); bit 2: may be an async variant.
	int r = clrprof_elt_filter_allows(f);
	if ((r & 3) == 0) {
		if (hook != NULL) {
			*hook = 0;
		}
		return f;
	}
	pthread_mutex_lock(&cnt.mu);
	uint64_t idx = map_find(f);
	if (idx == 0) {
		idx = map_new(f);
	}
	if (idx != 0) {
		uint8_t *fp = cnt.fflags[idx >> CNT_PAGE_SHIFT];
		if (fp == NULL && (fp = calloc(CNT_PAGE, 1)) != NULL) {
			__atomic_add_fetch(&cnt.bytes, CNT_PAGE, __ATOMIC_RELAXED);
			__atomic_store_n(&cnt.fflags[idx >> CNT_PAGE_SHIFT], fp, __ATOMIC_RELEASE);
		}
		if (fp != NULL) {
			uint8_t ff = (r & 1 ? 0 : CNT_FF_HIDDEN) | (r & 2 ? CNT_FF_DISPATCH : 0) | (r & 4 ? CNT_FF_MAYRESUME : 0);
			__atomic_store_n(&fp[idx & (CNT_PAGE - 1)], ff, __ATOMIC_RELEASE);
		}
	}
	pthread_mutex_unlock(&cnt.mu);
	if (idx == 0) {
		__atomic_add_fetch(&cnt.unhooked, 1, __ATOMIC_RELAXED);
		if (hook != NULL) {
			*hook = 0;
		}
		return f;
	}
	if (hook != NULL) {
		*hook = 1;
	}
	return (UINT_PTR)idx;
}

static UINT_PTR STDMETHODCALLTYPE cnt_mapper1(FunctionID f, BOOL *hook) { return cnt_mapper(f, NULL, hook); }

void *clrprof_cnt_mapper2(void) { return (void *)cnt_mapper; }
void *clrprof_cnt_mapper1(void) { return (void *)cnt_mapper1; }

void *clrprof_cnt_hookaddr(int which) {
	switch (which) {
	case 0:
		return (void *)clrprof_cnt_enter3;
	case 1:
		return (void *)clrprof_cnt_leave3;
	case 2:
		return (void *)clrprof_cnt_tailcall3;
	}
	return NULL;
}

// ---- snapshots (any thread; reads what the hooks write without
// stopping them: each 64-bit counter is read whole) ----

// clrprof_cnt_functions is the number of function indices handed out
// (indices 1 .. n-1 are in use).
uint64_t clrprof_cnt_functions(void) {
	uint64_t n = __atomic_load_n(&cnt.nfuncs, __ATOMIC_ACQUIRE);
	return n > CLRPROF_CNT_MAX_FUNCS ? CLRPROF_CNT_MAX_FUNCS : n;
}

// clrprof_cnt_snapshot fills, for indices 0 .. n-1, the FunctionID, the
// calls and the inclusive ticks summed over every thread.
void clrprof_cnt_snapshot(uint64_t n, uint64_t *fids, uint64_t *calls, uint64_t *ticks) {
	memset(calls, 0, n * sizeof *calls);
	memset(ticks, 0, n * sizeof *ticks);
	for (uint64_t p = 0; p * CNT_PAGE < n; p++) {
		uint64_t *pg = __atomic_load_n(&cnt.funcs[p], __ATOMIC_ACQUIRE);
		for (uint64_t i = 0; i < CNT_PAGE && p * CNT_PAGE + i < n; i++) {
			fids[p * CNT_PAGE + i] = pg == NULL ? 0 : __atomic_load_n(&pg[i], __ATOMIC_ACQUIRE);
		}
	}
	for (cnt_thread *t = __atomic_load_n(&cnt.list, __ATOMIC_ACQUIRE); t != NULL; t = t->next) {
		for (uint64_t p = 0; p * CNT_PAGE < n; p++) {
			cnt_ctr *pg = __atomic_load_n(&t->pages[p], __ATOMIC_ACQUIRE);
			if (pg == NULL) {
				continue;
			}
			for (uint64_t i = 0; i < CNT_PAGE && p * CNT_PAGE + i < n; i++) {
				calls[p * CNT_PAGE + i] += __atomic_load_n(&pg[i].calls, __ATOMIC_RELAXED);
				ticks[p * CNT_PAGE + i] += __atomic_load_n(&pg[i].ticks, __ATOMIC_RELAXED);
			}
		}
	}
}

// clrprof_cnt_stats: [0] threads, [1] functions numbered, [2] functions
// refused (table full), [3] events lost (no memory), [4] frames beyond the
// shadow stacks, [5] leaves matching no open call, [6] frames closed
// without their leave, [7] events with an unknown client ID, [8] bytes
// allocated, [9] frames closed by an exception unwind, [10] frames closed
// because they were no longer on the stack, [11] enters that were
// resumptions.
void clrprof_cnt_stats(uint64_t *out) {
	memset(out, 0, 12 * sizeof *out);
	out[0] = __atomic_load_n(&cnt.threads, __ATOMIC_RELAXED);
	out[1] = clrprof_cnt_functions() - 1;
	out[2] = __atomic_load_n(&cnt.unhooked, __ATOMIC_RELAXED);
	out[3] = __atomic_load_n(&cnt.lost, __ATOMIC_RELAXED);
	for (cnt_thread *t = __atomic_load_n(&cnt.list, __ATOMIC_ACQUIRE); t != NULL; t = t->next) {
		out[4] += __atomic_load_n(&t->overflow, __ATOMIC_RELAXED);
		out[5] += __atomic_load_n(&t->unmatched, __ATOMIC_RELAXED);
		out[6] += __atomic_load_n(&t->unwound, __ATOMIC_RELAXED);
		out[7] += __atomic_load_n(&t->unmapped, __ATOMIC_RELAXED);
		out[10] += __atomic_load_n(&t->suspended, __ATOMIC_RELAXED);
		out[11] += __atomic_load_n(&t->resumed, __ATOMIC_RELAXED);
	}
	out[8] = __atomic_load_n(&cnt.bytes, __ATOMIC_RELAXED);
	out[9] = __atomic_load_n(&cnt.unwinds, __ATOMIC_RELAXED);
}

// clrprof_cnt_stacks copies the live threads' shadow stacks: for each of
// at most max threads, its OS and managed thread IDs and depth go to
// tids[3*i..], and its frames' FunctionIDs (outermost first, at most
// frames per thread) to fids[i*frames ...]. Returns the threads written.
// The stacks change while they are read: a copy is a best effort.
uint64_t clrprof_cnt_stacks(uint64_t max, uint64_t frames, uint64_t *tids, uint64_t *fids) {
	uint64_t n = 0;
	for (cnt_thread *t = __atomic_load_n(&cnt.list, __ATOMIC_ACQUIRE); t != NULL && n < max; t = t->next) {
		if (__atomic_load_n(&t->state, __ATOMIC_ACQUIRE) != CLRPROF_RING_LIVE) {
			continue;
		}
		uint64_t d = __atomic_load_n(&t->depth, __ATOMIC_ACQUIRE);
		if (d > t->cap) {
			d = t->cap;
		}
		if (d > frames) {
			d = frames;
		}
		tids[3 * n] = t->os_tid;
		tids[3 * n + 1] = t->managed_tid;
		uint64_t k = 0;
		for (uint64_t i = 0; i < d; i++) {
			uint64_t raw = __atomic_load_n(&t->stack[i].idx, __ATOMIC_RELAXED);
			if (raw & CNT_F_HIDDEN) {
				continue;
			}
			uint64_t idx = CNT_IDX(raw);
			uint64_t *pg = __atomic_load_n(&cnt.funcs[idx >> CNT_PAGE_SHIFT], __ATOMIC_ACQUIRE);
			fids[n * frames + k++] = pg == NULL ? 0 : pg[idx & (CNT_PAGE - 1)];
		}
		tids[3 * n + 2] = k;
		n++;
	}
	return n;
}
