// Chaining a native profiler (chain.c): the profiler library loads a second,
// native profiler library, hands it the runtime's ICorProfilerInfo through a
// wrapper that merges both profilers' event masks, and forwards every
// callback to it (chain_gen.c).
#ifndef CLRPROF_CHAIN_H
#define CLRPROF_CHAIN_H

#include <stdint.h>

#include "corprof_gen.h"

#pragma GCC visibility push(hidden)

// The parties that share the runtime's ICorProfilerInfo: the Go profiler
// (its dispatcher), the chained native one, and the members of a composed
// Go profiler (Compose). Each has its own Info wrapper, its own event mask
// (the runtime gets the union) and may own the ELT hooks or the function ID
// mapper.
enum {
	CLRPROF_PARTY_GO = 0,
	CLRPROF_PARTY_CHAIN = 1,
	CLRPROF_PARTY_MEMBER0 = 2,
	CLRPROF_MAX_MEMBERS = 16,
	CLRPROF_PARTIES = CLRPROF_PARTY_MEMBER0 + CLRPROF_MAX_MEMBERS,
};

// clrprof_chain_state is the one chained profiler of the process.
typedef struct clrprof_chain_state {
	void *lib;                  // dlopen handle
	ICorProfilerCallback11 *cb; // the chained profiler object (its highest ICorProfilerCallbackN)
	int version;                // that N
	volatile int active;        // forward callbacks to it
	volatile int go_off;        // the Go profiler declined in Initialize: only the chained one runs
	volatile uint32_t mask_lo[CLRPROF_PARTIES], mask_hi[CLRPROF_PARTIES];
	volatile uint32_t go_lo, go_hi; // the union of every party's but the chained one's
} clrprof_chain_state;

extern clrprof_chain_state clrprof_chain;
extern const ICorProfilerCallback11Vtbl clrprof_chain_vtbl;

// clrprof_chain_live is the vtable of the object that chains: a copy of
// clrprof_chain_vtbl (the fan-out of every callback) whose slots
// clrprof_chain_refresh points straight at the chained profiler
// (clrprof_chaindirect_base) while it alone asks for the callback.
extern ICorProfilerCallback11Vtbl clrprof_chain_live;
extern const uint8_t clrprof_slot_version[CLRPROF_CALLBACK_SLOTS];
extern void *clrprof_chain_direct_cb;

// clrprof_slot_events: the event mask bits (low, high) under which the
// runtime delivers the callback at slot; both 0 for a callback that is
// always delivered (Initialize, Shutdown, attach, ...).
extern const uint32_t clrprof_slot_lo[CLRPROF_CALLBACK_SLOTS], clrprof_slot_hi[CLRPROF_CALLBACK_SLOTS];

// clrprof_mask_wants reports whether the event mask (mlo, mhi) asks for
// the callback at slot.
static inline int clrprof_mask_wants(uint32_t mlo, uint32_t mhi, int slot) {
	uint32_t lo = clrprof_slot_lo[slot], hi = clrprof_slot_hi[slot];
	return (lo == 0 && hi == 0) || (mlo & lo) != 0 || (mhi & hi) != 0;
}

// clrprof_chain_wants reports whether a party's event mask asks for the
// callback at slot.
static inline int clrprof_chain_wants(int party, int slot) {
	return clrprof_mask_wants(__atomic_load_n(&clrprof_chain.mask_lo[party], __ATOMIC_RELAXED),
	                          __atomic_load_n(&clrprof_chain.mask_hi[party], __ATOMIC_RELAXED), slot);
}

// clrprof_chain_target is the chained profiler if the callback at slot
// (of interface version v) goes to it, else NULL.
static inline void *clrprof_chain_target(int slot, int v) {
	if (!__atomic_load_n(&clrprof_chain.active, __ATOMIC_ACQUIRE) || clrprof_chain.version < v) {
		return NULL;
	}
	if (!clrprof_chain_wants(CLRPROF_PARTY_CHAIN, slot)) {
		return NULL;
	}
	return clrprof_chain.cb;
}

static inline int clrprof_chain_go_on(void) {
	return !__atomic_load_n(&clrprof_chain.go_off, __ATOMIC_RELAXED);
}

