/*
 * void context_switch(context_t *save, context_t *load)
 *
 * Saves the AAPCS64 callee-saved registers, the frame pointer, the link
 * register and the stack pointer into *save (x0), loads them from *load (x1)
 * and returns into the loaded thread. Called by the scheduler with
 * interrupts disabled. No barrier: a thread that moves to another CPU is
 * handed over through the run queue lock (release/acquire), which orders
 * its earlier accesses before its accesses on the new CPU.
 */
	.text
	.global context_switch
context_switch:
	stp x19, x20, [x0, #0]
	stp x21, x22, [x0, #16]
	stp x23, x24, [x0, #32]
	stp x25, x26, [x0, #48]
	stp x27, x28, [x0, #64]
	stp x29, x30, [x0, #80]
	mov x2, sp
	str x2, [x0, #96]
	ldp x19, x20, [x1, #0]
	ldp x21, x22, [x1, #16]
	ldp x23, x24, [x1, #32]
	ldp x25, x26, [x1, #48]
	ldp x27, x28, [x1, #64]
	ldp x29, x30, [x1, #80]
	ldr x2, [x1, #96]
	mov sp, x2
	ret

/* First code of a new thread (its initial lr); fp = 0 ends backtraces. */
	.global thread_entry_asm
thread_entry_asm:
	mov x29, #0
	bl thread_main_entry
	brk #0
