/*
 * cref: the C reference profiler of the benchmarks. Plain C, plain vtables,
 * no runtime of its own: the floor for in-process dispatch that the Go
 * profilers of bench/prof are measured against. Each mode does the same
 * work as the Go profiler it is compared with.
 *
 * CREF_MODE selects what it does (default "idle"):
 *
 *   idle     Initialize and Shutdown only; no events.
 *   unimpl   the event mask of bench/prof/idle's "unimpl" mode (module,
 *            class, assembly, JIT, thread, exception, GC, suspension and
 *            allocation callbacks, ...): every callback answered S_OK.
 *   alloc    ObjectAllocated: the object's size (ICorProfilerInfo::
 *            GetObjectSize) and class are recorded as a fixed-size event in
 *            a per-thread buffer; full buffers go to a consumer thread that
 *            sums them per class.
 *   exc      ExceptionThrown: one atomic counter.
 *   elt      enter/leave/tailcall hooks (SetEnterLeaveFunctionHooks3):
 *            assembly stubs save the registers the JIT expects preserved and
 *            call C, which records (function, kind, time-stamp counter) in
 *            the same per-thread buffers; the consumer counts the events by
 *            kind and pairs every leave or tailcall with its thread's
 *            enters (a shadow stack of function IDs), which shows that the
 *            IDs recorded are real.
 *
 * The buffers are unbounded: a thread whose buffer is full hands it to the
 * consumer and takes an empty one (malloc'd if none is free), so nothing is
 * dropped unless malloc fails ("lost" counts that). At Shutdown the hooks
 * stop recording, and the consumer drains the full buffers and then every
 * thread's partly filled one.
 *   sample   a thread wakes ~99 times a second, suspends the runtime
 *            (ICorProfilerInfo10::SuspendRuntime), walks every managed
 *            thread's stack with DoStackSnapshot recording each frame's
 *            function ID, and resumes it. Needs ICorProfilerInfo10
 *            (.NET Core 3.0+); fails Initialize otherwise.
 *
 * On Shutdown it prints one line on stderr: "cref: Shutdown mode=M" with
 * the counts of what it saw, so that a benchmark can check that the
 * profiler really ran.
 *
 * Slot numbers count IUnknown's three and follow the MIDL vtable order of
 * the interfaces named; GUIDs are the interfaces' IIDs.
 */
#define _GNU_SOURCE
#define CPROFILER_LOG_PREFIX "cref: "
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "cprofiler.h"

typedef uintptr_t ID;

/* COR_PRF_MONITOR bits. */
#define PRF_FUNCTION_UNLOADS 0x1u
#define PRF_CLASS_LOADS 0x2u
#define PRF_MODULE_LOADS 0x4u
#define PRF_ASSEMBLY_LOADS 0x8u
#define PRF_APPDOMAIN_LOADS 0x10u
#define PRF_JIT_COMPILATION 0x20u
#define PRF_EXCEPTIONS 0x40u
#define PRF_GC 0x80u
#define PRF_OBJECT_ALLOCATED 0x100u
#define PRF_THREADS 0x200u
#define PRF_ENTERLEAVE 0x1000u
#define PRF_SUSPENDS 0x10000u
#define PRF_CACHE_SEARCHES 0x20000u
#define PRF_ENABLE_OBJECT_ALLOCATED 0x800000u
#define PRF_CLR_EXCEPTIONS 0x1000000u
#define PRF_ENABLE_STACK_SNAPSHOT 0x10000000u

/* The "unimpl" mask; bench/prof/idle uses the same bits. */
#define UNIMPL_MASK                                                                                        \
    (PRF_FUNCTION_UNLOADS | PRF_CLASS_LOADS | PRF_MODULE_LOADS | PRF_ASSEMBLY_LOADS | PRF_APPDOMAIN_LOADS | \
     PRF_JIT_COMPILATION | PRF_EXCEPTIONS | PRF_GC | PRF_OBJECT_ALLOCATED | PRF_THREADS | PRF_SUSPENDS |    \
     PRF_CACHE_SEARCHES | PRF_ENABLE_OBJECT_ALLOCATED | PRF_CLR_EXCEPTIONS)

/* {3B8F2A61-5D4C-4E97-A1B2-7C6D5E4F3A28} */
static const GUID CREF_CLSID = {0x3B8F2A61, 0x5D4C, 0x4E97, {0xA1, 0xB2, 0x7C, 0x6D, 0x5E, 0x4F, 0x3A, 0x28}};

