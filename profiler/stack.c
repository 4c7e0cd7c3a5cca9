// Stack snapshots; see stack.go.
#include "stack.h"
#include "corprof_gen.h"
#include "_cgo_export.h"

typedef struct {
	uintptr_t *fids, *ips;
	int max, n, more;
} collect_state;

static HRESULT STDMETHODCALLTYPE collect_frame(FunctionID f, UINT_PTR ip, COR_PRF_FRAME_INFO frame, ULONG32 csize, BYTE *ctx, void *data) {
	(void)frame;
	(void)csize;
	(void)ctx;
	collect_state *s = data;
	if (s->n >= s->max) {
		s->more = 1;
		return S_FALSE; // stop the walk
	}
	s->fids[s->n] = f;
	s->ips[s->n] = ip;
	s->n++;
	return S_OK;
}

int32_t clrprof_stack_collect(void *info, uintptr_t thread, uintptr_t *fids, uintptr_t *ips, int max, int *n, int *more) {
	ICorProfilerInfo2 *p = info;
	collect_state s = {fids, ips, max, 0, 0};
	HRESULT hr = p->lpVtbl->DoStackSnapshot(p, thread, collect_frame, 0 /* COR_PRF_SNAPSHOT_DEFAULT */, &s, NULL, 0);
	*n = s.n;
	*more = s.more;
	return hr;
}

static HRESULT STDMETHODCALLTYPE walk_frame(FunctionID f, UINT_PTR ip, COR_PRF_FRAME_INFO frame, ULONG32 csize, BYTE *ctx, void *data) {
	(void)csize;
	(void)ctx;
	// The caller is Go (or a Go callback) already: no signal guard here.
	return clrprofGoStackFrame((uintptr_t)data, f, ip, frame) ? S_OK : S_FALSE;
}

int32_t clrprof_stack_walk(void *info, uintptr_t thread, uintptr_t h) {
	ICorProfilerInfo2 *p = info;
	return p->lpVtbl->DoStackSnapshot(p, thread, walk_frame, 0 /* COR_PRF_SNAPSHOT_DEFAULT */, (void *)h, NULL, 0);
}
