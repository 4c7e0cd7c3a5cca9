// Chaining a native profiler; see chain.h, docs/internals.md ("Chaining")
// and package profiler's documentation ("Sharing the process with another
// profiler").
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "object.h"
#include "guard.h"
#include "chain.h"
#include "_cgo_export.h"

clrprof_chain_state clrprof_chain;

static const GUID iid_iunknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID iid_iclassfactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

// ---- which events each callback needs (corprof.idl, COR_PRF_MONITOR) ----

#define M_FUNCTION_UNLOADS 0x00000001u
#define M_CLASS_LOADS 0x00000002u
#define M_MODULE_LOADS 0x00000004u
#define M_ASSEMBLY_LOADS 0x00000008u
#define M_APPDOMAIN_LOADS 0x00000010u
#define M_JIT_COMPILATION 0x00000020u
#define M_EXCEPTIONS 0x00000040u
#define M_GC 0x00000080u
#define M_OBJECT_ALLOCATED 0x00000100u
#define M_THREADS 0x00000200u
#define M_REMOTING 0x00000400u
#define M_CODE_TRANSITIONS 0x00000800u
#define M_CCW 0x00002000u
#define M_SUSPENDS 0x00010000u
#define M_CACHE_SEARCHES 0x00020000u
#define M_ENABLE_REJIT 0x00040000u
#define M_ENABLE_OBJECT_ALLOCATED 0x00800000u
#define M_CLR_EXCEPTIONS 0x01000000u
#define H_ADD_ASSEMBLY_REFERENCES 0x00000001u
#define H_IN_MEMORY_SYMBOLS_UPDATED 0x00000002u
#define H_DYNAMIC_FUNCTION_UNLOADS 0x00000004u
#define H_BASIC_GC 0x00000010u
#define H_GC_MOVED_OBJECTS 0x00000020u
#define H_LARGEOBJECT_ALLOCATED 0x00000040u
#define H_EVENT_PIPE 0x00000080u
#define H_PINNEDOBJECT_ALLOCATED 0x00000100u