enum {
    /* ICorProfilerCallback11 */
    CB_INITIALIZE = 3,
    CB_SHUTDOWN = 4,
    CB_OBJECT_ALLOCATED = 50,
    CB_EXCEPTION_THROWN = 54,
    CB_SLOT_COUNT = 98,
    /* ICorProfilerInfo .. ICorProfilerInfo10 */
    INFO_GET_OBJECT_SIZE = 10,
    INFO_SET_EVENT_MASK = 16,
    INFO_DO_STACK_SNAPSHOT = 36,
    INFO_SET_ELT_HOOKS3 = 61,
    INFO_ENUM_THREADS = 71,
    INFO_SUSPEND_RUNTIME = 97,
    INFO_RESUME_RUNTIME = 98,
    /* ICorProfilerThreadEnum */
    THREADENUM_NEXT = 7,
};

typedef HRESULT (*get_object_size_fn)(comobj *, ID, ULONG *);
typedef HRESULT (*set_elt3_fn)(comobj *, void *, void *, void *);
typedef HRESULT (*enum_threads_fn)(comobj *, comobj **);
typedef HRESULT (*thread_next_fn)(comobj *, ULONG, ID *, ULONG *);
typedef HRESULT (*suspend_fn)(comobj *);
typedef HRESULT (*snapshot_cb)(ID, uintptr_t, ID, uint32_t, uint8_t *, void *);
typedef HRESULT (*do_snapshot_fn)(comobj *, ID, snapshot_cb, uint32_t, void *, uint8_t *, uint32_t);

#define CALL(obj, slot, type) ((type)((obj)->vtbl[slot]))



static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- state ---- */

enum { MODE_IDLE, MODE_UNIMPL, MODE_ALLOC, MODE_EXC, MODE_ELT, MODE_SAMPLE };
static const char *mode_names[] = {"idle", "unimpl", "alloc", "exc", "elt", "sample"};
static int mode;
static comobj *info;   /* ICorProfilerInfo3 or later, kept until the end */
static comobj *info10; /* sample mode only */
static volatile int shut_down;

/* ---- per-thread event buffers and their consumer ---- */

/* A fixed-size event: a function or class ID and a second word (the
 * timestamp with the kind in its low two bits, or the object size). */
typedef struct {
    uint64_t id;
    uint64_t word;
} event;

enum { EVBUF_CAP = 4096 };

struct tstate;

typedef struct evbuf {
    struct evbuf *next;
    struct tstate *owner; /* the thread that filled it */
    uint32_t n;
    event ev[EVBUF_CAP];
} evbuf;

/* Per-thread state: the buffer being filled and the events the thread
 * lost because malloc failed (no shared counter on the hot path); the
 * shadow stack belongs to the consumer. */
typedef struct tstate {
    struct tstate *next; /* in all_threads */
    evbuf *cur;
    uint64_t lost;
    uint64_t *stack;
    uint32_t depth, cap;
} tstate;

static pthread_mutex_t lists_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lists_cv = PTHREAD_COND_INITIALIZER;
static evbuf *full_list;
static evbuf *free_list;
static long buffers_allocated;
static tstate *all_threads; /* under lists_mu */
static __thread evbuf *my_buf __attribute__((tls_model("initial-exec")));
static __thread tstate *my_state __attribute__((tls_model("initial-exec")));

/* Totals the consumer computed. */
static uint64_t consumed_events;
static uint64_t consumed_enters, consumed_leaves, consumed_tailcalls;
static uint64_t consumed_bytes;
/* ELT pairing: leaves and tailcalls that matched the top of their thread's
 * shadow stack (or a frame at most PAIR_SEARCH below it, the frames above
 * counted as unwound), and those that matched nothing. */
static uint64_t paired, unpaired, unwound, stack_overflows;

/* Per-class allocation table (consumer side only, so unlocked). */
enum { CLASS_TABLE = 8192 };
static struct {
    uint64_t cls, count, bytes;
} class_table[CLASS_TABLE];
static long classes_seen;

static evbuf *take_free(tstate *ts) {
    evbuf *b;
    pthread_mutex_lock(&lists_mu);
    b = free_list;
    if (b != NULL) {
        free_list = b->next;
    } else {
        buffers_allocated++;
    }
    pthread_mutex_unlock(&lists_mu);
    if (b == NULL) {
        b = malloc(sizeof *b);
        if (b == NULL) {
            return NULL;
        }
    }
    b->n = 0;
    b->next = NULL;
    b->owner = ts;
    return b;
}

