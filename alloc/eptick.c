// The runtime's allocation ticks sampled in C; see eptick.go.
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "object.h"

// The runtime's provider, its GCAllocationTick event and .NET 10's
// AllocationSampled, and the runtime's mean distance between sampled bytes.
#define TICK_EVENT_ID 10
#define SAMPLED_EVENT_ID 303
#define SAMPLED_MEAN 102400.0
// AllocationSampled's fields before the type name (4+2+8), the name's NUL
// (2), then Address, ObjectSize, SampledByteOffset (8 each).
#define SAMPLED_MIN_SIZE 40
static const char tick_provider_name[] = "Microsoft-Windows-DotNETRuntime";

typedef HRESULT(STDMETHODCALLTYPE *delivered_fn)(void *self, EVENTPIPE_PROVIDER provider, DWORD id, DWORD version, ULONG cbMeta,
	LPCBYTE meta, ULONG cbData, LPCBYTE data, LPCGUID act, LPCGUID rel, ThreadID thread, ULONG nframes, UINT_PTR *frames);

static const void *orig_delivered;
static ICorProfilerInfo12 *tick_info;
static volatile int tick_on;
static uintptr_t tick_provider;	    // the runtime's provider once recognized (atomic)
static uintptr_t tick_others[8];    // other providers seen sending event 10 (atomic)

// The sampler's state, under tick_lock (ticks come from every allocating
// thread, a few thousand a second at most: a spin lock is enough).
static int tick_lock;
static double tick_mean, tick_gap;
static uint64_t tick_pending, tick_rnd;
static int64_t tick_seen, tick_kept, tick_short;
static uint64_t tick_total;
// AllocationSampled events: each kept with probability sampled_keep
// (sampled_threshold / 2^64; all when sampled_all), independently of
// its contents.
static int sampled_all;
static uint64_t sampled_threshold;
static int64_t sampled_seen, sampled_kept, sampled_short;

// The bytes the kept tick being delivered on this thread stands for.
static __thread uint64_t tick_bytes;

static void lock(void) {
	while (__atomic_exchange_n(&tick_lock, 1, __ATOMIC_ACQUIRE)) {
		while (__atomic_load_n(&tick_lock, __ATOMIC_RELAXED)) {
			__builtin_ia32_pause();
		}
	}
}

static void unlock(void) { __atomic_store_n(&tick_lock, 0, __ATOMIC_RELEASE); }

// next_gap is an exponentially distributed gap of mean tick_mean
// (xorshift64); under tick_lock.
static uint64_t next_rnd(void) {
	tick_rnd ^= tick_rnd << 13;
	tick_rnd ^= tick_rnd >> 7;
	tick_rnd ^= tick_rnd << 17;
	return tick_rnd;
}

static double next_gap(void) {
	next_rnd();
	double u = ((double)(tick_rnd >> 11) + 1.0) / 9007199254740992.0; // (0, 1]
	return -log(u) * tick_mean;
}

