/** @file istate_asm.h
 * Assembler macros that build and unwind the general-purpose register part
 * of an istate_t (arch/interrupt.h), shared by the interrupt entry (isr.S)
 * and the system call entries (syscall.S), so the layout is written once.
 * Include from .S files only.
 */
#ifndef KERN_ARCH_ISTATE_ASM_H_
#define KERN_ARCH_ISTATE_ASM_H_

#ifdef __ASSEMBLY__

/* Pushes rax .. r15: the registers of istate_t below the vector number. */
.macro ISTATE_PUSH_GPRS
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
.endm

/* Pops what ISTATE_PUSH_GPRS pushed (the vector and error code stay). */
.macro ISTATE_POP_GPRS
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
.endm

#endif

#endif
