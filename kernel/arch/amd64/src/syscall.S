/*
 * System call entry (syscall/sysretq) and the first entry into ring 3.
 *
 * syscall: RCX = user RIP, R11 = user RFLAGS; FMASK cleared IF, TF, DF and AC.
 * The entry switches to the kernel GS (swapgs), saves the user stack pointer
 * in the CPU structure, loads the thread's kernel stack (cpu->syscall_kstack,
 * set by the scheduler hook with TSS rsp0) and builds an istate_t exactly like
 * an interrupt from ring 3 would (arch/interrupt.h), so that the fault report
 * and the kill path see one format. syscall_dispatch(istate) leaves the result
 * in istate->rax. The return path uses sysretq with the saved RIP, which is
 * canonical: user areas end one page below USER_SPACE_END (see syscall.h), so
 * a syscall instruction's successor is never the non-canonical boundary.
 */
#include <arch/userspace.h>
#include <arch/istate_asm.h>

/*
 * Switches to the kernel GS and the thread's kernel stack and builds there the
 * istate_t of an entry from ring 3 with code segment \cs and vector \vec.
 */
.macro SYSCALL_ISTATE cs, vec
	swapgs
	movq %rsp, %gs:CPU_OFF_SYSCALL_USTACK
	movq %gs:CPU_OFF_SYSCALL_KSTACK, %rsp
	pushq $GDT_SEL_UDATA              /* ss */
	pushq %gs:CPU_OFF_SYSCALL_USTACK  /* rsp */
	pushq %r11                        /* rflags */
	pushq $\cs                        /* cs */
	pushq %rcx                        /* rip */
	pushq $0                          /* error code */
	pushq $\vec                       /* vector */
	ISTATE_PUSH_GPRS
.endm

	.text
	.code64

	.global syscall_entry
syscall_entry:
	SYSCALL_ISTATE GDT_SEL_UCODE, VECTOR_SYSCALL
	xorl %ebp, %ebp
	sti
	movq %rsp, %rdi
	call syscall_dispatch
	cli
	ISTATE_POP_GPRS
	addq $16, %rsp        /* vector, error code */
	popq %rcx             /* rip */
	addq $8, %rsp         /* cs */
	popq %r11             /* rflags */
	popq %rsp             /* user rsp (ss is dropped) */
	swapgs
	sysretq

/*
 * MSR_CSTAR: `syscall` executed in 32-bit compatibility mode (AMD CPUs and
 * QEMU; Intel CPUs raise #UD instead). The kernel has no 32-bit ABI, and
 * the GDT has no 32-bit user code segment (cpu.c), so ring 3 cannot reach
 * compat mode; this entry is the second line of defence. The CPU left us in ring 0
 * with CS 0x08, the user's RSP and GS base, RCX = the 32-bit return EIP and
 * R11 = RFLAGS (FMASK cleared IF, TF, DF, AC, NT). Like syscall_entry it
 * switches to the kernel GS and the thread's kernel stack and builds an
 * istate_t of a ring-3 entry (CS 0x1b, so istate_from_user() holds), then
 * syscall_compat_dispatch() reports and kills the task; the thread exits
 * there and never comes back.
 */
	.global syscall_compat_entry
syscall_compat_entry:
	SYSCALL_ISTATE GDT_SEL_UCODE32, VECTOR_SYSCALL_COMPAT
	xorl %ebp, %ebp
	movq %rsp, %rdi
	call syscall_compat_dispatch      /* does not return */
	ud2

/* void userspace_enter(uintptr_t rip, uintptr_t rsp, uint64_t arg0, uint64_t arg1) */
	.global userspace_enter
userspace_enter:
	cli
	pushq $GDT_SEL_UDATA
	pushq %rsi
	pushq $0x202          /* IF */
	pushq $GDT_SEL_UCODE
	pushq %rdi
	movq %rdx, %rdi
	movq %rcx, %rsi
	xorl %eax, %eax
	xorl %ebx, %ebx
	xorl %ecx, %ecx
	xorl %edx, %edx
	xorl %ebp, %ebp
	xorl %r8d, %r8d
	xorl %r9d, %r9d
	xorl %r10d, %r10d
	xorl %r11d, %r11d
	xorl %r12d, %r12d
	xorl %r13d, %r13d
	xorl %r14d, %r14d
	xorl %r15d, %r15d
	swapgs
	iretq
