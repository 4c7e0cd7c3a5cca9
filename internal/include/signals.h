// Signals (internal/sigguard/signals.c): the snapshot of the host's
// handlers taken before the Go runtime starts, the environment checks made
// then, the signal audit and the SIGSEGV router. Calls nothing above it (no
// Go, no guard). Shared with the C of other packages (internal/comobj's
// object.c runs the audit); their Go uses package sigguard's functions instead.
//
// Declarations only (copied into _cgo_export.h).
#ifndef CLRPROF_SIGNALS_H
#define CLRPROF_SIGNALS_H

#include <signal.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

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
// signals.c). activation is a signal whose
// SA_ONSTACK is cleared even without a snapshot (tests swap a handler in
// after start-up). skip_own leaves alone a handler that lies in this shared
// library. Exposed for tests.
int clrprof_audit_signals(int activation, int skip_own, clrprof_sigrec *recs, int max);

// What the library found when it was loaded, before its Go runtime started:
// whether the C library is glibc (1) or not (0), and the path of another
// shared object in the process that carries a Go runtime ("" if none).
int clrprof_env_glibc(void);
const char *clrprof_env_other_go(void);

// clrprof_signal_audit_off reports whether the audit is switched off
// (CLRPROF_SIGNAL_AUDIT=0, test builds only).
int clrprof_signal_audit_off(void);

// clrprof_segv_stack is the calling thread's private stack for the SIGSEGV
// router (the base of its mapping, guard page first): NULL until the
// thread's first call into Go, (char *)-1 if it could not be mapped.
// Initial-exec TLS, so that reading it is one load with no call (the
// library is loaded with dlopen, which has room for it in the static TLS
// block).
extern __thread char *clrprof_segv_stack __attribute__((tls_model("initial-exec")));

// clrprof_segv_stack_map is the slow path of clrprof_segv_stack_ensure:
// the thread's first call into Go maps its stack, and checks that the
// router is still on top.
void clrprof_segv_stack_map(void);

// clrprof_segv_stack_ensure maps the calling thread's private stack for the
// SIGSEGV router if it has none yet (and checks that the router is still
// on top). guard.c calls it on every entry into Go: after a thread's first,
// one TLS load and a branch, inline.
static inline void clrprof_segv_stack_ensure(void) {
	if (__builtin_expect(clrprof_segv_stack == NULL, 0)) {
		clrprof_segv_stack_map();
	}
}

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

#pragma GCC visibility pop

#endif
