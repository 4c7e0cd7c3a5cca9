// Signals: the snapshot of the host's handlers taken before the Go runtime
// starts, the environment checks made then, the signal audit, and the
// SIGSEGV router with its private stack. See signals.h.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "signals.h"

// Diagnostics only (test builds): CLRPROF_SIGNAL_AUDIT=0 turns the signal
// audit off, CLRPROF_SEGV_PRIVATE_STACK=0 the SIGSEGV router's private
// stack. Read once, before the Go runtime starts.
static int audit_off, private_stack_off;

#ifdef CLRPROF_TESTHOOKS
static int env_is_zero(const char *name) {
	const char *v = getenv(name);
	return v != NULL && strcmp(v, "0") == 0;
}
#endif

int clrprof_signal_audit_off(void) { return audit_off; }

// ---- signal audit ----

int clrprof_sigrtmin(void) { return SIGRTMIN; }
int clrprof_sa_onstack(void) { return SA_ONSTACK; }

int clrprof_sig_flags(int sig) {
	struct sigaction sa;
	if (sigaction(sig, NULL, &sa) != 0) {
		return -1;
	}
	return sa.sa_flags;
}

int clrprof_sig_blocked(int sig) {
	sigset_t cur;
	if (pthread_sigmask(SIG_BLOCK, NULL, &cur) != 0) {
		return -1;
	}
	return sigismember(&cur, sig);
}

static void fill_owner(clrprof_sigrec *r, const void *addr, const void *self_base) {
	Dl_info info;
	memset(&info, 0, sizeof info);
	if (dladdr(addr, &info) == 0) {
		return;
	}
	if (info.dli_fname != NULL) {
		snprintf(r->owner, sizeof r->owner, "%s", info.dli_fname);
	}
	if (info.dli_sname != NULL) {
		snprintf(r->symbol, sizeof r->symbol, "%s", info.dli_sname);
	}
	r->own = info.dli_fbase != NULL && info.dli_fbase == self_base;
}

// The signal actions as they were before the Go runtime started. Priority
// constructors run before the unprioritised .init_array entry that starts
// the Go runtime, so this sees the host's handlers (CoreCLR's PAL installs
// them long before it loads a profiler).
static struct sigaction pre_go[NSIG];
static unsigned char pre_go_valid[NSIG];

// ---- environment checks, made before the Go runtime starts ----

static int env_glibc = -1;      // 1 glibc, 0 another C library
static char env_other_go[256];  // path of another object with a Go runtime, "" if none

static int find_other_go(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	(void)data;
	const char *name = info->dlpi_name;
	if (name == NULL || name[0] == '\0') {
		return 0; // the main program: a Go program does not host CoreCLR
	}
	Dl_info self;
	if (dladdr((const void *)&find_other_go, &self) != 0 &&
	    ((void *)info->dlpi_addr == self.dli_fbase || (self.dli_fname != NULL && strcmp(self.dli_fname, name) == 0))) {
		return 0;
	}
	void *h = dlopen(name, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL) {
		return 0;
	}
	// Every cgo-enabled Go runtime exports x_cgo_init from its C half.
	int found = dlsym(h, "x_cgo_init") != NULL;
	dlclose(h);
	if (found) {
		snprintf(env_other_go, sizeof env_other_go, "%s", name);
		return 1;
	}
	return 0;
}

static void check_environment(void) {
	env_glibc = dlsym(RTLD_DEFAULT, "gnu_get_libc_version") != NULL;
	env_other_go[0] = '\0';
	dl_iterate_phdr(find_other_go, NULL);
}

int clrprof_env_glibc(void) { return env_glibc; }
const char *clrprof_env_other_go(void) { return env_other_go; }

