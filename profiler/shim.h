// The hand-written half of the C shim: the COM object layout, IUnknown, the
// per-callback "implemented" table, the guard that brackets every C->Go call,
// and the signal audit. The generated half (corprof_gen.h, callbacks_gen.c)
// holds the interface types and the callback vtable.
//
// This header is copied into _cgo_export.h (shim.go has //export functions
// and includes it), so it must hold declarations only.
#ifndef CLRPROF_SHIM_H
#define CLRPROF_SHIM_H

#include <signal.h>
#include <stdint.h>

#include "corprof_gen.h"

// Everything the shim declares is internal to the shared library except
// DllGetClassObject and DllCanUnloadNow, which say so explicitly.
#pragma GCC visibility push(hidden)

// clrprof_object is the profiler object handed to the runtime: a COM object
// in C memory. handle is a runtime/cgo.Handle value leading to the Go
// dispatcher; C memory never holds a Go pointer.
typedef struct clrprof_object {
	const void *lpVtbl;
	volatile int32_t refs;
	uintptr_t handle;
} clrprof_object;

// clrprof_impl[slot] is 1 when the callback at that slot (vtable index - 3)
// must call into Go, 0 when the C thunk answers S_OK by itself. Written by
// Go (clrprof_set_impl), read by the generated thunks.
extern volatile uint8_t clrprof_impl[CLRPROF_CALLBACK_SLOTS];
void clrprof_set_impl(int slot, int on);
int clrprof_get_impl(int slot);

// clrprof_guard brackets a C->Go call made on a runtime thread:
// clrprof_go_enter blocks the CoreCLR activation signal (SIGRTMIN) on the
// calling thread, clrprof_go_leave restores the mask the thread had, so a
// pending activation is delivered only after Go has returned, on the
// thread's own stack.
typedef struct clrprof_guard {
	sigset_t old;
	int restore;
} clrprof_guard;
void clrprof_go_enter(clrprof_guard *g);
void clrprof_go_leave(clrprof_guard *g);

// IUnknown of clrprof_object: QueryInterface answers IUnknown and every
// ICorProfilerCallbackN IID; the last Release tells Go to delete the handle
// and frees the object.
HRESULT STDMETHODCALLTYPE clrprof_QueryInterface(void *self, REFIID riid, void **ppv);
ULONG STDMETHODCALLTYPE clrprof_AddRef(void *self);
ULONG STDMETHODCALLTYPE clrprof_Release(void *self);

// clrprof_new_object creates a profiler object for the Go handle h (one
// reference) and queries it for riid. It is the class factory's
// CreateInstance without the aggregation check; exposed for tests.
HRESULT clrprof_new_object(uintptr_t h, REFIID riid, void **ppv);
// clrprof_new_object_vtbl is clrprof_new_object with the object's vtable
// (NULL: the ordinary one; chain.c's when a native profiler is chained).
HRESULT clrprof_new_object_vtbl(uintptr_t h, const void *vtbl, REFIID riid, void **ppv);

// clrprof_callback_override makes the profiler objects answer the callback
// at slot (vtable index - 3) with fn instead of the generated thunk, and
// stores the generated thunk in *orig (fn may chain to it). For C fast
// paths (allocation and exception-unwind recording) that must not enter
// Go; call it before the runtime can deliver that callback (in
// Initialize, before the event mask enables it). Returns 0, or -1 for a
// bad slot.
int clrprof_callback_override(int slot, const void *fn, const void **orig);

// The COM entry points exported from the shared library.
__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv);
__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllCanUnloadNow(void);

