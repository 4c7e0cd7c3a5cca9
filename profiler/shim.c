// The hand-written half of the C shim; see shim.h.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include "shim.h"
#include "_cgo_export.h"

static const GUID clrprof_IID_IUnknown = {0x00000000, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};
static const GUID clrprof_IID_IClassFactory = {0x00000001, 0x0000, 0x0000, {0xC0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x46}};

static int guid_equal(const GUID *a, const GUID *b) {
	return memcmp(a, b, sizeof(GUID)) == 0;
}

// ---- implemented-callback table ----

volatile uint8_t clrprof_impl[CLRPROF_CALLBACK_SLOTS];

void clrprof_set_impl(int slot, int on) {
	if (slot >= 0 && slot < CLRPROF_CALLBACK_SLOTS) {
		__atomic_store_n(&clrprof_impl[slot], on ? 1 : 0, __ATOMIC_RELEASE);
	}
}

int clrprof_get_impl(int slot) {
	if (slot < 0 || slot >= CLRPROF_CALLBACK_SLOTS) {
		return 0;
	}
	return __atomic_load_n(&clrprof_impl[slot], __ATOMIC_ACQUIRE);
}

// ---- guard around C->Go calls ----

// Diagnostics only: CLRPROF_SIGNAL_GUARD=0 turns the guard off and
// CLRPROF_SIGNAL_AUDIT=0 the signal audit, so that stress tests can show
// what they prevent and benchmarks can measure what they cost. Read once,
// before the Go runtime starts.
static int guard_off, audit_off;

static int env_is_zero(const char *name) {
	const char *v = getenv(name);
	return v != NULL && strcmp(v, "0") == 0;
}

void clrprof_go_enter(clrprof_guard *g) {
	if (guard_off) {
		g->restore = 0;
		return;
	}
	sigset_t block;
	sigemptyset(&block);
	sigaddset(&block, SIGRTMIN);
	g->restore = pthread_sigmask(SIG_BLOCK, &block, &g->old) == 0 && !sigismember(&g->old, SIGRTMIN);
}

void clrprof_go_leave(clrprof_guard *g) {
	// Only the outermost guard on a thread unblocks: a nested guard (a
	// callback raised from inside a call Go made into the runtime) found
	// the signal blocked already and leaves it so.
	if (g->restore) {
		pthread_sigmask(SIG_SETMASK, &g->old, NULL);
	}
}

// ---- IUnknown of the profiler object ----

static int is_callback_iid(REFIID riid) {
	for (int i = 0; i < clrprof_callback_iid_count; i++) {
		if (guid_equal(riid, &clrprof_callback_iids[i])) {
			return 1;
		}
	}
	return 0;
}

HRESULT STDMETHODCALLTYPE clrprof_QueryInterface(void *self, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (riid == NULL) {
		return E_POINTER;
	}
	if (guid_equal(riid, &clrprof_IID_IUnknown) || is_callback_iid(riid)) {
		clrprof_AddRef(self);
		*ppv = self;
		return S_OK;
	}
	return E_NOINTERFACE;
}

ULONG STDMETHODCALLTYPE clrprof_AddRef(void *self) {
	clrprof_object *o = self;
	return (ULONG)__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
}

ULONG STDMETHODCALLTYPE clrprof_Release(void *self) {
	clrprof_object *o = self;
	int32_t n = __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL);
	if (n == 0) {
		uintptr_t h = o->handle;
		o->handle = 0;
		clrprof_guard g;
		clrprof_go_enter(&g);
		clrprofGoObjectReleased(h);
		clrprof_go_leave(&g);
		free(o);
	}
	return (ULONG)n;
}

// The vtable the profiler objects use: a writable copy of the generated
// one, so that C fast paths can take over single slots.
static ICorProfilerCallback11Vtbl live_vtbl;
_Static_assert(sizeof(ICorProfilerCallback11Vtbl) == (CLRPROF_CALLBACK_SLOTS + 3) * sizeof(void *), "vtable is not one pointer per slot");
static pthread_once_t live_once = PTHREAD_ONCE_INIT;

static void live_vtbl_init(void) {
	live_vtbl = clrprof_callback_vtbl;
}

int clrprof_callback_override(int slot, const void *fn, const void **orig) {
	if (slot < 0 || slot >= CLRPROF_CALLBACK_SLOTS || fn == NULL) {
		return -1;
	}
	pthread_once(&live_once, live_vtbl_init);
	const void *volatile *slots = (const void *volatile *)&live_vtbl;
	if (orig != NULL) {
		*orig = ((const void *const *)&clrprof_callback_vtbl)[slot + 3];
	}
	__atomic_store_n((const void **)&slots[slot + 3], fn, __ATOMIC_RELEASE);
	return 0;
}