__attribute__((constructor(101))) static void clrprof_snapshot_signals(void) {
#ifdef CLRPROF_TESTHOOKS
	// Diagnostic switches: compiled into test builds only (build tag
	// clrprof_testhooks), never into a production profiler.
	audit_off = env_is_zero("CLRPROF_SIGNAL_AUDIT");
	private_stack_off = env_is_zero("CLRPROF_SEGV_PRIVATE_STACK");
#endif
	for (int sig = 1; sig < NSIG; sig++) {
		pre_go_valid[sig] = sigaction(sig, NULL, &pre_go[sig]) == 0;
	}
	check_environment();
}

static const void *handler_of(const struct sigaction *sa) {
	return (sa->sa_flags & SA_SIGINFO) ? (const void *)sa->sa_sigaction : (const void *)sa->sa_handler;
}

// ---- SIGSEGV router ----
//
// Go's SIGSEGV handler forwards faults outside Go (a managed
// NullReferenceException) to CoreCLR's handler, but it runs with nearly
// every signal blocked (its sa_mask), and CoreCLR does not return from that
// handler: it unwinds out of it to the managed catch, leaving the thread
// with that mask. The next hardware exception of the thread (a
// DivideByZeroException's SIGFPE) is then blocked, and the kernel kills the
// process. The router takes SIGSEGV with CoreCLR's own mask and flags and
// hands a fault to Go's handler only when it happened in this library's
// code; every other fault goes straight to CoreCLR, as without Go.

#define CLRPROF_MAX_TEXT 8
static uintptr_t self_text[CLRPROF_MAX_TEXT][2];
static int self_text_n;
static struct sigaction go_segv, host_segv;

static int find_self_text(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	const void *base = data;
	int mine = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (void *)(info->dlpi_addr + ph->p_vaddr - ph->p_offset) == base) {
			mine = 1;
		}
	}
	if (!mine) {
		return 0;
	}
	for (int i = 0; i < info->dlpi_phnum && self_text_n < CLRPROF_MAX_TEXT; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
			self_text[self_text_n][0] = info->dlpi_addr + ph->p_vaddr;
			self_text[self_text_n][1] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
			self_text_n++;
		}
	}
	return 1;
}

static int pc_in_self(uintptr_t pc) {
	for (int i = 0; i < self_text_n; i++) {
		if (pc >= self_text[i][0] && pc < self_text[i][1]) {
			return 1;
		}
	}
	return 0;
}

// ---- the host's SIGSEGV handler on a stack of its own ----
//
// CoreCLR's SIGSEGV handler runs on the thread's alternate signal stack
// (SA_ONSTACK, so that it can report a stack overflow), keeps its frames
// there (a return point holding a whole CONTEXT, and the kernel's signal
// frame with the faulting context), and runs the exception dispatch on the
// thread's own stack; when the dispatch returns, it jumps back into those
// frames and returns from the signal. While it runs on the thread's stack,
// the alternate stack is not "in use" as far as the kernel can tell, so any
// other SA_ONSTACK signal is delivered at its top, over CoreCLR's live
// frames. CoreCLR blocks its own activation signal there for exactly that
// reason, but the Go runtime's signals also use the alternate stack (which
// Go adopts as its signal stack on the threads that call into Go): SIGURG,
// which Go sends to preempt a goroutine running in a callback, and Go's own
// SIGSEGV/SIGPIPE when Go code in a callback faults or writes to a closed
// pipe. Seen as "*** stack smashing detected ***" (a SIGURG frame, then
// Go's handler frames, over CoreCLR's sigsegv_handler frame, found in the
// core of a crashed signal storm run; docs/reliability.md).
//
// So the router does not let the host handler keep anything on the
// alternate stack: it copies the kernel's signal frame (context, signal
// information, extended register state) to a stack of the thread's own,
// calls the host handler there with the copies, and, if the handler returns,
// returns from the signal with rt_sigreturn on the copy. Whatever lands on
// the alternate stack meanwhile overwrites nothing that is still needed.
//
// The stack is mapped the first time a thread calls into Go (the only
// threads the Go runtime ever signals or runs Go code on) and unmapped when
// the thread exits. A thread without one (it never called into Go) runs the
// host handler where it always did.

