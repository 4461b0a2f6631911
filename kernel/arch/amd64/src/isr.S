/*
 * Interrupt entry stubs. Each vector pushes an error code (0 where the CPU does
 * not push one) and its number, then the common path saves the general purpose
 * registers into an istate_t (see arch/interrupt.h) and calls
 * interrupt_dispatch(istate). The stack stays 16-byte aligned at the call:
 * 5 CPU words + 2 stub words + 15 registers = 22 words.
 *
 * GS: an entry from ring 3 runs swapgs (the kernel's GS base holds the CPU
 * structure), and the exit swaps back. The exceptions that can hit any
 * instruction -- #DB (1), NMI (2), #DF (8) and #MC (18), as Linux's
 * "paranoid" entries -- may also arrive in ring 0 in the few instructions of
 * the syscall entry and exit that run with the user GS base (or, for #DF,
 * after a kernel bug at such a point); for them the GS base MSR decides
 * (kernel bases are in the upper half; a user GS base is always 0: ring 3
 * has neither wrgsbase nor a descriptor with another base). NMI, #DF and #MC
 * also run on their own IST stacks (cpu.c), so a broken kernel stack still
 * ends in a readable panic. %rbx (callee-saved) remembers whether this
 * entry swapped. With SMAP every entry also clears RFLAGS.AC (user code may
 * set it; a kernel uaccess runs with it set), as Linux's entries do.
 */
#include <arch/istate_asm.h>

	.text
	.code64

.macro ISR_NOERR vec
	.align 16
isr_\vec:
	pushq $0
	pushq $\vec
	jmp isr_common
.endm

.macro ISR_ERR vec
	.align 16
isr_\vec:
	pushq $\vec
	jmp isr_common
.endm

isr_common:
	cld
	ISTATE_PUSH_GPRS
	xorl %ebx, %ebx
	testb $3, 144(%rsp)        /* saved CS: from ring 3? */
	jnz 1f
	movq 120(%rsp), %rax       /* ring 0: #DB, NMI, #DF, #MC check the GS base */
	cmpq $1, %rax
	je 4f
	cmpq $2, %rax
	je 4f
	cmpq $8, %rax
	je 4f
	cmpq $18, %rax
	jne 2f
4:	movl $0xc0000101, %ecx     /* MSR_GS_BASE */
	rdmsr
	testl $0x80000000, %edx
	jnz 2f
1:	swapgs
	movl $1, %ebx
	/*
	 * Every entry clears RFLAGS.AC (with SMAP): user mode may have set
	 * it, and an interrupt in the kernel may arrive inside a uaccess
	 * window (stac): the CPU clears neither on delivery, and the handler
	 * must not run with user access allowed. iretq restores the
	 * interrupted context's AC.
	 */
2:	testb $1, uaccess_smap(%rip)
	jz 5f
	clac
5:	movq %rsp, %rdi
	call interrupt_dispatch
	testl %ebx, %ebx
	jz 3f
	cli
	swapgs
3:
	ISTATE_POP_GPRS
	addq $16, %rsp
	iretq

/* Vectors with a CPU-pushed error code: 8, 10-14, 17, 21, 29, 30. */
.altmacro
.macro ISR_ANY vec
	.if (\vec == 8) || (\vec >= 10 && \vec <= 14) || (\vec == 17) || (\vec == 21) || (\vec == 29) || (\vec == 30)
		ISR_ERR \vec
	.else
		ISR_NOERR \vec
	.endif
.endm

.set i, 0
.rept 256
	ISR_ANY %i
	.set i, i + 1
.endr

.macro ISR_ADDR vec
	.quad isr_\vec
.endm

	.section .rodata
	.align 8
	.global isr_table
isr_table:
.set i, 0
.rept 256
	ISR_ADDR %i
	.set i, i + 1
.endr
