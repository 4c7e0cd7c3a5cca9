// The profiler object handed to the runtime: its IUnknown, the
// implemented-callback table, the live vtable and its C overrides, the class
// factory and the COM entry points of the shared library. See object.h.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "object.h"
#include "signals.h"
#include "guard.h"
#include "_cgo_export.h"

static const GUID clrprof_IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID clrprof_IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

static int guid_equal(const GUID *a, const GUID *b) {
	return memcmp(a, b, sizeof(GUID)) == 0;
}

// ---- implemented-callback table ----

volatile uint8_t clrprof_impl[CLRPROF_CALLBACK_SLOTS];

void clrprof_set_impl(int slot, int on) {
	if (slot >= 0 && slot < CLRPROF_CALLBACK_SLOTS) {
		__atomic_store_n(&clrprof_impl[slot], on ? 1 : 0, __ATOMIC_RELEASE);
	}
}

int clrprof_get_impl(int slot) {
	if (slot < 0 || slot >= CLRPROF_CALLBACK_SLOTS) {
		return 0;
	}
	return __atomic_load_n(&clrprof_impl[slot], __ATOMIC_ACQUIRE);
}

// ---- IUnknown of the profiler object ----

static int is_callback_iid(REFIID riid) {
	for (int i = 0; i < clrprof_callback_iid_count; i++) {
		if (guid_equal(riid, &clrprof_callback_iids[i])) {
			return 1;
		}
	}
	return 0;
}

HRESULT STDMETHODCALLTYPE clrprof_QueryInterface(void *self, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (riid == NULL) {
		return E_POINTER;
	}
	if (guid_equal(riid, &clrprof_IID_IUnknown) || is_callback_iid(riid)) {
		clrprof_AddRef(self);
		*ppv = self;
		return S_OK;
	}
	return E_NOINTERFACE;
}

ULONG STDMETHODCALLTYPE clrprof_AddRef(void *self) {
	clrprof_object *o = self;
	return (ULONG)__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
}

ULONG STDMETHODCALLTYPE clrprof_Release(void *self) {
	clrprof_object *o = self;
	int32_t n = __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL);
	if (n == 0) {
		uintptr_t h = o->handle;
		o->handle = 0;
		clrprof_guard g;
		clrprof_go_enter(&g);
		clrprofGoObjectReleased(h);
		clrprof_go_leave(&g);
		free(o);
	}
	return (ULONG)n;
}

// The vtable the profiler objects use: a writable copy of the generated
// one, so that C fast paths can take over single slots.
ICorProfilerCallback11Vtbl clrprof_live_vtbl;
_Static_assert(sizeof(ICorProfilerCallback11Vtbl) == (CLRPROF_CALLBACK_SLOTS + 3) * sizeof(void *), "vtable is not one pointer per slot");
static pthread_once_t live_once = PTHREAD_ONCE_INIT;

static void live_vtbl_init(void) {
	clrprof_live_vtbl = clrprof_callback_vtbl;
}

int clrprof_callback_override(int slot, const void *fn, const void **orig) {
	if (slot < 0 || slot >= CLRPROF_CALLBACK_SLOTS || fn == NULL) {
		return -1;
	}
	pthread_once(&live_once, live_vtbl_init);
	const void *volatile *slots = (const void *volatile *)&clrprof_live_vtbl;
	if (orig != NULL) {
		*orig = ((const void *const *)&clrprof_callback_vtbl)[slot + 3];
	}
	__atomic_store_n((const void **)&slots[slot + 3], fn, __ATOMIC_RELEASE);
	return 0;
}

HRESULT clrprof_new_object(uintptr_t h, REFIID riid, void **ppv) {
	return clrprof_new_object_vtbl(h, NULL, riid, ppv);
}

