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

// Direct slots of the chain vtable (chain.c, clrprof_chain_refresh):
// trampoline i replaces `this` (the SDK's profiler object) by the chained
// profiler's object and jumps to slot i of its vtable. A callback slot
// points here while the chained profiler alone asks for the callback, so
// the runtime's call costs two loads and a jump more than a call to the
// chained profiler loaded alone; the runtime gets its HRESULT. Each
// trampoline is at most 16 bytes (7 + 3 + 6); clrprof_chaindirect_end
// lets chain.c check.

	.globl clrprof_chaindirect_base
	.hidden clrprof_chaindirect_base
	.globl clrprof_chaindirect_end
	.hidden clrprof_chaindirect_end
	.p2align 4
clrprof_chaindirect_base:
	.set slot, 0
	.rept 128
	.p2align 4
	movq	clrprof_chain_direct_cb(%rip), %rdi
	movq	(%rdi), %rax
	jmpq	*(slot*8)(%rax)
	.set slot, slot+1
	.endr
	.p2align 4
clrprof_chaindirect_end:

	.section .note.GNU-stack,"",@progbits