/* Hands a full buffer to the consumer and returns an empty one. */
static evbuf *swap_full(tstate *ts, evbuf *b) {
    pthread_mutex_lock(&lists_mu);
    b->next = full_list;
    full_list = b;
    pthread_cond_signal(&lists_cv);
    pthread_mutex_unlock(&lists_mu);
    return take_free(ts);
}

/* The slow path of record: the thread's first event, or a full buffer. */
static __attribute__((noinline)) evbuf *next_buf(evbuf *b) {
    tstate *ts = my_state;
    if (ts == NULL) {
        ts = calloc(1, sizeof *ts);
        if (ts == NULL) {
            return NULL;
        }
        pthread_mutex_lock(&lists_mu);
        ts->next = all_threads;
        all_threads = ts;
        pthread_mutex_unlock(&lists_mu);
        my_state = ts;
    }
    b = (b == NULL) ? take_free(ts) : swap_full(ts, b);
    __atomic_store_n(&ts->cur, b, __ATOMIC_RELEASE);
    my_buf = b;
    return b;
}

static inline void record(uint64_t id, uint64_t word) {
    evbuf *b = my_buf;
    if (__builtin_expect(shut_down, 0)) {
        return;
    }
    if (__builtin_expect(b == NULL || b->n == EVBUF_CAP, 0)) {
        b = next_buf(b);
        if (b == NULL) {
            if (my_state != NULL) {
                my_state->lost++;
            }
            return;
        }
    }
    b->ev[b->n].id = id;
    b->ev[b->n].word = word;
    /* Release: the Shutdown flush reads n from another thread. */
    __atomic_store_n(&b->n, b->n + 1, __ATOMIC_RELEASE);
}

enum { PAIR_SEARCH = 64, STACK_MAX = 1 << 16 };

/* Pairs a leave or tailcall of fid with the owner's innermost enter. */
static void pair(tstate *ts, uint64_t fid) {
    uint32_t k, lim;
    if (ts->depth > 0 && ts->stack[ts->depth - 1] == fid) {
        ts->depth--;
        paired++;
        return;
    }
    lim = ts->depth < PAIR_SEARCH ? ts->depth : PAIR_SEARCH;
    for (k = 1; k < lim; k++) {
        if (ts->stack[ts->depth - 1 - k] == fid) {
            unwound += k;
            ts->depth -= k + 1;
            paired++;
            return;
        }
    }
    unpaired++;
}

static void push(tstate *ts, uint64_t fid) {
    if (ts->depth == ts->cap) {
        uint32_t ncap = ts->cap ? 2 * ts->cap : 256;
        uint64_t *ns;
        if (ncap > STACK_MAX || (ns = realloc(ts->stack, ncap * sizeof *ns)) == NULL) {
            stack_overflows++;
            return;
        }
        ts->stack = ns;
        ts->cap = ncap;
    }
    ts->stack[ts->depth++] = fid;
}

static void consume(evbuf *b) {
    uint32_t i, n = __atomic_load_n(&b->n, __ATOMIC_ACQUIRE);
    for (i = 0; i < n; i++) {
        const event *e = &b->ev[i];
        if (mode == MODE_ELT) {
            switch (e->word & 3) {
            case 0:
                consumed_enters++;
                push(b->owner, e->id);
                break;
            case 1:
                consumed_leaves++;
                pair(b->owner, e->id);
                break;
            default:
                consumed_tailcalls++;
                pair(b->owner, e->id);
                break;
            }
        } else {
            uint64_t h = (e->id >> 3) * 0x9E3779B97F4A7C15ull;
            uint32_t k = (uint32_t)(h >> 51) & (CLASS_TABLE - 1), probes;
            for (probes = 0; probes < CLASS_TABLE; probes++, k = (k + 1) & (CLASS_TABLE - 1)) {
                if (class_table[k].cls == e->id) {
                    break;
                }
                if (class_table[k].cls == 0) {
                    class_table[k].cls = e->id;
                    classes_seen++;
                    break;
                }
            }
            if (probes < CLASS_TABLE) {
                class_table[k].count++;
                class_table[k].bytes += e->word;
            }
            consumed_bytes += e->word;
        }
    }
    consumed_events += n;
}