// is_runtime says whether provider is the runtime's, asking the runtime
// the first time a provider sends event 10.
static int is_runtime(EVENTPIPE_PROVIDER provider) {
	uintptr_t p = (uintptr_t)provider;
	if (p == 0) {
		return 0;
	}
	if (__atomic_load_n(&tick_provider, __ATOMIC_ACQUIRE) == p) {
		return 1;
	}
	for (int i = 0; i < 8; i++) {
		if (__atomic_load_n(&tick_others[i], __ATOMIC_ACQUIRE) == p) {
			return 0;
		}
	}
	WCHAR name[64];
	ULONG n = 0;
	HRESULT hr = tick_info->lpVtbl->EventPipeGetProviderInfo(tick_info, provider, 64, &n, name);
	// n may or may not count the terminating NUL.
	const ULONG len = sizeof tick_provider_name - 1;
	int match = hr >= 0 && (n == len || (n == len + 1 && name[len] == 0));
	for (ULONG i = 0; match && i < len; i++) {
		match = name[i] == (WCHAR)(unsigned char)tick_provider_name[i];
	}
	if (match) {
		__atomic_store_n(&tick_provider, p, __ATOMIC_RELEASE);
		return 1;
	}
	if (hr >= 0) {
		for (int i = 0; i < 8; i++) {
			uintptr_t zero = 0;
			if (__atomic_compare_exchange_n(&tick_others[i], &zero, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
				break;
			}
		}
	}
	return 0;
}

// tick_amount reads the bytes a GCAllocationTick reports (as
// clrevents.AllocationTickBytes): AllocationAmount64 from version 2, after
// AllocationAmount, AllocationKind and ClrInstanceID; AllocationAmount
// before. -1 if the payload is too short.
static int64_t tick_amount(DWORD version, ULONG size, LPCBYTE data) {
	if (version >= 2) {
		if (size < 18 || data == NULL) {
			return -1;
		}
		uint64_t v;
		memcpy(&v, data + 10, 8);
		return (int64_t)(v & 0x7fffffffffffffffULL);
	}
	if (size < 4 || data == NULL) {
		return -1;
	}
	uint32_t v;
	memcpy(&v, data, 4);
	return v;
}

static HRESULT STDMETHODCALLTYPE delivered(void *self, EVENTPIPE_PROVIDER provider, DWORD id, DWORD version, ULONG cbMeta, LPCBYTE meta,
	ULONG cbData, LPCBYTE data, LPCGUID act, LPCGUID rel, ThreadID thread, ULONG nframes, UINT_PTR *frames) {
	if (tick_on && id == SAMPLED_EVENT_ID && is_runtime(provider)) {
		if (cbData < SAMPLED_MIN_SIZE || data == NULL) {
			__atomic_fetch_add(&sampled_short, 1, __ATOMIC_RELAXED);
			return S_OK;
		}
		int keep;
		lock();
		sampled_seen++;
		keep = sampled_all || next_rnd() < sampled_threshold;
		if (keep) {
			sampled_kept++;
		}
		unlock();
		if (!keep) {
			return S_OK; // not kept: never enters Go
		}
		return ((delivered_fn)orig_delivered)(self, provider, id, version, cbMeta, meta, cbData, data, act, rel, thread, nframes, frames);
	}
	if (tick_on && id == TICK_EVENT_ID && is_runtime(provider)) {
		int64_t amount = tick_amount(version, cbData, data);
		if (amount < 0) {
			__atomic_fetch_add(&tick_short, 1, __ATOMIC_RELAXED);
			return S_OK;
		}
		uint64_t keep = 0;
		lock();
		tick_seen++;
		tick_total += (uint64_t)amount;
		tick_pending += (uint64_t)amount;
		tick_gap -= (double)amount;
		if (tick_gap <= 0) {
			keep = tick_pending;
			tick_pending = 0;
			while (tick_gap <= 0) {
				tick_gap += next_gap();
			}
			tick_kept++;
		}
		unlock();
		if (keep == 0) {
			return S_OK; // not kept: never enters Go
		}
		tick_bytes = keep;
		HRESULT hr = ((delivered_fn)orig_delivered)(self, provider, id, version, cbMeta, meta, cbData, data, act, rel, thread, nframes, frames);
		tick_bytes = 0;
		return hr;
	}
	return ((delivered_fn)orig_delivered)(self, provider, id, version, cbMeta, meta, cbData, data, act, rel, thread, nframes, frames);
}

int clrprof_tick_enable(void *info, uint64_t mean_bytes, uint64_t seed) {
	if (info == NULL || mean_bytes == 0) {
		return -1;
	}
	if (__atomic_load_n(&tick_on, __ATOMIC_ACQUIRE)) {
		return -2;
	}
	tick_info = info;
	lock();
	tick_mean = (double)mean_bytes;
	tick_rnd = seed | 1;
	tick_gap = next_gap();
	// AllocationSampled: kept with probability SAMPLED_MEAN / mean_bytes,
	// so that one is kept every mean_bytes on average (all of them when
	// mean_bytes is at most the runtime's own mean).
	double keep = SAMPLED_MEAN / (double)mean_bytes;
	sampled_all = keep >= 1.0;
	sampled_threshold = sampled_all ? 0 : (uint64_t)ldexp(keep, 64);
	unlock();
	if (clrprof_callback_override(CLRPROF_CB_EventPipeEventDelivered, (const void *)delivered, &orig_delivered) != 0) {
		return -1;
	}
	__atomic_store_n(&tick_on, 1, __ATOMIC_RELEASE);
	return 0;
}

uint64_t clrprof_tick_bytes(void) { return tick_bytes; }

void clrprof_tick_counts(int64_t *seen, int64_t *kept, int64_t *shortp, uint64_t *bytes) {
	lock();
	*seen = tick_seen;
	*kept = tick_kept;
	*bytes = tick_total;
	unlock();
	*shortp = __atomic_load_n(&tick_short, __ATOMIC_RELAXED);
}

void clrprof_sampled_counts(int64_t *seen, int64_t *kept, int64_t *shortp) {
	lock();
	*seen = sampled_seen;
	*kept = sampled_kept;
	unlock();
	*shortp = __atomic_load_n(&sampled_short, __ATOMIC_RELAXED);
}
