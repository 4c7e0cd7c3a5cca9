#ifndef CLRPROF_GOHOOK_DEFERRED_H
#define CLRPROF_GOHOOK_DEFERRED_H

#include <stddef.h>
#include <stdint.h>

#include "ringcore.h"
#include "ringset.h"

#define EXPORT __attribute__((visibility("default")))

// The record info a deferred wrap passes its entries above the method's
// id (bits 0 to QID_BITS-1): bits 0-7 of the info the arguments that are
// strings, then these.
#define QID_BITS 22
#define QINFO_RETSTR 0x100
#define QINFO_TIME 0x200

// A thread's ring of deferred Go hook records (gohook_deferred.c): the
// producer's half (the cold half, the node before it in the same block,
// is internal/ring's: ringset.h). The fields keep the offsets they had
// when the node's fields were here (size at 24, head at 64), so that the
// entries' fast paths are the same instructions.
typedef struct qring {
	uint64_t pad0[3];
	uint32_t size; // bytes of buf, a power of two
	// The thread's line (the drainer reads head and dropped once a pass):
	// ringcore.h's head, tail_seen and limit.
	uint64_t head __attribute__((aligned(64))); // written by the thread
	uint64_t limit;     // the thread's: head may grow to it (tail_seen + size less the bytes kept for the exits of recorded enters)
	uint64_t wake_at;   // the thread's: once head reaches it, tail is read again (half a ring on from tail_seen)
	uint64_t dropped;   // calls dropped (written by the thread)
	uint64_t tail_seen; // the thread's last reading of tail
	// The drainer's line (the thread reads tail only when its head
	// reaches limit or wake_at: once per half a ring while the drain keeps
	// up).
	uint64_t tail __attribute__((aligned(64)));
	uint8_t buf[] __attribute__((aligned(64)));
} qring;

CLRPROF_RING_CHECK_LAYOUT(qring, tail_seen);
// buf is the ring's records as ringset.h places them: right after the
// structure (whose size is a multiple of a cache line).
_Static_assert(sizeof(qring) == offsetof(qring, buf) && sizeof(qring) % CLRPROF_RING_LINE == 0,
               "qring's buf is where clrprof_ringset_take puts the records");
_Static_assert(offsetof(qring, size) == 24 && offsetof(qring, head) == 64, "qring's producer fields as before");

// The set of every thread's deferred ring (freed once drained after the
// thread's exit).
extern clrprof_ringset clrprof_q_set;

// Where buf starts (cgo does not show a flexible array member to Go).
enum { QRING_BUF = offsetof(qring, buf) };

void clrprof_q_setsize(uint32_t size);
uint64_t clrprof_q_now(void);
uint32_t clrprof_q_sleeping(void);
void clrprof_q_wait(uint32_t seen, int64_t timeout_ns);
void clrprof_q_awake(void);

#endif
