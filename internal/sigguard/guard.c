// The guard that brackets every call from C into Go made on a runtime
// thread, and its repair after a thread's first call into Go (the
// _cgo_bindm hook). See internal/include/guard.h.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "guard.h"
#include "signals.h"

// ---- guard around C->Go calls ----

// Diagnostics only: CLRPROF_SIGNAL_GUARD=0 turns the guard off,
// CLRPROF_SIGNAL_AUDIT=0 the signal audit, CLRPROF_SEGV_PRIVATE_STACK=0
// the SIGSEGV router's private stack and CLRPROF_BINDM_HOOK=0 the guard's
// repair after a thread's first call into Go, so that stress tests can
// show what they prevent and benchmarks can measure what they cost. Read
// once, before the Go runtime starts.
static int guard_off, bindm_hook_off;

#ifdef CLRPROF_TESTHOOKS
static int env_is_zero(const char *name) {
	const char *v = getenv(name);
	return v != NULL && strcmp(v, "0") == 0;
}
#endif


// ---- a thread's first call into Go ----
//
// The first time a thread calls into Go, the Go runtime binds an M to it
// (needm) and sets the thread's signal mask from the one it found, minus
// the signals Go never lets be blocked. Signal 34 is one of them (Go's
// signal table marks it _SigUnblock for musl's SIGSYNCCALL), and with glibc
// signal 34 is SIGRTMIN, CoreCLR's activation signal: without more, the
// guard's block is gone for the rest of that first callback, the
// activation handler (installed without SA_ONSTACK) can run on the
// callback goroutine's small stack, and the kernel's signal frame and the
// CONTEXT the handler builds below it (about 6 KiB on a machine with
// AVX-512 state) run off the bottom of that stack into the memory below:
// another goroutine's stack or a free one (docs/reliability.md).
//
// After needm, on the thread's own stack and before it switches to the
// goroutine's, the runtime calls its C hook _cgo_bindm once per thread (to
// store the M in a pthread key whose destructor releases it at thread
// exit). Package sigguard's init (bindm.go) replaces that hook with
// clrprof_bindm, which calls the original and, when the thread is inside a
// guard, blocks SIGRTMIN again before any Go code runs on the goroutine's
// stack. A guarded call that comes before that init (a library's first
// call, DllGetClassObject) waits for it in clrprof_go_enter, so that its
// needm too finds the hook in place.

static __thread int guard_depth __attribute__((tls_model("initial-exec")));
static void (*bindm_orig)(void *);
// 0 before package sigguard's init, then one of these.
enum { BINDM_HOOKED = 1, BINDM_OFF = 2, BINDM_MISSING = 3 };
static int bindm_state;
static pthread_mutex_t bindm_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bindm_cond = PTHREAD_COND_INITIALIZER;
static uint64_t bindm_reblocks;

static void clrprof_bindm(void *g) {
	bindm_orig(g);
	if (guard_depth > 0) {
		sigset_t block;
		sigemptyset(&block);
		sigaddset(&block, SIGRTMIN);
		pthread_sigmask(SIG_BLOCK, &block, NULL);
		__atomic_add_fetch(&bindm_reblocks, 1, __ATOMIC_RELAXED);
	}
}

// clrprof_bindm_hook returns the hook to store in _cgo_bindm in place of
// orig (orig itself when the hook is not to be used); Go stores it, then
// calls clrprof_bindm_ready, which lets waiting guarded calls go on: only
// then can their needm find the hook.
void *clrprof_bindm_hook(void *orig) {
	if (orig == NULL || guard_off || bindm_hook_off) {
		return orig;
	}
	bindm_orig = (void (*)(void *))orig;
	return (void *)clrprof_bindm;
}

void clrprof_bindm_ready(void *installed) {
	int state = installed == (void *)clrprof_bindm ? BINDM_HOOKED : installed == NULL ? BINDM_MISSING : BINDM_OFF;
	pthread_mutex_lock(&bindm_mu);
	__atomic_store_n(&bindm_state, state, __ATOMIC_RELEASE);
	pthread_cond_broadcast(&bindm_cond);
	pthread_mutex_unlock(&bindm_mu);
}

// clrprof_bindm_missing reports whether the Go runtime has no _cgo_bindm
// hook to replace (not a diagnostic switch turning the repair off).
int clrprof_bindm_missing(void) { return __atomic_load_n(&bindm_state, __ATOMIC_ACQUIRE) == BINDM_MISSING; }

uint64_t clrprof_bindm_reblocks(void) { return __atomic_load_n(&bindm_reblocks, __ATOMIC_RELAXED); }

static void bindm_wait(void) {
	pthread_mutex_lock(&bindm_mu);
	while (__atomic_load_n(&bindm_state, __ATOMIC_ACQUIRE) == 0) {
		pthread_cond_wait(&bindm_cond, &bindm_mu);
	}
	pthread_mutex_unlock(&bindm_mu);
}

#ifdef CLRPROF_TESTHOOKS
// Test builds check at every guard's end that SIGRTMIN is still blocked:
// a lapse means Go ran with the activation signal deliverable.
static uint64_t guard_lapses;
#endif

uint64_t clrprof_guard_lapses(void) {
#ifdef CLRPROF_TESTHOOKS
	return __atomic_load_n(&guard_lapses, __ATOMIC_RELAXED);
#else
	return 0;
#endif
}

void clrprof_go_enter(clrprof_guard *g) {
	clrprof_segv_stack_ensure();
	if (guard_off) {
		g->restore = 0;
		return;
	}
	if (__builtin_expect(__atomic_load_n(&bindm_state, __ATOMIC_ACQUIRE) == 0, 0)) {
		bindm_wait();
	}
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGRTMIN);
	g->restore = pthread_sigmask(SIG_BLOCK, &block, &g->old) == 0 && !sigismember(&g->old, SIGRTMIN);
	guard_depth++;
}

void clrprof_go_leave(clrprof_guard *g) {
	if (guard_off) {
		return;
	}
	guard_depth--;
#ifdef CLRPROF_TESTHOOKS
	sigset_t cur;
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) == 0 && !sigismember(&cur, SIGRTMIN)) {
		__atomic_add_fetch(&guard_lapses, 1, __ATOMIC_RELAXED);
	}
#endif
	// Only the outermost guard on a thread unblocks: a nested guard (a
	// callback raised from inside a call Go made into the runtime) found
	// the signal blocked already and leaves it so.
	if (g->restore) {
		pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	}
}


#ifdef CLRPROF_TESTHOOKS
// Diagnostic switches: compiled into test builds only (build tag
// clrprof_testhooks), never into a production profiler. Read before the
// Go runtime starts.
__attribute__((constructor(101))) static void guard_switches(void) {
	guard_off = env_is_zero("CLRPROF_SIGNAL_GUARD");
	bindm_hook_off = env_is_zero("CLRPROF_BINDM_HOOK");
}
#endif
