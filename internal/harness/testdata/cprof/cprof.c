/*
 * cprof: the smallest CoreCLR profiler the harness tests could think of,
 * written by hand in C so that the CORECLR_* loading protocol can be checked
 * on every runtime without any Go in the process.
 *
 * What it does:
 *   - exports DllGetClassObject; it hands out a class factory only for
 *     CPROF_CLSID below and answers CLASS_E_CLASSNOTAVAILABLE otherwise;
 *   - the factory's CreateInstance returns one static profiler object whose
 *     vtable has every slot of ICorProfilerCallback .. ICorProfilerCallback11
 *     (3 IUnknown slots + 95 callbacks = 98 slots);
 *   - Initialize asks the runtime for the highest ICorProfilerInfoN it has,
 *     calls ICorProfilerInfo::SetEventMask(COR_PRF_MONITOR_MODULE_LOADS |
 *     COR_PRF_MONITOR_JIT_COMPILATION) and counts ModuleLoadFinished and
 *     JITCompilationStarted callbacks; every other callback returns S_OK;
 *   - it reports on stderr, one line each, prefixed "cprof: ", and on
 *     Shutdown prints the counts ("cprof: Shutdown modules=N jit=M").
 *
 * Environment knobs (for tests):
 *   CPROF_INIT_HR   Initialize returns this HRESULT (e.g. 0x80004005) instead
 *                   of S_OK, after printing its line.
 *   CPROF_CRASH     "initialize": write through a NULL pointer in Initialize
 *                   (a native crash inside a profiler callback).
 *
 * ABI facts used (Linux x64 PAL): GUID is {uint32, uint16, uint16, uint8[8]},
 * HRESULT is int32, COM methods use the normal SysV calling convention with
 * the object pointer as first argument, and a caller passing more arguments
 * than a function reads is harmless in that convention.
 */
#define CPROFILER_LOG_PREFIX "cprof: "
#include <stdlib.h>

#include "cprofiler.h"

#define COR_PRF_MONITOR_MODULE_LOADS 0x00000004u
#define COR_PRF_MONITOR_JIT_COMPILATION 0x00000020u

/* {5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73}: the CLSID this profiler answers to. */
static const GUID CPROF_CLSID = {0x5C2E9F41, 0x7A3B, 0x4D8E, {0x9C, 0x16, 0x2F, 0x0B, 0x8A, 0x4D, 0x6E, 0x73}};

/* Slot numbers (counting IUnknown's three) taken from the MIDL vtable order. */
enum {
    CB_SLOT_INITIALIZE = 3,
    CB_SLOT_SHUTDOWN = 4,
    CB_SLOT_MODULE_LOAD_FINISHED = 14,
    CB_SLOT_JIT_COMPILATION_STARTED = 23,
    CB_SLOT_COUNT = 98, /* ICorProfilerCallback11 */
    INFO_SLOT_SET_EVENT_MASK = 16,
};

/* ---- the profiler object ---- */

static void *profiler_vtbl[CB_SLOT_COUNT];
static comobj profiler_obj = {profiler_vtbl};
static int profiler_refs;
static long modules_loaded;
static long jit_started;

static HRESULT prof_query_interface(comobj *self, const GUID *riid, void **ppv) {
    char s[39];
    int i;
    if (ppv == NULL) {
        return E_POINTER;
    }
    if (riid == NULL) {
        *ppv = NULL;
        return E_POINTER;
    }
    if (guid_eq(riid, &IID_IUnknown)) {
        *ppv = self;
        __atomic_add_fetch(&profiler_refs, 1, __ATOMIC_SEQ_CST);
        return S_OK;
    }
    for (i = 0; i < 11; i++) {
        if (guid_eq(riid, &callback_iids[i])) {
            *ppv = self;
            __atomic_add_fetch(&profiler_refs, 1, __ATOMIC_SEQ_CST);
            if (i == 0) {
                say("QueryInterface ICorProfilerCallback");
            } else {
                say("QueryInterface ICorProfilerCallback%d", i + 1);
            }
            return S_OK;
        }
    }
    guid_str(riid, s);
    say("QueryInterface %s -> E_NOINTERFACE", s);
    *ppv = NULL;
    return E_NOINTERFACE;
}

static ULONG prof_add_ref(comobj *self) {
    (void)self;
    return (ULONG)__atomic_add_fetch(&profiler_refs, 1, __ATOMIC_SEQ_CST);
}

/* The object is static: the count is kept for honesty, nothing is freed. */
static ULONG prof_release(comobj *self) {
    (void)self;
    return (ULONG)__atomic_sub_fetch(&profiler_refs, 1, __ATOMIC_SEQ_CST);
}