#define S(name, lo, hi) [CLRPROF_CB_##name] = (lo)
#define SH(name, lo, hi) [CLRPROF_CB_##name] = (hi)
#define EVENTS(X)                                                                                          \
	X(AppDomainCreationStarted, M_APPDOMAIN_LOADS, 0), X(AppDomainCreationFinished, M_APPDOMAIN_LOADS, 0),   \
	    X(AppDomainShutdownStarted, M_APPDOMAIN_LOADS, 0), X(AppDomainShutdownFinished, M_APPDOMAIN_LOADS, 0), \
	    X(AssemblyLoadStarted, M_ASSEMBLY_LOADS, 0), X(AssemblyLoadFinished, M_ASSEMBLY_LOADS, 0),             \
	    X(AssemblyUnloadStarted, M_ASSEMBLY_LOADS, 0), X(AssemblyUnloadFinished, M_ASSEMBLY_LOADS, 0),         \
	    X(ModuleLoadStarted, M_MODULE_LOADS, 0), X(ModuleLoadFinished, M_MODULE_LOADS, 0),                     \
	    X(ModuleUnloadStarted, M_MODULE_LOADS, 0), X(ModuleUnloadFinished, M_MODULE_LOADS, 0),                 \
	    X(ModuleAttachedToAssembly, M_MODULE_LOADS, 0), X(ClassLoadStarted, M_CLASS_LOADS, 0),                 \
	    X(ClassLoadFinished, M_CLASS_LOADS, 0), X(ClassUnloadStarted, M_CLASS_LOADS, 0),                       \
	    X(ClassUnloadFinished, M_CLASS_LOADS, 0), X(FunctionUnloadStarted, M_FUNCTION_UNLOADS, 0),             \
	    X(JITCompilationStarted, M_JIT_COMPILATION, 0), X(JITCompilationFinished, M_JIT_COMPILATION, 0),       \
	    X(JITCachedFunctionSearchStarted, M_CACHE_SEARCHES, 0),                                                \
	    X(JITCachedFunctionSearchFinished, M_CACHE_SEARCHES, 0), X(JITFunctionPitched, M_JIT_COMPILATION, 0),  \
	    X(JITInlining, M_JIT_COMPILATION, 0), X(ThreadCreated, M_THREADS, 0), X(ThreadDestroyed, M_THREADS, 0), \
	    X(ThreadAssignedToOSThread, M_THREADS, 0), X(RemotingClientInvocationStarted, M_REMOTING, 0),          \
	    X(RemotingClientSendingMessage, M_REMOTING, 0), X(RemotingClientReceivingReply, M_REMOTING, 0),        \
	    X(RemotingClientInvocationFinished, M_REMOTING, 0), X(RemotingServerReceivingMessage, M_REMOTING, 0),  \
	    X(RemotingServerInvocationStarted, M_REMOTING, 0), X(RemotingServerInvocationReturned, M_REMOTING, 0), \
	    X(RemotingServerSendingReply, M_REMOTING, 0), X(UnmanagedToManagedTransition, M_CODE_TRANSITIONS, 0),  \
	    X(ManagedToUnmanagedTransition, M_CODE_TRANSITIONS, 0), X(RuntimeSuspendStarted, M_SUSPENDS, 0),       \
	    X(RuntimeSuspendFinished, M_SUSPENDS, 0), X(RuntimeSuspendAborted, M_SUSPENDS, 0),                     \
	    X(RuntimeResumeStarted, M_SUSPENDS, 0), X(RuntimeResumeFinished, M_SUSPENDS, 0),                       \
	    X(RuntimeThreadSuspended, M_SUSPENDS, 0), X(RuntimeThreadResumed, M_SUSPENDS, 0),                      \
	    X(MovedReferences, M_GC, H_GC_MOVED_OBJECTS),                                                          \
	    X(ObjectAllocated, M_OBJECT_ALLOCATED | M_ENABLE_OBJECT_ALLOCATED,                                     \
	      H_LARGEOBJECT_ALLOCATED | H_PINNEDOBJECT_ALLOCATED),                                                 \
	    X(ObjectsAllocatedByClass, M_GC | M_OBJECT_ALLOCATED | M_ENABLE_OBJECT_ALLOCATED, 0),                  \
	    X(ObjectReferences, M_GC, 0), X(RootReferences, M_GC, 0), X(ExceptionThrown, M_EXCEPTIONS, 0),         \
	    X(ExceptionSearchFunctionEnter, M_EXCEPTIONS, 0), X(ExceptionSearchFunctionLeave, M_EXCEPTIONS, 0),    \
	    X(ExceptionSearchFilterEnter, M_EXCEPTIONS, 0), X(ExceptionSearchFilterLeave, M_EXCEPTIONS, 0),        \
	    X(ExceptionSearchCatcherFound, M_EXCEPTIONS, 0), X(ExceptionOSHandlerEnter, M_EXCEPTIONS, 0),          \
	    X(ExceptionOSHandlerLeave, M_EXCEPTIONS, 0), X(ExceptionUnwindFunctionEnter, M_EXCEPTIONS, 0),         \
	    X(ExceptionUnwindFunctionLeave, M_EXCEPTIONS, 0), X(ExceptionUnwindFinallyEnter, M_EXCEPTIONS, 0),     \
	    X(ExceptionUnwindFinallyLeave, M_EXCEPTIONS, 0), X(ExceptionCatcherEnter, M_EXCEPTIONS, 0),            \
	    X(ExceptionCatcherLeave, M_EXCEPTIONS, 0), X(COMClassicVTableCreated, M_CCW, 0),                       \
	    X(COMClassicVTableDestroyed, M_CCW, 0), X(ExceptionCLRCatcherFound, M_CLR_EXCEPTIONS, 0),              \
	    X(ExceptionCLRCatcherExecute, M_CLR_EXCEPTIONS, 0), X(ThreadNameChanged, M_THREADS, 0),                \
	    X(GarbageCollectionStarted, M_GC, H_BASIC_GC), X(SurvivingReferences, M_GC, H_GC_MOVED_OBJECTS),       \
	    X(GarbageCollectionFinished, M_GC, H_BASIC_GC), X(FinalizeableObjectQueued, M_GC, 0),                  \
	    X(RootReferences2, M_GC, 0), X(HandleCreated, M_GC, 0), X(HandleDestroyed, M_GC, 0),                   \
	    X(ReJITCompilationStarted, M_ENABLE_REJIT, 0), X(GetReJITParameters, M_ENABLE_REJIT, 0),               \
	    X(ReJITCompilationFinished, M_ENABLE_REJIT, 0), X(ReJITError, M_ENABLE_REJIT, 0),                      \
	    X(MovedReferences2, M_GC, H_GC_MOVED_OBJECTS), X(SurvivingReferences2, M_GC, H_GC_MOVED_OBJECTS),      \
	    X(ConditionalWeakTableElementReferences, M_GC, 0),                                                     \
	    X(GetAssemblyReferences, 0, H_ADD_ASSEMBLY_REFERENCES),                                                \
	    X(ModuleInMemorySymbolsUpdated, 0, H_IN_MEMORY_SYMBOLS_UPDATED),                                       \
	    X(DynamicMethodJITCompilationStarted, M_JIT_COMPILATION, 0),                                           \
	    X(DynamicMethodJITCompilationFinished, M_JIT_COMPILATION, 0),                                          \
	    X(DynamicMethodUnloaded, 0, H_DYNAMIC_FUNCTION_UNLOADS), X(EventPipeEventDelivered, 0, H_EVENT_PIPE),   \
	    X(EventPipeProviderCreated, 0, H_EVENT_PIPE)

const uint32_t clrprof_slot_lo[CLRPROF_CALLBACK_SLOTS] = {EVENTS(S)};
const uint32_t clrprof_slot_hi[CLRPROF_CALLBACK_SLOTS] = {EVENTS(SH)};

// ---- logging through Go ----