#define SEGV_STACK_SIZE (128 * 1024)

__thread char *clrprof_segv_stack __attribute__((tls_model("initial-exec")));
static pthread_key_t segv_stack_key;
static pthread_once_t segv_stack_once = PTHREAD_ONCE_INIT;
static int segv_stack_key_ok;
static size_t segv_page;

// Counters for the tests: signals the router ran on the private stack, how
// many of those the host handler returned from (the rest it left for the
// managed exception dispatch), and signals it ran on the alternate stack
// (no private stack on that thread, or a frame it could not copy).
static uint64_t segv_private_runs, segv_altstack_runs;
// Counted by the assembly, hence not static.
__attribute__((visibility("hidden"))) uint64_t clrprof_segv_private_returns;
// How often the router was put back on top of a SIGSEGV handler installed
// over it (.NET Core 2.0's JIT: once).
static uint64_t segv_reasserts;

static void segv_stack_free(void *base) {
	if (base != NULL && base != (void *)-1) {
		munmap(base, SEGV_STACK_SIZE + segv_page);
	}
	clrprof_segv_stack = NULL;
}

static void segv_stack_key_init(void) {
	segv_page = (size_t)sysconf(_SC_PAGESIZE);
	segv_stack_key_ok = pthread_key_create(&segv_stack_key, segv_stack_free) == 0;
}

static int segv_reassert(void);
static void segv_router(int sig, siginfo_t *info, void *ctx);

