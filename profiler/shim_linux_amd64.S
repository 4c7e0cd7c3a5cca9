// Stack switching for the SIGSEGV router (shim.c, "the host's SIGSEGV
// handler on a stack of its own").

	.text

// void clrprof_call_on_stack(void (*fn)(int, siginfo_t *, void *),
//                            int sig, siginfo_t *info, void *ctx, void *sp)
//
// Calls fn(sig, info, ctx) with the stack pointer at sp (aligned down to 16
// bytes) and returns on the caller's stack. The frame pointer keeps the
// way back, and the CFI says so, so that unwinders (gdb, the C++ runtime)
// walk from the handler's frames back into the caller's.
	.globl clrprof_call_on_stack
	.hidden clrprof_call_on_stack
	.type clrprof_call_on_stack, @function
	.p2align 4
clrprof_call_on_stack:
	.cfi_startproc
	pushq	%rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	movq	%rsp, %rbp
	.cfi_def_cfa_register %rbp
	movq	%r8, %rsp
	andq	$-16, %rsp
	movq	%rdi, %rax
	movl	%esi, %edi
	movq	%rdx, %rsi
	movq	%rcx, %rdx
	call	*%rax
	movq	%rbp, %rsp
	popq	%rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size clrprof_call_on_stack, .-clrprof_call_on_stack

// void clrprof_sigreturn(void *uc): returns from a signal whose kernel
// frame (the context uc, preceded by the return address slot) is at uc:
// rt_sigreturn reads its frame at the stack pointer minus 8.
	.globl clrprof_sigreturn
	.hidden clrprof_sigreturn
	.type clrprof_sigreturn, @function
	.p2align 4
clrprof_sigreturn:
	.cfi_startproc
	movq	%rdi, %rsp
	movl	$15, %eax
	syscall
	ud2
	.cfi_endproc
	.size clrprof_sigreturn, .-clrprof_sigreturn

	.section .note.GNU-stack,"",@progbits
