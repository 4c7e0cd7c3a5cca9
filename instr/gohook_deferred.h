#ifndef CLRPROF_GOHOOK_DEFERRED_H
#define CLRPROF_GOHOOK_DEFERRED_H

#include <stddef.h>
#include <stdint.h>

#include "ringcore.h"

#define EXPORT __attribute__((visibility("default")))

// The record info a deferred wrap passes its entries above the method's
// id (bits 0 to QID_BITS-1): bits 0-7 of the info the arguments that are
// strings, then these.
#define QID_BITS 22
#define QINFO_RETSTR 0x100
#define QINFO_TIME 0x200

// A thread's ring of deferred Go hook records (gohook_deferred.c).
typedef struct qring {
	struct qring *next;
	uint64_t serial; // never reused: the drainer's key for the thread
	uint64_t tid;
	uint32_t size; // bytes of buf, a power of two
	int finished;  // the thread has exited
	void *map;     // the mapping that holds a large ring (qalloc), else NULL
	size_t maplen;
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
	uint64_t dropped_seen;
	uint8_t buf[] __attribute__((aligned(64)));
} qring;

CLRPROF_RING_CHECK_LAYOUT(qring, tail_seen);

// Where buf starts (cgo does not show a flexible array member to Go).
enum { QRING_BUF = offsetof(qring, buf) };

void clrprof_q_setsize(uint32_t size);
uint64_t clrprof_q_lost(void);
uint64_t clrprof_q_now(void);
int clrprof_q_rings(qring **out, int max);
uint32_t clrprof_q_sleeping(void);
void clrprof_q_wait(uint32_t seen, int64_t timeout_ns);
void clrprof_q_awake(void);

#endif