HRESULT clrprof_new_object_vtbl(uintptr_t h, const void *vtbl, REFIID riid, void **ppv) {
	clrprof_object *o = calloc(1, sizeof *o);
	if (o == NULL) {
		return E_OUTOFMEMORY;
	}
	pthread_once(&live_once, live_vtbl_init);
	o->lpVtbl = vtbl != NULL ? vtbl : (const void *)&clrprof_live_vtbl;
	o->refs = 1;
	o->handle = h;
	HRESULT hr = clrprof_QueryInterface(o, riid, ppv);
	clrprof_Release(o); // frees o (and the handle) if the query failed
	return hr;
}

// ---- class factory (one static object, never freed) ----

static const void *(*new_object_vtbl_hook)(void);

void clrprof_object_set_vtbl_hook(const void *(*hook)(void)) {
	__atomic_store_n(&new_object_vtbl_hook, hook, __ATOMIC_RELEASE);
}

static HRESULT STDMETHODCALLTYPE factory_QueryInterface(IClassFactory *self, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (riid == NULL) {
		return E_POINTER;
	}
	if (guid_equal(riid, &clrprof_IID_IUnknown) || guid_equal(riid, &clrprof_IID_IClassFactory)) {
		*ppv = self;
		return S_OK;
	}
	return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE factory_AddRef(IClassFactory *self) {
	(void)self;
	return 2;
}

static ULONG STDMETHODCALLTYPE factory_Release(IClassFactory *self) {
	(void)self;
	return 1;
}

static HRESULT STDMETHODCALLTYPE factory_CreateInstance(IClassFactory *self, IUnknown *outer, REFIID riid, void **ppv) {
	(void)self;
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (outer != NULL) {
		return CLASS_E_NOAGGREGATION;
	}
	if (riid == NULL) {
		return E_POINTER;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	uintptr_t h = clrprofGoNewObject();
	clrprof_go_leave(&g);
	if (h == 0) {
		return E_FAIL;
	}
	// The first profiler object of the process loads the chained native
	// profiler, if one is configured, and forwards to it: chain.c, a layer
	// above this file, registers the hook that says so.
	const void *(*hook)(void) = __atomic_load_n(&new_object_vtbl_hook, __ATOMIC_ACQUIRE);
	return clrprof_new_object_vtbl(h, hook != NULL ? hook() : NULL, riid, ppv);
}

static HRESULT STDMETHODCALLTYPE factory_LockServer(IClassFactory *self, BOOL lock) {
	(void)self;
	(void)lock;
	return S_OK;
}

static const IClassFactoryVtbl factory_vtbl = {
	factory_QueryInterface,
	factory_AddRef,
	factory_Release,
	factory_CreateInstance,
	factory_LockServer,
};

static IClassFactory factory = {&factory_vtbl};

// ---- exported COM entry points ----

__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	GUID req;
	memset(&req, 0, sizeof req);
	if (rclsid != NULL) {
		req = *rclsid;
	}
	// The first call into Go waits until the Go runtime has initialised.
	clrprof_guard g;
	clrprof_go_enter(&g);
	int ok = clrprofGoMatchCLSID(&req, rclsid != NULL);
	clrprof_go_leave(&g);
	clrprof_signal_audit();
	if (!ok) {
		return CLASS_E_CLASSNOTAVAILABLE;
	}
	return factory_QueryInterface(&factory, riid, ppv);
}

__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllCanUnloadNow(void) {
	return S_FALSE; // a Go runtime cannot be unloaded
}

// ---- the signal audit, run once and reported to Go ----
//
// The audit itself is internal/sigguard's (signals.h); this runs it on the first call of the
// runtime (DllGetClassObject) and hands the records to Go under the guard.

static clrprof_sigrec audit_recs[NSIG];
static int audit_count;
static pthread_once_t audit_once = PTHREAD_ONCE_INIT;

static void audit_run(void) {
	if (clrprof_signal_audit_off()) {
		return;
	}
	audit_count = clrprof_audit_signals(SIGRTMIN, 1, audit_recs, NSIG);
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoSignalAudit(audit_recs, audit_count, SIGRTMIN);
	clrprof_go_leave(&g);
}

void clrprof_signal_audit(void) {
	pthread_once(&audit_once, audit_run);
}
