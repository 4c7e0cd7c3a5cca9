// altstack: the mechanism behind "stack smashing detected" under the signal
// storm (issue 13), without CoreCLR and without clrprof.
//
// CoreCLR's SIGSEGV handler is installed with SA_ONSTACK. It keeps a frame
// on the alternate signal stack (the kernel's signal frame and a return
// point), runs the exception dispatch on the thread's own stack, and
// returns into that frame afterwards. While it runs on the thread's stack,
// the kernel no longer considers the alternate stack in use, so any other
// SA_ONSTACK signal is delivered at the top of the alternate stack, over the
// live frame. The Go runtime's preemption signal, SIGURG, is such a signal,
// and Go adopts the thread's alternate stack as its own signal stack.
//
// This program does the same with a handler that switches to another stack
// with swapcontext and raises SIGURG there (whose handler, like Go's, uses
// some of the alternate stack). It prints "clobbered" when the live frame
// was overwritten, "intact" when not, and exits 0 from the handler. With the argument "private", the
// SIGSEGV handler first moves to a stack of its own, as clrprof's router
// does, and the frame survives.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

#define MAGIC 0x1122334455667788ULL

static char alt_stack[64 * 1024] __attribute__((aligned(64)));
static char work_stack[256 * 1024] __attribute__((aligned(64)));
static char private_stack[256 * 1024] __attribute__((aligned(64)));
static ucontext_t work_ctx, back_ctx, priv_ctx, priv_back_ctx;
static int use_private;
static siginfo_t *g_info;
static void *g_uctx;

// Like Go's handler: some work on the signal stack.
static volatile unsigned urg_sum;

static void urg_handler(int sig, siginfo_t *info, void *ctx) {
	(void)sig, (void)info, (void)ctx;
	char pad[4096];
	memset(pad, 0xA5, sizeof pad);
	__asm__ volatile("" : : "r"(pad) : "memory");
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof pad; i += 64) {
		sum += (unsigned char)pad[i];
	}
	urg_sum = sum;
}

// The "exception dispatch", on the thread's stack: a SIGURG arrives.
static void dispatch(void) {
	raise(SIGURG);
}

// The host handler: a live value in its frame, the dispatch elsewhere, then
// back into the frame.
static void host_handler(void *uctx) {
	volatile uint64_t live = MAGIC;
	getcontext(&work_ctx);
	work_ctx.uc_stack.ss_sp = work_stack;
	work_ctx.uc_stack.ss_size = sizeof work_stack;
	work_ctx.uc_link = &back_ctx;
	makecontext(&work_ctx, dispatch, 0);
	swapcontext(&back_ctx, &work_ctx);
	(void)uctx;
	// Report and leave: the kernel's frame on the alternate stack may be
	// overwritten too, so returning from the signal is not an option.
	printf("%s\n", live != MAGIC ? "clobbered" : "intact");
	fflush(stdout);
	_exit(0);
}

static void private_entry(void) {
	host_handler(g_uctx);
}

static void segv_handler(int sig, siginfo_t *info, void *uctx) {
	(void)sig;
	if (!use_private) {
		host_handler(uctx);
		return;
	}
	// The router's way: the host handler runs on a stack of its own. (The
	// kernel's frame is read through uctx before anything can land on the
	// alternate stack here; clrprof copies it to be safe at any time.)
	g_info = info, g_uctx = uctx;
	getcontext(&priv_ctx);
	priv_ctx.uc_stack.ss_sp = private_stack;
	priv_ctx.uc_stack.ss_size = sizeof private_stack;
	priv_ctx.uc_link = &priv_back_ctx;
	makecontext(&priv_ctx, private_entry, 0);
	swapcontext(&priv_back_ctx, &priv_ctx);
}

int main(int argc, char **argv) {
	use_private = argc > 1 && strcmp(argv[1], "private") == 0;
	stack_t ss = {.ss_sp = alt_stack, .ss_size = sizeof alt_stack, .ss_flags = 0};
	if (sigaltstack(&ss, NULL) != 0) {
		perror("sigaltstack");
		return 2;
	}
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	sa.sa_sigaction = segv_handler;
	sigaction(SIGSEGV, &sa, NULL);
	sa.sa_sigaction = urg_handler;
	sigaction(SIGURG, &sa, NULL);
	__asm__ volatile("xorl %%eax, %%eax\n\tmovq (%%rax), %%rbx" ::: "rax", "rbx", "memory");
	printf("handler did not run\n");
	return 2;
}
