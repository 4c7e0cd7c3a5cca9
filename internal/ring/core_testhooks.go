//go:build clrprof_testhooks

package ring

/*
#cgo CFLAGS: -I${SRCDIR}/../include -Wall -Wextra -Wno-unused-parameter -Wno-unused-function
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringcore.h"

// A ring of variable-length records (bytes, as the deferred rings) over
// ringcore.h, for the stress test.
typedef struct tring {
	volatile uint64_t head;
	uint64_t tail_seen;
	uint64_t limit;
	uint64_t seen;  // the producer's calls of clrprof_ring_seen (through room)
	uint64_t full;  // reserves that found no room
	volatile int done;
	volatile uint64_t tail __attribute__((aligned(64)));
	uint64_t size;  // bytes, a power of two
	uint64_t next;  // the consumer's next expected sequence number
	int id;
	int events;
	uint8_t *buf;
} tring;

CLRPROF_RING_CHECK_LAYOUT(tring, tail_seen);

static void tword(tring *r, uint64_t pos, uint64_t v) { memcpy(r->buf + (pos & (r->size - 1)), &v, 8); }

static uint64_t tread(tring *r, uint64_t pos) {
	uint64_t v;
	memcpy(&v, r->buf + (pos & (r->size - 1)), 8);
	return v;
}

static uint64_t tmix(int id, uint64_t seq, uint64_t k) { return ((uint64_t)id << 56) ^ (seq * 0x9e3779b97f4a7c15ull) ^ k; }

// The producer: record i has 1 + i%6 words (a header, then words derived
// from its id and i); it waits (yields) while the ring is full.
static void *tproduce(void *p) {
	tring *r = p;
	for (int i = 0; i < r->events; i++) {
		uint64_t words = 1 + (uint64_t)(i % 6);
		uint64_t n = 8 * words;
		uint64_t h = r->head;
		uint64_t before = r->tail_seen;
		while (!clrprof_ring_room(h, n, &r->tail, &r->tail_seen, &r->limit)) {
			r->full++;
			sched_yield();
		}
		if (r->tail_seen != before) {
			r->seen++;
		}
		tword(r, h, ((uint64_t)i << 8) | words);
		for (uint64_t k = 1; k < words; k++) {
			tword(r, h + 8 * k, tmix(r->id, (uint64_t)i, k));
		}
		clrprof_ring_commit(&r->head, h + n);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

// tconsume drains every ring until each producer is done and drained; it
// writes the first inconsistency into err and returns the records read.
static uint64_t tconsume(tring *rs, int n, char *err, size_t errlen) {
	uint64_t got = 0;
	for (;;) {
		int busy = 0;
		for (int j = 0; j < n; j++) {
			tring *r = &rs[j];
			int done = __atomic_load_n(&r->done, __ATOMIC_ACQUIRE);
			uint64_t h = __atomic_load_n(&r->head, __ATOMIC_ACQUIRE);
			uint64_t t = r->tail;
			if (!done || t != h) {
				busy = 1;
			}
			while (t < h) {
				uint64_t hdr = tread(r, t);
				uint64_t words = hdr & 0xff, seq = hdr >> 8;
				if (seq != r->next || words != 1 + seq % 6 || t + 8 * words > h) {
					snprintf(err, errlen, "ring %d: record at %llu: seq %llu words %llu, want seq %llu (head %llu)", r->id,
					         (unsigned long long)t, (unsigned long long)seq, (unsigned long long)words,
					         (unsigned long long)r->next, (unsigned long long)h);
					return got;
				}
				for (uint64_t k = 1; k < words; k++) {
					if (tread(r, t + 8 * k) != tmix(r->id, seq, k)) {
						snprintf(err, errlen, "ring %d: record %llu: word %llu differs", r->id, (unsigned long long)seq,
						         (unsigned long long)k);
						return got;
					}
				}
				// Scribble over the record before handing its room back: a
				// producer that wrote before reserving would be caught.
				for (uint64_t k = 0; k < words; k++) {
					tword(r, t + 8 * k, ~(uint64_t)0);
				}
				t += 8 * words;
				r->next++;
				got++;
			}
			__atomic_store_n(&r->tail, t, __ATOMIC_RELEASE);
		}
		if (!busy) {
			return got;
		}
	}
}

typedef struct { uint64_t records, seen, full, bad_limit; } tresult;

// clrprof_ring_core_stress runs n producer threads, each writing events
// records into its own ring of size bytes, and drains them on the calling
// thread. Returns 0, or -1 with err set.
static int clrprof_ring_core_stress(int n, int events, uint64_t size, tresult *res, char *err, size_t errlen) {
	tring *rs = NULL;
	if (n < 1 || n > 64 || posix_memalign((void **)&rs, 64, sizeof(tring) * (size_t)n) != 0) {
		snprintf(err, errlen, "bad n %d or no memory", n);
		return -1;
	}
	memset(rs, 0, sizeof(tring) * (size_t)n);
	pthread_t th[64];
	int started = 0, rc = 0;
	for (int j = 0; j < n; j++) {
		rs[j].size = size;
		rs[j].limit = size;
		rs[j].id = j + 1;
		rs[j].events = events;
		rs[j].buf = malloc(size);
		if (rs[j].buf == NULL) {
			snprintf(err, errlen, "no memory");
			rc = -1;
			break;
		}
	}
	for (int j = 0; rc == 0 && j < n; j++) {
		if (pthread_create(&th[j], NULL, tproduce, &rs[j]) != 0) {
			snprintf(err, errlen, "pthread_create failed");
			rc = -1;
			break;
		}
		started++;
	}
	if (rc == 0) {
		res->records = tconsume(rs, n, err, errlen);
		if (err[0] != 0) {
			rc = -1;
		}
	}
	for (int j = 0; j < started; j++) {
		if (rc != 0) {
			// Let a producer stuck on a full ring finish: the consumer gave up.
			__atomic_store_n(&rs[j].tail, rs[j].head, __ATOMIC_RELEASE);
		}
	}
	for (int j = 0; j < started; j++) {
		if (rc != 0) {
			while (!__atomic_load_n(&rs[j].done, __ATOMIC_ACQUIRE)) {
				__atomic_store_n(&rs[j].tail, __atomic_load_n(&rs[j].head, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
				sched_yield();
			}
		}
		pthread_join(th[j], NULL);
	}
	for (int j = 0; j < n; j++) {
		res->seen += rs[j].seen;
		res->full += rs[j].full;
		// The invariant the core keeps: limit is the last reading of tail
		// plus the ring.
		if (rs[j].limit != rs[j].tail_seen + size) {
			res->bad_limit++;
		}
		free(rs[j].buf);
	}
	free(rs);
	return rc;
}
*/
import "C"

import (
	"errors"
	"unsafe"
)

// StressResult is what a stress run of the ring core saw.
type StressResult struct {
	Records  uint64 // records the consumer read and checked
	Seen     uint64 // reserves that read the consumer's tail again and found it moved
	Full     uint64 // reserves that found no room (the producer then yielded and tried again)
	BadLimit uint64 // rings whose limit at the end was not tail_seen + size
}

// Stress runs threads producer threads (C pthreads), each writing events
// records of one to six words into its own ring of size bytes through
// ringcore.h's reserve and publish, while the calling thread drains every
// ring and checks each record (sequence, length, contents) once, in order.
func Stress(threads, events int, size uint64) (StressResult, error) {
	var res C.tresult
	var buf [256]C.char
	rc := C.clrprof_ring_core_stress(C.int(threads), C.int(events), C.uint64_t(size), &res, &buf[0], C.size_t(len(buf)))
	r := StressResult{Records: uint64(res.records), Seen: uint64(res.seen), Full: uint64(res.full), BadLimit: uint64(res.bad_limit)}
	if rc != 0 {
		return r, errors.New(C.GoString((*C.char)(unsafe.Pointer(&buf[0]))))
	}
	return r, nil
}
