// Heap and object inspection with runtime callbacks; see heap.go.
#include "heap.h"
#include "corprof_gen.h"
#include "_cgo_export.h"

typedef struct {
	uintptr_t *refs;
	int max, n;
} refs_state;

static BOOL STDMETHODCALLTYPE collect_ref(ObjectID obj, ObjectID *ref, void *data) {
	(void)obj;
	refs_state *s = data;
	if (s->n < s->max) {
		s->refs[s->n] = ref ? *ref : 0;
	}
	s->n++;
	return 1; // TRUE: count them all, so the caller learns the size it needs
}

int32_t clrprof_object_refs(void *info, uintptr_t obj, uintptr_t *refs, int max, int *n) {
	ICorProfilerInfo10 *p = info;
	refs_state s = {refs, max, 0};
	HRESULT hr = p->lpVtbl->EnumerateObjectReferences(p, obj, collect_ref, &s);
	*n = s.n;
	return hr;
}

static BOOL STDMETHODCALLTYPE heap_object(ObjectID obj, void *data) {
	// The caller is Go already: no signal guard here.
	return clrprofGoHeapObject((uintptr_t)data, obj) ? 1 : 0;
}

int32_t clrprof_heap_walk(void *info, uintptr_t h) {
	ICorProfilerInfo15 *p = info;
	return p->lpVtbl->EnumerateGCHeapObjects(p, heap_object, (void *)h);
}
