// EventPipe provider callbacks (EventPipeCreateProvider2) into Go: the
// runtime passes no user data the profiler chose, so each provider gets a
// trampoline of its own from a fixed table; see eventpipe.go. The runtime
// may call them on any thread (a session started from managed code, or by
// the diagnostics server), so they take the signal guard like every
// callback.
#include <stdint.h>

#include "corprof_gen.h"
#include "object.h"
#include "guard.h"

extern void clrprofGoEventPipeProviderCallback(int slot, uint8_t *source_id, uint32_t is_enabled, uint8_t level,
	uint64_t match_any, uint64_t match_all, void *filter_ptr, uint32_t filter_size, uint32_t filter_type);

#define CLRPROF_EP_TRAMPOLINE(n) \
	static void ep_provider_cb_##n(const UINT8 *source_id, UINT32 is_enabled, UINT8 level, UINT64 any, UINT64 all, \
		COR_PRF_FILTER_DATA *filter, void *data) { \
		(void)data; \
		clrprof_guard g; \
		clrprof_go_enter(&g); \
		clrprofGoEventPipeProviderCallback(n, (uint8_t *)source_id, is_enabled, level, any, all, \
			filter ? (void *)(uintptr_t)filter->Ptr : 0, filter ? filter->Size : 0, filter ? filter->Type : 0); \
		clrprof_go_leave(&g); \
	}

CLRPROF_EP_TRAMPOLINE(0)
CLRPROF_EP_TRAMPOLINE(1)
CLRPROF_EP_TRAMPOLINE(2)
CLRPROF_EP_TRAMPOLINE(3)
CLRPROF_EP_TRAMPOLINE(4)
CLRPROF_EP_TRAMPOLINE(5)
CLRPROF_EP_TRAMPOLINE(6)
CLRPROF_EP_TRAMPOLINE(7)

void *clrprof_ep_provider_callback(int slot) {
	static void *const table[8] = {
		(void *)ep_provider_cb_0, (void *)ep_provider_cb_1, (void *)ep_provider_cb_2, (void *)ep_provider_cb_3,
		(void *)ep_provider_cb_4, (void *)ep_provider_cb_5, (void *)ep_provider_cb_6, (void *)ep_provider_cb_7,
	};
	return slot >= 0 && slot < 8 ? table[slot] : (void *)0;
}
