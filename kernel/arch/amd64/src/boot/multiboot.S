/*
 * Multiboot (v1) entry: 32-bit protected mode -> long mode -> higher half.
 *
 * The loader (QEMU -kernel or GRUB) enters at multiboot_entry in 32-bit protected
 * mode with paging off, EAX = multiboot magic and EBX = physical address of the
 * multiboot information. We build boot page tables that map
 *   - 0..4 GiB identity (needed until the jump to the higher half and for the AP
 *     trampoline; removed once every CPU is up),
 *   - 0..4 GiB at PHYS_MAP_BASE (the direct map; extended in C above 4 GiB),
 *   - 0..1 GiB at KERNEL_VMA (the kernel image),
 * with 2 MiB pages, enable PAE + long mode + paging and jump to kernel_start64.
 */

#define MB_MAGIC 0x1badb002
/* Page-align modules, want memory map, header has the address fields. */
#define MB_FLAGS ((1 << 0) | (1 << 1) | (1 << 16))

#define KERNEL_VMA 0xffffffff80000000
#define PHYS(x) ((x) - KERNEL_VMA)

#define PTE_P  0x1
#define PTE_RW 0x2
#define PTE_PWT 0x8
#define PTE_PCD 0x10
#define PTE_PS 0x80

	.section .multiboot, "a"
	.align 4
multiboot_header:
	.long MB_MAGIC
	.long MB_FLAGS
	.long -(MB_MAGIC + MB_FLAGS)
	.long multiboot_header          /* header_addr (physical: .boot runs at VMA = LMA) */
	.long kernel_phys_start         /* load_addr */
	.long kernel_load_end_phys      /* load_end_addr */
	.long kernel_end_phys           /* bss_end_addr */
	.long multiboot_entry           /* entry_addr */

	.section .boot.text, "ax"
	.code32
	.global multiboot_entry
multiboot_entry:
	cli
	cld
	movl $PHYS(boot_stack_top), %esp
	movl %eax, PHYS(boot_mb_magic)
	movl %ebx, PHYS(boot_mb_info)

	/* Long mode supported? CPUID 0x80000001 EDX bit 29. */
	movl $0x80000000, %eax
	cpuid
	cmpl $0x80000001, %eax
	jb no_long_mode
	movl $0x80000001, %eax
	cpuid
	testl $(1 << 29), %edx
	jz no_long_mode

	/* Zero the boot page tables (the loader zeroes .bss, but do not rely on it). */
	movl $PHYS(boot_page_tables_start), %edi
	movl $PHYS(boot_page_tables_end), %ecx
	subl %edi, %ecx
	shrl $2, %ecx
	xorl %eax, %eax
	rep stosl

	/* PML4[0] and PML4[256] -> pdpt_low (identity and direct map). */
	movl $PHYS(boot_pdpt_low), %eax
	orl $(PTE_P | PTE_RW), %eax
	movl %eax, PHYS(boot_pml4)
	movl %eax, PHYS(boot_pml4) + 256 * 8
	/* PML4[511] -> pdpt_high. */
	movl $PHYS(boot_pdpt_high), %eax
	orl $(PTE_P | PTE_RW), %eax
	movl %eax, PHYS(boot_pml4) + 511 * 8

	/* pdpt_low[0..3] -> boot_pd[0..3]; pdpt_high[510] -> boot_pd[0]. */
	movl $PHYS(boot_pd), %eax
	orl $(PTE_P | PTE_RW), %eax
	movl %eax, PHYS(boot_pdpt_low)
	movl %eax, PHYS(boot_pdpt_high) + 510 * 8
	addl $4096, %eax
	movl %eax, PHYS(boot_pdpt_low) + 8
	addl $4096, %eax
	movl %eax, PHYS(boot_pdpt_low) + 16
	addl $4096, %eax
	movl %eax, PHYS(boot_pdpt_low) + 24

	/* boot_pd: 2048 entries of 2 MiB covering 0..4 GiB. */
	movl $PHYS(boot_pd), %edi
	xorl %ecx, %ecx
1:
	movl %ecx, %eax
	shll $21, %eax
	orl $(PTE_P | PTE_RW | PTE_PS), %eax
	/* 0xfe000000 and above: local APIC, IOAPIC, firmware; uncached. */
	cmpl $(0xfe000000 >> 21), %ecx
	jb 2f
	orl $(PTE_PCD | PTE_PWT), %eax
2:
	movl %eax, (%edi, %ecx, 8)
	movl $0, 4(%edi, %ecx, 8)
	incl %ecx
	cmpl $2048, %ecx
	jb 1b

	/* PAE (bit 5) and PGE (bit 7). */
	movl %cr4, %eax
	orl $((1 << 5) | (1 << 7)), %eax
	movl %eax, %cr4

	movl $PHYS(boot_pml4), %eax
	movl %eax, %cr3

	/* EFER: LME (bit 8), NXE (bit 11). */
	movl $0xc0000080, %ecx
	rdmsr
	orl $((1 << 8) | (1 << 11)), %eax
	wrmsr

	/* Paging (31), write protect (16), protected mode (0). */
	movl %cr0, %eax
	orl $((1 << 31) | (1 << 16) | 1), %eax
	movl %eax, %cr0

	lgdt boot_gdtr
	ljmp $0x08, $long_mode_low

no_long_mode:
	/* Tell the serial line and stop. */
	movl $no_lm_msg, %esi
	movw $0x3f8, %dx
3:
	lodsb
	testb %al, %al
	jz 4f
	outb %al, %dx
	jmp 3b
4:
	hlt
	jmp 4b

	.code64
long_mode_low:
	movabsq $kernel_start64, %rax
	jmp *%rax

	.section .boot.data, "aw"
	.align 16
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff   /* 0x08: 64-bit kernel code */
	.quad 0x00cf92000000ffff   /* 0x10: kernel data */
boot_gdt_end:
boot_gdtr:
	.word boot_gdt_end - boot_gdt - 1
	.long boot_gdt
no_lm_msg:
	.asciz "PANIC: this CPU does not support long mode (x86-64).\r\n"

	.text
	.code64
	.global kernel_start64
kernel_start64:
	/* Now in the higher half; the boot GDT is still addressed physically. */
	movabsq $boot_stack_top, %rsp
	xorq %rbp, %rbp
	movw $0x10, %ax
	movw %ax, %ds
	movw %ax, %es
	movw %ax, %ss
	xorw %ax, %ax
	movw %ax, %fs
	movw %ax, %gs
#ifdef CONFIG_KASAN
	/* The image's shadow before the first instrumented function. */
	call kasan_early_init
#endif
	movl boot_mb_magic, %edi
	movl boot_mb_info, %esi
	call main_bsp
5:
	cli
	hlt
	jmp 5b

	.bss
	.align 4096
	.global boot_pml4
boot_page_tables_start:
boot_pml4:
	.skip 4096
	.global boot_pdpt_low
boot_pdpt_low:
	.skip 4096
	.global boot_pdpt_high
boot_pdpt_high:
	.skip 4096
	.global boot_pd
boot_pd:
	.skip 4 * 4096
boot_page_tables_end:

	.align 16
	.global boot_stack_bottom
boot_stack_bottom:
#ifdef CONFIG_KASAN
	.skip 32768	/* KASAN: larger frames (KERNEL_STACK_SIZE) */
#else
	.skip 16384
#endif
	.global boot_stack_top
boot_stack_top:

	.align 4
	.global boot_mb_magic
boot_mb_magic:
	.long 0
	.global boot_mb_info
boot_mb_info:
	.long 0