static void chain_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void chain_log(int level, const char *fmt, ...) {
	char msg[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoChainLog(level, msg);
	clrprof_go_leave(&g);
}
enum { LOG_DEBUG = -4, LOG_INFO = 0, LOG_WARN = 4, LOG_ERROR = 8 };

static void guid_str(const GUID *g, char *out, size_t n) {
	snprintf(out, n, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", (unsigned)g->Data1, g->Data2, g->Data3,
	         g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

// ---- loading the chained profiler ----

static char chain_path[4096];
static char chain_clsid[48];
static volatile int claimed;

typedef HRESULT(STDMETHODCALLTYPE *dll_get_class_object)(REFCLSID, REFIID, void **);

int clrprof_chain_claim(void) {
	if (__atomic_exchange_n(&claimed, 1, __ATOMIC_ACQ_REL)) {
		return 0; // only the first profiler object of the process chains
	}
	GUID clsid;
	memset(&clsid, 0, sizeof clsid);
	clrprof_guard g;
	clrprof_go_enter(&g);
	int on = clrprofGoChainConfig(chain_path, (int)sizeof chain_path, &clsid);
	clrprof_go_leave(&g);
	if (!on) {
		return 0;
	}
	guid_str(&clsid, chain_clsid, sizeof chain_clsid);
	void *lib = dlopen(chain_path, RTLD_NOW | RTLD_LOCAL);
	if (lib == NULL) {
		const char *e = dlerror();
		chain_log(LOG_ERROR, "chain: cannot load the chained profiler %s: %s; running without it", chain_path, e ? e : "?");
		return 0;
	}
	dll_get_class_object get = (dll_get_class_object)dlsym(lib, "DllGetClassObject");
	if (get == NULL) {
		chain_log(LOG_ERROR, "chain: %s exports no DllGetClassObject; running without it", chain_path);
		return 0;
	}
	IClassFactory *f = NULL;
	HRESULT hr = get(&clsid, &iid_iclassfactory, (void **)&f);
	if (hr < 0 || f == NULL) {
		chain_log(LOG_ERROR, "chain: %s: DllGetClassObject(%s) failed with 0x%08x; running without it", chain_path, chain_clsid, (unsigned)hr);
		return 0;
	}
	IUnknown *obj = NULL;
	// The runtime asks for ICorProfilerCallback2; some profilers answer
	// nothing else from CreateInstance.
	hr = f->lpVtbl->CreateInstance(f, NULL, &clrprof_callback_iids[1], (void **)&obj);
	if (hr < 0 || obj == NULL) {
		hr = f->lpVtbl->CreateInstance(f, NULL, &iid_iunknown, (void **)&obj);
	}
	f->lpVtbl->Release(f);
	if (hr < 0 || obj == NULL) {
		chain_log(LOG_ERROR, "chain: %s: CreateInstance failed with 0x%08x; running without it", chain_path, (unsigned)hr);
		return 0;
	}
	int version = 0;
	void *best = NULL;
	for (int i = clrprof_callback_iid_count - 1; i >= 0; i--) {
		void *p = NULL;
		if (obj->lpVtbl->QueryInterface(obj, &clrprof_callback_iids[i], &p) >= 0 && p != NULL) {
			version = i + 1;
			best = p;
			break;
		}
	}
	obj->lpVtbl->Release(obj);
	if (best == NULL) {
		chain_log(LOG_ERROR, "chain: %s %s answers no ICorProfilerCallback; running without it", chain_path, chain_clsid);
		return 0;
	}
	clrprof_chain.lib = lib;
	clrprof_chain.cb = best;
	clrprof_chain_direct_cb = best;
	clrprof_chain.version = version;
	clrprof_chain_live = clrprof_chain_vtbl;
	__atomic_store_n(&clrprof_chain.active, 1, __ATOMIC_RELEASE);
	chain_log(LOG_INFO, "chain: loaded the chained profiler %s %s (ICorProfilerCallback%d)", chain_path, chain_clsid, version);
	return 1;
}

// The class factory (object.c, a layer below) asks this hook for the vtable
// of each new profiler object: the chain's for the first object when a
// native profiler is chained, else the ordinary one (NULL).
static const void *chain_vtbl_hook(void) {
	return clrprof_chain_claim() ? (const void *)&clrprof_chain_live : NULL;
}

__attribute__((constructor)) static void chain_register(void) {
	clrprof_object_set_vtbl_hook(chain_vtbl_hook);
}

// ---- the Info wrappers ----

// clrprof_infofwd_base: 256 trampolines, 16 bytes apart; number i jumps to
// slot i of the real Info's vtable with the real Info as `this`.
extern char clrprof_infofwd_base[];
#define INFO_SLOTS (sizeof(ICorProfilerInfo15Vtbl) / sizeof(void *))
_Static_assert(INFO_SLOTS <= 256, "more Info slots than trampolines");
static const void *info_vtbl[INFO_SLOTS];
static clrprof_infowrap wraps[CLRPROF_PARTIES];
static ICorProfilerInfo15 *real_info;
static void *wraps_unk; // what wraps_init was given: the profiler object's Info whose parties these are
static int real_version;
static pthread_mutex_t mask_mu = PTHREAD_MUTEX_INITIALIZER;
static volatile int owner[2] = {-1, -1}; // ELT hooks, function ID mapper

static const char *party_name(int p, char *buf, size_t n) {
	if (p == CLRPROF_PARTY_GO) {
		return "the Go profiler";
	}
	if (p == CLRPROF_PARTY_CHAIN) {
		return "the chained profiler";
	}
	snprintf(buf, n, "composed Go profiler #%d", p - CLRPROF_PARTY_MEMBER0);
	return buf;
}

clrprof_infowrap *clrprof_infowrap_for(int party) {
	if (party < 0 || party >= CLRPROF_PARTIES || real_info == NULL) {
		return NULL;
	}
	return &wraps[party];
}

void clrprof_chain_masks(int party, uint32_t *lo, uint32_t *hi) {
	*lo = __atomic_load_n(&clrprof_chain.mask_lo[party], __ATOMIC_RELAXED);
	*hi = __atomic_load_n(&clrprof_chain.mask_hi[party], __ATOMIC_RELAXED);
}

int clrprof_chain_owner(int what) { return owner[what & 1]; }

static int is_info_iid(REFIID riid) {
	if (memcmp(riid, &iid_iunknown, sizeof(GUID)) == 0) {
		return 1;
	}
	for (int i = 0; i < clrprof_info_iid_count; i++) {
		if (memcmp(riid, &clrprof_info_iids[i], sizeof(GUID)) == 0) {
			return 1;
		}
	}
	return 0;
}

static HRESULT STDMETHODCALLTYPE w_QueryInterface(clrprof_infowrap *w, REFIID riid, void **ppv) {
	if (ppv == NULL || riid == NULL) {
		return E_POINTER;
	}
	void *out = NULL;
	HRESULT hr = w->real->lpVtbl->QueryInterface(w->real, riid, &out);
	if (hr < 0 || out == NULL) {
		*ppv = NULL;
		return hr;
	}
	// The reference taken on the runtime's object is the wrapper's (AddRef
	// and Release forward): an ICorProfilerInfoN the runtime has is
	// answered with the wrapper, anything else with the runtime's object.
	*ppv = is_info_iid(riid) ? (void *)w : out;
	return hr;
}

static ULONG STDMETHODCALLTYPE w_AddRef(clrprof_infowrap *w) { return w->real->lpVtbl->AddRef(w->real); }
static ULONG STDMETHODCALLTYPE w_Release(clrprof_infowrap *w) { return w->real->lpVtbl->Release(w->real); }

ICorProfilerCallback11Vtbl clrprof_chain_live;
void *clrprof_chain_direct_cb;
extern char clrprof_chaindirect_base[], clrprof_chaindirect_end[];
static int direct_count; // slots pointing straight at the chained profiler (logged when it changes)

// direct_slot reports whether callback slot s goes straight to the chained
// profiler: it is active, implements the slot's interface version, its
// mask asks for the callback, and no other party's does. Callbacks the
// runtime delivers whatever the mask (Initialize, Shutdown, ...) always
// go through the fan-out.
static int direct_slot(int s) {
	if (!__atomic_load_n(&clrprof_chain.active, __ATOMIC_ACQUIRE) || clrprof_chain.version < clrprof_slot_version[s]) {
		return 0;
	}
	if (clrprof_slot_lo[s] == 0 && clrprof_slot_hi[s] == 0) {
		return 0;
	}
	if (!clrprof_chain_wants(CLRPROF_PARTY_CHAIN, s)) {
		return 0;
	}
	return !clrprof_chain_go_for(s);
}

// refresh points each callback slot of clrprof_chain_live either at the
// fan-out (clrprof_chain_vtbl's function) or straight at the chained
// profiler. A call already made through the old pointer ends as that
// path would have: both are right for the masks of a moment ago, as a
// fan-out call that read the masks just before a change is. Call with
// mask_mu held (or before the object exists).
static void refresh(void) {
	if (clrprof_chain_live.Initialize == NULL) {
		return; // not the chaining object's library state
	}
	if (clrprof_chaindirect_end - clrprof_chaindirect_base != 16 * 128 || CLRPROF_CALLBACK_SLOTS + 3 > 128) {
		return; // trampolines not laid out as expected: keep the fan-out
	}
	void **live = (void **)&clrprof_chain_live;
	void *const *fan = (void *const *)&clrprof_chain_vtbl;
	int n = 0;
	for (int s = 0; s < CLRPROF_CALLBACK_SLOTS; s++) {
		int i = s + 3; // after IUnknown
		int d = direct_slot(s);
		n += d;
		void *p = d ? (void *)(clrprof_chaindirect_base + 16 * i) : fan[i];
		__atomic_store_n(&live[i], p, __ATOMIC_RELEASE);
	}
	if (n != direct_count) {
		direct_count = n;
		chain_log(LOG_INFO, "chain: %d callbacks go straight to the chained profiler (only it asks for them)", n);
	}
}

// apply sets the runtime's mask to the union of the parties' and points
// the chain vtable's slots accordingly. Call with mask_mu held.
static HRESULT apply_masks(void) {
	uint32_t lo = 0, hi = 0, glo = 0, ghi = 0;
	for (int p = 0; p < CLRPROF_PARTIES; p++) {
		lo |= clrprof_chain.mask_lo[p];
		hi |= clrprof_chain.mask_hi[p];
		if (p != CLRPROF_PARTY_CHAIN) {
			glo |= clrprof_chain.mask_lo[p];
			ghi |= clrprof_chain.mask_hi[p];
		}
	}
	__atomic_store_n(&clrprof_chain.go_lo, glo, __ATOMIC_RELAXED);
	__atomic_store_n(&clrprof_chain.go_hi, ghi, __ATOMIC_RELAXED);
	refresh();
	if (real_version >= 5) {
		return real_info->lpVtbl->SetEventMask2(real_info, lo, hi);
	}
	return real_info->lpVtbl->SetEventMask(real_info, lo);
}

static HRESULT set_party_mask(int party, uint32_t lo, uint32_t hi) {
	pthread_mutex_lock(&mask_mu);
	uint32_t old_lo = clrprof_chain.mask_lo[party], old_hi = clrprof_chain.mask_hi[party];
	__atomic_store_n(&clrprof_chain.mask_lo[party], lo, __ATOMIC_RELAXED);
	__atomic_store_n(&clrprof_chain.mask_hi[party], hi, __ATOMIC_RELAXED);
	HRESULT hr = apply_masks();
	if (hr < 0) {
		__atomic_store_n(&clrprof_chain.mask_lo[party], old_lo, __ATOMIC_RELAXED);
		__atomic_store_n(&clrprof_chain.mask_hi[party], old_hi, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&mask_mu);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetEventMask(clrprof_infowrap *w, DWORD lo) {
	return set_party_mask(w->party, lo, clrprof_chain.mask_hi[w->party]);
}

static HRESULT STDMETHODCALLTYPE w_SetEventMask2(clrprof_infowrap *w, DWORD lo, DWORD hi) {
	if (real_version < 5) {
		return E_NOINTERFACE;
	}
	return set_party_mask(w->party, lo, hi);
}

static HRESULT STDMETHODCALLTYPE w_GetEventMask(clrprof_infowrap *w, DWORD *lo) {
	if (lo == NULL) {
		return E_INVALIDARG;
	}
	*lo = clrprof_chain.mask_lo[w->party];
	return S_OK;
}

static HRESULT STDMETHODCALLTYPE w_GetEventMask2(clrprof_infowrap *w, DWORD *lo, DWORD *hi) {
	if (lo == NULL || hi == NULL) {
		return E_INVALIDARG;
	}
	*lo = clrprof_chain.mask_lo[w->party];
	*hi = clrprof_chain.mask_hi[w->party];
	return S_OK;
}

#define CORPROF_E_PROFILER_ALREADY_ACTIVE ((HRESULT)0x8013136A)

// own claims the ELT hooks (what 0) or the function ID mapper (1) for a
// party: the first party to set them owns them; the other is refused.
static HRESULT own(int what, int party, const char *method) {
	int none = -1;
	if (__atomic_compare_exchange_n(&owner[what], &none, party, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || none == party) {
		return S_OK;
	}
	char b1[48], b2[48];
	chain_log(LOG_ERROR, "%s called %s, but %s owns the %s: the runtime has one set; refused with CORPROF_E_PROFILER_ALREADY_ACTIVE",
	          party_name(party, b1, sizeof b1), method, party_name(none, b2, sizeof b2), what == 0 ? "enter/leave hooks" : "function ID mapper");
	return CORPROF_E_PROFILER_ALREADY_ACTIVE;
}

static void disown(int what, int party, HRESULT hr) {
	if (hr < 0) {
		int p = party;
		__atomic_compare_exchange_n(&owner[what], &p, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
}

static HRESULT STDMETHODCALLTYPE w_SetEnterLeaveFunctionHooks(clrprof_infowrap *w, FunctionEnter *a, FunctionLeave *b, FunctionTailcall *c) {
	HRESULT hr = own(0, w->party, "SetEnterLeaveFunctionHooks");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetEnterLeaveFunctionHooks(real_info, a, b, c);
	disown(0, w->party, hr);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetEnterLeaveFunctionHooks2(clrprof_infowrap *w, FunctionEnter2 *a, FunctionLeave2 *b, FunctionTailcall2 *c) {
	HRESULT hr = own(0, w->party, "SetEnterLeaveFunctionHooks2");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetEnterLeaveFunctionHooks2(real_info, a, b, c);
	disown(0, w->party, hr);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetEnterLeaveFunctionHooks3(clrprof_infowrap *w, FunctionEnter3 *a, FunctionLeave3 *b, FunctionTailcall3 *c) {
	HRESULT hr = own(0, w->party, "SetEnterLeaveFunctionHooks3");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetEnterLeaveFunctionHooks3(real_info, a, b, c);
	disown(0, w->party, hr);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetEnterLeaveFunctionHooks3WithInfo(clrprof_infowrap *w, FunctionEnter3WithInfo *a, FunctionLeave3WithInfo *b, FunctionTailcall3WithInfo *c) {
	HRESULT hr = own(0, w->party, "SetEnterLeaveFunctionHooks3WithInfo");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetEnterLeaveFunctionHooks3WithInfo(real_info, a, b, c);
	disown(0, w->party, hr);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetFunctionIDMapper(clrprof_infowrap *w, FunctionIDMapper *f) {
	HRESULT hr = own(1, w->party, "SetFunctionIDMapper");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetFunctionIDMapper(real_info, f);
	disown(1, w->party, hr);
	return hr;
}

static HRESULT STDMETHODCALLTYPE w_SetFunctionIDMapper2(clrprof_infowrap *w, FunctionIDMapper2 *f, void *data) {
	HRESULT hr = own(1, w->party, "SetFunctionIDMapper2");
	if (hr < 0) {
		return hr;
	}
	hr = real_info->lpVtbl->SetFunctionIDMapper2(real_info, f, data);
	disown(1, w->party, hr);
	return hr;
}

#define SLOT(name) (offsetof(ICorProfilerInfo15Vtbl, name) / sizeof(void *))

static void wraps_init(IUnknown *unk) {
	wraps_unk = unk;
	for (size_t i = 0; i < INFO_SLOTS; i++) {
		info_vtbl[i] = clrprof_infofwd_base + 16 * i;
	}
	info_vtbl[SLOT(QueryInterface)] = (const void *)w_QueryInterface;
	info_vtbl[SLOT(AddRef)] = (const void *)w_AddRef;
	info_vtbl[SLOT(Release)] = (const void *)w_Release;
	info_vtbl[SLOT(SetEventMask)] = (const void *)w_SetEventMask;
	info_vtbl[SLOT(GetEventMask)] = (const void *)w_GetEventMask;
	info_vtbl[SLOT(SetEventMask2)] = (const void *)w_SetEventMask2;
	info_vtbl[SLOT(GetEventMask2)] = (const void *)w_GetEventMask2;
	info_vtbl[SLOT(SetEnterLeaveFunctionHooks)] = (const void *)w_SetEnterLeaveFunctionHooks;
	info_vtbl[SLOT(SetEnterLeaveFunctionHooks2)] = (const void *)w_SetEnterLeaveFunctionHooks2;
	info_vtbl[SLOT(SetEnterLeaveFunctionHooks3)] = (const void *)w_SetEnterLeaveFunctionHooks3;
	info_vtbl[SLOT(SetEnterLeaveFunctionHooks3WithInfo)] = (const void *)w_SetEnterLeaveFunctionHooks3WithInfo;
	info_vtbl[SLOT(SetFunctionIDMapper)] = (const void *)w_SetFunctionIDMapper;
	info_vtbl[SLOT(SetFunctionIDMapper2)] = (const void *)w_SetFunctionIDMapper2;
	// The runtime's object under its highest ICorProfilerInfoN: every
	// lower version's vtable is a prefix of that one.
	for (int i = clrprof_info_iid_count - 1; i >= 0; i--) {
		void *p = NULL;
		if (unk->lpVtbl->QueryInterface(unk, &clrprof_info_iids[i], &p) >= 0 && p != NULL) {
			real_info = p; // keeps the reference for the life of the process
			real_version = i + 1;
			break;
		}
	}
	if (real_info == NULL) {
		return;
	}
	for (int p = 0; p < CLRPROF_PARTIES; p++) {
		wraps[p].lpVtbl = info_vtbl;
		wraps[p].real = real_info;
		wraps[p].party = p;
		wraps[p].real_version = real_version;
	}
}

// owns_info reports whether p is the Info the parties were set up for (or
// one of their wrappers): the parties belong to one profiler object, the
// first that needed them.
static int owns_info(const void *p) {
	if (p == NULL || real_info == NULL) {
		return 0;
	}
	if (p == wraps_unk || p == (const void *)real_info) {
		return 1;
	}
	for (int i = 0; i < CLRPROF_PARTIES; i++) {
		if (p == (const void *)&wraps[i]) {
			return 1;
		}
	}
	return 0;
}

void *clrprof_party_info(void *unk, int party) {
	if (party < 0 || party >= CLRPROF_PARTIES || unk == NULL) {
		return NULL;
	}
	pthread_mutex_lock(&mask_mu);
	if (real_info == NULL) {
		wraps_init(unk);
	}
	int mine = owns_info(unk);
	pthread_mutex_unlock(&mask_mu);
	return mine ? &wraps[party] : NULL;
}

void clrprof_party_reset(int party) {
	if (party < 0 || party >= CLRPROF_PARTIES || real_info == NULL) {
		return;
	}
	set_party_mask(party, 0, 0);
}

#define MONITOR_IMMUTABLE 0xEE98CC00u

int clrprof_parties_quiesce(const void *info) {
	if (!owns_info(info)) {
		return 0;
	}
	pthread_mutex_lock(&mask_mu);
	for (int p = 0; p < CLRPROF_PARTIES; p++) {
		clrprof_chain.mask_lo[p] &= MONITOR_IMMUTABLE;
	}
	apply_masks();
	pthread_mutex_unlock(&mask_mu);
	return 1;
}

// ---- the hand-written slots of the chain vtable ----

HRESULT STDMETHODCALLTYPE clrprof_cb_chain_QueryInterface(ICorProfilerCallback11 *self, REFIID riid, void **ppv) {
	return clrprof_QueryInterface(self, riid, ppv);
}
ULONG STDMETHODCALLTYPE clrprof_cb_chain_AddRef(ICorProfilerCallback11 *self) { return clrprof_AddRef(self); }
ULONG STDMETHODCALLTYPE clrprof_cb_chain_Release(ICorProfilerCallback11 *self) { return clrprof_Release(self); }

// drop stops forwarding to the chained profiler and lets it go.
static void drop_chain(void) {
	if (!__atomic_exchange_n(&clrprof_chain.active, 0, __ATOMIC_ACQ_REL)) {
		return;
	}
	pthread_mutex_lock(&mask_mu);
	if (real_info != NULL) {
		clrprof_chain.mask_lo[CLRPROF_PARTY_CHAIN] = 0;
		clrprof_chain.mask_hi[CLRPROF_PARTY_CHAIN] = 0;
		apply_masks();
	} else {
		refresh();
	}
	pthread_mutex_unlock(&mask_mu);
	// What it owned (enter/leave hooks, the function ID mapper) is free
	// again.
	for (int w = 0; w < 2; w++) {
		int p = CLRPROF_PARTY_CHAIN;
		__atomic_compare_exchange_n(&owner[w], &p, -1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	}
	// The object stays referenced and the library loaded: a callback
	// already in flight on another thread may still be inside it.
}

HRESULT STDMETHODCALLTYPE clrprof_chain_Initialize(ICorProfilerCallback11 *self, IUnknown *unk) {
	if (unk != NULL) {
		pthread_mutex_lock(&mask_mu);
		if (real_info == NULL) {
			wraps_init(unk);
		}
		pthread_mutex_unlock(&mask_mu);
	}
	if (real_info == NULL) {
		chain_log(LOG_ERROR, "chain: the runtime's Info answers no ICorProfilerInfo; the chained profiler %s is not started", chain_path);
		drop_chain();
		return clrprof_live_vtbl.Initialize(self, unk);
	}
	// The chained profiler first, then the Go profiler, as for every
	// callback.
	HRESULT hc = clrprof_chain.cb->lpVtbl->Initialize(clrprof_chain.cb, (IUnknown *)&wraps[CLRPROF_PARTY_CHAIN]);
	if (hc < 0) {
		chain_log(LOG_ERROR, "chain: the chained profiler %s %s failed Initialize with 0x%08x; the Go profiler runs alone",
		          chain_path, chain_clsid, (unsigned)hc);
		drop_chain();
	}
	HRESULT hg = clrprof_live_vtbl.Initialize(self, (IUnknown *)&wraps[CLRPROF_PARTY_GO]);
	if (hg < 0 && hc >= 0) {
		__atomic_store_n(&clrprof_chain.go_off, 1, __ATOMIC_RELEASE);
		pthread_mutex_lock(&mask_mu);
		clrprof_chain.mask_lo[CLRPROF_PARTY_GO] = 0;
		clrprof_chain.mask_hi[CLRPROF_PARTY_GO] = 0;
		apply_masks();
		pthread_mutex_unlock(&mask_mu);
		chain_log(LOG_WARN, "chain: the Go profiler failed Initialize with 0x%08x; the chained profiler %s runs alone", (unsigned)hg, chain_path);
		return S_OK;
	}
	chain_log(LOG_INFO, "chain: Initialize: chained profiler 0x%08x, Go profiler 0x%08x (ICorProfilerInfo%d)", (unsigned)hc, (unsigned)hg, real_version);
	return hg;
}

HRESULT STDMETHODCALLTYPE clrprof_chain_InitializeForAttach(ICorProfilerCallback11 *self, IUnknown *unk, void *data, UINT n) {
	chain_log(LOG_WARN, "chain: a profiler that attaches does not chain (the chained profiler %s was written for start-up); the Go profiler runs alone", chain_path);
	drop_chain();
	return clrprof_live_vtbl.InitializeForAttach(self, unk, data, n);
}

HRESULT STDMETHODCALLTYPE clrprof_chain_Shutdown(ICorProfilerCallback11 *self) {
	ICorProfilerCallback11 *c = clrprof_chain_target(CLRPROF_CB_Shutdown, 1);
	if (c != NULL) {
		c->lpVtbl->Shutdown(c);
	}
	HRESULT hr = clrprof_chain_go_on() ? clrprof_live_vtbl.Shutdown(self) : S_OK;
	__atomic_store_n(&clrprof_chain.active, 0, __ATOMIC_RELEASE);
	pthread_mutex_lock(&mask_mu);
	refresh();
	pthread_mutex_unlock(&mask_mu);
	return hr;
}

HRESULT STDMETHODCALLTYPE clrprof_chain_LoadAsNotificationOnly(ICorProfilerCallback11 *self, BOOL *only) {
	// The Go profiler decides how the library loads; the chained profiler
	// follows it.
	return clrprof_live_vtbl.LoadAsNotificationOnly(self, only);
}

// ---- this library's own path ----

const char *clrprof_self_path(void) {
	static char path[4096];
	Dl_info info;
	if (path[0] == '\0' && dladdr((const void *)&clrprof_self_path, &info) != 0 && info.dli_fname != NULL) {
		snprintf(path, sizeof path, "%s", info.dli_fname);
	}
	return path;
}

// ---- which clrprof profiler a library is ----

// clrprof_identity names the profiler registered in this library ("clsid
// type"), for a second Go library's refusal to say who holds the process.
// A data symbol: the other library reads it with dlsym without calling
// into this library's Go runtime.
__attribute__((visibility("default"))) char clrprof_identity[256];

void clrprof_set_identity(const char *s) { snprintf(clrprof_identity, sizeof clrprof_identity, "%s", s); }

const char *clrprof_other_identity(const char *path) {
	static char out[256];
	out[0] = '\0';
	void *h = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) {
		return out;
	}
	const char *id = dlsym(h, "clrprof_identity");
	if (id != NULL) {
		snprintf(out, sizeof out, "%s", id);
	}
	dlclose(h);
	return out;
}

#ifdef CLRPROF_TESTHOOKS
// ---- test hooks: the forwarding vtable without a runtime ----

static volatile uint64_t fake_calls;
static HRESULT STDMETHODCALLTYPE fake_allocated(ICorProfilerCallback11 *self, ObjectID o, ClassID c) {
	(void)self;
	fake_calls += (o != 0 && c != 0);
	return S_OK;
}
static ICorProfilerCallback11Vtbl fake_vt;
static ICorProfilerCallback11 fake_cb = {&fake_vt};

// clrprof_test_chain_calls makes n ObjectAllocated calls: straight to a
// fake native profiler (via 0), through the fan-out vtable
// clrprof_chain_vtbl with that fake chained (via 1), or through the chain
// vtable as the object has it, clrprof_chain_live after refresh (via 2).
// The chained party's mask asks for allocations (want 1) or not (0); the
// Go party's asks for them when go_wants is 1. It returns the nanoseconds
// the loop took, in *calls how many reached the fake, and in *direct
// whether the live slot pointed straight at the fake. The chain state is
// restored afterwards.
uint64_t clrprof_test_chain_calls(long n, int via, int want, int go_wants, uint64_t *calls, int *direct) {
	fake_vt.ObjectAllocated = fake_allocated;
	if (clrprof_live_vtbl.ObjectAllocated == NULL) {
		clrprof_live_vtbl = clrprof_callback_vtbl;
	}
	pthread_mutex_lock(&mask_mu);
	clrprof_chain_state saved = clrprof_chain;
	ICorProfilerCallback11Vtbl saved_live = clrprof_chain_live;
	void *saved_cb = clrprof_chain_direct_cb;
	clrprof_chain.cb = &fake_cb;
	clrprof_chain_direct_cb = &fake_cb;
	clrprof_chain.version = 11;
	clrprof_chain.active = 1;
	clrprof_chain.go_off = 0;
	clrprof_chain.mask_lo[CLRPROF_PARTY_CHAIN] = want ? (M_OBJECT_ALLOCATED | M_ENABLE_OBJECT_ALLOCATED) : M_JIT_COMPILATION;
	clrprof_chain.go_lo = go_wants ? (M_OBJECT_ALLOCATED | M_ENABLE_OBJECT_ALLOCATED) : 0;
	clrprof_chain.go_hi = 0;
	clrprof_chain_live = clrprof_chain_vtbl;
	refresh();
	*direct = clrprof_chain_live.ObjectAllocated != clrprof_chain_vtbl.ObjectAllocated;
	pthread_mutex_unlock(&mask_mu);
	clrprof_object obj = {via == 2 ? &clrprof_chain_live : &clrprof_chain_vtbl, 1, 0};
	ICorProfilerCallback11 *target = via ? (ICorProfilerCallback11 *)&obj : &fake_cb;
	fake_calls = 0;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		target->lpVtbl->ObjectAllocated(target, (ObjectID)(i + 1), 1);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*calls = fake_calls;
	pthread_mutex_lock(&mask_mu);
	clrprof_chain = saved;
	clrprof_chain_live = saved_live;
	clrprof_chain_direct_cb = saved_cb;
	pthread_mutex_unlock(&mask_mu);
	return (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec);
}
#endif
