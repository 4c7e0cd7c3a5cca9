// Stack switching for the SIGSEGV router (signals.c, "the host's SIGSEGV
// handler on a stack of its own").

	.text

// void clrprof_run_handler_on_stack(void (*fn)(int, siginfo_t *, void *),
//                                   int sig, siginfo_t *info, void *ctx,
//                                   void *sp)  (does not return)
//
// Calls fn(sig, info, ctx) with the stack pointer at sp (aligned down to 16
// bytes) and, if fn returns, counts it in clrprof_segv_private_returns and
// returns from the signal whose kernel frame is at ctx (rt_sigreturn reads
// its frame at the stack pointer minus 8, the return address slot) without
// going back to the caller's stack: the caller runs on the alternate signal
// stack, which may have been overwritten while fn ran elsewhere. ctx stays
// in %r12 and the caller's stack pointer in %rbx, both preserved by fn; the
// CFI describes the way back to the caller for debuggers (gdb's backtrace
// of a crash inside fn reaches the SIGSEGV router).
	.globl clrprof_run_handler_on_stack
	.hidden clrprof_run_handler_on_stack
	.type clrprof_run_handler_on_stack, @function
	.p2align 4
clrprof_run_handler_on_stack:
	.cfi_startproc
	movq	%rsp, %rbx
	.cfi_def_cfa %rbx, 8
	movq	%rcx, %r12
	movq	%r8, %rsp
	andq	$-16, %rsp
	movq	%rdi, %rax
	movl	%esi, %edi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	call	*%rax
	lock incq	clrprof_segv_private_returns(%rip)
	movq	%r12, %rsp
	movl	$15, %eax
	syscall
	ud2
	.cfi_endproc
	.size clrprof_run_handler_on_stack, .-clrprof_run_handler_on_stack

	.section .note.GNU-stack,"",@progbits
