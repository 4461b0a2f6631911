/*
 * Accesses to user memory that survive a fault (arch/uaccess.h).
 *
 * Each function is a leaf whose single user access is at a label listed in
 * uaccess_fixup_table together with a fixup address. When the access faults
 * and the fault cannot be resolved (no area, access not permitted, no memory),
 * the page fault handler (uaccess_fixup()) resumes at the fixup instead of
 * panicking; the fixup returns EFAULT to the caller. Nothing is pushed before
 * the access, so the fixup's `ret` returns to the caller as the function would.
 */
#define EFAULT (-11)

/* With SMAP (uaccess_smap = 1, userspace.c) the access runs with RFLAGS.AC set. */
.macro UACCESS_BEGIN
	testb $1, uaccess_smap(%rip)
	jz 1f
	stac
1:
.endm
.macro UACCESS_END
	testb $1, uaccess_smap(%rip)
	jz 1f
	clac
1:
.endm

	.text
	.code64

/* int uaccess_store64(uint64_t __user *uaddr, uint64_t val) */
	.global uaccess_store64
uaccess_store64:
	UACCESS_BEGIN
.Lstore64_insn:
	movq %rsi, (%rdi)
	UACCESS_END
	xorl %eax, %eax
	ret

/* int uaccess_load64(const uint64_t __user *uaddr, uint64_t *out) */
	.global uaccess_load64
uaccess_load64:
	UACCESS_BEGIN
.Lload64_insn:
	movq (%rdi), %rax
	UACCESS_END
	movq %rax, (%rsi)
	xorl %eax, %eax
	ret

/*
 * int uaccess_copy_bytes(void *dst, const void *src, size_t n): rep movsb;
 * either side may be the user one (the C wrappers check the range).
 */
	.global uaccess_copy_bytes
uaccess_copy_bytes:
	movq %rdx, %rcx
	UACCESS_BEGIN
.Lcopy_insn:
	rep movsb
	UACCESS_END
	xorl %eax, %eax
	ret

.Luaccess_efault:
	UACCESS_END
	movl $EFAULT, %eax
	ret

	.section .rodata
	.balign 8
/* Pairs (faulting instruction, fixup); read by uaccess_fixup(). */
	.global uaccess_fixup_table
uaccess_fixup_table:
	.quad .Lstore64_insn, .Luaccess_efault
	.quad .Lload64_insn, .Luaccess_efault
	.quad .Lcopy_insn, .Luaccess_efault
	.global uaccess_fixup_count
uaccess_fixup_count:
	.quad 3
