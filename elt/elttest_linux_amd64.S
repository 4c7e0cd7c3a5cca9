// Test hook (build tag clrprof_testhooks): calls the ELT stubs of both
// recorders (elt_linux_amd64.S, eltcount_linux_amd64.S) as JIT'd code
// would and lets elt.c check the registers. The top of the ELT layers:
// nothing calls into it but Go's tests.

	.text

#ifdef CLRPROF_TESTHOOKS
// int clrprof_elt_test_call(int which, uint64_t id, uint64_t *bad)
//
// Calls hook `which` (0 enter, 1 leave, 2 tailcall; 3-5 the same
// counting hooks) as JIT'd code would,
// with %rdi = %r14 = id (leave and tail calls pass the ID in %rdi, enter
// in %r14, as the JIT does on Unix) and a sentinel in every other
// general-purpose register
// (but %rsp, %rbp) and in %xmm0-%xmm15 (clrprof_elt_sentinels), then
// dumps the registers and lets C compare (clrprof_elt_test_check).
	.globl clrprof_elt_test_call
	.hidden clrprof_elt_test_call
	.type clrprof_elt_test_call, @function
	.p2align 4
clrprof_elt_test_call:
	pushq	%rbp
	movq	%rsp, %rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	pushq	%rdx		// bad, at -48(%rbp)
	// The hook to call, into a slot on the stack.
	cmpl	$1, %edi
	je	11f
	cmpl	$2, %edi
	je	12f
	cmpl	$3, %edi
	je	14f
	cmpl	$4, %edi
	je	15f
	cmpl	$5, %edi
	je	16f
	leaq	clrprof_elt_enter3(%rip), %rax
	jmp	13f
11:
	leaq	clrprof_elt_leave3(%rip), %rax
	jmp	13f
12:
	leaq	clrprof_elt_tailcall3(%rip), %rax
	jmp	13f
14:
	leaq	clrprof_cnt_enter3(%rip), %rax
	jmp	13f
15:
	leaq	clrprof_cnt_leave3(%rip), %rax
	jmp	13f
16:
	leaq	clrprof_cnt_tailcall3(%rip), %rax
13:
	pushq	%rax		// the hook, at -56(%rbp)
	pushq	%rsi		// id, at -64(%rbp); %rsp is 16-byte aligned
	leaq	clrprof_elt_sentinels(%rip), %rax
	movdqu	128(%rax), %xmm0
	movdqu	144(%rax), %xmm1
	movdqu	160(%rax), %xmm2
	movdqu	176(%rax), %xmm3
	movdqu	192(%rax), %xmm4
	movdqu	208(%rax), %xmm5
	movdqu	224(%rax), %xmm6
	movdqu	240(%rax), %xmm7
	movdqu	256(%rax), %xmm8
	movdqu	272(%rax), %xmm9
	movdqu	288(%rax), %xmm10
	movdqu	304(%rax), %xmm11
	movdqu	320(%rax), %xmm12
	movdqu	336(%rax), %xmm13
	movdqu	352(%rax), %xmm14
	movdqu	368(%rax), %xmm15
	movq	8(%rax), %rcx
	movq	16(%rax), %rdx
	movq	24(%rax), %rbx
	movq	32(%rax), %rsi
	movq	40(%rax), %r8
	movq	48(%rax), %r9
	movq	56(%rax), %r10
	movq	64(%rax), %r11
	movq	72(%rax), %r12
	movq	80(%rax), %r13
	movq	-64(%rbp), %r14	// the enter hook's ID register
	movq	96(%rax), %r15
	movq	-64(%rbp), %rdi
	movq	0(%rax), %rax
	call	*-56(%rbp)
	// Dump: 16 general-purpose slots, then 16 xmm registers.
	subq	$384, %rsp
	movq	%rax, 0(%rsp)
	movq	%rcx, 8(%rsp)
	movq	%rdx, 16(%rsp)
	movq	%rbx, 24(%rsp)
	movq	%rsi, 32(%rsp)
	movq	%r8, 40(%rsp)
	movq	%r9, 48(%rsp)
	movq	%r10, 56(%rsp)
	movq	%r11, 64(%rsp)
	movq	%r12, 72(%rsp)
	movq	%r13, 80(%rsp)
	movq	%r14, 88(%rsp)
	movq	%r15, 96(%rsp)
	movq	%rdi, 104(%rsp)
	movq	$0, 112(%rsp)
	movq	$0, 120(%rsp)
	movdqu	%xmm0, 128(%rsp)
	movdqu	%xmm1, 144(%rsp)
	movdqu	%xmm2, 160(%rsp)
	movdqu	%xmm3, 176(%rsp)
	movdqu	%xmm4, 192(%rsp)
	movdqu	%xmm5, 208(%rsp)
	movdqu	%xmm6, 224(%rsp)
	movdqu	%xmm7, 240(%rsp)
	movdqu	%xmm8, 256(%rsp)
	movdqu	%xmm9, 272(%rsp)
	movdqu	%xmm10, 288(%rsp)
	movdqu	%xmm11, 304(%rsp)
	movdqu	%xmm12, 320(%rsp)
	movdqu	%xmm13, 336(%rsp)
	movdqu	%xmm14, 352(%rsp)
	movdqu	%xmm15, 368(%rsp)
	movq	%rsp, %rdi		// dump
	movq	-64(%rbp), %rsi		// id
	movq	-48(%rbp), %rdx		// bad
	call	clrprof_elt_test_check
	leaq	-40(%rbp), %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size clrprof_elt_test_call, .-clrprof_elt_test_call

#endif // CLRPROF_TESTHOOKS

	.section .note.GNU-stack,"",@progbits