static pthread_t consumer_thread;
static int consumer_started;
static int consumer_stop;

static void *consumer_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&lists_mu);
    for (;;) {
        evbuf *list, *next;
        while (full_list == NULL && !consumer_stop) {
            pthread_cond_wait(&lists_cv, &lists_mu);
        }
        list = full_list;
        full_list = NULL;
        if (list == NULL && consumer_stop) {
            break;
        }
        pthread_mutex_unlock(&lists_mu);
        /* The list is last-in first; reverse it so that each thread's
         * buffers are consumed in the order they were filled. */
        {
            evbuf *rev = NULL;
            for (; list != NULL; list = next) {
                next = list->next;
                list->next = rev;
                rev = list;
            }
            list = rev;
        }
        for (; list != NULL; list = next) {
            next = list->next;
            consume(list);
            pthread_mutex_lock(&lists_mu);
            list->next = free_list;
            free_list = list;
            pthread_mutex_unlock(&lists_mu);
        }
        pthread_mutex_lock(&lists_mu);
    }
    pthread_mutex_unlock(&lists_mu);
    return NULL;
}

/* ---- ELT hooks ---- */

/* Timestamps are the CPU's time-stamp counter, as in the SDK's recorder. */
void cref_enter_c(uint64_t fid) { record(fid, __builtin_ia32_rdtsc() << 2); }
void cref_leave_c(uint64_t fid) { record(fid, (__builtin_ia32_rdtsc() << 2) | 1); }
void cref_tailcall_c(uint64_t fid) { record(fid, (__builtin_ia32_rdtsc() << 2) | 2); }

/* The JIT calls the hooks straight from a method's prolog and epilog, not
 * by the C convention: on Unix x64 the enter hook gets the function ID (or
 * client ID) in r14, since the method's arguments occupy the argument
 * registers, and the leave and tailcall hooks get it in rdi (as the SDK's
 * stubs read it, profiler/elt_linux_amd64.S). The JIT expects every
 * argument and return register back unchanged: save rax, rcx, rdx, rsi,
 * rdi, r8-r11 and xmm0-xmm7 around the C call, which gets the ID in rdi
 * (r14 is callee-saved, so C leaves it alone). On entry rsp is 8 mod 16;
 * push rbp makes it 0, and the frame below is a multiple of 16, so the C
 * function is called with an aligned stack. */
