// The cold half of clrprof's per-thread rings, one implementation
// (internal/ring/ring.c) for every recorder: the ELT and allocation rings
// (ring.h: two-word slots) and the deferred Go hook rings
// (instr/gohook_deferred.c: byte records). The producer's hot half is the
// recorder's own structure over ringcore.h; what is here runs once per
// thread (its first record, its exit), and the consumer is Go's
// (internal/ring: Set.Consume).
//
// A ring is one block of memory: a node (clrprof_ringnode: the set's list,
// the owner, the consumer's bookkeeping), then the recorder's structure
// (set->hdr bytes, its producer's line and the consumer's tail), then the
// records (node->bytes, a power of two). A ring of 2 MiB or more is a
// mapping of its own with the records aligned to 2 MiB and advised into
// huge pages (MADV_HUGEPAGE: its thread then faults once per 2 MiB, not
// per 4 KiB, the first time round); smaller rings are aligned to a cache
// line. Only the node and the recorder's structure are zeroed.
//
// A thread takes a ring at its first record (clrprof_ringset_take), which
// stores the recorder's structure in the thread's pointer (*tls) and in a
// pthread key whose destructor, at the thread's exit, clears that pointer
// and marks the ring DEAD. The consumer drains a DEAD ring and marks it
// FREE; what happens then is the set's policy (after_exit): REUSE (a new
// thread claims it: the ELT and allocation rings, whose threads come and
// go) or RELEASE (clrprof_ringset_sweep, the consumer's, unmaps it: the
// deferred rings, which may be large).
//
// Lock-free: threads push new rings at the list's head with a CAS; only
// the consumer unlinks (RELEASE), so a node is never freed under a walk
// (the claim walk of REUSE sets, the one walk that is not the consumer's,
// never meets an unlinked node: REUSE sets never unlink).
#ifndef CLRPROF_RINGSET_H
#define CLRPROF_RINGSET_H

#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

enum {
	CLRPROF_RING_LIVE = 1, // owned by a running thread
	CLRPROF_RING_DEAD = 2, // its thread exited; the consumer drains it
	CLRPROF_RING_FREE = 3, // dead and drained: claimed again (REUSE) or unmapped (RELEASE)
	CLRPROF_RING_CLAIMING = 4, // a thread is claiming it (REUSE): the consumer skips it until LIVE
};

// What becomes of a ring once its thread has exited and it is drained.
enum {
	CLRPROF_RING_REUSE = 0,   // a new thread claims it
	CLRPROF_RING_RELEASE = 1, // the consumer frees it (clrprof_ringset_sweep)
};

struct clrprof_ringset;

typedef struct clrprof_ringnode {
	struct clrprof_ringnode *next; // in the set's list
	struct clrprof_ringset *set;
	void *ring;                    // the recorder's structure (the node's block, set->hdr bytes)
	uint8_t *data;                 // the records (bytes of them)
	uint64_t bytes;                // a power of two
	volatile uint64_t *head;       // in ring: the producer's next position (in set->unit)
	volatile uint64_t *tail;       // in ring: the consumer's next position
	volatile uint64_t *dropped;    // in ring: records the producer dropped
	volatile int32_t state;        // CLRPROF_RING_*
	uint32_t os_tid;               // gettid() of the owner
	volatile uint64_t managed_tid; // the runtime's ThreadID of the owner (0 unknown)
	volatile uint64_t serial;      // set at every claim, never reused: the consumer's key for a thread
	uint64_t dropped_seen;         // the consumer's: dropped as last reported
	void **tls_slot;               // the owner's thread-local pointer to ring
	void *map;                     // the mapping of a large ring, else NULL (the block is the node)
	size_t maplen;
} clrprof_ringnode;

typedef struct clrprof_ringset {
	clrprof_ringnode *volatile list;
	uint64_t bytes;            // records per new ring, in bytes (a power of two)
	uint32_t unit;             // bytes per step of head and tail (16: two-word slots; 1: bytes)
	uint32_t hdr;              // bytes of the recorder's structure (a multiple of 64)
	uint32_t off_head;         // offsets in the recorder's structure
	uint32_t off_tail;
	uint32_t off_dropped;
	int32_t after_exit;        // CLRPROF_RING_REUSE or CLRPROF_RING_RELEASE
	volatile uint64_t rings;   // rings held (allocated and not freed)
	volatile uint64_t lost;    // records lost because no ring could be allocated
	volatile uint64_t refused; // records lost (also in lost) because max_rings were held
	uint64_t max_rings;        // 0: no limit
	volatile uint64_t serial;  // the last claim's serial
	uint64_t thresh;           // slot rings: the fill level that ends the ELT stubs' fast path (0: full)
	void *info;                // ICorProfilerInfo* for GetCurrentThreadID, or NULL
	unsigned key;              // pthread key whose destructor marks a ring dead
	int key_ok;
} clrprof_ringset;

// CLRPROF_RINGSET_LAYOUT(s, T, unit) describes the recorder's structure T
// (fields head, tail, dropped) to set s: the arguments of
// clrprof_ringset_layout.
#define CLRPROF_RINGSET_LAYOUT(s, T, unit) \
	clrprof_ringset_layout((s), sizeof(T), (unit), offsetof(T, head), offsetof(T, tail), offsetof(T, dropped))

// clrprof_ringset_layout tells s what the recorder's structure is. Call
// it before the first clrprof_ringset_init.
void clrprof_ringset_layout(clrprof_ringset *s, uint32_t hdr, uint32_t unit, uint32_t off_head, uint32_t off_tail,
                            uint32_t off_dropped);

// clrprof_ringset_init prepares s for new rings of `bytes` bytes of records
// (rounded up to a power of two, at least 64 units, at most 1 GiB of
// records): the pthread key (once), the size, info, the policy. Returns 0
// or an errno value. It may be called again to change the size of the
// rings made from then on.
int clrprof_ringset_init(clrprof_ringset *s, uint64_t bytes, void *info, int after_exit);

// clrprof_ringset_take gives the calling thread a ring: a FREE one it
// claims (REUSE sets) or a new one. It sets the node's owner and serial,
// stores the ring (the recorder's structure) in *tls and in the set's
// pthread key, and returns the node (the recorder sets its structure up
// then: a claimed ring keeps its fields; *node->tail is where the new
// owner starts). NULL, with the loss counted in s->lost, when it cannot.
clrprof_ringnode *clrprof_ringset_take(clrprof_ringset *s, void **tls);

// clrprof_ringset_sweep (the consumer's) unlinks and frees the FREE rings
// of a RELEASE set. Returns how many it freed.
int clrprof_ringset_sweep(clrprof_ringset *s);

// The size of a node in a block (the recorder's structure follows it).
#define CLRPROF_RINGNODE_SPACE ((sizeof(clrprof_ringnode) + 63) & ~(size_t)63)

// clrprof_ringnode_of is the node of a recorder's structure.
static inline clrprof_ringnode *clrprof_ringnode_of(void *ring) {
	return (clrprof_ringnode *)(void *)((char *)ring - CLRPROF_RINGNODE_SPACE);
}

#pragma GCC visibility pop

#endif