HRESULT clrprof_new_object(uintptr_t h, REFIID riid, void **ppv) {
	clrprof_object *o = calloc(1, sizeof *o);
	if (o == NULL) {
		return E_OUTOFMEMORY;
	}
	pthread_once(&live_once, live_vtbl_init);
	o->lpVtbl = &live_vtbl;
	o->refs = 1;
	o->handle = h;
	HRESULT hr = clrprof_QueryInterface(o, riid, ppv);
	clrprof_Release(o); // frees o (and the handle) if the query failed
	return hr;
}

// ---- class factory (one static object, never freed) ----

static HRESULT STDMETHODCALLTYPE factory_QueryInterface(IClassFactory *self, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (riid == NULL) {
		return E_POINTER;
	}
	if (guid_equal(riid, &clrprof_IID_IUnknown) || guid_equal(riid, &clrprof_IID_IClassFactory)) {
		*ppv = self;
		return S_OK;
	}
	return E_NOINTERFACE;
}

static ULONG STDMETHODCALLTYPE factory_AddRef(IClassFactory *self) {
	(void)self;
	return 2;
}

static ULONG STDMETHODCALLTYPE factory_Release(IClassFactory *self) {
	(void)self;
	return 1;
}

static HRESULT STDMETHODCALLTYPE factory_CreateInstance(IClassFactory *self, IUnknown *outer, REFIID riid, void **ppv) {
	(void)self;
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	if (outer != NULL) {
		return CLASS_E_NOAGGREGATION;
	}
	if (riid == NULL) {
		return E_POINTER;
	}
	clrprof_guard g;
	clrprof_go_enter(&g);
	uintptr_t h = clrprofGoNewObject();
	clrprof_go_leave(&g);
	if (h == 0) {
		return E_FAIL;
	}
	return clrprof_new_object(h, riid, ppv);
}

static HRESULT STDMETHODCALLTYPE factory_LockServer(IClassFactory *self, BOOL lock) {
	(void)self;
	(void)lock;
	return S_OK;
}

static const IClassFactoryVtbl factory_vtbl = {
	factory_QueryInterface,
	factory_AddRef,
	factory_Release,
	factory_CreateInstance,
	factory_LockServer,
};

static IClassFactory factory = {&factory_vtbl};

// ---- exported COM entry points ----

__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllGetClassObject(REFCLSID rclsid, REFIID riid, void **ppv) {
	if (ppv == NULL) {
		return E_POINTER;
	}
	*ppv = NULL;
	GUID req;
	memset(&req, 0, sizeof req);
	if (rclsid != NULL) {
		req = *rclsid;
	}
	// The first call into Go waits until the Go runtime has initialised.
	clrprof_guard g;
	clrprof_go_enter(&g);
	int ok = clrprofGoMatchCLSID(&req, rclsid != NULL);
	clrprof_go_leave(&g);
	clrprof_signal_audit();
	if (!ok) {
		return CLASS_E_CLASSNOTAVAILABLE;
	}
	return factory_QueryInterface(&factory, riid, ppv);
}

__attribute__((visibility("default"))) HRESULT STDMETHODCALLTYPE DllCanUnloadNow(void) {
	return S_FALSE; // a Go runtime cannot be unloaded
}

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
	guard_off = env_is_zero("CLRPROF_SIGNAL_GUARD");
	audit_off = env_is_zero("CLRPROF_SIGNAL_AUDIT");
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

