/*
 * arm64 exception vectors (VBAR_EL1). Every entry saves the registers into
 * an istate_t on the current stack (SP_EL1) and calls
 * arm64_exception(istate, kind); the return path restores them, clears the
 * exclusive monitor (CLREX: a LL/SC sequence the exception interrupted must
 * fail its store-exclusive and retry) and returns with ERET.
 *
 * x18 is the running thread's A-RCU reader count (arch/rcu_arch.h; the
 * kernel is built with -ffixed-x18). From EL0 the user's x18 is saved and
 * the kernel's is 0 (no reader section is open in user mode); the return
 * to EL0 restores the user's. From EL1 x18 is saved (for the register dump)
 * but not restored: the handler leaves it as it found it except for what
 * the detector's cross-call or the scheduler hooks deliberately wrote there
 * (the preempted mark; after a context switch, this thread's count loaded
 * back by the switch-in hook), which the interrupted code must see.
 */
#define ISTATE_SIZE 288

	.macro ventry kind
	.balign 0x80
	sub sp, sp, #ISTATE_SIZE
	stp x0, x1, [sp, #0]
	mov x1, #\kind
	b exception_common
	.endm

	.text
	.balign 2048
	.global exception_vectors
exception_vectors:
	ventry 0x10   /* current EL, SP_EL0: sync (never used) */
	ventry 0x11
	ventry 0x12
	ventry 0x13
	ventry 0      /* current EL, SP_EL1: sync */
	ventry 1      /* IRQ */
	ventry 2      /* FIQ */
	ventry 3      /* SError */
	ventry 4      /* lower EL, AArch64: sync */
	ventry 5      /* IRQ */
	ventry 6      /* FIQ */
	ventry 7      /* SError */
	ventry 0x18   /* lower EL, AArch32 */
	ventry 0x19
	ventry 0x1a
	ventry 0x1b

exception_common:
	stp x2, x3, [sp, #16]
	stp x4, x5, [sp, #32]
	stp x6, x7, [sp, #48]
	stp x8, x9, [sp, #64]
	stp x10, x11, [sp, #80]
	stp x12, x13, [sp, #96]
	stp x14, x15, [sp, #112]
	stp x16, x17, [sp, #128]
	stp x18, x19, [sp, #144]
	stp x20, x21, [sp, #160]
	stp x22, x23, [sp, #176]
	stp x24, x25, [sp, #192]
	stp x26, x27, [sp, #208]
	stp x28, x29, [sp, #224]
	str x30, [sp, #240]
	mrs x2, spsr_el1
	tst x2, #0xf
	b.ne 1f
	mov x18, xzr                /* from EL0: no reader section open */
	mrs x3, sp_el0
	b 2f
1:	add x3, sp, #ISTATE_SIZE
2:	mrs x4, elr_el1
	stp x3, x4, [sp, #248]
	mrs x5, esr_el1
	stp x2, x5, [sp, #264]
	mrs x6, far_el1
	str x6, [sp, #280]
	mov x0, sp
	bl arm64_exception

	ldp x2, x4, [sp, #256]      /* elr, spsr */
	msr elr_el1, x2
	msr spsr_el1, x4
	/* Back to EL0: SP_EL0 is the user's stack again (not THREAD). */
	tst x4, #0xf
	b.ne 7f
	ldr x2, [sp, #248]
	msr sp_el0, x2
	ldr x18, [sp, #144]         /* the user's x18 */
7:
	ldp x2, x3, [sp, #16]
	ldp x4, x5, [sp, #32]
	ldp x6, x7, [sp, #48]
	ldp x8, x9, [sp, #64]
	ldp x10, x11, [sp, #80]
	ldp x12, x13, [sp, #96]
	ldp x14, x15, [sp, #112]
	ldp x16, x17, [sp, #128]
	ldr x19, [sp, #152]         /* x18: restored for EL0 only, above */
	ldp x20, x21, [sp, #160]
	ldp x22, x23, [sp, #176]
	ldp x24, x25, [sp, #192]
	ldp x26, x27, [sp, #208]
	ldp x28, x29, [sp, #224]
	ldr x30, [sp, #240]
	ldp x0, x1, [sp, #0]
	add sp, sp, #ISTATE_SIZE
	clrex
	eret

/*
 * void userspace_enter(pc, sp, arg0, arg1): leaves for EL0 at pc with
 * SP_EL0 = sp, x0 = arg0, x1 = arg1, every other register zero, IRQs
 * unmasked there (SPSR 0: EL0t, DAIF clear). SP_EL1 stays in this thread's
 * kernel stack, where its exceptions from EL0 will save their state.
 */
	.global userspace_enter
userspace_enter:
	msr daifset, #2
	msr elr_el1, x0
	msr sp_el0, x1
	msr spsr_el1, xzr
	mov x0, x2
	mov x1, x3
	.irp r, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30
	mov x\r, #0
	.endr
	clrex
	eret
