/*
 * arm64 fault-tolerant user accesses (uaccess.c checks the range first).
 * Each instruction that touches user memory is listed in uaccess_table; a
 * fault there that the generic fault path cannot resolve resumes at
 * ua_fault (uaccess_fixup(), called by arch.c's abort handler), which
 * returns EFAULT.
 */
#define EFAULT_NEG (-11)

	.text
	.global ua_store64
ua_store64:                     /* x0 = user address, x1 = value */
1:	str x1, [x0]
	mov x0, #0
	ret

	.global ua_load64
ua_load64:                      /* x0 = user address, x1 = kernel out */
2:	ldr x2, [x0]
	str x2, [x1]
	mov x0, #0
	ret

	.global ua_copy
ua_copy:                        /* x0 = dst, x1 = src, x2 = bytes */
	cbz x2, 5f
3:	ldrb w3, [x1], #1
4:	strb w3, [x0], #1
	subs x2, x2, #1
	b.ne 3b
5:	mov x0, #0
	ret

	.global ua_fault
ua_fault:
	mov x0, #EFAULT_NEG
	ret

	.section .rodata
	.balign 8
	.global uaccess_table, uaccess_table_end
uaccess_table:
	.quad 1b, 2b, 3b, 4b
uaccess_table_end:
