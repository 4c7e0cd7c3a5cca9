// Per-thread event rings; see ring.h.
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ring.h"
#include "corprof_gen.h"

static void ring_thread_exit(void *p) {
	clrprof_ring *r = p;
	if (r == NULL) {
		return;
	}
	if (r->tls_slot != NULL && *r->tls_slot == r) {
		*r->tls_slot = NULL;
	}
	__atomic_store_n(&r->state, CLRPROF_RING_DEAD, __ATOMIC_RELEASE);
}

int clrprof_ringset_init(clrprof_ringset *s, uint64_t slots, void *info) {
	uint64_t n = 64;
	while (n < slots && n < ((uint64_t)1 << 30)) {
		n <<= 1;
	}
	s->slots = n;
	s->info = info;
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

static void claim(clrprof_ring *r, clrprof_ringset *s, clrprof_ring **tls) {
	r->os_tid = (uint32_t)syscall(SYS_gettid);
	r->managed_tid = current_managed_tid(s);
	r->tail_cache = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
	r->limit = r->tail_cache + r->thresh;
	r->tls_slot = tls;
	memset(r->aux, 0, sizeof r->aux);
	__atomic_add_fetch(&r->generation, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&r->state, CLRPROF_RING_LIVE, __ATOMIC_RELEASE);
	*tls = r;
	if (s->key_ok) {
		pthread_setspecific((pthread_key_t)s->key, r);
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

clrprof_ring *clrprof_ring_acquire(clrprof_ringset *s, clrprof_ring **tls) {
	if (s->slots == 0) {
		return NULL;
	}
	// A ring left by an exited thread and drained since.
	for (clrprof_ring *r = __atomic_load_n(&s->list, __ATOMIC_ACQUIRE); r != NULL; r = r->next) {
		int32_t want = CLRPROF_RING_FREE;
		if (__atomic_load_n(&r->state, __ATOMIC_ACQUIRE) == CLRPROF_RING_FREE &&
		    __atomic_compare_exchange_n(&r->state, &want, CLRPROF_RING_LIVE, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			claim(r, s, tls);
			return r;
		}
	}
	if (s->max_rings != 0 && __atomic_add_fetch(&s->rings, 1, __ATOMIC_RELAXED) > s->max_rings) {
		__atomic_sub_fetch(&s->rings, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->refused, 1, __ATOMIC_RELAXED);
		__atomic_add_fetch(&s->lost, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	clrprof_ring *r = NULL;
	if (posix_memalign((void **)&r, 64, sizeof *r) != 0) {
		ring_unreserve(s);
		return NULL;
	}
	memset(r, 0, sizeof *r);
	r->slots = calloc(s->slots, 2 * sizeof(uint64_t));
	if (r->slots == NULL) {
		free(r);
		ring_unreserve(s);
		return NULL;
	}
	r->mask = s->slots - 1;
	r->thresh = s->thresh != 0 && s->thresh < r->mask ? s->thresh : r->mask;
	r->set = s;
	claim(r, s, tls);
	clrprof_ring *head = __atomic_load_n(&s->list, __ATOMIC_ACQUIRE);
	do {
		r->next = head;
	} while (!__atomic_compare_exchange_n(&s->list, &head, r, 1, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	if (s->max_rings == 0) {
		__atomic_add_fetch(&s->rings, 1, __ATOMIC_RELAXED);
	}
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

clrprof_ring *clrprof_ring_first(clrprof_ringset *s) {
	return __atomic_load_n(&s->list, __ATOMIC_ACQUIRE);
}

#ifdef CLRPROF_TESTHOOKS
// ---- test helpers ----

struct test_arg {
	clrprof_ringset *s;
	int events;
	int id;
};

static __thread clrprof_ring *test_ring;

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

int clrprof_ring_test_threads(clrprof_ringset *s, int n, int events) {
	if (n <= 0 || n > 256) {
		return EINVAL;
	}
	pthread_t th[256];
	struct test_arg args[256];
	for (int i = 0; i < n; i++) {
		args[i].s = s;
		args[i].events = events;
		args[i].id = i + 1;
		if (pthread_create(&th[i], NULL, test_thread, &args[i]) != 0) {
			n = i;
			break;
		}
	}
	for (int i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
	}
	return 0;
}

#endif // CLRPROF_TESTHOOKS
