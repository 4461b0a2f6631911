/*
 * AP start-up trampoline. The BSP copies [ap_trampoline_start, ap_trampoline_end)
 * to physical AP_TRAMPOLINE (0x8000), fills the data slots at its end and sends
 * INIT-SIPI-SIPI with vector 0x08. The AP starts in real mode at 0x0800:0000,
 * enters protected mode, then long mode with the kernel's page tables (which still
 * identity-map the low 4 GiB while APs start), loads its stack and jumps to
 * ap_entry64(cpu) in the higher half.
 */
#define AP_TRAMPOLINE 0x8000
#define T(x) (AP_TRAMPOLINE + (x) - ap_trampoline_start)

	.section .rodata
	.global ap_trampoline_start
	.global ap_trampoline_end
	.global ap_tramp_cr3
	.global ap_tramp_stack
	.global ap_tramp_entry
	.global ap_tramp_cpu

	.code16
	.align 16
ap_trampoline_start:
	cli
	cld
	movw %cs, %ax
	movw %ax, %ds
	lgdtl (ap_gdtr - ap_trampoline_start)
	movl %cr0, %eax
	orl $1, %eax
	movl %eax, %cr0
	ljmpl $0x18, $T(ap_pm32)

	.code32
ap_pm32:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	/* PAE + PGE */
	movl %cr4, %eax
	orl $((1 << 5) | (1 << 7)), %eax
	movl %eax, %cr4
	movl T(ap_tramp_cr3), %eax
	movl %eax, %cr3
	/* EFER.LME | EFER.NXE */
	movl $0xc0000080, %ecx
	rdmsr
	orl $((1 << 8) | (1 << 11)), %eax
	wrmsr
	movl %cr0, %eax
	orl $((1 << 31) | (1 << 16)), %eax
	movl %eax, %cr0
	ljmp $0x08, $T(ap_lm64)

	.code64
ap_lm64:
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	movq T(ap_tramp_stack), %rsp
	movq T(ap_tramp_cpu), %rdi
	movq T(ap_tramp_entry), %rax
	xorq %rbp, %rbp
	jmp *%rax

	.align 16
ap_gdt:
	.quad 0
	.quad 0x00af9a000000ffff   /* 0x08: 64-bit code */
	.quad 0x00cf92000000ffff   /* 0x10: data */
	.quad 0x00cf9a000000ffff   /* 0x18: 32-bit code */
ap_gdt_end:
ap_gdtr:
	.word ap_gdt_end - ap_gdt - 1
	.long T(ap_gdt)

	.align 8
ap_tramp_cr3:
	.quad 0
ap_tramp_stack:
	.quad 0
ap_tramp_entry:
	.quad 0
ap_tramp_cpu:
	.quad 0
ap_trampoline_end:
