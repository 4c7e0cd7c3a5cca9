// The heap walk recorded in C: ObjectReferences answered without entering
// Go while a recording is on; see heapwalk.go.
#include <stdlib.h>
#include <string.h>

#include "heapwalk.h"
#include "object.h"

typedef HRESULT(STDMETHODCALLTYPE *objrefs_fn)(void *, ObjectID, ClassID, ULONG, ObjectID *);

static const void *orig_objrefs;
static ICorProfilerInfo4 *hw_info;
static volatile int hw_on;
static volatile int hw_pass = 1; // while off: pass the callback on to Go
static int hw_lock; // the runtime walks from one thread; a spin lock in case it ever does not

static uint64_t *hw_words;
static uint64_t hw_len, hw_cap, hw_objects, hw_max, hw_size_obj;
static int hw_overflow, hw_nomem;
static int32_t hw_size_hr;

static int grow(uint64_t need) {
	uint64_t cap = hw_cap ? hw_cap : (1u << 16);
	while (cap < need) {
		cap *= 2;
	}
	uint64_t *w = realloc(hw_words, cap * sizeof(uint64_t));
	if (w == NULL) {
		return -1;
	}
	hw_words = w;
	hw_cap = cap;
	return 0;
}

static void drop(void) {
	free(hw_words);
	hw_words = NULL;
	hw_len = hw_cap = 0;
}

static HRESULT STDMETHODCALLTYPE objrefs(void *self, ObjectID obj, ClassID cls, ULONG n, ObjectID *refs) {
	if (!__atomic_load_n(&hw_on, __ATOMIC_ACQUIRE)) {
		if (!__atomic_load_n(&hw_pass, __ATOMIC_RELAXED)) {
			return S_OK;
		}
		return ((objrefs_fn)orig_objrefs)(self, obj, cls, n, refs);
	}
	while (__atomic_exchange_n(&hw_lock, 1, __ATOMIC_ACQUIRE)) {
	}
	// (re-read under the lock: stop waits for the lock, so nothing is
	// written after it)
	if (__atomic_load_n(&hw_on, __ATOMIC_ACQUIRE) && !hw_overflow && !hw_nomem) {
		if (hw_objects >= hw_max) {
			hw_overflow = 1;
			drop(); // what was gathered goes now, not after the walk
		} else if (hw_len + 4 + n > hw_cap && grow(hw_len + 4 + n) != 0) {
			hw_nomem = 1;
			drop();
		} else {
			SIZE_T size = 0;
			HRESULT hr = hw_info->lpVtbl->GetObjectSize2(hw_info, obj, &size);
			if (hr < 0 && hw_size_obj == 0) {
				hw_size_hr = hr;
				hw_size_obj = obj;
			}
			uint64_t *w = hw_words + hw_len;
			w[0] = obj;
			w[1] = cls;
			w[2] = size;
			w[3] = n;
			if (n > 0) {
				memcpy(w + 4, refs, (size_t)n * sizeof(uint64_t));
			}
			hw_len += 4 + n;
			hw_objects++;
		}
	}
	__atomic_store_n(&hw_lock, 0, __ATOMIC_RELEASE);
	return S_OK;
}

int clrprof_heapwalk_install(void *info) {
	if (info == NULL) {
		return -1;
	}
	hw_info = info;
	return clrprof_callback_override(CLRPROF_CB_ObjectReferences, (const void *)objrefs, &orig_objrefs);
}

void clrprof_heapwalk_start(uint64_t max) {
	drop();
	hw_objects = 0;
	hw_max = max;
	hw_overflow = hw_nomem = 0;
	hw_size_hr = 0;
	hw_size_obj = 0;
	__atomic_store_n(&hw_on, 1, __ATOMIC_RELEASE);
}

void clrprof_heapwalk_stop(void) {
	__atomic_store_n(&hw_on, 0, __ATOMIC_RELEASE);
	// a callback that saw hw_on set holds the lock until it is done
	while (__atomic_exchange_n(&hw_lock, 1, __ATOMIC_ACQUIRE)) {
	}
	__atomic_store_n(&hw_lock, 0, __ATOMIC_RELEASE);
}

void clrprof_heapwalk_result_get(clrprof_heapwalk_result *out) {
	out->words = hw_words;
	out->nwords = hw_len;
	out->objects = hw_objects;
	out->overflow = hw_overflow;
	out->nomem = hw_nomem;
	out->size_hr = hw_size_hr;
	out->size_obj = hw_size_obj;
}

void clrprof_heapwalk_reset(void) { drop(); }

void clrprof_heapwalk_pass_to_go(int on) { __atomic_store_n(&hw_pass, on, __ATOMIC_RELAXED); }
