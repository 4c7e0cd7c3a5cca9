// The core of clrprof's per-thread rings, one implementation for the
// ELT and allocation rings (ring.h: fixed two-word slots) and the
// deferred Go hook rings (instr/gohook_deferred.h: variable-length byte
// records). Header-only: everything the producer runs is static inline,
// so its path gets no call.
//
// One thread produces into a ring and one consumer drains it. Each ring
// keeps two cache lines apart:
//
//   - the producer's line: head (where the producer writes next, read by
//     the consumer), tail_seen (the producer's last reading of the
//     consumer's tail) and limit (how far head may grow by that reading);
//   - the consumer's line: tail (where the consumer reads next, written by
//     it alone).
//
// Counters grow without wrapping (64 bits), in the ring's own unit (slots
// for the ELT rings, bytes for the deferred rings); the position of a
// counter in the ring's memory is the recorder's business (a mask).
//
// The producer reads tail only when head + n passes limit (an acquire
// load, which orders its reading of the consumer's tail before it reuses
// the room the consumer freed), and moves limit on by what the consumer
// freed since its last reading; it publishes records with one release
// store of head (which orders the records before the consumer's acquire
// load of head). What limit is (the whole ring, a fill level at which the
// consumer is woken, the ring less room kept for records still owed),
// what happens when a record does not fit (drop, wait) and how the
// consumer is woken are the recorder's policy.
//
// The ELT stubs (elt/elt_linux_amd64.S) do the same in assembly over
// the offsets of ring.h (CLRPROF_RING_OFF_*), which its C checks
// against the structure with CLRPROF_RING_CHECK_LAYOUT.
// The rings' cold half (allocation, the set's list, thread exit) is
// ringset.h's, one for both.
// (Named ringcore.h because it is the producer's core alone: ring.h
// declares the slot rings built on it, ringset.h the sets that hold them.)
#ifndef CLRPROF_RINGCORE_H
#define CLRPROF_RINGCORE_H

// The cache line that keeps the producer's line from the consumer's.
#define CLRPROF_RING_LINE 64

#ifndef __ASSEMBLER__

#include <stddef.h>
#include <stdint.h>

// CLRPROF_RING_CHECK_LAYOUT(T) checks at compile time that a ring type T
// has the core's fields (head, tail_seen_field, limit, tail) with the
// producer's on one cache line and tail on another.
#define CLRPROF_RING_CHECK_LAYOUT(T, tail_seen_field)                                                        \
	_Static_assert(offsetof(T, head) / CLRPROF_RING_LINE == offsetof(T, tail_seen_field) / CLRPROF_RING_LINE &&  \
	                   offsetof(T, head) / CLRPROF_RING_LINE == offsetof(T, limit) / CLRPROF_RING_LINE,            \
	               #T ": head, " #tail_seen_field " and limit share the producer's cache line");              \
	_Static_assert(offsetof(T, tail) % CLRPROF_RING_LINE == 0 &&                                                  \
	                   offsetof(T, tail) / CLRPROF_RING_LINE != offsetof(T, head) / CLRPROF_RING_LINE,             \
	               #T ": tail starts a cache line of its own")

// clrprof_ring_seen reads the consumer's tail again (acquire) and moves
// *limit on by what the consumer freed since *tail_seen. Returns the tail.
static inline uint64_t clrprof_ring_seen(const volatile uint64_t *tail, uint64_t *tail_seen, uint64_t *limit) {
	uint64_t t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
	*limit += t - *tail_seen;
	*tail_seen = t;
	return t;
}

// clrprof_ring_room reports whether head may grow by n without passing
// *limit, reading the consumer's tail again (clrprof_ring_seen) only when
// it may not by the last reading: the producer's reserve.
static inline int clrprof_ring_room(uint64_t head, uint64_t n, const volatile uint64_t *tail, uint64_t *tail_seen,
                                    uint64_t *limit) {
	if (__builtin_expect(head + n <= *limit, 1)) {
		return 1;
	}
	clrprof_ring_seen(tail, tail_seen, limit);
	return head + n <= *limit;
}

// clrprof_ring_commit hands the consumer the records up to end: one
// release store of head, the producer's publish.
static inline void clrprof_ring_commit(volatile uint64_t *head, uint64_t end) {
	__atomic_store_n(head, end, __ATOMIC_RELEASE);
}

#endif // __ASSEMBLER__

#endif