// clrprof_chain_go_for reports whether the callback at slot goes to the Go
// profiler: it has not declined, and its own event mask asks for it.
static inline int clrprof_chain_go_for(int slot) {
	return clrprof_chain_go_on() && clrprof_mask_wants(__atomic_load_n(&clrprof_chain.go_lo, __ATOMIC_RELAXED),
	                                                   __atomic_load_n(&clrprof_chain.go_hi, __ATOMIC_RELAXED), slot);
}

// clrprof_chain_claim loads the chained profiler named by the Go side's
// configuration (CLRPROF_CHAIN_PATH / CLRPROF_CHAIN_CLSID, or WithChain)
// for the first profiler object of the process; it returns 1 when that
// object must use clrprof_chain_live.
int clrprof_chain_claim(void);

// The hand-written slots of clrprof_chain_vtbl.
HRESULT STDMETHODCALLTYPE clrprof_cb_chain_QueryInterface(ICorProfilerCallback11 *self, REFIID riid, void **ppv);
ULONG STDMETHODCALLTYPE clrprof_cb_chain_AddRef(ICorProfilerCallback11 *self);
ULONG STDMETHODCALLTYPE clrprof_cb_chain_Release(ICorProfilerCallback11 *self);
HRESULT STDMETHODCALLTYPE clrprof_chain_Initialize(ICorProfilerCallback11 *self, IUnknown *unk);
HRESULT STDMETHODCALLTYPE clrprof_chain_InitializeForAttach(ICorProfilerCallback11 *self, IUnknown *unk, void *data, UINT n);
HRESULT STDMETHODCALLTYPE clrprof_chain_Shutdown(ICorProfilerCallback11 *self);
HRESULT STDMETHODCALLTYPE clrprof_chain_LoadAsNotificationOnly(ICorProfilerCallback11 *self, BOOL *only);

// clrprof_infowrap is an ICorProfilerInfoN that one party sees: every
// method jumps to the runtime's (chain_linux_amd64.S) except IUnknown, the
// event mask, the ELT hooks and the function ID mapper, which chain.c
// answers. real is at offset 8: the trampolines read it there.
typedef struct clrprof_infowrap {
	const void *lpVtbl;
	ICorProfilerInfo15 *real;
	int party;
	int real_version; // highest ICorProfilerInfoN of real
} clrprof_infowrap;

// clrprof_infowrap_for returns the wrapper a party sees around the
// runtime's Info (set up by clrprof_chain_Initialize), or NULL.
clrprof_infowrap *clrprof_infowrap_for(int party);

// clrprof_party_info returns the Info wrapper of party around the runtime's
// Info unk (setting the wrappers up on the first call), or NULL when unk
// answers no ICorProfilerInfo or is another profiler object's Info than
// the one the parties were set up for (they belong to one object: the
// first that chains or composes).
void *clrprof_party_info(void *unk, int party);
// clrprof_party_reset clears a party's event mask (a member that failed
// Initialize).
void clrprof_party_reset(int party);
// clrprof_parties_quiesce keeps only the immutable flags of every party's
// mask (the dispatcher's quiesce at Shutdown) if info is the Info the
// parties belong to (or one of their wrappers); returns 0 otherwise.
int clrprof_parties_quiesce(const void *info);

// clrprof_set_identity sets this library's clrprof_identity;
// clrprof_other_identity reads another loaded library's ("" if it has
// none: a Go library that is not a clrprof profiler).
void clrprof_set_identity(const char *s);
const char *clrprof_other_identity(const char *path);

// clrprof_self_path is the path of this shared library (dladdr).
const char *clrprof_self_path(void);

// What a party was told and asked; for Go's diagnostics and tests.
void clrprof_chain_masks(int party, uint32_t *lo, uint32_t *hi);
int clrprof_chain_owner(int what); // 0 ELT hooks, 1 function ID mapper: the owning party, or -1

#ifdef CLRPROF_TESTHOOKS
uint64_t clrprof_test_chain_calls(long n, int via, int want, int go_wants, uint64_t *calls, int *direct);
#endif

#pragma GCC visibility pop

#endif