#define ELT_STUB(name, target, idreg)          \
    __asm__(".text\n"                          \
            ".p2align 4\n"                     \
            ".globl " #name "\n"               \
            ".hidden " #name "\n"              \
            ".type " #name ", @function\n" #name ":\n" \
            "  push %rbp\n"                    \
            "  mov %rsp, %rbp\n"               \
            "  sub $208, %rsp\n"               \
            "  mov %rax, 0(%rsp)\n"            \
            "  mov %rcx, 8(%rsp)\n"            \
            "  mov %rdx, 16(%rsp)\n"           \
            "  mov %rsi, 24(%rsp)\n"           \
            "  mov %rdi, 32(%rsp)\n"           \
            "  mov %r8, 40(%rsp)\n"            \
            "  mov %r9, 48(%rsp)\n"            \
            "  mov %r10, 56(%rsp)\n"           \
            "  mov %r11, 64(%rsp)\n"           \
            "  movdqu %xmm0, 80(%rsp)\n"       \
            "  movdqu %xmm1, 96(%rsp)\n"       \
            "  movdqu %xmm2, 112(%rsp)\n"      \
            "  movdqu %xmm3, 128(%rsp)\n"      \
            "  movdqu %xmm4, 144(%rsp)\n"      \
            "  movdqu %xmm5, 160(%rsp)\n"      \
            "  movdqu %xmm6, 176(%rsp)\n"      \
            "  movdqu %xmm7, 192(%rsp)\n"      \
            "  mov " idreg ", %rdi\n"          \
            "  call " #target "\n"             \
            "  movdqu 192(%rsp), %xmm7\n"      \
            "  movdqu 176(%rsp), %xmm6\n"      \
            "  movdqu 160(%rsp), %xmm5\n"      \
            "  movdqu 144(%rsp), %xmm4\n"      \
            "  movdqu 128(%rsp), %xmm3\n"      \
            "  movdqu 112(%rsp), %xmm2\n"      \
            "  movdqu 96(%rsp), %xmm1\n"       \
            "  movdqu 80(%rsp), %xmm0\n"       \
            "  mov 64(%rsp), %r11\n"           \
            "  mov 56(%rsp), %r10\n"           \
            "  mov 48(%rsp), %r9\n"            \
            "  mov 40(%rsp), %r8\n"            \
            "  mov 32(%rsp), %rdi\n"           \
            "  mov 24(%rsp), %rsi\n"           \
            "  mov 16(%rsp), %rdx\n"           \
            "  mov 8(%rsp), %rcx\n"            \
            "  mov 0(%rsp), %rax\n"            \
            "  leave\n"                        \
            "  ret\n"                          \
            ".size " #name ", .-" #name "\n")

ELT_STUB(cref_enter_stub, cref_enter_c, "%r14");
ELT_STUB(cref_leave_stub, cref_leave_c, "%rdi");
ELT_STUB(cref_tailcall_stub, cref_tailcall_c, "%rdi");
void cref_enter_stub(void);
void cref_leave_stub(void);
void cref_tailcall_stub(void);

/* ---- sampling ---- */

enum { SAMPLE_HZ = 99, MAX_THREADS = 256, SAMPLE_FRAMES = 1 << 16 };
static pthread_t sampler_thread;
static int sampler_started;
static uint64_t samples, frames, walk_errors, ticks;
static ID frame_ring[SAMPLE_FRAMES];

static HRESULT frame_cb(ID func, uintptr_t ip, ID frame_info, uint32_t ctx_size, uint8_t *ctx, void *data) {
    (void)ip;
    (void)frame_info;
    (void)ctx_size;
    (void)ctx;
    (void)data;
    frame_ring[frames & (SAMPLE_FRAMES - 1)] = func;
    frames++;
    return S_OK;
}

static void *sampler_main(void *arg) {
    const uint64_t period = 1000000000ull / SAMPLE_HZ;
    uint64_t next = now_ns() + period;
    (void)arg;
    while (!__atomic_load_n(&shut_down, __ATOMIC_ACQUIRE)) {
        struct timespec ts;
        comobj *e = NULL;
        ID threads[MAX_THREADS];
        ULONG n = 0, i;
        ts.tv_sec = (time_t)(next / 1000000000u);
        ts.tv_nsec = (long)(next % 1000000000u);
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        next += period;
        if (__atomic_load_n(&shut_down, __ATOMIC_ACQUIRE)) {
            break;
        }
        ticks++;
        if (CALL(info10, INFO_SUSPEND_RUNTIME, suspend_fn)(info10) != S_OK) {
            walk_errors++;
            continue;
        }
        if (CALL(info10, INFO_ENUM_THREADS, enum_threads_fn)(info10, &e) == S_OK && e != NULL) {
            CALL(e, THREADENUM_NEXT, thread_next_fn)(e, MAX_THREADS, threads, &n);
            CALL(e, SLOT_RELEASE, release_fn)(e);
        }
        for (i = 0; i < n; i++) {
            HRESULT hr = CALL(info10, INFO_DO_STACK_SNAPSHOT, do_snapshot_fn)(info10, threads[i], frame_cb, 0, NULL, NULL, 0);
            if (hr == S_OK) {
                samples++;
            } else {
                walk_errors++;
            }
        }
        CALL(info10, INFO_RESUME_RUNTIME, suspend_fn)(info10);
    }
    return NULL;
}

/* ---- callbacks ---- */

static void *profiler_vtbl[CB_SLOT_COUNT];
static comobj profiler_obj = {profiler_vtbl};
static int profiler_refs;
static uint64_t exceptions_seen;

static HRESULT prof_query_interface(comobj *self, const GUID *riid, void **ppv) {
    int i;
    if (ppv == NULL) {
        return E_POINTER;
    }
    *ppv = NULL;
    if (riid == NULL) {
        return E_POINTER;
    }
    if (guid_eq(riid, &IID_IUnknown)) {
        *ppv = self;
        __atomic_add_fetch(&profiler_refs, 1, __ATOMIC_RELAXED);
        return S_OK;
    }
    for (i = 0; i < 11; i++) {
        if (guid_eq(riid, &callback_iids[i])) {
            *ppv = self;
            __atomic_add_fetch(&profiler_refs, 1, __ATOMIC_RELAXED);
            return S_OK;
        }
    }
    return E_NOINTERFACE;
}

static ULONG prof_add_ref(comobj *self) {
    (void)self;
    return (ULONG)__atomic_add_fetch(&profiler_refs, 1, __ATOMIC_RELAXED);
}

static ULONG prof_release(comobj *self) {
    (void)self;
    return (ULONG)__atomic_sub_fetch(&profiler_refs, 1, __ATOMIC_RELAXED);
}

static HRESULT prof_object_allocated(comobj *self, ID object, ID cls) {
    ULONG size = 0;
    (void)self;
    CALL(info, INFO_GET_OBJECT_SIZE, get_object_size_fn)(info, object, &size);
    record(cls, size);
    return S_OK;
}

static HRESULT prof_exception_thrown(comobj *self, ID object) {
    (void)self;
    (void)object;
    __atomic_add_fetch(&exceptions_seen, 1, __ATOMIC_RELAXED);
    return S_OK;
}

static HRESULT prof_initialize(comobj *self, comobj *unk) {
    const char *m = getenv("CREF_MODE");
    uint32_t mask = 0;
    HRESULT hr;
    void *p = NULL;
    int i;
    (void)self;
    mode = -1;
    if (m == NULL || *m == '\0') {
        m = "idle";
    }
    for (i = 0; i < (int)(sizeof mode_names / sizeof mode_names[0]); i++) {
        if (strcmp(m, mode_names[i]) == 0) {
            mode = i;
        }
    }
    if (mode < 0) {
        say("unknown CREF_MODE %s", m);
        return E_FAIL;
    }
    if (unk == NULL || CALL(unk, SLOT_QUERY_INTERFACE, qi_fn)(unk, &info_iids[2], &p) != S_OK || p == NULL) {
        say("no ICorProfilerInfo3");
        return E_FAIL;
    }
    info = (comobj *)p;
    switch (mode) {
    case MODE_IDLE:
        break;
    case MODE_UNIMPL:
        mask = UNIMPL_MASK;
        break;
    case MODE_ALLOC:
        mask = PRF_OBJECT_ALLOCATED | PRF_ENABLE_OBJECT_ALLOCATED;
        break;
    case MODE_EXC:
        mask = PRF_EXCEPTIONS;
        break;
    case MODE_ELT:
        hr = CALL(info, INFO_SET_ELT_HOOKS3, set_elt3_fn)(info, (void *)cref_enter_stub, (void *)cref_leave_stub,
                                                           (void *)cref_tailcall_stub);
        if (hr != S_OK) {
            say("SetEnterLeaveFunctionHooks3 failed hr=0x%08X", (uint32_t)hr);
            return hr;
        }
        mask = PRF_ENTERLEAVE;
        break;
    case MODE_SAMPLE:
        p = NULL;
        if (CALL(unk, SLOT_QUERY_INTERFACE, qi_fn)(unk, &info_iids[9], &p) != S_OK || p == NULL) {
            say("sample mode needs ICorProfilerInfo10");
            return E_NOINTERFACE;
        }
        info10 = (comobj *)p;
        mask = PRF_ENABLE_STACK_SNAPSHOT;
        break;
    }
    /* Only the mode's own callbacks do work; in every other mode (unimpl
     * included) they stay prof_ok. */
    if (mode == MODE_ALLOC) {
        profiler_vtbl[CB_OBJECT_ALLOCATED] = (void *)prof_object_allocated;
    }
    if (mode == MODE_EXC) {
        profiler_vtbl[CB_EXCEPTION_THROWN] = (void *)prof_exception_thrown;
    }
    if (mask != 0) {
        hr = CALL(info, INFO_SET_EVENT_MASK, set_event_mask_fn)(info, mask);
        if (hr != S_OK) {
            say("SetEventMask(0x%08X) failed hr=0x%08X", mask, (uint32_t)hr);
            return hr;
        }
    }
    if (mode == MODE_ALLOC || mode == MODE_ELT) {
        if (pthread_create(&consumer_thread, NULL, consumer_main, NULL) == 0) {
            consumer_started = 1;
        }
    }
    if (mode == MODE_SAMPLE) {
        if (pthread_create(&sampler_thread, NULL, sampler_main, NULL) == 0) {
            sampler_started = 1;
        }
    }
    say("Initialize mode=%s", mode_names[mode]);
    return S_OK;
}

static HRESULT prof_shutdown(comobj *self) {
    uint64_t lost = 0, open = 0;
    tstate *ts;
    (void)self;
    __atomic_store_n(&shut_down, 1, __ATOMIC_RELEASE);
    if (sampler_started) {
        pthread_join(sampler_thread, NULL);
    }
    if (consumer_started) {
        struct timespec pause = {0, 1000000};
        /* A hook past the shut_down check finishes within nanoseconds. */
        nanosleep(&pause, NULL);
        pthread_mutex_lock(&lists_mu);
        consumer_stop = 1;
        pthread_cond_signal(&lists_cv);
        pthread_mutex_unlock(&lists_mu);
        pthread_join(consumer_thread, NULL);
        /* The consumer has drained every full buffer; now the partly
         * filled ones. */
        for (ts = all_threads; ts != NULL; ts = ts->next) {
            evbuf *b = __atomic_load_n(&ts->cur, __ATOMIC_ACQUIRE);
            if (b != NULL) {
                consume(b);
            }
            lost += ts->lost;
            open += ts->depth;
        }
    }
    switch (mode) {
    case MODE_ALLOC:
        say("Shutdown mode=alloc allocations=%llu consumed=%llu lost=%llu bytes=%llu classes=%ld buffers=%ld",
            (unsigned long long)(consumed_events + lost), (unsigned long long)consumed_events, (unsigned long long)lost,
            (unsigned long long)consumed_bytes, classes_seen, buffers_allocated);
        break;
    case MODE_ELT:
        say("Shutdown mode=elt enters=%llu leaves=%llu tailcalls=%llu paired=%llu unpaired=%llu unwound=%llu open=%llu "
            "overflows=%llu lost=%llu buffers=%ld",
            (unsigned long long)consumed_enters, (unsigned long long)consumed_leaves,
            (unsigned long long)consumed_tailcalls, (unsigned long long)paired, (unsigned long long)unpaired,
            (unsigned long long)unwound, (unsigned long long)open, (unsigned long long)stack_overflows,
            (unsigned long long)lost, buffers_allocated);
        break;
    case MODE_EXC:
        say("Shutdown mode=exc exceptions=%llu", (unsigned long long)exceptions_seen);
        break;
    case MODE_SAMPLE:
        say("Shutdown mode=sample ticks=%llu samples=%llu frames=%llu errors=%llu", (unsigned long long)ticks,
            (unsigned long long)samples, (unsigned long long)frames, (unsigned long long)walk_errors);
        break;
    default:
        say("Shutdown mode=%s", mode_names[mode]);
    }
    return S_OK;
}

static HRESULT prof_ok(comobj *self) {
    (void)self;
    return S_OK;
}

/* ---- class factory ---- */

static HRESULT cf_create_instance(comobj *self, comobj *outer, const GUID *riid, void **ppv) {
    (void)self;
    if (ppv == NULL) {
        return E_POINTER;
    }
    *ppv = NULL;
    if (outer != NULL) {
        return CLASS_E_NOAGGREGATION;
    }
    return prof_query_interface(&profiler_obj, riid, ppv);
}

__attribute__((constructor)) static void cref_init_vtables(void) {
    int i;
    for (i = 0; i < CB_SLOT_COUNT; i++) {
        profiler_vtbl[i] = (void *)prof_ok;
    }
    profiler_vtbl[SLOT_QUERY_INTERFACE] = (void *)prof_query_interface;
    profiler_vtbl[SLOT_ADD_REF] = (void *)prof_add_ref;
    profiler_vtbl[SLOT_RELEASE] = (void *)prof_release;
    profiler_vtbl[CB_INITIALIZE] = (void *)prof_initialize;
    profiler_vtbl[CB_SHUTDOWN] = (void *)prof_shutdown;

    cprofiler_init_factory(cf_create_instance);
}

EXPORT HRESULT DllGetClassObject(const GUID *rclsid, const GUID *riid, void **ppv) {
    if (ppv == NULL || rclsid == NULL || riid == NULL) {
        return E_POINTER;
    }
    *ppv = NULL;
    if (!guid_eq(rclsid, &CREF_CLSID)) {
        return CLASS_E_CLASSNOTAVAILABLE;
    }
    return cf_query_interface(&factory_obj, riid, ppv);
}

EXPORT HRESULT DllCanUnloadNow(void) { return 1; /* S_FALSE: never unload */ }
