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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int32_t HRESULT;
typedef uint32_t ULONG;

typedef struct {
    uint32_t d1;
    uint16_t d2;
    uint16_t d3;
    uint8_t d4[8];
} GUID;

#define S_OK ((HRESULT)0)
#define E_NOINTERFACE ((HRESULT)0x80004002)
#define E_POINTER ((HRESULT)0x80004003)
#define CLASS_E_NOAGGREGATION ((HRESULT)0x80040110)
#define CLASS_E_CLASSNOTAVAILABLE ((HRESULT)0x80040111)

#define COR_PRF_MONITOR_MODULE_LOADS 0x00000004u
#define COR_PRF_MONITOR_JIT_COMPILATION 0x00000020u

/* {5C2E9F41-7A3B-4D8E-9C16-2F0B8A4D6E73}: the CLSID this profiler answers to. */
static const GUID CPROF_CLSID = {0x5C2E9F41, 0x7A3B, 0x4D8E, {0x9C, 0x16, 0x2F, 0x0B, 0x8A, 0x4D, 0x6E, 0x73}};

static const GUID IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

/* ICorProfilerCallback (index 0) .. ICorProfilerCallback11 (index 10). */
static const GUID callback_iids[11] = {
    {0x176FBED1, 0xA55C, 0x4796, {0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7}},
    {0x8A8CC829, 0xCCF2, 0x49FE, {0xBB, 0xAE, 0x0F, 0x02, 0x22, 0x28, 0x07, 0x1A}},
    {0x4FD2ED52, 0x7731, 0x4B8D, {0x94, 0x69, 0x03, 0xD2, 0xCC, 0x30, 0x86, 0xC5}},
    {0x7B63B2E3, 0x107D, 0x4D48, {0xB2, 0xF6, 0xF6, 0x1E, 0x22, 0x94, 0x70, 0xD2}},
    {0x8DFBA405, 0x8C9F, 0x45F8, {0xBF, 0xFA, 0x83, 0xB1, 0x4C, 0xEF, 0x78, 0xB5}},
    {0xFC13DF4B, 0x4448, 0x4F4F, {0x95, 0x0C, 0xBA, 0x8D, 0x19, 0xD0, 0x0C, 0x36}},
    {0xF76A2DBA, 0x1D52, 0x4539, {0x86, 0x6C, 0x2A, 0xA5, 0x18, 0xF9, 0xEF, 0xC3}},
    {0x5BED9B15, 0xC079, 0x4D47, {0xBF, 0xE2, 0x21, 0x5A, 0x14, 0x0C, 0x07, 0xE0}},
    {0x27583EC3, 0xC8F5, 0x482F, {0x80, 0x52, 0x19, 0x4B, 0x8C, 0xE4, 0x70, 0x5A}},
    {0xCEC5B60E, 0xC69C, 0x495F, {0x87, 0xF6, 0x84, 0xD2, 0x8E, 0xE1, 0x6F, 0xFB}},
    {0x42350846, 0xAAED, 0x47F7, {0xB1, 0x28, 0xFD, 0x0C, 0x98, 0x88, 0x1C, 0xDE}},
};

/* ICorProfilerInfo (index 0) .. ICorProfilerInfo15 (index 14). */
static const GUID info_iids[15] = {
    {0x28B5557D, 0x3F3F, 0x48B4, {0x90, 0xB2, 0x5F, 0x9E, 0xEA, 0x2F, 0x6C, 0x48}},
    {0xCC0935CD, 0xA518, 0x487D, {0xB0, 0xBB, 0xA9, 0x32, 0x14, 0xE6, 0x54, 0x78}},
    {0xB555ED4F, 0x452A, 0x4E54, {0x8B, 0x39, 0xB5, 0x36, 0x0B, 0xAD, 0x32, 0xA0}},
    {0x0D8FDCAA, 0x6257, 0x47BF, {0xB1, 0xBF, 0x94, 0xDA, 0xC8, 0x84, 0x66, 0xEE}},
    {0x07602928, 0xCE38, 0x4B83, {0x81, 0xE7, 0x74, 0xAD, 0xAF, 0x78, 0x12, 0x14}},
    {0xF30A070D, 0xBFFB, 0x46A7, {0xB1, 0xD8, 0x87, 0x81, 0xEF, 0x7B, 0x69, 0x8A}},
    {0x9AEECC0D, 0x63E0, 0x4187, {0x8C, 0x00, 0xE3, 0x12, 0xF5, 0x03, 0xF6, 0x63}},
    {0xC5AC80A6, 0x782E, 0x4716, {0x80, 0x44, 0x39, 0x59, 0x8C, 0x60, 0xCF, 0xBF}},
    {0x008170DB, 0xF8CC, 0x4796, {0x9A, 0x51, 0xDC, 0x8A, 0xA0, 0xB4, 0x70, 0x12}},
    {0x2F1B5152, 0xC869, 0x40C9, {0xAA, 0x5F, 0x3A, 0xBE, 0x02, 0x6B, 0xD7, 0x20}},
    {0x06398876, 0x8987, 0x4154, {0xB6, 0x21, 0x40, 0xA0, 0x0D, 0x6E, 0x4D, 0x04}},
    {0x27B24CCD, 0x1CB1, 0x47C5, {0x96, 0xEE, 0x98, 0x19, 0x0D, 0xC3, 0x09, 0x59}},
    {0x6E6C7EE2, 0x0701, 0x4EC2, {0x9D, 0x29, 0x2E, 0x87, 0x33, 0xB6, 0x69, 0x34}},
    {0xF460E352, 0xD76D, 0x4FE9, {0x83, 0x5F, 0xF6, 0xAF, 0x9D, 0x6E, 0x86, 0x2D}},
    {0xB446462D, 0xBD22, 0x41DD, {0x87, 0x2D, 0xDC, 0x71, 0x4C, 0x49, 0xEB, 0x56}},
};