static void segv_router(int sig, siginfo_t *info, void *ctx) {
	ucontext_t *uc = ctx;
	uintptr_t pc = uc != NULL ? (uintptr_t)uc->uc_mcontext.gregs[REG_RIP] : 0;
	if (pc_in_self(pc)) {
		// Go's handler expects its own mask; it returns (after redirecting a
		// Go fault to a panic) or does not return at all.
		sigset_t old;
		pthread_sigmask(SIG_SETMASK, &go_segv.sa_mask, &old);
		go_segv.sa_sigaction(sig, info, ctx);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return;
	}
	if (host_segv.sa_flags & SA_SIGINFO) {
		host_segv.sa_sigaction(sig, info, ctx);
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

static clrprof_sigrec audit_recs[NSIG];
static int audit_count;
static pthread_once_t audit_once = PTHREAD_ONCE_INIT;

static void audit_run(void) {
	if (audit_off) {
		return;
	}
	audit_count = clrprof_audit_signals(SIGRTMIN, 1, audit_recs, NSIG);
	clrprof_guard g;
	clrprof_go_enter(&g);
	clrprofGoSignalAudit(audit_recs, audit_count, SIGRTMIN);
	clrprof_go_leave(&g);
}

void clrprof_signal_audit(void) {
	pthread_once(&audit_once, audit_run);
}

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

// ---- test hooks: drive the shim from Go tests as the runtime would ----

static HRESULT STDMETHODCALLTYPE fake_notimpl(void) {
	return E_NOTIMPL;
}

// A fake ICorProfilerInfo object: QueryInterface answers IUnknown and the
// first `versions` ICorProfilerInfoN IIDs with itself; every other slot
// returns E_NOTIMPL (extra arguments are harmless in the SysV convention).
typedef struct fake_info {
	const void *const *lpVtbl;
	int versions;
	volatile int32_t refs;
} fake_info;

static HRESULT STDMETHODCALLTYPE fake_QueryInterface(void *self, REFIID riid, void **ppv) {
	fake_info *f = self;
	*ppv = NULL;
	int ok = guid_equal(riid, &clrprof_IID_IUnknown);
	for (int i = 0; !ok && i < f->versions && i < clrprof_info_iid_count; i++) {
		ok = guid_equal(riid, &clrprof_info_iids[i]);
	}
	if (!ok) {
		return E_NOINTERFACE;
	}
	__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	*ppv = self;
	return S_OK;
}

static ULONG STDMETHODCALLTYPE fake_AddRef(void *self) {
	return (ULONG)__atomic_add_fetch(&((fake_info *)self)->refs, 1, __ATOMIC_RELAXED);
}

static ULONG STDMETHODCALLTYPE fake_Release(void *self) {
	return (ULONG)__atomic_sub_fetch(&((fake_info *)self)->refs, 1, __ATOMIC_RELAXED);
}

#define FAKE_SLOTS 512
static const void *fake_vtbl[FAKE_SLOTS];
static pthread_once_t fake_once = PTHREAD_ONCE_INIT;

static void fake_vtbl_init(void) {
	fake_vtbl[0] = (const void *)fake_QueryInterface;
	fake_vtbl[1] = (const void *)fake_AddRef;
	fake_vtbl[2] = (const void *)fake_Release;
	for (int i = 3; i < FAKE_SLOTS; i++) {
		fake_vtbl[i] = (const void *)fake_notimpl;
	}
}

void *clrprof_test_fake_info(int versions) {
	pthread_once(&fake_once, fake_vtbl_init);
	fake_info *f = calloc(1, sizeof *f);
	if (f != NULL) {
		f->lpVtbl = fake_vtbl;
		f->versions = versions;
		f->refs = 1;
	}
	return f;
}

int clrprof_test_fake_refs(void *info) {
	return __atomic_load_n(&((fake_info *)info)->refs, __ATOMIC_RELAXED);
}

void clrprof_test_free(void *p) {
	free(p);
}

const GUID *clrprof_test_callback_iid(int i) {
	if (i < 0 || i >= clrprof_callback_iid_count) {
		return NULL;
	}
	return &clrprof_callback_iids[i];
}

const GUID *clrprof_test_iid_iunknown(void) {
	return &clrprof_IID_IUnknown;
}

// clrprof_test_create does what the runtime does to load a profiler:
// DllGetClassObject for clsid, then IClassFactory::CreateInstance for iid.
// aggregate passes a non-NULL outer object.
HRESULT clrprof_test_create(const GUID *clsid, const GUID *iid, int aggregate, void **obj) {
	*obj = NULL;
	IClassFactory *f = NULL;
	HRESULT hr = DllGetClassObject(clsid, &clrprof_IID_IClassFactory, (void **)&f);
	if (hr != S_OK) {
		return hr;
	}
	IUnknown outer = {NULL};
	hr = f->lpVtbl->CreateInstance(f, aggregate ? &outer : NULL, iid, obj);
	f->lpVtbl->Release(f);
	return hr;
}

HRESULT clrprof_test_qi(void *obj, const GUID *iid, void **out) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->QueryInterface(obj, iid, out);
}

ULONG clrprof_test_addref(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->AddRef(obj);
}

ULONG clrprof_test_release(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Release(obj);
}

HRESULT clrprof_test_initialize(void *obj, void *info) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Initialize(obj, (IUnknown *)info);
}

HRESULT clrprof_test_shutdown(void *obj) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->Shutdown(obj);
}

HRESULT clrprof_test_jit_started(void *obj, uintptr_t fid) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->JITCompilationStarted(obj, fid, 1);
}

HRESULT clrprof_test_module_loaded(void *obj, uintptr_t mid) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->ModuleLoadFinished(obj, mid, S_OK);
}

HRESULT clrprof_test_initialize_for_attach(void *obj, void *info, const void *data, unsigned n) {
	return ((ICorProfilerCallback11 *)obj)->lpVtbl->InitializeForAttach(obj, (IUnknown *)info, (void *)data, n);
}
