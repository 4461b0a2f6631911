/*
 * void context_switch(context_t *save, context_t *load)
 *
 * Saves the callee-saved registers of the System V ABI on the current stack and
 * the stack pointer into save->sp, then loads load->sp and pops the registers
 * saved there. Called by the scheduler with interrupts disabled.
 */
	.text
	.code64
	.global context_switch
context_switch:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, (%rdi)
	movq (%rsi), %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret

/*
 * First code a new thread runs (the return address of its initial frame). The
 * stack is 16-byte aligned here; rbp = 0 ends backtraces.
 */
	.global thread_entry_asm
thread_entry_asm:
	xorq %rbp, %rbp
	call thread_main_entry
	ud2