/* Slot numbers (counting IUnknown's three) taken from the MIDL vtable order. */
enum {
    SLOT_QUERY_INTERFACE = 0,
    SLOT_ADD_REF = 1,
    SLOT_RELEASE = 2,
    CB_SLOT_INITIALIZE = 3,
    CB_SLOT_SHUTDOWN = 4,
    CB_SLOT_MODULE_LOAD_FINISHED = 14,
    CB_SLOT_JIT_COMPILATION_STARTED = 23,
    CB_SLOT_COUNT = 98, /* ICorProfilerCallback11 */
    INFO_SLOT_SET_EVENT_MASK = 16,
    CF_SLOT_CREATE_INSTANCE = 3,
    CF_SLOT_LOCK_SERVER = 4,
    CF_SLOT_COUNT = 5,
};

/* A COM object is a pointer to its vtable; nothing else is needed here. */
typedef struct {
    void *const *vtbl;
} comobj;

static void say(const char *fmt, ...) {
    char buf[512];
    int n;
    va_list ap;
    memcpy(buf, "cprof: ", 7);
    va_start(ap, fmt);
    n = vsnprintf(buf + 7, sizeof buf - 8, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    n += 7;
    if (n > (int)sizeof buf - 1) {
        n = (int)sizeof buf - 1;
    }
    buf[n++] = '\n';
    /* One write per line so lines from different threads do not interleave. */
    if (write(2, buf, (size_t)n) < 0) {
        /* nothing useful to do */
    }
}

static void guid_str(const GUID *g, char out[39]) {
    snprintf(out, 39, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g->d1, g->d2, g->d3, g->d4[0],
             g->d4[1], g->d4[2], g->d4[3], g->d4[4], g->d4[5], g->d4[6], g->d4[7]);
}

static int guid_eq(const GUID *a, const GUID *b) { return memcmp(a, b, sizeof(GUID)) == 0; }

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

typedef HRESULT (*qi_fn)(comobj *, const GUID *, void **);
typedef ULONG (*release_fn)(comobj *);
typedef HRESULT (*set_event_mask_fn)(comobj *, uint32_t);

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

static void *factory_vtbl[CF_SLOT_COUNT];
static comobj factory_obj = {factory_vtbl};

static HRESULT cf_query_interface(comobj *self, const GUID *riid, void **ppv) {
    if (ppv == NULL) {
        return E_POINTER;
    }
    if (riid != NULL && (guid_eq(riid, &IID_IUnknown) || guid_eq(riid, &IID_IClassFactory))) {
        *ppv = self;
        return S_OK;
    }
    *ppv = NULL;
    return E_NOINTERFACE;
}

static ULONG cf_add_ref(comobj *self) {
    (void)self;
    return 2;
}

static ULONG cf_release(comobj *self) {
    (void)self;
    return 1;
}

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

static HRESULT cf_lock_server(comobj *self, int lock) {
    (void)self;
    (void)lock;
    return S_OK;
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

    factory_vtbl[SLOT_QUERY_INTERFACE] = (void *)cf_query_interface;
    factory_vtbl[SLOT_ADD_REF] = (void *)cf_add_ref;
    factory_vtbl[SLOT_RELEASE] = (void *)cf_release;
    factory_vtbl[CF_SLOT_CREATE_INSTANCE] = (void *)cf_create_instance;
    factory_vtbl[CF_SLOT_LOCK_SERVER] = (void *)cf_lock_server;
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
