// Per-thread rings: the cold half of every ring (ringset.h) and the slot
// rings of the ELT and allocation recorders (ring.h).
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ring.h"
#include "corprof_gen.h"

// ---- The cold half of every ring (ringset.h) ----

// ring_thread_exit is the pthread key's destructor: the thread that owned
// node p exits; its ring gets no more records.
static void ring_thread_exit(void *p) {
	clrprof_ringnode *n = p;
	if (n == NULL) {
		return;
	}
	if (n->tls_slot != NULL && *n->tls_slot == n->ring) {
		*n->tls_slot = NULL;
	}
	__atomic_store_n(&n->state, CLRPROF_RING_DEAD, __ATOMIC_RELEASE);
}

void clrprof_ringset_layout(clrprof_ringset *s, uint32_t hdr, uint32_t unit, uint32_t off_head, uint32_t off_tail,
                            uint32_t off_dropped) {
	s->hdr = (hdr + CLRPROF_RING_LINE - 1) & ~(uint32_t)(CLRPROF_RING_LINE - 1);
	s->unit = unit;
	s->off_head = off_head;
	s->off_tail = off_tail;
	s->off_dropped = off_dropped;
}

int clrprof_ringset_init(clrprof_ringset *s, uint64_t bytes, void *info, int after_exit) {
	uint64_t unit = s->unit != 0 ? s->unit : 1;
	uint64_t n = 64 * unit;
	while (n < bytes && n < ((uint64_t)1 << 30)) {
		n <<= 1;
	}
	s->bytes = n;
	s->info = info;
	s->after_exit = after_exit;
	if (!s->key_ok) {
		pthread_key_t k;
		int err = pthread_key_create(&k, ring_thread_exit);
		if (err != 0) {
			return err;
		}
		s->key = (unsigned)k;
		s->key_ok = 1;
	}
	return 0;
}

static uint64_t current_managed_tid(clrprof_ringset *s) {
	ICorProfilerInfo *info = s->info;
	if (info == NULL) {
		return 0;
	}
	ThreadID t = 0;
	if (info->lpVtbl->GetCurrentThreadID(info, &t) < 0) {
		return 0;
	}
	return (uint64_t)t;
}

