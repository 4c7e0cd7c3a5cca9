// chainc is a native profiler written in C for the chaining tests: the
// profiler a vendor would ship, loaded by a Go profiler through
// CLRPROF_CHAIN_PATH / CLRPROF_CHAIN_CLSID (or on its own, as the main or a
// notification profiler). It asks for JIT compilations and object
// allocations, counts them, checks what it is told, and prints one line at
// Shutdown:
//
//   chainc: Shutdown jits=N allocs=N modules=N inlining=N failed=N
//
// plus a "chainc: FAIL ..." line for every assert that did not hold. It
// never asked for module loads: modules must stay 0.
//
// CHAINC_NOTIFICATION=1 makes it answer LoadAsNotificationOnly with TRUE.
// CHAINC_NO_INLINE=1 makes it refuse every inlining (and ask for
// JITInlining, which MonitorJITCompilation delivers).
// CHAINC_ELT=1 makes it set enter/leave hooks in Initialize (and report
// the HRESULT). CHAINC_FAIL_INIT=1 makes its Initialize fail (E_FAIL).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "corprof_gen.h"

#define EXPORT __attribute__((visibility("default")))

static const GUID clsid = {0x8e2b1c3d, 0x4f5a, 0x4b6c, {0x9d, 0x7e, 0x0f, 0x1a, 0x2b, 0x3c, 0x4d, 0x5e}};
static const GUID iid_unknown = {0x00000000, 0x0000, 0x0000, {0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID iid_factory = {0x00000001, 0x0000, 0x0000, {0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID iid_info = {0x28b5557d, 0x3f3f, 0x48b4, {0x90, 0xb2, 0x5f, 0x9e, 0xea, 0x2f, 0x6c, 0x48}};
static const GUID iid_info3 = {0xb555ed4f, 0x452a, 0x4e54, {0x8b, 0x39, 0xb5, 0x36, 0x0b, 0xad, 0x32, 0xa0}};
static const GUID iid_infos[15] = {
    {0x28b5557d, 0x3f3f, 0x48b4, {0x90, 0xb2, 0x5f, 0x9e, 0xea, 0x2f, 0x6c, 0x48}}, // ICorProfilerInfo
    {0xcc0935cd, 0xa518, 0x487d, {0xb0, 0xbb, 0xa9, 0x32, 0x14, 0xe6, 0x54, 0x78}}, // ICorProfilerInfo2
    {0xb555ed4f, 0x452a, 0x4e54, {0x8b, 0x39, 0xb5, 0x36, 0x0b, 0xad, 0x32, 0xa0}}, // ICorProfilerInfo3
    {0x0d8fdcaa, 0x6257, 0x47bf, {0xb1, 0xbf, 0x94, 0xda, 0xc8, 0x84, 0x66, 0xee}}, // ICorProfilerInfo4
    {0x07602928, 0xce38, 0x4b83, {0x81, 0xe7, 0x74, 0xad, 0xaf, 0x78, 0x12, 0x14}}, // ICorProfilerInfo5
    {0xf30a070d, 0xbffb, 0x46a7, {0xb1, 0xd8, 0x87, 0x81, 0xef, 0x7b, 0x69, 0x8a}}, // ICorProfilerInfo6
    {0x9aeecc0d, 0x63e0, 0x4187, {0x8c, 0x00, 0xe3, 0x12, 0xf5, 0x03, 0xf6, 0x63}}, // ICorProfilerInfo7
    {0xc5ac80a6, 0x782e, 0x4716, {0x80, 0x44, 0x39, 0x59, 0x8c, 0x60, 0xcf, 0xbf}}, // ICorProfilerInfo8
    {0x008170db, 0xf8cc, 0x4796, {0x9a, 0x51, 0xdc, 0x8a, 0xa0, 0xb4, 0x70, 0x12}}, // ICorProfilerInfo9
    {0x2f1b5152, 0xc869, 0x40c9, {0xaa, 0x5f, 0x3a, 0xbe, 0x02, 0x6b, 0xd7, 0x20}}, // ICorProfilerInfo10
    {0x06398876, 0x8987, 0x4154, {0xb6, 0x21, 0x40, 0xa0, 0x0d, 0x6e, 0x4d, 0x04}}, // ICorProfilerInfo11
    {0x27b24ccd, 0x1cb1, 0x47c5, {0x96, 0xee, 0x98, 0x19, 0x0d, 0xc3, 0x09, 0x59}}, // ICorProfilerInfo12
    {0x6e6c7ee2, 0x0701, 0x4ec2, {0x9d, 0x29, 0x2e, 0x87, 0x33, 0xb6, 0x69, 0x34}}, // ICorProfilerInfo13
    {0xf460e352, 0xd76d, 0x4fe9, {0x83, 0x5f, 0xf6, 0xaf, 0x9d, 0x6e, 0x86, 0x2d}}, // ICorProfilerInfo14
    {0xb446462d, 0xbd22, 0x41dd, {0x87, 0x2d, 0xdc, 0x71, 0x4c, 0x49, 0xeb, 0x56}}, // ICorProfilerInfo15
};
static const GUID iid_cb[11] = {
    {0x176fbed1, 0xa55c, 0x4796, {0x98, 0xca, 0xa9, 0xda, 0x0e, 0xf8, 0x83, 0xe7}},
    {0x8a8cc829, 0xccf2, 0x49fe, {0xbb, 0xae, 0x0f, 0x02, 0x22, 0x28, 0x07, 0x1a}},
    {0x4fd2ed52, 0x7731, 0x4b8d, {0x94, 0x69, 0x03, 0xd2, 0xcc, 0x30, 0x86, 0xc5}},
    {0x7b63b2e3, 0x107d, 0x4d48, {0xb2, 0xf6, 0xf6, 0x1e, 0x22, 0x94, 0x70, 0xd2}},
    {0x8dfba405, 0x8c9f, 0x45f8, {0xbf, 0xfa, 0x83, 0xb1, 0x4c, 0xef, 0x78, 0xb5}},
    {0xfc13df4b, 0x4448, 0x4f4f, {0x95, 0x0c, 0xba, 0x8d, 0x19, 0xd0, 0x0c, 0x36}},
    {0xf76a2dba, 0x1d52, 0x4539, {0x86, 0x6c, 0x2a, 0xa5, 0x18, 0xf9, 0xef, 0xc3}},
    {0x5bed9b15, 0xc079, 0x4d47, {0xbf, 0xe2, 0x21, 0x5a, 0x14, 0x0c, 0x07, 0xe0}},
    {0x27583ec3, 0xc8f5, 0x482f, {0x80, 0x52, 0x19, 0x4b, 0x8c, 0xe4, 0x70, 0x5a}},
    {0xcec5b60e, 0xc69c, 0x495f, {0x87, 0xf6, 0x84, 0xd2, 0x8e, 0xe1, 0x6f, 0xfb}},
    {0x42350846, 0xaaed, 0x47f7, {0xb1, 0x28, 0xfd, 0x0c, 0x98, 0x88, 0x1c, 0xde}},
};

#define MONITOR_MODULE_LOADS 0x4u
#define MONITOR_JIT_COMPILATION 0x20u
#define MONITOR_OBJECT_ALLOCATED 0x100u
#define MONITOR_ENTERLEAVE 0x1000u
#define ENABLE_OBJECT_ALLOCATED 0x800000u

static ICorProfilerInfo3 *info;
static uint32_t mask;
static volatile long jits, allocs, modules, inlining, failed;
static int notification, no_inline, elt, fail_init;

static void fail(const char *what, long a, long b) {
	__atomic_add_fetch(&failed, 1, __ATOMIC_RELAXED);
	fprintf(stderr, "chainc: FAIL %s (%ld, %ld)\n", what, a, b);
}

static int eq(const GUID *a, const GUID *b) { return memcmp(a, b, sizeof *a) == 0; }

static HRESULT STDMETHODCALLTYPE ok_stub(void) { return S_OK; }

static HRESULT STDMETHODCALLTYPE cb_QI(ICorProfilerCallback11 *self, REFIID riid, void **ppv) {
	if (eq(riid, &iid_unknown)) {
		*ppv = self;
		return S_OK;
	}
	for (int i = 0; i < 11; i++) {
		if (eq(riid, &iid_cb[i])) {
			*ppv = self;
			return S_OK;
		}
	}
	*ppv = NULL;
	return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE cb_AddRef(ICorProfilerCallback11 *self) { (void)self; return 2; }
static ULONG STDMETHODCALLTYPE cb_Release(ICorProfilerCallback11 *self) { (void)self; return 1; }

// The fast-path hooks are called from JIT-compiled prologs and epilogs
// with the arguments live in registers: a bare ret preserves them all.
__asm__(".text\n.p2align 4\nchainc_elt_ret:\n\tret\n");
void chainc_elt_ret(void);

static HRESULT STDMETHODCALLTYPE cb_Initialize(ICorProfilerCallback11 *self, IUnknown *unk) {
	(void)self;
	if (fail_init) {
		fprintf(stderr, "chainc: Initialize fails (CHAINC_FAIL_INIT)\n");
		return E_FAIL;
	}
	void *p = NULL;
	if (unk->lpVtbl->QueryInterface(unk, &iid_info3, &p) < 0 || p == NULL) {
		fail("QueryInterface(ICorProfilerInfo3)", 0, 0);
		return E_FAIL;
	}
	info = p;
	void *p1 = NULL;
	if (unk->lpVtbl->QueryInterface(unk, &iid_info, &p1) < 0 || p1 == NULL) {
		fail("QueryInterface(ICorProfilerInfo)", 0, 0);
	} else {
		((IUnknown *)p1)->lpVtbl->Release(p1);
	}
	// Every ICorProfilerInfoN up to the runtime's answers, every later one
	// does not; an answer is the object asked (no other identity).
	int highest = 0;
	for (int v = 1; v <= 15; v++) {
		void *q = NULL;
		if (unk->lpVtbl->QueryInterface(unk, &iid_infos[v - 1], &q) >= 0 && q != NULL) {
			if (v != highest + 1) {
				fail("ICorProfilerInfoN answered after a gap", v, highest);
			}
			highest = v;
			if (q != (void *)unk && q != (void *)info) {
				fail("QueryInterface(ICorProfilerInfoN) answered another object", v, 0);
			}
			((IUnknown *)q)->lpVtbl->Release(q);
		}
	}
	fprintf(stderr, "chainc: highest ICorProfilerInfo%d\n", highest);
	mask = MONITOR_JIT_COMPILATION | MONITOR_OBJECT_ALLOCATED | ENABLE_OBJECT_ALLOCATED;
	HRESULT hr = info->lpVtbl->SetEventMask(info, mask);
	if (hr < 0) {
		fail("SetEventMask in Initialize", hr, 0);
		return hr;
	}
	DWORD got = 0;
	info->lpVtbl->GetEventMask(info, &got);
	if (got != mask) {
		fail("GetEventMask after SetEventMask in Initialize", got, mask);
	}
	if (elt) {
		hr = info->lpVtbl->SetEnterLeaveFunctionHooks3(info, (FunctionEnter3 *)chainc_elt_ret, (FunctionLeave3 *)chainc_elt_ret, (FunctionTailcall3 *)chainc_elt_ret);
		fprintf(stderr, "chainc: SetEnterLeaveFunctionHooks3 0x%08x\n", (unsigned)hr);
	}
	fprintf(stderr, "chainc: Initialize mask=0x%x\n", (unsigned)mask);
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_Shutdown(ICorProfilerCallback11 *self) {
	(void)self;
	if (jits == 0) {
		fail("no JITCompilationStarted", 0, 0);
	}
	if (modules != 0) {
		fail("ModuleLoadFinished delivered without MonitorModuleLoads", modules, 0);
	}
	fprintf(stderr, "chainc: Shutdown jits=%ld allocs=%ld modules=%ld inlining=%ld failed=%ld\n", jits, allocs, modules, inlining, failed);
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_JITCompilationStarted(ICorProfilerCallback11 *self, FunctionID id, BOOL safe) {
	(void)self;
	(void)safe;
	if (id == 0) {
		fail("JITCompilationStarted with function ID 0", 0, 0);
	}
	if (__atomic_add_fetch(&jits, 1, __ATOMIC_RELAXED) == 1) {
		// Set the same mask again from a callback: a chaining host must
		// keep its own events on, and GetEventMask must say only what this
		// profiler asked for.
		HRESULT hr = info->lpVtbl->SetEventMask(info, mask);
		if (hr < 0) {
			fail("SetEventMask in JITCompilationStarted", hr, 0);
		}
		DWORD got = 0;
		info->lpVtbl->GetEventMask(info, &got);
		if (got != mask) {
			fail("GetEventMask in JITCompilationStarted is not what chainc set", got, mask);
		}
	}
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_ObjectAllocated(ICorProfilerCallback11 *self, ObjectID obj, ClassID cls) {
	(void)self;
	if (obj == 0 || cls == 0) {
		fail("ObjectAllocated with a zero ID", (long)obj, (long)cls);
	}
	__atomic_add_fetch(&allocs, 1, __ATOMIC_RELAXED);
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_ModuleLoadFinished(ICorProfilerCallback11 *self, ModuleID id, HRESULT st) {
	(void)self;
	(void)id;
	(void)st;
	__atomic_add_fetch(&modules, 1, __ATOMIC_RELAXED);
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_JITInlining(ICorProfilerCallback11 *self, FunctionID caller, FunctionID callee, BOOL *should) {
	(void)self;
	(void)caller;
	(void)callee;
	__atomic_add_fetch(&inlining, 1, __ATOMIC_RELAXED);
	if (no_inline) {
		*should = 0;
	}
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE cb_LoadAsNotificationOnly(ICorProfilerCallback11 *self, BOOL *only) {
	(void)self;
	*only = notification;
	fprintf(stderr, "chainc: LoadAsNotificationOnly -> %d\n", notification);
	return S_OK;
}

static ICorProfilerCallback11Vtbl vt;
static ICorProfilerCallback11 obj = {&vt};

static HRESULT STDMETHODCALLTYPE f_QI(IClassFactory *self, REFIID riid, void **ppv) {
	if (eq(riid, &iid_unknown) || eq(riid, &iid_factory)) {
		*ppv = self;
		return S_OK;
	}
	*ppv = NULL;
	return E_NOINTERFACE;
}
static ULONG STDMETHODCALLTYPE f_AddRef(IClassFactory *self) { (void)self; return 2; }
static ULONG STDMETHODCALLTYPE f_Release(IClassFactory *self) { (void)self; return 1; }
static HRESULT STDMETHODCALLTYPE f_CreateInstance(IClassFactory *self, IUnknown *outer, REFIID riid, void **ppv) {
	(void)self;
	if (outer != NULL) {
		return CLASS_E_NOAGGREGATION;
	}
	void **slots = (void **)&vt;
	for (size_t i = 0; i < sizeof vt / sizeof(void *); i++) {
		slots[i] = (void *)ok_stub;
	}
	vt.QueryInterface = cb_QI;
	vt.AddRef = cb_AddRef;
	vt.Release = cb_Release;
	vt.Initialize = cb_Initialize;
	vt.Shutdown = cb_Shutdown;
	vt.JITCompilationStarted = cb_JITCompilationStarted;
	vt.ObjectAllocated = cb_ObjectAllocated;
	vt.ModuleLoadFinished = cb_ModuleLoadFinished;
	vt.JITInlining = cb_JITInlining;
	vt.LoadAsNotificationOnly = cb_LoadAsNotificationOnly;
	const char *e = getenv("CHAINC_NOTIFICATION");
	notification = e != NULL && strcmp(e, "1") == 0;
	e = getenv("CHAINC_NO_INLINE");
	no_inline = e != NULL && strcmp(e, "1") == 0;
	e = getenv("CHAINC_ELT");
	elt = e != NULL && strcmp(e, "1") == 0;
	e = getenv("CHAINC_FAIL_INIT");
	fail_init = e != NULL && strcmp(e, "1") == 0;
	return cb_QI(&obj, riid, ppv);
}
static HRESULT STDMETHODCALLTYPE f_LockServer(IClassFactory *self, BOOL lock) { (void)self; (void)lock; return S_OK; }
static const IClassFactoryVtbl fvt = {f_QI, f_AddRef, f_Release, f_CreateInstance, f_LockServer};
static IClassFactory factory = {&fvt};

EXPORT HRESULT STDMETHODCALLTYPE DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv) {
	if (!eq(rclsid, &clsid)) {
		return CLASS_E_CLASSNOTAVAILABLE;
	}
	return f_QI(&factory, riid, ppv);
}

EXPORT HRESULT STDMETHODCALLTYPE DllCanUnloadNow(void) { return S_FALSE; }