static HRESULT prof_initialize(comobj *self, comobj *info_unk) {
    HRESULT init_hr = S_OK;
    const char *env = getenv("CPROF_INIT_HR");
    comobj *info = NULL;
    int level = 0;
    int i;
    (void)self;

    if (env != NULL && *env != '\0') {
        init_hr = (HRESULT)(uint32_t)strtoul(env, NULL, 0);
    }
    env = getenv("CPROF_CRASH");
    if (env != NULL && strcmp(env, "initialize") == 0) {
        say("Initialize crashing on purpose");
        *(volatile int *)(uintptr_t)0 = 1;
    }
    if (info_unk == NULL) {
        say("Initialize info=NULL");
        return init_hr;
    }
    /* Find the highest ICorProfilerInfoN the runtime implements. */
    for (i = 14; i >= 0; i--) {
        void *p = NULL;
        if (((qi_fn)info_unk->vtbl[SLOT_QUERY_INTERFACE])(info_unk, &info_iids[i], &p) == S_OK && p != NULL) {
            info = (comobj *)p;
            level = i + 1;
            break;
        }
    }
    if (info == NULL) {
        say("Initialize info=none");
        return init_hr;
    }
    if (init_hr == S_OK) {
        HRESULT hr = ((set_event_mask_fn)info->vtbl[INFO_SLOT_SET_EVENT_MASK])(info, COR_PRF_MONITOR_MODULE_LOADS | COR_PRF_MONITOR_JIT_COMPILATION);
        if (hr != S_OK) {
            say("SetEventMask failed hr=0x%08X", (uint32_t)hr);
        }
    }
    ((release_fn)info->vtbl[SLOT_RELEASE])(info);
    if (level == 1) {
        say("Initialize info=ICorProfilerInfo pid=%d", (int)getpid());
    } else {
        say("Initialize info=ICorProfilerInfo%d pid=%d", level, (int)getpid());
    }
    if (init_hr != S_OK) {
        say("Initialize returning 0x%08X", (uint32_t)init_hr);
    }
    return init_hr;
}

static HRESULT prof_shutdown(comobj *self) {
    (void)self;
    say("Shutdown modules=%ld jit=%ld", __atomic_load_n(&modules_loaded, __ATOMIC_SEQ_CST),
        __atomic_load_n(&jit_started, __ATOMIC_SEQ_CST));
    return S_OK;
}

static HRESULT prof_module_load_finished(comobj *self, uintptr_t module_id, HRESULT status) {
    (void)self;
    (void)module_id;
    (void)status;
    __atomic_add_fetch(&modules_loaded, 1, __ATOMIC_SEQ_CST);
    return S_OK;
}

static HRESULT prof_jit_compilation_started(comobj *self, uintptr_t function_id, int32_t is_safe_to_block) {
    (void)self;
    (void)function_id;
    (void)is_safe_to_block;
    __atomic_add_fetch(&jit_started, 1, __ATOMIC_SEQ_CST);
    return S_OK;
}

/* Every callback nobody here cares about. Its arguments are ignored. */
static HRESULT prof_ok(comobj *self) {
    (void)self;
    return S_OK;
}

/* ---- the class factory ---- */

static HRESULT cf_create_instance(comobj *self, comobj *outer, const GUID *riid, void **ppv) {
    HRESULT hr;
    char s[39];
    (void)self;
    if (ppv == NULL) {
        return E_POINTER;
    }
    *ppv = NULL;
    if (outer != NULL) {
        return CLASS_E_NOAGGREGATION;
    }
    hr = prof_query_interface(&profiler_obj, riid, ppv);
    if (riid != NULL) {
        guid_str(riid, s);
        say("CreateInstance %s -> 0x%08X", s, (uint32_t)hr);
    }
    return hr;
}

__attribute__((constructor)) static void cprof_init_vtables(void) {
    int i;
    for (i = 0; i < CB_SLOT_COUNT; i++) {
        profiler_vtbl[i] = (void *)prof_ok;
    }
    profiler_vtbl[SLOT_QUERY_INTERFACE] = (void *)prof_query_interface;
    profiler_vtbl[SLOT_ADD_REF] = (void *)prof_add_ref;
    profiler_vtbl[SLOT_RELEASE] = (void *)prof_release;
    profiler_vtbl[CB_SLOT_INITIALIZE] = (void *)prof_initialize;
    profiler_vtbl[CB_SLOT_SHUTDOWN] = (void *)prof_shutdown;
    profiler_vtbl[CB_SLOT_MODULE_LOAD_FINISHED] = (void *)prof_module_load_finished;
    profiler_vtbl[CB_SLOT_JIT_COMPILATION_STARTED] = (void *)prof_jit_compilation_started;

    cprofiler_init_factory(cf_create_instance);
}

EXPORT HRESULT DllGetClassObject(const GUID *rclsid, const GUID *riid, void **ppv) {
    char s[39];
    HRESULT hr;
    if (ppv == NULL || rclsid == NULL || riid == NULL) {
        return E_POINTER;
    }
    *ppv = NULL;
    guid_str(rclsid, s);
    if (!guid_eq(rclsid, &CPROF_CLSID)) {
        say("DllGetClassObject %s -> CLASS_E_CLASSNOTAVAILABLE", s);
        return CLASS_E_CLASSNOTAVAILABLE;
    }
    hr = cf_query_interface(&factory_obj, riid, ppv);
    say("DllGetClassObject %s -> 0x%08X", s, (uint32_t)hr);
    return hr;
}