static void claim(clrprof_ringnode *n, clrprof_ringset *s, void **tls) {
	n->os_tid = (uint32_t)syscall(SYS_gettid);
	n->managed_tid = current_managed_tid(s);
	n->tls_slot = tls;
	__atomic_store_n(&n->serial, __atomic_add_fetch(&s->serial, 1, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
	__atomic_store_n(&n->state, CLRPROF_RING_LIVE, __ATOMIC_RELEASE);
	*tls = n->ring;
	if (s->key_ok) {
		pthread_setspecific((pthread_key_t)s->key, n);
	}
}

// ring_unreserve gives back the count taken for a ring that could not be
// allocated.
static void ring_unreserve(clrprof_ringset *s) {
	if (s->max_rings != 0) {
		__atomic_sub_fetch(&s->rings, 1, __ATOMIC_RELAXED);
	}
	__atomic_add_fetch(&s->lost, 1, __ATOMIC_RELAXED);
}

#define RING_HUGE ((size_t)2 << 20)

// ring_alloc allocates the block of a ring of `bytes` bytes of records
// after a node and a recorder's structure of hdr bytes (both zeroed).
static clrprof_ringnode *ring_alloc(uint64_t hdr, uint64_t bytes) {
	size_t head = CLRPROF_RINGNODE_SPACE + hdr; // where the records start
	clrprof_ringnode *n;
	if (bytes < RING_HUGE) {
		void *p = NULL;
		if (posix_memalign(&p, CLRPROF_RING_LINE, head + bytes) != 0) {
			return NULL;
		}
		n = memset(p, 0, head);
	} else {
		size_t maplen = head + bytes + RING_HUGE;
		void *m = mmap(NULL, maplen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m == MAP_FAILED) {
			return NULL;
		}
		// The records start on a 2 MiB boundary (a fresh mapping is zeroed).
		uintptr_t b = ((uintptr_t)m + head + RING_HUGE - 1) & ~(uintptr_t)(RING_HUGE - 1);
		madvise((void *)b, bytes, MADV_HUGEPAGE); // advice: its failure changes nothing
		n = (clrprof_ringnode *)(b - head);
		n->map = m;
		n->maplen = maplen;
	}
	n->ring = (char *)n + CLRPROF_RINGNODE_SPACE;
	n->data = (uint8_t *)n + head;
	n->bytes = bytes;
	return n;
}

static void ring_free(clrprof_ringnode *n) {
	if (n->map != NULL) {
		munmap(n->map, n->maplen);
	} else {
		free(n);
	}
}

clrprof_ringnode *clrprof_ringset_take(clrprof_ringset *s, void **tls) {
	uint64_t bytes = __atomic_load_n(&s->bytes, __ATOMIC_RELAXED); // instr changes it for the rings to come
	if (bytes == 0) {
		return NULL;
	}
	if (s->after_exit == CLRPROF_RING_REUSE) {
		// A ring left by an exited thread and drained since.
		for (clrprof_ringnode *n = __atomic_load_n(&s->list, __ATOMIC_ACQUIRE); n != NULL; n = n->next) {
			int32_t want = CLRPROF_RING_FREE;
			if (__atomic_load_n(&n->state, __ATOMIC_ACQUIRE) == CLRPROF_RING_FREE &&
			    __atomic_compare_exchange_n(&n->state, &want, CLRPROF_RING_CLAIMING, 0, __ATOMIC_ACQ_REL,
			                                __ATOMIC_ACQUIRE)) {
				claim(n, s, tls);
				return n;
			}
		}
	}
	if (s->max_rings != 0 && __atomic_add_fetch(&s->rings, 1, __ATOMIC_RELAXED) > s->max_rings) {
		__atomic_sub_fetch(&s->rings, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	clrprof_ringnode *n = ring_alloc(s->hdr, bytes);
	if (n == NULL) {
		ring_unreserve(s);
		return NULL;
	}
	n->set = s;
	n->head = (volatile uint64_t *)(void *)((char *)n->ring + s->off_head);
	n->tail = (volatile uint64_t *)(void *)((char *)n->ring + s->off_tail);
	n->dropped = (volatile uint64_t *)(void *)((char *)n->ring + s->off_dropped);
	claim(n, s, tls);
	clrprof_ringnode *head = __atomic_load_n(&s->list, __ATOMIC_ACQUIRE);
	do {
		n->next = head;
	} while (!__atomic_compare_exchange_n(&s->list, &head, n, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (s->max_rings == 0) {
		__atomic_add_fetch(&s->rings, 1, __ATOMIC_RELAXED);
	}
	return n;
}

int clrprof_ringset_sweep(clrprof_ringset *s) {
	if (s->after_exit != CLRPROF_RING_RELEASE) {
		return 0;
	}
	int freed = 0;
	clrprof_ringnode *prev = NULL;
	clrprof_ringnode *n = __atomic_load_n(&s->list, __ATOMIC_ACQUIRE);
	while (n != NULL) {
		clrprof_ringnode *next = n->next;
		if (__atomic_load_n(&n->state, __ATOMIC_ACQUIRE) != CLRPROF_RING_FREE) {
			prev = n;
			n = next;
			continue;
		}
		if (prev != NULL) {
			prev->next = next; // threads only ever touch the list's head
		} else {
			clrprof_ringnode *want = n;
			if (!__atomic_compare_exchange_n(&s->list, &want, next, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				// Threads pushed rings in front: n is further on; look
				// again from the new head (n stays linked until then).
				prev = NULL;
				n = want;
				continue;
			}
		}
		ring_free(n);
		__atomic_sub_fetch(&s->rings, 1, __ATOMIC_RELAXED);
		freed++;
		n = next;
	}
	return freed;
}

// ---- The slot rings of the ELT and allocation recorders (ring.h) ----

int clrprof_ring_init(clrprof_ringset *s, uint64_t slots, void *info) {
	CLRPROF_RINGSET_LAYOUT(s, clrprof_ring, 2 * sizeof(uint64_t));
	if (slots > ((uint64_t)1 << 26)) {
		slots = (uint64_t)1 << 26;
	}
	return clrprof_ringset_init(s, slots * 2 * sizeof(uint64_t), info, CLRPROF_RING_REUSE);
}

clrprof_ring *clrprof_ring_acquire(clrprof_ringset *s, void **tls) {
	clrprof_ringnode *n = clrprof_ringset_take(s, tls);
	if (n == NULL) {
		return NULL;
	}
	clrprof_ring *r = n->ring;
	if (r->slots == NULL) {
		// New (a claimed ring keeps its slots and size).
		r->slots = (uint64_t *)(void *)n->data;
		r->mask = n->bytes / (2 * sizeof(uint64_t)) - 1;
		r->thresh = s->thresh != 0 && s->thresh < r->mask ? s->thresh : r->mask;
	}
	r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	r->limit = r->tail_cache + r->thresh;
	memset(r->aux, 0, sizeof r->aux);
	return r;
}

int clrprof_bp_init(clrprof_backpressure *bp, volatile uint8_t *on) {
	bp->on = on;
	if (bp->fd <= 0) {
		bp->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	}
	return bp->fd < 0 ? errno : 0;
}

void clrprof_bp_wake(clrprof_backpressure *bp) {
	uint8_t one = 1;
	if (__atomic_load_n(&bp->wake, __ATOMIC_ACQUIRE) &&
	    __atomic_compare_exchange_n(&bp->wake, &one, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) && bp->fd > 0) {
		uint64_t v = 1;
		ssize_t n = write(bp->fd, &v, sizeof v);
		(void)n;
	}
}

static uint64_t mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t *clrprof_ring_reserve_wait(clrprof_backpressure *bp, clrprof_ring *r, uint64_t n, uint64_t *index) {
	uint64_t cap = r->mask + 1;
	uint64_t h = r->head;
	if (__builtin_expect(clrprof_ring_room(h, n, &r->tail, &r->tail_cache, &r->limit), 1)) {
		// Within thresh (at most the ring), so not full.
		*index = h;
		return &r->slots[2 * (h & r->mask)];
	}
	clrprof_bp_wake(bp);
	uint64_t tail = r->tail_cache;
	uint64_t since = 0;
	int waited = 0;
	while (h + n - tail > cap) {
		uint64_t limit = bp->wait_ns;
		if (n > cap || (bp->on != NULL && !*bp->on) || limit == 0 || bp->stalled) {
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			return NULL;
		}
		clrprof_bp_wake(bp);
		uint64_t now = mono_ns();
		if (since == 0) {
			since = now;
		} else if (now - since > limit) {
			__atomic_store_n(&bp->stalled, 1, __ATOMIC_RELEASE);
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			return NULL;
		}
		waited = 1;
		struct timespec ts = {0, 20000};
		nanosleep(&ts, NULL);
		uint64_t t2 = clrprof_ring_seen(&r->tail, &r->tail_cache, &r->limit);
		if (t2 != tail) {
			tail = t2;
			since = 0;
		}
	}
	if (waited) {
		__atomic_add_fetch(&bp->waits, 1, __ATOMIC_RELAXED);
	}
	*index = h;
	return &r->slots[2 * (h & r->mask)];
}

#ifdef CLRPROF_TESTHOOKS
// ---- test helpers ----

struct test_arg {
	clrprof_ringset *s;
	int events;
	int id;
	// Every thread of a round waits here once it holds its ring, so no
	// thread exits (and frees its ring for another) before all have
	// claimed one: a round of n threads holds n rings at once.
	pthread_barrier_t *claimed;
};

static __thread void *test_ring;

static void *test_thread(void *p) {
	struct test_arg *a = p;
	for (int i = 0; i < a->events; i++) {
		clrprof_ring *r = test_ring;
		if (r == NULL && (r = clrprof_ring_acquire(a->s, &test_ring)) == NULL) {
			continue;
		}
		uint64_t idx;
		uint64_t *slot = clrprof_ring_reserve(r, 1, &idx);
		if (slot == NULL) {
			// Full: give the consumer a moment, as a busy thread would by
			// doing other work, and count the loss.
			sched_yield();
			continue;
		}
		slot[0] = (uint64_t)a->id;
		slot[1] = (uint64_t)i;
		clrprof_ring_publish(r, 1);
	}
	return NULL;
}

// run_test_threads runs fn on n new pthreads (ids 1..n), each recording
// `events` records into s, and joins them.
static int run_test_threads(clrprof_ringset *s, int n, int events, void *(*fn)(void *)) {
	if (n <= 0 || n > 256) {
		return EINVAL;
	}
	pthread_t th[256];
	struct test_arg args[256];
	pthread_barrier_t claimed;
	if (pthread_barrier_init(&claimed, NULL, (unsigned)n) != 0) {
		return EAGAIN;
	}
	for (int i = 0; i < n; i++) {
		args[i].s = s;
		args[i].events = events;
		args[i].id = i + 1;
		args[i].claimed = &claimed;
		if (pthread_create(&th[i], NULL, fn, &args[i]) != 0) {
			// The threads started wait at the barrier for the ones that
			// never came; nothing releases them, so the test aborts.
			abort();
		}
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
	}
	pthread_barrier_destroy(&claimed);
	return 0;
}

int clrprof_ring_test_threads(clrprof_ringset *s, int n, int events) {
	return run_test_threads(s, n, events, test_thread);
}

// A ring of byte records over ringcore.h, as the deferred rings are:
// another recorder's structure under the same cold half.
typedef struct test_bring {
	uint64_t size; // bytes of records, a power of two
	uint64_t pad0[7];
	volatile uint64_t head __attribute__((aligned(64)));
	uint64_t tail_seen;
	uint64_t limit;
	volatile uint64_t dropped;
	volatile uint64_t tail __attribute__((aligned(64)));
} test_bring;

CLRPROF_RING_CHECK_LAYOUT(test_bring, tail_seen);

static __thread void *test_bring_tls;

int clrprof_ring_test_bytes_init(clrprof_ringset *s, uint64_t bytes, int after_exit) {
	CLRPROF_RINGSET_LAYOUT(s, test_bring, 1);
	return clrprof_ringset_init(s, bytes, NULL, after_exit);
}

// test_bytes_claim takes a ring of s for the calling thread (NULL: none).
static test_bring *test_bytes_claim(clrprof_ringset *s) {
	clrprof_ringnode *n = clrprof_ringset_take(s, &test_bring_tls);
	if (n == NULL) {
		return NULL;
	}
	test_bring *r = n->ring;
	r->size = n->bytes;
	r->tail_seen = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	r->limit = r->tail_seen + r->size;
	return r;
}

static void *test_bytes_thread(void *p) {
	struct test_arg *a = p;
	test_bytes_claim(a->s);
	pthread_barrier_wait(a->claimed);
	for (int i = 0; i < a->events; i++) {
		test_bring *r = test_bring_tls;
		if (r == NULL && (r = test_bytes_claim(a->s)) == NULL) {
			continue;
		}
		uint64_t words = 1 + (uint64_t)(i % 6);
		uint64_t h = r->head;
		// Full: wait (a bounded number of yields), then drop.
		int tries = 0;
		while (!clrprof_ring_room(h, 8 * words, &r->tail, &r->tail_seen, &r->limit) && tries < 1000000) {
			sched_yield();
			tries++;
		}
		if (tries == 1000000) {
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			continue;
		}
		uint8_t *buf = clrprof_ringnode_of(r)->data;
		uint64_t w = ((uint64_t)i << 8) | words;
		memcpy(buf + (h & (r->size - 1)), &w, 8);
		for (uint64_t k = 1; k < words; k++) {
			w = ((uint64_t)a->id << 56) | (uint64_t)i;
			memcpy(buf + ((h + 8 * k) & (r->size - 1)), &w, 8);
		}
		clrprof_ring_commit(&r->head, h + 8 * words);
	}
	return NULL;
}

int clrprof_ring_test_bytes(clrprof_ringset *s, int n, int events) {
	return run_test_threads(s, n, events, test_bytes_thread);
}

#endif // CLRPROF_TESTHOOKS
