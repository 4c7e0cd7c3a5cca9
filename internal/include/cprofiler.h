/*
 * cprofiler.h: what the repository's hand-written C profilers share
 * (internal/harness/testdata/cprof, the harness's own test profiler, and
 * bench/cref, the benchmarks' reference profiler): the IIDs they answer to
 * or ask for, a COM object that is nothing but a vtable pointer, one log
 * line per call on stderr, and a static class factory. Define
 * CPROFILER_LOG_PREFIX (e.g. "cref: ") before including it; one translation
 * unit per library.
 */
#ifndef CLRPROF_CPROFILER_H
#define CLRPROF_CPROFILER_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "comtypes.h"

#ifndef CPROFILER_LOG_PREFIX
#error "define CPROFILER_LOG_PREFIX before including cprofiler.h"
#endif

#define EXPORT __attribute__((visibility("default")))

static const GUID IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

/* ICorProfilerCallback (index 0) .. ICorProfilerCallback11 (index 10). */
__attribute__((unused)) static const GUID callback_iids[11] = {
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
__attribute__((unused)) static const GUID info_iids[15] = {
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

/* Slots of IUnknown and IClassFactory. */
enum {
    SLOT_QUERY_INTERFACE = 0,
    SLOT_ADD_REF = 1,
    SLOT_RELEASE = 2,
    CF_CREATE_INSTANCE = 3,
    CF_LOCK_SERVER = 4,
    CF_SLOT_COUNT = 5,
};

/* A COM object is a pointer to its vtable; nothing else is needed here. */
typedef struct {
    void *const *vtbl;
} comobj;

typedef HRESULT (*qi_fn)(comobj *, const GUID *, void **);
typedef ULONG (*release_fn)(comobj *);
typedef HRESULT (*set_event_mask_fn)(comobj *, uint32_t);

static inline int guid_eq(const GUID *a, const GUID *b) { return memcmp(a, b, sizeof(GUID)) == 0; }

static inline void guid_str(const GUID *g, char out[39]) {
    snprintf(out, 39, "{%08X-%04X-%04X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g->Data1, g->Data2, g->Data3,
             g->Data4[0], g->Data4[1], g->Data4[2], g->Data4[3], g->Data4[4], g->Data4[5], g->Data4[6], g->Data4[7]);
}

/* say writes CPROFILER_LOG_PREFIX, the formatted text and a newline to
 * stderr in one write, so lines from different threads do not interleave. */
__attribute__((format(printf, 1, 2))) static inline void say(const char *fmt, ...) {
    char buf[512];
    const size_t pre = sizeof CPROFILER_LOG_PREFIX - 1;
    int n;
    va_list ap;
    memcpy(buf, CPROFILER_LOG_PREFIX, pre);
    va_start(ap, fmt);
    n = vsnprintf(buf + pre, sizeof buf - pre - 1, fmt, ap);
    va_end(ap);
    if (n < 0) {
        return;
    }
    n += (int)pre;
    if (n > (int)sizeof buf - 1) {
        n = (int)sizeof buf - 1;
    }
    buf[n++] = '\n';
    if (write(2, buf, (size_t)n) < 0) {
        /* nothing useful to do */
    }
}

/* ---- the class factory: static, never freed ---- */

static void *factory_vtbl[CF_SLOT_COUNT];
static comobj factory_obj = {factory_vtbl};

static inline HRESULT cf_query_interface(comobj *self, const GUID *riid, void **ppv) {
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

static inline ULONG cf_add_ref(comobj *self) {
    (void)self;
    return 2;
}

static inline ULONG cf_release(comobj *self) {
    (void)self;
    return 1;
}

static inline HRESULT cf_lock_server(comobj *self, int lock) {
    (void)self;
    (void)lock;
    return S_OK;
}

/* cprofiler_init_factory fills the factory's vtable around the library's
 * own CreateInstance. */
static inline void cprofiler_init_factory(HRESULT (*create_instance)(comobj *, comobj *, const GUID *, void **)) {
    factory_vtbl[SLOT_QUERY_INTERFACE] = (void *)cf_query_interface;
    factory_vtbl[SLOT_ADD_REF] = (void *)cf_add_ref;
    factory_vtbl[SLOT_RELEASE] = (void *)cf_release;
    factory_vtbl[CF_CREATE_INSTANCE] = (void *)create_instance;
    factory_vtbl[CF_LOCK_SERVER] = (void *)cf_lock_server;
}

#endif
