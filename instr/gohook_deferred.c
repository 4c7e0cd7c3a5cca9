//go:build cgo

#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "gohook_deferred.h"

// The P/Invoke entries of deferred Go hooks (GoHooks.Deferred). They never
// call Go and take no signal guard: each appends a record to the calling
// thread's ring (single producer: this thread; single consumer: the drain
// goroutine, gohook_deferred.go, which reads the records in place and then
// advances tail) and returns. The record layout is documented in
// gohook_deferred_decode.go, which decodes it.
//
// An enter is recorded only if the ring has room for it and for its exit
// (qring.limit leaves out the bytes kept for the exits of recorded enters),
// and it returns 1 if it was recorded, 0 if it was dropped; the wrap hands
// that back to the exit entry as its state, which records the exit iff it
// is 1. So an exit is recorded iff its enter was, and the room kept
// means a recorded enter's exit always fits (its strings are cut to what
// fits, and marked truncated, if the ring is short of room).

// A record starts with one word (gohook_deferred_decode.go documents and decodes
// the layout): its length, kind, flags and method id (qhdr0), then the
// clock if the method records timestamps. An enter without arguments or
// clock is 8 bytes, an exit without strings or clock 16.
#define QEXIT_MAX 64 // an exit record without strings (with 5 member words): kept for each recorded enter
#define QSTR_MAX 1024 // UTF-16 units copied per string

clrprof_ringset clrprof_q_set;
static pthread_once_t qonce = PTHREAD_ONCE_INIT;
static __thread void *qmine __attribute__((tls_model("initial-exec"))); // the thread's qring: one %fs-relative load, as elt's stubs
static uint32_t qsize = 256 << 10;

// The wrap passes each entry the method's id with the method's record
// info above it (qidinfo in gohook_deferred.go): bits 0-21 the id, 22-29 the
// arguments that are strings, 30 the return value is a string, 31 record
// timestamps. The entries read what they need from the word itself, not
// from a table: a call loads nothing but its thread's ring.
static inline int32_t qid(int32_t w) { return (int32_t)((uint32_t)w & ((1u << QID_BITS) - 1)); }
static inline uint16_t qinfo(int32_t w) { return (uint16_t)((uint32_t)w >> QID_BITS); }

// qinit prepares the set: rings of qsize bytes, freed once drained after
// their thread's exit (ringset.h).
static void qinit(void) {
	CLRPROF_RINGSET_LAYOUT(&clrprof_q_set, qring, 1);
	clrprof_ringset_init(&clrprof_q_set, qsize, NULL, CLRPROF_RING_RELEASE);
}

void clrprof_q_setsize(uint32_t size) {
	if (size >= 64 && (size & (size - 1)) == 0) {
		pthread_once(&qonce, qinit);
		qsize = size;
		__atomic_store_n(&clrprof_q_set.bytes, (uint64_t)size, __ATOMIC_RELAXED);
	}
}

uint64_t clrprof_q_now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// qnew gives the thread its ring (internal/ring's clrprof_ringset_take:
// a block of the node, the qring and buf; 2 MiB or more in huge pages;
// its pthread key clears qmine and marks the ring finished at the
// thread's exit, and the drain frees it once empty).
static qring *qnew(void) {
	pthread_once(&qonce, qinit);
	clrprof_ringnode *n = clrprof_ringset_take(&clrprof_q_set, &qmine);
	if (n == NULL) {
		return NULL;
	}
	qring *r = n->ring;
	r->size = (uint32_t)n->bytes;
	r->tail_seen = 0;
	r->limit = r->size;
	r->wake_at = r->size / 2;
	return r;
}

static inline qring *qring_self(void) {
	qring *r = qmine;
	return r != NULL ? r : qnew();
}

// put copies n bytes at the ring position pos (wrapping).
static inline void qput(qring *r, uint64_t pos, const void *src, uint32_t n) {
	uint32_t off = (uint32_t)(pos & (r->size - 1));
	uint32_t first = r->size - off;
	if (first >= n) {
		memcpy(r->buf + off, src, n);
	} else {
		memcpy(r->buf + off, src, first);
		memcpy(r->buf, (const uint8_t *)src + first, n - first);
	}
}