void clrprof_segv_stack_map(void) {
	if (clrprof_segv_stack != NULL) {
		return;
	}
	// A thread's first call into Go: also a cheap moment to make sure no
	// SIGSEGV handler was installed over the router since the audit.
	segv_reassert();
	pthread_once(&segv_stack_once, segv_stack_key_init);
	if (!segv_stack_key_ok) {
		clrprof_segv_stack = (char *)-1;
		return;
	}
	char *base = mmap(NULL, SEGV_STACK_SIZE + segv_page, PROT_READ | PROT_WRITE,
	                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	if (base == MAP_FAILED) {
		clrprof_segv_stack = (char *)-1;
		return;
	}
	// A guard page below, so an overflow faults instead of writing on.
	mprotect(base, segv_page, PROT_NONE);
	if (pthread_setspecific(segv_stack_key, base) != 0) {
		munmap(base, SEGV_STACK_SIZE + segv_page);
		clrprof_segv_stack = (char *)-1;
		return;
	}
	clrprof_segv_stack = base;
}

// Assembly (signals_linux_amd64.S): call fn(sig, info, ctx) with the stack
// pointer at sp and, if it returns, return from the signal whose frame is
// at ctx, without coming back here.
__attribute__((noreturn)) void clrprof_run_handler_on_stack(void (*fn)(int, siginfo_t *, void *), int sig, siginfo_t *info, void *ctx, void *sp);

// The x86-64 extended state header: fpstate+464 holds magic1 and the size
// of the whole saved area (with the trailing magic2).
#define FP_MAGIC1 0x46505853U
#define FP_SW_OFF 464

static size_t fpstate_size(const void *fp) {
	uint32_t magic, size;
	memcpy(&magic, (const char *)fp + FP_SW_OFF, 4);
	memcpy(&size, (const char *)fp + FP_SW_OFF + 4, 4);
	if (magic == FP_MAGIC1 && size >= 512 && size <= 64 * 1024) {
		return size;
	}
	return 512;
}

// The router marks the signal information it hands to a handler in the
// tail padding of siginfo_t (which the kernel clears for every signal), so
// that when a handler next in line (.NET Core 2.x's JIT) chains back to the
// router, the router knows it has seen this signal already and goes on to
// the host's handler instead of starting over.
#define SEGV_MARK_OFF (sizeof(siginfo_t) - sizeof(uint64_t))
static const uint64_t segv_mark = 0x5345475652545243ULL;

static void segv_set_mark(siginfo_t *info) {
	memcpy((char *)info + SEGV_MARK_OFF, &segv_mark, sizeof segv_mark);
}

static int segv_marked(const siginfo_t *info) {
	uint64_t v;
	memcpy(&v, (const char *)info + SEGV_MARK_OFF, sizeof v);
	return v == segv_mark;
}

// run_host_here runs the host handler where the router runs (the alternate
// stack), as without the private stack, marking the signal information so
// that a handler chaining back is recognised.
static void run_host_here(void (*handler)(int, siginfo_t *, void *), int sig, siginfo_t *info, void *ctx) {
	__atomic_add_fetch(&segv_altstack_runs, 1, __ATOMIC_RELAXED);
	if (info != NULL) {
		segv_set_mark(info);
	}
	handler(sig, info, ctx);
}

static void run_host_segv(void (*handler)(int, siginfo_t *, void *), int sig, siginfo_t *info, void *ctx) {
	ucontext_t *uc = ctx;
	char *stack = clrprof_segv_stack;
	if (stack == NULL || stack == (char *)-1 || uc == NULL || info == NULL || private_stack_off) {
		run_host_here(handler, sig, info, ctx);
		return;
	}
	// The kernel's frame: the return address slot, the context, the signal
	// information after it, the extended state (64-byte aligned) above.
	char *src = (char *)uc - sizeof(void *);
	char *end = (char *)info + sizeof(siginfo_t);
	char *fp = (char *)uc->uc_mcontext.fpregs;
	if (fp != NULL) {
		if (fp < src || fp - src > 64 * 1024) {
			run_host_here(handler, sig, info, ctx);
			return;
		}
		if (fp + fpstate_size(fp) > end) {
			end = fp + fpstate_size(fp);
		}
	}
	if ((char *)info < (char *)uc || (char *)info - (char *)uc > 4096) {
		run_host_here(handler, sig, info, ctx);
		return;
	}
	size_t len = (size_t)(end - src);
	char *lo = stack + segv_page;
	char *top = lo + SEGV_STACK_SIZE;
	// A fault while the host handler runs on this stack (the interrupted
	// stack pointer is on it) nests below the live frames, as the kernel
	// nests signals on the alternate stack; otherwise start at the top.
	uintptr_t isp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
	if (isp > (uintptr_t)lo && isp <= (uintptr_t)top) {
		top = (char *)isp - 128;
	}
	// Keep the copy's offset within 64 bytes, so the extended state stays
	// aligned as xrstor needs.
	char *dst = (char *)(((uintptr_t)top - len - 256) & ~(uintptr_t)63) + ((uintptr_t)src & 63);
	if (dst - lo < 16 * 1024) {
		run_host_here(handler, sig, info, ctx);
		return;
	}
	memcpy(dst, src, len);
	ptrdiff_t delta = dst - src;
	ucontext_t *nuc = (ucontext_t *)((char *)uc + delta);
	siginfo_t *ninfo = (siginfo_t *)((char *)info + delta);
	if (fp != NULL) {
		nuc->uc_mcontext.fpregs = (void *)(fp + delta);
	}
	segv_set_mark(ninfo);
	__atomic_add_fetch(&segv_private_runs, 1, __ATOMIC_RELAXED);
	// If the handler returns, the thread resumes from the (possibly updated)
	// copy; nothing on the alternate stack is used again.
	clrprof_run_handler_on_stack(handler, sig, ninfo, nuc, dst - 64);
}

void clrprof_segv_counts(uint64_t *private_runs, uint64_t *private_returns, uint64_t *altstack_runs, uint64_t *reasserts) {
	*reasserts = __atomic_load_n(&segv_reasserts, __ATOMIC_RELAXED);
	*private_runs = __atomic_load_n(&segv_private_runs, __ATOMIC_RELAXED);
	*private_returns = __atomic_load_n(&clrprof_segv_private_returns, __ATOMIC_RELAXED);
	*altstack_runs = __atomic_load_n(&segv_altstack_runs, __ATOMIC_RELAXED);
}

// in_segv_stack reports whether p lies on this thread's private handler
// stack.
static int in_segv_stack(const void *p) {
	char *stack = clrprof_segv_stack;
	return stack != NULL && stack != (char *)-1 && (const char *)p >= stack && (const char *)p < stack + segv_page + SEGV_STACK_SIZE;
}

// A SIGSEGV handler installed over the router after the audit (.NET Core
// 2.0's JIT carries a PAL of its own, which installs one when the JIT
// loads, after the profiler; it runs on the alternate stack too, and chains
// to the handler it found: the router) is moved under the router: the
// router takes the signal first again and runs the newcomer on the private
// stack; when the newcomer chains back, the router sees its mark in the
// signal information and goes on to the host's handler.
static struct sigaction router_action, outer_segv;
static int have_outer_segv;

// segv_reassert puts the router back on top when another SIGSEGV handler
// was installed over it, keeping the newcomer as the next in line (it
// chains to the router, which it found installed). It reports whether it
// did. Only sigaction: safe in a signal handler.
static int segv_reassert(void) {
	if (router_action.sa_sigaction != segv_router || __atomic_load_n(&have_outer_segv, __ATOMIC_ACQUIRE)) {
		return 0;
	}
	struct sigaction cur;
	if (sigaction(SIGSEGV, NULL, &cur) != 0 || !(cur.sa_flags & SA_SIGINFO) ||
	    cur.sa_sigaction == segv_router || cur.sa_sigaction == NULL) {
		return 0;
	}
	int expected = 0;
	if (!__atomic_compare_exchange_n(&have_outer_segv, &expected, 2, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		return 0; // another thread is at it
	}
	outer_segv = cur;
	__atomic_store_n(&have_outer_segv, 1, __ATOMIC_RELEASE);
	sigaction(SIGSEGV, &router_action, NULL);
	__atomic_add_fetch(&segv_reasserts, 1, __ATOMIC_RELAXED);
	return 1;
}

static void segv_router(int sig, siginfo_t *info, void *ctx) {
	ucontext_t *uc = ctx;
	uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
	if (info != NULL && segv_marked(info)) {
		// Chained back from a handler the router called.
		host_segv.sa_sigaction(sig, info, ctx);
		return;
	}
	if (segv_reassert() && !pc_in_self(pc)) {
		// Called by a handler installed over the router: this signal
		// went through it already; on to the host's handler.
		run_host_segv(host_segv.sa_sigaction, sig, info, ctx);
		return;
	}
	if (pc_in_self(pc)) {
		// Go's handler expects its own mask; it returns (after redirecting a
		// Go fault to a panic) or does not return at all.
		sigset_t old;
		pthread_sigmask(SIG_SETMASK, &go_segv.sa_mask, &old);
		go_segv.sa_sigaction(sig, info, ctx);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (__atomic_load_n(&have_outer_segv, __ATOMIC_ACQUIRE) == 1) {
		run_host_segv(outer_segv.sa_sigaction, sig, info, ctx);
	} else if (host_segv.sa_flags & SA_SIGINFO) {
		run_host_segv(host_segv.sa_sigaction, sig, info, ctx);
	} else {
		host_segv.sa_handler(sig);
	}
}

int clrprof_audit_signals(int activation, int skip_own, clrprof_sigrec *recs, int max) {
	Dl_info self;
	const void *self_base = NULL;
	if (dladdr((const void *)&clrprof_audit_signals, &self) != 0) {
		self_base = self.dli_fbase;
	}
	int n = 0;
	for (int sig = 1; sig < NSIG && n < max; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) != 0) {
			continue;
		}
		const void *h = handler_of(&sa);
		if (sa.sa_handler == SIG_DFL) {
			continue;
		}
		clrprof_sigrec *r = &recs[n++];
		memset(r, 0, sizeof *r);
		r->sig = sig;
		r->flags = sa.sa_flags;
		r->new_flags = sa.sa_flags;
		if (sa.sa_handler == SIG_IGN) {
			r->kind = 1;
			continue;
		}
		r->kind = 2;
		r->handler = (uintptr_t)h;
		fill_owner(r, h, self_base);
		const struct sigaction *pre = pre_go_valid[sig] ? &pre_go[sig] : NULL;
		int pre_is_func = pre != NULL && pre->sa_handler != SIG_DFL && pre->sa_handler != SIG_IGN;
		struct sigaction na = sa;
		int pre_own = 0;
		if (pre_is_func) {
			clrprof_sigrec prer;
			memset(&prer, 0, sizeof prer);
			fill_owner(&prer, handler_of(pre), self_base);
			pre_own = prer.own;
		}
		if ((sig == SIGFPE || sig == SIGBUS) && r->own && pre_is_func && !pre_own) {
			// Give the signal back to the host: its handler, mask and flags.
			na = *pre;
			r->action = CLRPROF_SIG_RECLAIMED;
		} else if (sig == SIGSEGV && r->own && pre_is_func && !pre_own && (void *)h != (void *)segv_router) {
			self_text_n = 0;
			dl_iterate_phdr(find_self_text, (void *)self_base);
			if (self_text_n == 0 || !(sa.sa_flags & SA_SIGINFO)) {
				continue;
			}
			go_segv = sa;
			host_segv = *pre;
			na = *pre;
			na.sa_sigaction = segv_router;
			na.sa_flags |= SA_SIGINFO | SA_ONSTACK;
			router_action = na;
			r->action = CLRPROF_SIG_ROUTED;
		} else if (sa.sa_flags & SA_ONSTACK) {
			int added_by_go = pre_is_func && handler_of(pre) == h && !(pre->sa_flags & SA_ONSTACK);
			if (sig != activation && !added_by_go) {
				continue;
			}
			if (skip_own && r->own) {
				r->action = CLRPROF_SIG_SKIPPED;
				continue;
			}
			// The same handler, mask and flags, without the SA_ONSTACK the Go
			// runtime added.
			na.sa_flags &= ~SA_ONSTACK;
			r->action = CLRPROF_SIG_RESTORED;
		} else {
			continue;
		}
		if (sigaction(sig, &na, NULL) != 0) {
			r->action = CLRPROF_SIG_FAILED;
			r->err = errno;
			continue;
		}
		struct sigaction now;
		if (sigaction(sig, NULL, &now) == 0) {
			r->new_flags = now.sa_flags;
			if (r->action == CLRPROF_SIG_RECLAIMED || r->action == CLRPROF_SIG_ROUTED) {
				fill_owner(r, handler_of(&now), self_base);
				r->handler = (uintptr_t)handler_of(&now);
			}
		}
	}
	return n;
}


#ifdef CLRPROF_TESTHOOKS
// Test hooks: compiled into test builds only (build tag clrprof_testhooks).

// ---- test helpers: swap a handler in and out without raising anything ----

static struct sigaction test_saved[NSIG];

static void test_handler(int sig, siginfo_t *info, void *ctx) {
	(void)sig;
	(void)info;
	(void)ctx;
}

int clrprof_test_swap_handler(int sig, int flags) {
	if (sig <= 0 || sig >= NSIG) {
		return -1;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = test_handler;
	sa.sa_flags = flags | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	return sigaction(sig, &sa, &test_saved[sig]);
}

int clrprof_test_restore_handler(int sig) {
	if (sig <= 0 || sig >= NSIG) {
		return -1;
	}
	return sigaction(sig, &test_saved[sig], NULL);
}

// The private-stack round trip of the SIGSEGV router, without a runtime:
// the router (installed here for the duration) hands a fault in this
// function to a stand-in host handler, which must run on the private stack
// with the copied frame, clobbers a vector register and the top of the
// alternate stack, changes a general register and skips the faulting
// instruction, and returns; the thread must resume with the changed
// register and its own vector register, i.e. from the copied frame through
// rt_sigreturn, using nothing left on the alternate stack.
static volatile int test_segv_result;

static void test_segv_host(int sig, siginfo_t *info, void *ctx) {
	(void)sig;
	ucontext_t *uc = ctx;
	char probe;
	int r = 1;
	if (!in_segv_stack(&probe)) {
		r = -1; // not running on the private stack
	} else if (!in_segv_stack(uc) || !in_segv_stack(info)) {
		r = -2; // not given the copied frame
	} else if (uc->uc_mcontext.fpregs != NULL && (!in_segv_stack(uc->uc_mcontext.fpregs) || ((uintptr_t)uc->uc_mcontext.fpregs & 63) != 0)) {
		r = -3; // extended state not copied, or misaligned
	} else if (info->si_addr != NULL) {
		r = -4;
	}
	__asm__ volatile("pxor %%xmm1, %%xmm1" ::: "xmm1");
	// What a SIGURG arriving now would do: overwrite the top of the
	// alternate stack, where the kernel's frame and the router's frames
	// are. The thread must resume all the same.
	stack_t ss;
	if (sigaltstack(NULL, &ss) == 0 && !(ss.ss_flags & SS_DISABLE) && ss.ss_size >= 8192) {
		memset((char *)ss.ss_sp + ss.ss_size - 8192, 0xA5, 8192);
	} else if (r == 1) {
		r = -5; // no alternate stack to overwrite
	}
	uc->uc_mcontext.gregs[REG_RIP] += 3; // movq (%rax), %rbx
	uc->uc_mcontext.gregs[REG_RCX] = 0x5eed;
	test_segv_result = r;
}

int clrprof_test_segv_roundtrip(uint64_t *rcx_out, uint64_t *xmm_out) {
	clrprof_segv_stack_ensure();
	if (clrprof_segv_stack == NULL || clrprof_segv_stack == (char *)-1) {
		return -10;
	}
	struct sigaction act, saved_act;
	struct sigaction saved_host = host_segv, saved_router = router_action;
	int saved_outer = have_outer_segv, saved_text = self_text_n;
	memset(&act, 0, sizeof act);
	act.sa_sigaction = segv_router;
	act.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sigemptyset(&act.sa_mask);
	host_segv = act;
	host_segv.sa_sigaction = test_segv_host;
	router_action = act;
	have_outer_segv = 0;
	self_text_n = 0;
	test_segv_result = 0;
	if (sigaction(SIGSEGV, &act, &saved_act) != 0) {
		return -11;
	}
	uint64_t rcx, xmm;
	__asm__ volatile(
	    "movabsq $0x4142434445464748, %%rdx\n\t"
	    "movq %%rdx, %%xmm1\n\t"
	    "xorl %%eax, %%eax\n\t"
	    "xorl %%ecx, %%ecx\n\t"
	    "movq (%%rax), %%rbx\n\t"
	    "movq %%xmm1, %%rdx\n\t"
	    : "=c"(rcx), "=d"(xmm)
	    :
	    : "rax", "rbx", "xmm1", "memory");
	sigaction(SIGSEGV, &saved_act, NULL);
	host_segv = saved_host;
	router_action = saved_router;
	have_outer_segv = saved_outer;
	self_text_n = saved_text;
	*rcx_out = rcx;
	*xmm_out = xmm;
	return test_segv_result;
}

#endif // CLRPROF_TESTHOOKS
