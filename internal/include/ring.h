// Per-thread event rings: the C side of the SDK's hot-path recording (ELT
// hooks, allocations). Each runtime thread that records gets its own ring
// of fixed-size slots (two 64-bit words) in C memory; it is the only
// producer, and one Go goroutine is the only consumer. The producer never
// blocks and takes no lock: when its ring is full the event is counted as
// dropped. A ring whose thread has exited is reused by a new thread once
// the consumer has drained it.
#ifndef CLRPROF_RING_H
#define CLRPROF_RING_H

// The producer's core (head, tail_cache, limit; tail): ringcore.h.
#include "ringcore.h"
// The cold half (allocating, listing, thread exit): ringset.h.
#ifndef __ASSEMBLER__
#include "ringset.h"
#endif

#define CLRPROF_RING_OFF_HEAD 0
#define CLRPROF_RING_OFF_TAILCACHE 8
#define CLRPROF_RING_OFF_MASK 16
#define CLRPROF_RING_OFF_SLOTS 24
#define CLRPROF_RING_OFF_DROPPED 32
#define CLRPROF_RING_OFF_THRESH 40
#define CLRPROF_RING_OFF_LIMIT 48
#define CLRPROF_RING_OFF_TAIL 64

#ifndef __ASSEMBLER__

#include <stdint.h>

#pragma GCC visibility push(hidden)

// The field offsets are used by elt_linux_amd64.S (CLRPROF_RING_OFF_*).
typedef struct clrprof_ring {
	volatile uint64_t head;       // 0: next slot the producer writes
	uint64_t tail_cache;          // 8: the producer's last view of tail
	uint64_t mask;                // 16: slots - 1
	uint64_t *slots;              // 24: 2*slots words
	volatile uint64_t dropped;    // 32: events lost to a full ring
	uint64_t thresh;              // 40: the ELT stubs' fast path ends past this fill level
	uint64_t limit;               // 48: tail_cache + thresh (ringcore.h)
	uint64_t pad0[1];
	volatile uint64_t tail;       // 64: next slot the consumer reads
	uint64_t pad1[7];
	uint64_t pad2[6];              // where the cold fields were (now ringset.h's node): aux keeps its offset
	uint64_t aux[4];               // 176: per-thread state of the recorder (e.g. sampling)
} clrprof_ring;

CLRPROF_RING_CHECK_LAYOUT(clrprof_ring, tail_cache);
_Static_assert(offsetof(clrprof_ring, head) == CLRPROF_RING_OFF_HEAD &&
                   offsetof(clrprof_ring, tail_cache) == CLRPROF_RING_OFF_TAILCACHE &&
                   offsetof(clrprof_ring, mask) == CLRPROF_RING_OFF_MASK &&
                   offsetof(clrprof_ring, slots) == CLRPROF_RING_OFF_SLOTS &&
                   offsetof(clrprof_ring, dropped) == CLRPROF_RING_OFF_DROPPED &&
                   offsetof(clrprof_ring, thresh) == CLRPROF_RING_OFF_THRESH &&
                   offsetof(clrprof_ring, limit) == CLRPROF_RING_OFF_LIMIT &&
                   offsetof(clrprof_ring, tail) == CLRPROF_RING_OFF_TAIL,
               "CLRPROF_RING_OFF_* (elt_linux_amd64.S) match clrprof_ring");
_Static_assert(offsetof(clrprof_ring, aux) == 176, "aux (alloc.c's fast path) where it was");

// clrprof_ring_init prepares s (ringset.h) for rings of `slots` two-word
// slots of this structure (rounded up to a power of two, at least 64),
// reused by a new thread once drained after their thread's exit. Returns
// 0 or an errno value.
int clrprof_ring_init(clrprof_ringset *s, uint64_t slots, void *info);

// clrprof_ring_acquire returns a ring for the calling thread (claiming a
// free one or allocating a new one) and stores it in *tls, or NULL if
// memory is short.
clrprof_ring *clrprof_ring_acquire(clrprof_ringset *s, void **tls);

// clrprof_ring_reserve returns the first of n consecutive free slots of r
// (wrapping is the caller's business through the mask), or NULL (and
// counts one dropped event) when the ring has no room; publish with
// clrprof_ring_publish(r, n).
static inline uint64_t *clrprof_ring_reserve(clrprof_ring *r, uint64_t n, uint64_t *index) {
	uint64_t h = r->head;
	uint64_t cap = r->mask + 1;
	if (h + n - r->tail_cache > cap) {
		clrprof_ring_seen(&r->tail, &r->tail_cache, &r->limit);
		if (h + n - r->tail_cache > cap) {
			__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
			return NULL;
		}
	}
	*index = h;
	return &r->slots[2 * (h & r->mask)];
}

static inline void clrprof_ring_publish(clrprof_ring *r, uint64_t n) {
	clrprof_ring_commit(&r->head, r->head + n);
}

static inline uint64_t *clrprof_ring_slot(clrprof_ring *r, uint64_t index) {
	return &r->slots[2 * (index & r->mask)];
}

// clrprof_tsc reads the time-stamp counter (converted to nanoseconds by
// Go).
static inline uint64_t clrprof_tsc(void) {
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

// Back-pressure between a recorder's producers and its draining goroutine:
// the goroutine sets wake while it sleeps, and a producer that finds its
// ring past the threshold (or full) writes the eventfd fd to wake it; a
// producer whose ring is full waits for room (nanosleep) as long as the
// consumer makes progress, at most wait_ns without progress, then drops
// (counted in the ring's dropped) and sets stalled, which makes every
// producer drop at once until the consumer drains again.
typedef struct clrprof_backpressure {
	volatile uint8_t wake;       // offset 0 (read by elt_linux_amd64.S)
	volatile uint8_t stalled;
	int fd;                      // eventfd, -1 before clrprof_bp_init
	volatile uint8_t *on;        // the recorder's gate: no waiting when 0
	volatile uint64_t wait_ns;   // 0: never wait
	volatile uint64_t waits;     // records that waited for room
} clrprof_backpressure;

int clrprof_bp_init(clrprof_backpressure *bp, volatile uint8_t *on);
void clrprof_bp_wake(clrprof_backpressure *bp);
// clrprof_ring_reserve_wait is clrprof_ring_reserve with back-pressure:
// it wakes the consumer past r->thresh and waits while the ring is full.
uint64_t *clrprof_ring_reserve_wait(clrprof_backpressure *bp, clrprof_ring *r, uint64_t n, uint64_t *index);

// Test helpers: run n new pthreads, each recording `events` two-word
// events (a, i) into s through its own thread-local pointer, and join
// them; clrprof_ring_test_bytes does the same with byte records of 8 to
// 48 bytes (a header word (i << 8 | words), then words (id << 56 | i))
// into a set of byte rings (clrprof_ring_test_bytes_init), waiting
// (sched_yield) while a ring is full.
int clrprof_ring_test_threads(clrprof_ringset *s, int n, int events);
int clrprof_ring_test_bytes_init(clrprof_ringset *s, uint64_t bytes, int after_exit);
int clrprof_ring_test_bytes(clrprof_ringset *s, int n, int events);

#pragma GCC visibility pop

#endif // __ASSEMBLER__

#endif