// qword writes the 8-byte word at the ring position pos (a multiple of 8:
// every word is contiguous, and the headers are written word by word from
// registers, never assembled on the stack first).
static inline void qword(qring *r, uint64_t pos, uint64_t w) {
	*(uint64_t *)(void *)(r->buf + (pos & (r->size - 1))) = w;
}

// qhdr0 is a record's first word: length (bits 0-15), kind (16-17),
// clock follows (18), argument count (19-22), flags (24-31), id (32-63).
static inline uint64_t qhdr0(uint32_t len, uint32_t kind, int time, uint32_t n, uint32_t flags, int32_t id) {
	return (uint64_t)len | (uint64_t)kind << 16 | (uint64_t)(time != 0) << 18 | (uint64_t)n << 19 |
	       (uint64_t)(flags & 0xff) << 24 | (uint64_t)(uint32_t)id << 32;
}

static inline uint32_t pad8(uint32_t n) { return (n + 7) & ~7u; }

// A pinned System.String: length (int32) at +8, UTF-16 at +12.
static inline int32_t qstrlen(int64_t s) { return s == 0 ? -1 : *(const int32_t *)(uintptr_t)(s + 8); }

// qputstr writes a string of at most max units: int32 units (-1 null),
// uint32 flags (bit 0 truncated), the units, padding. It returns the bytes
// written.
static inline uint32_t qputstr(qring *r, uint64_t pos, int64_t s, uint32_t max) {
	int32_t hdr[2] = {-1, 0};
	if (s == 0) {
		qput(r, pos, hdr, 8);
		return 8;
	}
	int32_t n = qstrlen(s);
	if (n < 0) {
		n = 0;
	}
	if ((uint32_t)n > max) {
		n = (int32_t)max;
		hdr[1] = 1;
	}
	hdr[0] = n;
	qput(r, pos, hdr, 8);
	qput(r, pos + 8, (const void *)(uintptr_t)(s + 12), (uint32_t)n * 2);
	return 8 + pad8((uint32_t)n * 2);
}

static inline uint32_t qstrsize(int64_t s) {
	int32_t n = qstrlen(s);
	if (n < 0) {
		return 8;
	}
	if (n > QSTR_MAX) {
		n = QSTR_MAX;
	}
	return 8 + pad8((uint32_t)n * 2);
}

// Waking the drain. It sleeps (clrprof_q_wait) until DeferredPoll has
// passed or a thread's ring is half full, whichever comes first: a thread
// that finds its ring half full while the drain sleeps wakes it (one
// futex wake per half a ring at most, never a wait), so that a thread
// calling hooked methods at full speed is drained long before its ring is
// full however long the poll interval.
static uint32_t qwake;     // the futex word: incremented at each wake
static int qsleeping;      // the drain is in clrprof_q_wait, or about to be

