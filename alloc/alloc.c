// Allocation recording: ObjectAllocated answered in C; see alloc.go.
#include <math.h>
#include <string.h>

#include "alloc.h"
#include "object.h"
#include "stack.h"

clrprof_ringset clrprof_alloc_set;
clrprof_backpressure clrprof_alloc_bp;
static __thread void *alloc_ring __attribute__((tls_model("initial-exec")));
static volatile uint8_t alloc_on;
static ICorProfilerInfo2 *alloc_info;
static uint64_t alloc_mean;
static int alloc_samples_only;
static int alloc_depth;
static const void *orig_allocated;
volatile uint64_t clrprof_alloc_epoch;

typedef HRESULT(STDMETHODCALLTYPE *allocated_fn)(void *, ObjectID, ClassID);

#define MAX_DEPTH 256

// Per-thread sampling state in the ring's aux words: [0] bytes left until
// the next sample (signed), [1] the random state (0: not seeded).
static uint64_t next_random(clrprof_ring *r) {
	uint64_t x = r->aux[1];
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	r->aux[1] = x;
	return x;
}

// An exponentially distributed gap with the given mean: the allocation
// that crosses it is sampled, so a sample of an object of s bytes stands
// for 1/(1-exp(-s/mean)) allocations (see AllocSampleWeight).
static int64_t next_gap(clrprof_ring *r) {
	double u = (double)((next_random(r) >> 11) + 1) / 9007199254740993.0; // (0,1]
	double g = -log(u) * (double)alloc_mean;
	if (g > 9.0e18) {
		g = 9.0e18;
	}
	return (int64_t)g + 1;
}

static void take_sample(clrprof_ring *r, ObjectID obj, ClassID cls, uint64_t size) {
	uintptr_t fids[MAX_DEPTH], ips[MAX_DEPTH];
	int n = 0, more = 0;
	clrprof_stack_collect(alloc_info, 0, fids, ips, alloc_depth, &n, &more);
	uint64_t need = 2 + (uint64_t)(n + 1) / 2;
	uint64_t idx;
	uint64_t *h = clrprof_ring_reserve_wait(&clrprof_alloc_bp, r, need, &idx);
	if (h == NULL) {
		return;
	}
	h[0] = (uint64_t)cls | CLRPROF_ALLOC_SAMPLE;
	h[1] = (size & ((1ULL << CLRPROF_ALLOC_DEPTH_SHIFT) - 1)) | ((uint64_t)n << CLRPROF_ALLOC_DEPTH_SHIFT);
	uint64_t *o = clrprof_ring_slot(r, idx + 1);
	o[0] = obj;
	o[1] = __atomic_load_n(&clrprof_alloc_epoch, __ATOMIC_ACQUIRE);
	for (int i = 0; i < n; i += 2) {
		uint64_t *s = clrprof_ring_slot(r, idx + 2 + (uint64_t)i / 2);
		s[0] = fids[i];
		s[1] = i + 1 < n ? fids[i + 1] : 0;
	}
	clrprof_ring_publish(r, need);
}

static HRESULT STDMETHODCALLTYPE allocated(void *self, ObjectID obj, ClassID cls) {
	if (alloc_on) {
		clrprof_ring *r = alloc_ring;
		if (r == NULL) {
			r = clrprof_ring_acquire(&clrprof_alloc_set, &alloc_ring);
		}
		if (r != NULL) {
			ULONG size = 0;
			alloc_info->lpVtbl->GetObjectSize(alloc_info, obj, &size);
			if (!alloc_samples_only) {
				uint64_t idx;
				uint64_t *s = clrprof_ring_reserve_wait(&clrprof_alloc_bp, r, 1, &idx);
				if (s != NULL) {
					s[0] = cls;
					s[1] = size;
					clrprof_ring_publish(r, 1);
				}
			}
			if (alloc_mean != 0) {
				if (r->aux[1] == 0) {
					r->aux[1] = (clrprof_tsc() ^ ((uint64_t)clrprof_ringnode_of(r)->os_tid << 32)) | 1;
					r->aux[0] = (uint64_t)next_gap(r);
				}
				int64_t left = (int64_t)r->aux[0] - (int64_t)size;
				if (left <= 0) {
					take_sample(r, obj, cls, size);
					left = next_gap(r);
				}
				r->aux[0] = (uint64_t)left;
			}
		}
	}
	return ((allocated_fn)orig_allocated)(self, obj, cls);
}

int clrprof_alloc_enable(void *info, uint64_t slots, uint64_t mean_bytes, int depth, int samples_only) {
	if (info == NULL || depth < 1 || depth > MAX_DEPTH) {
		return -1;
	}
	if (clrprof_ring_init(&clrprof_alloc_set, slots, info) != 0) {
		return -1;
	}
	alloc_info = info;
	alloc_mean = mean_bytes;
	alloc_depth = depth;
	alloc_samples_only = samples_only;
	if (clrprof_callback_override(CLRPROF_CB_ObjectAllocated, (const void *)allocated, &orig_allocated) != 0) {
		return -1;
	}
	alloc_on = 1;
	return 0;
}

volatile uint8_t *clrprof_alloc_gate(void) { return &alloc_on; }

void clrprof_alloc_stop(void) {
	alloc_on = 0;
}

void clrprof_alloc_gc_started(void) {
	__atomic_fetch_add(&clrprof_alloc_epoch, 1, __ATOMIC_ACQ_REL);
}

uint64_t clrprof_alloc_get_epoch(void) {
	return __atomic_load_n(&clrprof_alloc_epoch, __ATOMIC_ACQUIRE);
}
