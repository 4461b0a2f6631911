/*
 * arm64 fault-tolerant user accesses (uaccess.c checks the range first).
 * Each instruction that touches user memory is listed in uaccess_table; a
 * fault there that the generic fault path cannot resolve resumes at
 * ua_fault (uaccess_fixup(), called by the generic page_fault_finish()), which
 * returns EFAULT.
 *
 * With PAN (uaccess_pan = 1, userspace.c) the accesses run with PSTATE.PAN
 * clear and every exit sets it again (ua_fault too: the abort's ERET
 * restored PAN = 0 from SPSR_EL1). `msr pan, #imm` is encoded by hand
 * (ARMv8.1; UNDEFINED without PAN, hence the test of uaccess_pan).
 */
#define EFAULT_NEG (-11)

.macro UACCESS_BEGIN
	adrp x9, uaccess_pan
	ldrb w9, [x9, :lo12:uaccess_pan]
	cbz w9, 9f
	.inst 0xd500409f        /* msr pan, #0 */
9:
.endm
.macro UACCESS_END
	adrp x9, uaccess_pan
	ldrb w9, [x9, :lo12:uaccess_pan]
	cbz w9, 9f
	.inst 0xd500419f        /* msr pan, #1 */
9:
.endm

	.text
	.global ua_store64
ua_store64:                     /* x0 = user address, x1 = value */
	UACCESS_BEGIN
1:	str x1, [x0]
	UACCESS_END
	mov x0, #0
	ret

	.global ua_load64
ua_load64:                      /* x0 = user address, x1 = kernel out */
	UACCESS_BEGIN
2:	ldr x2, [x0]
	UACCESS_END
	str x2, [x1]
	mov x0, #0
	ret

	.global ua_copy
ua_copy:                        /* x0 = dst, x1 = src, x2 = bytes */
	cbz x2, 5f
	UACCESS_BEGIN
3:	ldrb w3, [x1], #1
4:	strb w3, [x0], #1
	subs x2, x2, #1
	b.ne 3b
	UACCESS_END
5:	mov x0, #0
	ret

	.global ua_fault
ua_fault:
	UACCESS_END
	mov x0, #EFAULT_NEG
	ret

	.section .rodata
	.balign 8
	.global uaccess_table, uaccess_table_end
uaccess_table:
	.quad 1b, 2b, 3b, 4b
uaccess_table_end:
