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
// Ring layout offsets: ring.h (CLRPROF_RING_OFF_*); the reserve is
// ringcore.h's (head past limit: read tail again and move limit on).

#include "ring.h"

#define OFF_HEAD CLRPROF_RING_OFF_HEAD
#define OFF_TAILCACHE CLRPROF_RING_OFF_TAILCACHE
#define OFF_MASK CLRPROF_RING_OFF_MASK
#define OFF_SLOTS CLRPROF_RING_OFF_SLOTS
#define OFF_THRESH CLRPROF_RING_OFF_THRESH
#define OFF_LIMIT CLRPROF_RING_OFF_LIMIT
#define OFF_TAIL CLRPROF_RING_OFF_TAIL

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
	cmpq	OFF_LIMIT(%r11), %rcx
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
	// Past the threshold by the cached tail (head > limit, which is
	// tail_cache + thresh): read the consumer's tail again, and move limit
	// on.
	movq	OFF_TAIL(%r11), %rax
	movq	%rax, OFF_TAILCACHE(%r11)
	movq	%rcx, %rdx
	subq	%rax, %rdx
	addq	OFF_THRESH(%r11), %rax
	movq	%rax, OFF_LIMIT(%r11)
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

// clrprof_elt_full_save: %rdi id, %rsi kind (the caller saved %rsi).
// Saves everything else, calls clrprof_elt_slow(id, kind), restores.
	.globl clrprof_elt_full_save
	.hidden clrprof_elt_full_save
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


	.section .note.GNU-stack,"",@progbits
