// The fast-path enter/leave/tailcall hooks (SetEnterLeaveFunctionHooks3).
//
// JIT'd code calls these straight from a method's prolog and epilog, not
// by the C calling convention: on Unix x64 the enter hook gets the function
// ID (or the mapper's client ID) in %r14 (the caller's stack pointer in
// %r15), because the method's arguments occupy the argument registers; the
// leave and tail-call hooks get it in %rdi (observed on .NET Core 2.1, 3.1
// and .NET 8). The method's arguments (enter) or return value (leave) sit
// in registers meanwhile. A stub must
// therefore leave every register as it found it. The fast path touches
// only %rax, %rcx, %rdx and %r11, which it saves on the stack, and the
// flags; it appends one 16-byte event (id, kind|tsc) to the calling
// thread's ring (see ring.h) without a call. The slow path (no ring yet
// for this thread, or the diagnostic clrprof_elt_force_slow) saves every
// general-purpose caller-saved register and the whole extended state
// (XSAVE with every component the OS enabled: x87, SSE, AVX, AVX-512 ...)
// on a 64-byte aligned stack area, then calls clrprof_elt_slow in C.
//
// Ring layout offsets: ring.h (CLRPROF_RING_OFF_*).

#define OFF_HEAD 0
#define OFF_TAILCACHE 8
#define OFF_MASK 16
#define OFF_SLOTS 24
#define OFF_DROPPED 32
#define OFF_THRESH 40
#define OFF_TAIL 64

	.text

.macro ELT_STUB name, kind, idreg
	.globl \name
	.hidden \name
	.type \name, @function
	.p2align 4
\name:
	cmpb	$0, clrprof_elt_on(%rip)
	je	9f
	cmpb	$0, clrprof_elt_force_slow(%rip)
	jne	7f
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%r11
	movq	clrprof_elt_ring@gottpoff(%rip), %rax
	movq	%fs:(%rax), %r11
	testq	%r11, %r11
	jz	6f
	movq	OFF_HEAD(%r11), %rcx
	movq	%rcx, %rax
	subq	OFF_TAILCACHE(%r11), %rax
	cmpq	OFF_THRESH(%r11), %rax
	ja	5f
4:
	rdtsc
	shlq	$32, %rdx
	orq	%rdx, %rax
	movabsq	$\kind, %rdx
	orq	%rdx, %rax
	movq	%rcx, %rdx
	andq	OFF_MASK(%r11), %rdx
	shlq	$4, %rdx
	addq	OFF_SLOTS(%r11), %rdx
	movq	\idreg, 0(%rdx)
	movq	%rax, 8(%rdx)
	incq	%rcx
	movq	%rcx, OFF_HEAD(%r11)	// publish (x86 stores are release)
3:
	popq	%r11
	popq	%rdx
	popq	%rcx
	popq	%rax
9:
	ret
5:
	// Past the threshold by the cached tail: read the consumer's tail
	// again.
	movq	OFF_TAIL(%r11), %rax
	movq	%rax, OFF_TAILCACHE(%r11)
	movq	%rcx, %rdx
	subq	%rax, %rdx
	cmpq	OFF_THRESH(%r11), %rdx
	jbe	4b
	// Still past it. Full: the slow path waits for the consumer (or
	// counts a drop). Not full, but the consumer sleeps and asked to be
	// woken: the slow path wakes it. Otherwise record.
	cmpq	OFF_MASK(%r11), %rdx
	ja	6f
	cmpb	$0, clrprof_elt_bp(%rip)	// .wake
	jne	6f
	jmp	4b
6:
	popq	%r11
	popq	%rdx
	popq	%rcx
	popq	%rax
7:
	pushq	%rdi
	pushq	%rsi
	movq	\idreg, %rdi
	movabsq	$\kind, %rsi
	call	clrprof_elt_full_save
	popq	%rsi
	popq	%rdi
	ret
	.size \name, .-\name
.endm

ELT_STUB clrprof_elt_enter3, 0x2000000000000000, %r14
ELT_STUB clrprof_elt_leave3, 0x4000000000000000, %rdi
ELT_STUB clrprof_elt_tailcall3, 0x6000000000000000, %rdi

// The counting hooks (Info.EnableCallCounts): the work is done in C by
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

// clrprof_elt_full_save: %rdi id, %rsi kind (the caller saved %rsi).
// Saves everything else, calls clrprof_elt_slow(id, kind), restores.
	.type clrprof_elt_full_save, @function
	.p2align 4
clrprof_elt_full_save:
	pushq	%rbp
	movq	%rsp, %rbp
	pushq	%rax
	pushq	%rcx
	pushq	%rdx
	pushq	%rdi
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%rbx	// scratch below (callee-saved, restored)
	movq	clrprof_elt_xsave_size(%rip), %rbx
	testq	%rbx, %rbx
	jz	1f
	subq	%rbx, %rsp
	andq	$-64, %rsp
	// XRSTOR faults on a header with reserved bits set: zero it (bytes
	// 512..575); XSAVE writes only XSTATE_BV.
	xorl	%eax, %eax
	movq	%rax, 512(%rsp)
	movq	%rax, 520(%rsp)
	movq	%rax, 528(%rsp)
	movq	%rax, 536(%rsp)
	movq	%rax, 544(%rsp)
	movq	%rax, 552(%rsp)
	movq	%rax, 560(%rsp)
	movq	%rax, 568(%rsp)
	movl	$-1, %eax
	movl	$-1, %edx
	xsave64	(%rsp)
	call	clrprof_elt_slow
	movl	$-1, %eax
	movl	$-1, %edx
	xrstor64	(%rsp)
	jmp	2f
1:
	subq	$512, %rsp
	andq	$-64, %rsp
	fxsave64	(%rsp)
	call	clrprof_elt_slow
	fxrstor64	(%rsp)
2:
	leaq	-72(%rbp), %rsp
	popq	%rbx
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rdi
	popq	%rdx
	popq	%rcx
	popq	%rax
	popq	%rbp
	ret
	.size clrprof_elt_full_save, .-clrprof_elt_full_save

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