// What the signal audit saw for one signal that has a handler other than
// SIG_DFL. kind: 1 SIG_IGN, 2 a function. flags/new_flags: sa_flags before
// and after the audit. action: see CLRPROF_SIG_*. err: errno of a failed
// sigaction, else 0. owner/symbol: dladdr of the handler ("" if unknown).
enum {
	CLRPROF_SIG_SEEN = 0,      // recorded, left alone
	CLRPROF_SIG_RESTORED = 1,  // SA_ONSTACK cleared (activation signal)
	CLRPROF_SIG_FAILED = 2,    // wanted to clear SA_ONSTACK, sigaction failed
	CLRPROF_SIG_SKIPPED = 3,   // activation handler lies in this library (Go's); left alone
	CLRPROF_SIG_RECLAIMED = 4, // SIGFPE/SIGBUS: the runtime's own handler and flags reinstalled over Go's
	CLRPROF_SIG_ROUTED = 5,    // SIGSEGV: the router (faults in this library to Go, others to the runtime)
};
typedef struct clrprof_sigrec {
	int sig;
	int kind;
	int flags;
	int new_flags;
	int action;
	int err;
	int own;           // handler lies in this shared library (Go's)
	uintptr_t handler;
	char owner[128];
	char symbol[64];
} clrprof_sigrec;

// clrprof_signal_audit runs the audit once per process (later calls do
// nothing) and reports to Go. Must be called after the Go runtime is up.
void clrprof_signal_audit(void);

// clrprof_audit_signals does the work of one audit into recs (at most max
// records) and returns the number recorded. It compares every handler with
// the snapshot taken before the Go runtime started (a constructor that runs
// ahead of the Go runtime's own): a handler that is still the one from
// before, but now has the SA_ONSTACK the Go runtime added, gets its old
// flags back; SIGFPE and SIGBUS, which Go took over and would forward from
// its alternate signal stack with its wide signal mask (CoreCLR's handlers
// cannot dispatch a managed exception from there; Go code never raises
// SIGFPE, it checks divisors), get the runtime's handlers back; SIGSEGV,
// which Go needs for its own nil-pointer panics, gets a router (see
// shim.c). activation is a signal whose
// SA_ONSTACK is cleared even without a snapshot (tests swap a handler in
// after start-up). skip_own leaves alone a handler that lies in this shared
// library. Exposed for tests.
int clrprof_audit_signals(int activation, int skip_own, clrprof_sigrec *recs, int max);

// What the library found when it was loaded, before its Go runtime started:
// whether the C library is glibc (1) or not (0), and the path of another
// shared object in the process that carries a Go runtime ("" if none).
int clrprof_env_glibc(void);
const char *clrprof_env_other_go(void);

// Helpers for Go code and tests.
int clrprof_sigrtmin(void);
int clrprof_sa_onstack(void);
int clrprof_sig_flags(int sig);
int clrprof_sig_blocked(int sig);
// clrprof_segv_counts reports how many SIGSEGVs the router handed to the
// host handler on the private stack (and how many of those it returned
// from), how many on the alternate stack, and how often the router put
// itself back on top of a SIGSEGV handler installed over it.
void clrprof_segv_counts(uint64_t *private_runs, uint64_t *private_returns, uint64_t *altstack_runs, uint64_t *reasserts);
int clrprof_test_swap_handler(int sig, int flags);
int clrprof_test_restore_handler(int sig);
int clrprof_test_segv_roundtrip(uint64_t *rcx_out, uint64_t *xmm_out);

// Test hooks (see the end of shim.c).
void *clrprof_test_fake_info(int versions);
int clrprof_test_fake_refs(void *info);
void clrprof_test_free(void *p);
const GUID *clrprof_test_callback_iid(int i);
const GUID *clrprof_test_iid_iunknown(void);
HRESULT clrprof_test_create(const GUID *clsid, const GUID *iid, int aggregate, void **obj);
HRESULT clrprof_test_qi(void *obj, const GUID *iid, void **out);
ULONG clrprof_test_addref(void *obj);
ULONG clrprof_test_release(void *obj);
HRESULT clrprof_test_initialize(void *obj, void *info);
HRESULT clrprof_test_shutdown(void *obj);
HRESULT clrprof_test_jit_started(void *obj, uintptr_t fid);
HRESULT clrprof_test_module_loaded(void *obj, uintptr_t mid);
HRESULT clrprof_test_initialize_for_attach(void *obj, void *info, const void *data, unsigned n);

#pragma GCC visibility pop

#endif
