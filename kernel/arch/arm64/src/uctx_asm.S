/*
 * void uctx_save(struct uctx *u), void uctx_load(struct uctx *u)
 *
 * A user thread's V0-V31, FPCR, FPSR and TPIDR_EL0 (uctx.c has the layout:
 * V registers at 0, FPCR at 512, FPSR at 520, TPIDR_EL0 at 528). Called by
 * the scheduler with interrupts disabled. The kernel is compiled with
 * -mgeneral-regs-only, so these are the only instructions that touch the
 * FP/SIMD registers; x0-x2 are caller-saved.
 */
	.text
	.global uctx_save
uctx_save:
	stp q0, q1, [x0, #0]
	stp q2, q3, [x0, #32]
	stp q4, q5, [x0, #64]
	stp q6, q7, [x0, #96]
	stp q8, q9, [x0, #128]
	stp q10, q11, [x0, #160]
	stp q12, q13, [x0, #192]
	stp q14, q15, [x0, #224]
	stp q16, q17, [x0, #256]
	stp q18, q19, [x0, #288]
	stp q20, q21, [x0, #320]
	stp q22, q23, [x0, #352]
	stp q24, q25, [x0, #384]
	stp q26, q27, [x0, #416]
	stp q28, q29, [x0, #448]
	stp q30, q31, [x0, #480]
	mrs x1, fpcr
	mrs x2, fpsr
	str x1, [x0, #512]
	str x2, [x0, #520]
	mrs x1, tpidr_el0
	str x1, [x0, #528]
	ret

	.global uctx_load
uctx_load:
	ldp q0, q1, [x0, #0]
	ldp q2, q3, [x0, #32]
	ldp q4, q5, [x0, #64]
	ldp q6, q7, [x0, #96]
	ldp q8, q9, [x0, #128]
	ldp q10, q11, [x0, #160]
	ldp q12, q13, [x0, #192]
	ldp q14, q15, [x0, #224]
	ldp q16, q17, [x0, #256]
	ldp q18, q19, [x0, #288]
	ldp q20, q21, [x0, #320]
	ldp q22, q23, [x0, #352]
	ldp q24, q25, [x0, #384]
	ldp q26, q27, [x0, #416]
	ldp q28, q29, [x0, #448]
	ldp q30, q31, [x0, #480]
	ldr x1, [x0, #512]
	ldr x2, [x0, #520]
	msr fpcr, x1
	msr fpsr, x2
	ldr x1, [x0, #528]
	msr tpidr_el0, x1
	ret
