// The call-counting hooks (eltcount.c). They sit above the event
// recorder's stubs (elt_linux_amd64.S): they read clrprof_elt_on and take
// its full-save path, clrprof_elt_full_save, for a thread's first event.

	.text

// The counting hooks (Info.NewCallCounter): the work is done in C by
// clrprof_cnt_hook, which is compiled to use general-purpose registers
// only and calls nothing, so saving the caller-saved general-purpose
// registers is enough. When it returns non-zero (the thread's first event,
// a page of counters to allocate), the event goes through the full-save
// path to clrprof_elt_slow, which may allocate.
.macro CNT_STUB name, kind, idreg, idslot, spslot
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	cmpb	$0, clrprof_elt_on(%rip)
	je	9f
	pushq	%rbp
	movq	%rsp, %rbp
	pushq	%rax		// -8(%rbp)
	pushq	%rcx		// -16
	pushq	%rdx		// -24
	pushq	%rsi		// -32
	pushq	%rdi		// -40
	pushq	%r8		// -48
	pushq	%r9		// -56
	pushq	%r10		// -64
	pushq	%r11		// -72
	andq	$-16, %rsp
	movq	\spslot, %rdx
	movq	\idreg, %rdi
	movabsq	$\kind, %rsi
	call	clrprof_cnt_hook
	testl	%eax, %eax
	jz	8f
	movq	\idslot, %rdi
	movabsq	$\kind, %rsi
	call	clrprof_elt_full_save
8:
	leaq	-72(%rbp), %rsp
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popq	%rbp
9:
	ret
	.size \name, .-\name
.endm

// The third argument of clrprof_cnt_hook is the hooked frame's caller's
// stack pointer, which the JIT passes the hooks beside the ID: %r15 for
// enter, %rsi for leave and tail call (saved at -32(%rbp)); the shadow
// stacks use it to close frames that are no longer on the machine stack
// (a runtime-async frame that suspended returns without a leave).
CNT_STUB clrprof_cnt_enter3, 0x2000000000000000, %r14, %r14, %r15
CNT_STUB clrprof_cnt_leave3, 0x4000000000000000, %rdi, -40(%rbp), -32(%rbp)
CNT_STUB clrprof_cnt_tailcall3, 0x6000000000000000, %rdi, -40(%rbp), -32(%rbp)

	.section .note.GNU-stack,"",@progbits
