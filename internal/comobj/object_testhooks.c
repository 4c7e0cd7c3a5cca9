// Test hooks of the profiler object: drive it from Go tests as the runtime
// would (a fake ICorProfilerInfo, DllGetClassObject and the class factory,
// the vtable). Compiled into test builds only (build tag clrprof_testhooks).
#ifdef CLRPROF_TESTHOOKS
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "object_testhooks.h"

static const GUID clrprof_IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static int guid_equal(const GUID *a, const GUID *b) {
	return memcmp(a, b, sizeof(GUID)) == 0;
}

static const GUID clrprof_IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

static HRESULT STDMETHODCALLTYPE fake_notimpl(void) {
	return E_NOTIMPL;
}

// A fake ICorProfilerInfo object: QueryInterface answers IUnknown and the
// first `versions` ICorProfilerInfoN IIDs with itself; every other slot
// returns E_NOTIMPL (extra arguments are harmless in the SysV convention).
typedef struct fake_info {
	const void *const *lpVtbl;
	int versions;
	volatile int32_t refs;
} fake_info;

static HRESULT STDMETHODCALLTYPE fake_QueryInterface(void *self, REFIID riid, void **ppv) {
	fake_info *f = self;
	*ppv = NULL;
	int ok = guid_equal(riid, &clrprof_IID_IUnknown);
	for (int i = 0; !ok && i < f->versions && i < clrprof_info_iid_count; i++) {
		ok = guid_equal(riid, &clrprof_info_iids[i]);
	}
	if (!ok) {
		return E_NOINTERFACE;
	}
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	*ppv = self;
	return S_OK;
}

static ULONG STDMETHODCALLTYPE fake_AddRef(void *self) {
	return (ULONG)__atomic_add_fetch(&((fake_info *)self)->refs, 1, __ATOMIC_RELAXED);
}

static ULONG STDMETHODCALLTYPE fake_Release(void *self) {
	return (ULONG)__atomic_sub_fetch(&((fake_info *)self)->refs, 1, __ATOMIC_RELAXED);
}

#define FAKE_SLOTS 512
static const void *fake_vtbl[FAKE_SLOTS];
static pthread_once_t fake_once = PTHREAD_ONCE_INIT;

static void fake_vtbl_init(void) {
	fake_vtbl[0] = (const void *)fake_QueryInterface;
	fake_vtbl[1] = (const void *)fake_AddRef;
	fake_vtbl[2] = (const void *)fake_Release;
	for (int i = 3; i < FAKE_SLOTS; i++) {
		fake_vtbl[i] = (const void *)fake_notimpl;
	}
}

void *clrprof_test_fake_info(int versions) {
	pthread_once(&fake_once, fake_vtbl_init);
	fake_info *f = calloc(1, sizeof *f);
	if (f != NULL) {
		f->lpVtbl = fake_vtbl;
		f->versions = versions;
		f->refs = 1;
	}
	return f;
}

int clrprof_test_fake_refs(void *info) {
	return __atomic_load_n(&((fake_info *)info)->refs, __ATOMIC_RELAXED);
}

void clrprof_test_free(void *p) {
	free(p);
}

const GUID *clrprof_test_callback_iid(int i) {
	if (i < 0 || i >= clrprof_callback_iid_count) {
		return NULL;
	}
	return &clrprof_callback_iids[i];
}

const GUID *clrprof_test_iid_iunknown(void) {
	return &clrprof_IID_IUnknown;
}

// clrprof_test_create does what the runtime does to load a profiler:
// DllGetClassObject for clsid, then IClassFactory::CreateInstance for iid.
// aggregate passes a non-NULL outer object.
HRESULT clrprof_test_create(const GUID *clsid, const GUID *iid, int aggregate, void **obj) {
	*obj = NULL;
	IClassFactory *f = NULL;
	HRESULT hr = DllGetClassObject(clsid, &clrprof_IID_IClassFactory, (void **)&f);
	if (hr != S_OK) {
		return hr;
	}
	IUnknown outer = {NULL};
	hr = f->lpVtbl->CreateInstance(f, aggregate ? &outer : NULL, iid, obj);
	f->lpVtbl->Release(f);
	return hr;
}

HRESULT clrprof_test_qi(void *obj, const GUID *iid, void **out) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->QueryInterface(obj, iid, out);
}

ULONG clrprof_test_addref(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->AddRef(obj);
}

ULONG clrprof_test_release(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Release(obj);
}

HRESULT clrprof_test_initialize(void *obj, void *info) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Initialize(obj, (IUnknown *)info);
}

HRESULT clrprof_test_shutdown(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Shutdown(obj);
}

HRESULT clrprof_test_jit_started(void *obj, uintptr_t fid) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->JITCompilationStarted(obj, fid, 1);
}

HRESULT clrprof_test_module_loaded(void *obj, uintptr_t mid) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->ModuleLoadFinished(obj, mid, S_OK);
}

HRESULT clrprof_test_initialize_for_attach(void *obj, void *info, const void *data, unsigned n) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->InitializeForAttach(obj, (IUnknown *)info, (void *)data, n);
}

#endif // CLRPROF_TESTHOOKS