static void qwakeup(void) {
	int one = 1;
	if (__atomic_compare_exchange_n(&qsleeping, &one, 0, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
		__atomic_fetch_add(&qwake, 1, __ATOMIC_SEQ_CST);
		syscall(SYS_futex, &qwake, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

// The thread's room. head may grow to limit: tail_seen + size less the
// bytes kept for the exits of recorded enters (an enter of n bytes takes
// n + QEXIT_MAX of room, its exit gives QEXIT_MAX back and takes its own
// size of it), so that a call checks its room with one comparison. A
// thread reads the drainer's tail again (qseen) only when its head reaches
// limit or wake_at, which lies half a ring on from tail_seen: once per half
// a ring of records while the drain keeps up, not once a call.

// qseen reads tail again and moves limit and wake_at on by what the drain
// freed since the last reading.
static inline void qseen(qring *r) {
	uint64_t t = clrprof_ring_seen(&r->tail, &r->tail_seen, &r->limit);
	r->wake_at = t + r->size / 2;
}

// qroom tells whether r has room, by the thread's last reading of tail,
// for an enter record of need bytes and its exit, besides the exits its
// other recorded enters keep.
static inline int qroom(qring *r, uint64_t need) { return r->head + need + QEXIT_MAX <= r->limit; }

// qfits is qroom with a new reading of tail when the last one shows no
// room.
static inline int qfits(qring *r, uint64_t need) {
	if (!qroom(r, need)) {
		qseen(r);
	}
	return qroom(r, need);
}

// qhalf runs when a thread's head reaches wake_at: with a new reading of
// tail, it wakes the drain if it sleeps and the ring is half full or
// more; while the ring stays that full it looks again every sixteenth of
// the ring, not at every record.
static __attribute__((noinline)) void qhalf(qring *r) {
	qseen(r);
	if (r->head >= r->wake_at) {
		r->wake_at = r->head + r->size / 16;
		if (__atomic_load_n(&qsleeping, __ATOMIC_RELAXED)) {
			qwakeup();
		}
	}
}

// qpublish hands the drain r's records up to end, and wakes it if it
// sleeps and r is half full or more.
static inline void qpublish(qring *r, uint64_t end) {
	clrprof_ring_commit(&r->head, end);
	if (end >= r->wake_at) {
		qhalf(r);
	}
}

// clrprof_q_sleeping announces that the drain is about to sleep and
// returns the futex word to wait on: the drain checks the rings once more
// after it (a thread that filled its ring before the announcement is seen
// then; one that fills it after changes the word, or wakes the wait).
uint32_t clrprof_q_sleeping(void) {
	__atomic_store_n(&qsleeping, 1, __ATOMIC_SEQ_CST);
	return __atomic_load_n(&qwake, __ATOMIC_SEQ_CST);
}

// clrprof_q_wait sleeps until a thread wakes the drain or timeout_ns has
// passed, unless the word is no longer seen.
void clrprof_q_wait(uint32_t seen, int64_t timeout_ns) {
	struct timespec ts = {timeout_ns / 1000000000, timeout_ns % 1000000000};
	syscall(SYS_futex, &qwake, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0);
	__atomic_store_n(&qsleeping, 0, __ATOMIC_SEQ_CST);
}

// clrprof_q_awake tells the threads that the drain did not sleep after
// all.
void clrprof_q_awake(void) { __atomic_store_n(&qsleeping, 0, __ATOMIC_SEQ_CST); }

static int64_t qenter(int32_t idw, uint32_t n, const int64_t *a) {
	qring *r = qring_self();
	if (r == NULL) {
		return 0; // counted in clrprof_q_set.lost
	}
	int32_t id = qid(idw);
	uint16_t info = qinfo(idw);
	int timed = (info & QINFO_TIME) != 0;
	uint32_t need = 8 + (timed ? 8 : 0) + 8 * n;
	uint16_t strs = (uint16_t)(info & 0xff & ((1u << n) - 1));
	if (strs != 0) {
		for (uint32_t i = 0; i < n; i++) {
			if (strs & (1u << i)) {
				need += qstrsize(a[i]);
			}
		}
	}
	uint64_t head = r->head;
	if (!qfits(r, need)) {
		__atomic_store_n(&r->dropped, r->dropped + 1, __ATOMIC_RELAXED);
		return 0;
	}
	qword(r, head, qhdr0(need, 1, timed, n, strs, id));
	uint64_t pos = head + 8;
	if (timed) {
		qword(r, pos, clrprof_q_now());
		pos += 8;
	}
	for (uint32_t i = 0; i < n; i++) {
		qword(r, pos, (strs & (1u << i)) ? 0 : (uint64_t)a[i]);
		pos += 8;
	}
	if (strs != 0) {
		for (uint32_t i = 0; i < n; i++) {
			if (strs & (1u << i)) {
				pos += qputstr(r, pos, a[i], QSTR_MAX);
			}
		}
	}
	r->limit -= QEXIT_MAX;
	qpublish(r, head + need);
	return 1;
}

static __attribute__((noinline)) void qexit(qring *r, int32_t id, uint16_t info, int64_t ret, int64_t exc, int64_t type,
                                            uint32_t minfo, const int64_t *m);

EXPORT void clrprof_gohook_q_exit(int32_t idw, int64_t state, int64_t ret, int64_t exc, int64_t type) {
	if (state != 1) {
		return; // its enter was dropped
	}
	qring *r = qmine;
	if (r == NULL || r->limit + QEXIT_MAX > r->tail_seen + r->size) {
		return; // cannot happen: the enter was recorded in this thread's ring
	}
	r->limit += QEXIT_MAX;
	int32_t id = qid(idw);
	uint16_t info = qinfo(idw);
	if ((info & (QINFO_RETSTR | QINFO_TIME)) == 0 && exc == 0) {
		// The common exit (no strings, no clock, no exception): 16
		// bytes, here, without the general path's frame.
		uint64_t head = r->head;
		qword(r, head, qhdr0(16, 2, 0, 0, 0, id));
		qword(r, head + 8, (uint64_t)ret);
		qpublish(r, head + 16);
		return;
	}
	qexit(r, id, info, ret, exc, type, 0, NULL);
}

// The exit entry of a method whose hooks read members of its return value
// (GoHooks.Members): minfo is the number of members n (bits 0-2, at most
// 4) and which are strings (bits 4-7); the record holds n+1 words after
// the return value (the status word, then the members) and their strings
// after the others.
EXPORT void clrprof_gohook_q_exitm(int32_t idw, int64_t state, int64_t ret, int64_t exc, int64_t type, int32_t minfo,
                                   int64_t status, int64_t m0, int64_t m1, int64_t m2, int64_t m3) {
	if (state != 1) {
		return;
	}
	qring *r = qmine;
	if (r == NULL || r->limit + QEXIT_MAX > r->tail_seen + r->size) {
		return;
	}
	r->limit += QEXIT_MAX;
	int64_t m[] = {status, m0, m1, m2, m3};
	qexit(r, qid(idw), qinfo(idw), ret, exc, type, (uint32_t)minfo & 0xf7, m);
}

// qstrfit sizes a string of a record from the room left: it returns the
// units to copy (0 and no string when not even its header fits: then
// *ok is 0) and takes its bytes from *room and adds them to *need.
static inline uint32_t qstrfit(int64_t s, uint32_t *room, uint32_t *need, int *ok) {
	uint32_t sz = qstrsize(s);
	*ok = 1;
	if (*room >= sz) {
		*room -= sz;
		*need += sz;
		return QSTR_MAX;
	}
	if (*room >= 8) {
		uint32_t max = (*room - 8) / 2 & ~3u;
		*need += 8 + pad8(max * 2);
		*room -= 8 + pad8(max * 2);
		return max;
	}
	*ok = 0;
	return 0;
}

// qexit records any other exit (r's room for it already given back to
// limit); minfo and m are clrprof_gohook_q_exitm's (0 and NULL without
// members).
static void qexit(qring *r, int32_t id, uint16_t info, int64_t ret, int64_t exc, int64_t type, uint32_t minfo,
                  const int64_t *m) {
	int timed = (info & QINFO_TIME) != 0;
	uint32_t nm = minfo & 7;
	if (nm > 4) {
		nm = 4;
	}
	uint32_t nw = m != NULL ? nm + 1 : 0; // words after the return value
	uint32_t mstr = (minfo >> 4) & ((1u << nm) - 1);
	uint32_t need = 16 + (timed ? 8 : 0) + 8 * nw;
	uint16_t flags = (uint16_t)(mstr << 3);
	int retstr = (info & QINFO_RETSTR) != 0;
	if (exc != 0) {
		flags |= 1;
	}
	if (retstr) {
		flags |= 2;
	}
	if (exc != 0 && type != 0) {
		flags |= 4;
	}
	uint64_t head = r->head;
	// Room for strings: what the ring has left, less what the other
	// pending exits keep (by a new reading of tail: the exit itself fits
	// in the room its enter kept).
	uint32_t room = 0;
	if (flags & 0x7e) {
		qseen(r);
		room = (uint32_t)(r->limit - head) - need;
	}
	uint32_t rmax = 0, tmax = 0;
	if (retstr) {
		// Each string gets 8 bytes of header and whatever units fit.
		uint32_t s = qstrsize(ret);
		if (room >= s) {
			rmax = QSTR_MAX;
			room -= s;
			need += s;
		} else if (room >= 8) {
			rmax = (room - 8) / 2 & ~3u;
			need += 8 + pad8(rmax * 2);
			room -= 8 + pad8(rmax * 2);
		} else {
			flags &= (uint16_t)~2; // no room even for a string header (a tiny ring)
		}
	}
	if (flags & 4) {
		int ok;
		tmax = qstrfit(type, &room, &need, &ok);
		if (!ok) {
			flags &= (uint16_t)~4;
		}
	}
	uint32_t mmax[4] = {0, 0, 0, 0};
	for (uint32_t j = 0; j < nm; j++) {
		if (mstr & (1u << j)) {
			int ok;
			mmax[j] = qstrfit(m[1 + j], &room, &need, &ok);
			if (!ok) {
				// No room for the string: the member is marked null
				// (its status bit) and not written.
				flags &= (uint16_t)~(8u << j);
				mstr &= ~(1u << j);
			}
		}
	}
	int64_t status = nw > 0 ? m[0] : 0;
	if (nw > 0) {
		for (uint32_t j = 0; j < nm; j++) {
			if ((minfo >> 4) & (1u << j) && !(mstr & (1u << j))) {
				status |= (int64_t)1 << j;
			}
		}
	}
	qword(r, head, qhdr0(need, 2, timed, nw, flags, id));
	uint64_t pos = head + 8;
	if (timed) {
		qword(r, pos, clrprof_q_now());
		pos += 8;
	}
	qword(r, pos, retstr ? 0 : (uint64_t)ret);
	pos += 8;
	for (uint32_t j = 0; j < nw; j++) {
		uint64_t v = j == 0 ? (uint64_t)status : (((minfo >> 4) & (1u << (j - 1))) ? 0 : (uint64_t)m[j]);
		qword(r, pos, v);
		pos += 8;
	}
	if (flags & 2) {
		pos += qputstr(r, pos, ret, rmax);
	}
	if (flags & 4) {
		pos += qputstr(r, pos, type, tmax);
	}
	for (uint32_t j = 0; j < nm; j++) {
		if (mstr & (1u << j)) {
			pos += qputstr(r, pos, m[1 + j], mmax[j]);
		}
	}
	qpublish(r, head + need);
}

EXPORT int64_t clrprof_gohook_q_enter0(int32_t idw) {
	// The common enter (no arguments, no clock): 8 bytes, here, without
	// the general path's frame; qenter takes the rest (a new thread, a
	// clock, a ring short of room: it counts the drop).
	qring *r = qmine;
	if (r != NULL && (qinfo(idw) & QINFO_TIME) == 0) {
		uint64_t head = r->head;
		if (qroom(r, 8)) {
			qword(r, head, qhdr0(8, 1, 0, 0, 0, qid(idw)));
			r->limit -= QEXIT_MAX;
			qpublish(r, head + 8);
			return 1;
		}
	}
	return qenter(idw, 0, NULL);
}
EXPORT int64_t clrprof_gohook_q_enter1(int32_t idw, int64_t a0) {
	int64_t a[] = {a0};
	return qenter(idw, 1, a);
}
EXPORT int64_t clrprof_gohook_q_enter2(int32_t idw, int64_t a0, int64_t a1) {
	int64_t a[] = {a0, a1};
	return qenter(idw, 2, a);
}
EXPORT int64_t clrprof_gohook_q_enter3(int32_t idw, int64_t a0, int64_t a1, int64_t a2) {
	int64_t a[] = {a0, a1, a2};
	return qenter(idw, 3, a);
}
EXPORT int64_t clrprof_gohook_q_enter4(int32_t idw, int64_t a0, int64_t a1, int64_t a2, int64_t a3) {
	int64_t a[] = {a0, a1, a2, a3};
	return qenter(idw, 4, a);
}
EXPORT int64_t clrprof_gohook_q_enter5(int32_t idw, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4) {
	int64_t a[] = {a0, a1, a2, a3, a4};
	return qenter(idw, 5, a);
}
EXPORT int64_t clrprof_gohook_q_enter6(int32_t idw, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5};
	return qenter(idw, 6, a);
}
EXPORT int64_t clrprof_gohook_q_enter7(int32_t idw, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5, int64_t a6) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5, a6};
	return qenter(idw, 7, a);
}
EXPORT int64_t clrprof_gohook_q_enter8(int32_t idw, int64_t a0, int64_t a1, int64_t a2, int64_t a3, int64_t a4,
                                       int64_t a5, int64_t a6, int64_t a7) {
	int64_t a[] = {a0, a1, a2, a3, a4, a5, a6, a7};
	return qenter(idw, 8, a);
}
