// Trampolines of the Info wrappers (chain.c): trampoline i replaces `this`
// (a clrprof_infowrap, %rdi) by the runtime's ICorProfilerInfo stored at
// offset 8 and jumps to slot i of its vtable. Every ICorProfilerInfoN
// method returns an HRESULT in %rax and takes `this` in %rdi, so the other
// arguments (registers and stack) pass through untouched.

	.text
	.globl clrprof_infofwd_base
	.hidden clrprof_infofwd_base
	.p2align 4
clrprof_infofwd_base:
	.set slot, 0
	.rept 256
	.p2align 4
	movq	8(%rdi), %rdi
	movq	(%rdi), %rax
	jmpq	*(slot*8)(%rax)
	.set slot, slot+1
	.endr

	.section .note.GNU-stack,"",@progbits
