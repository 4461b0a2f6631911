/*
 * arm64 entry (QEMU virt, -kernel ELF): CPU 0 enters _start at EL1 with the
 * MMU off, at the physical address the ELF names. It zeroes .bss, builds the
 * boot translation tables (one level-1 table of 1 GiB blocks covering
 * physical 0-64 GiB, reached from TTBR0 at VA 0 (identity, for the switch)
 * and from TTBR1 at PHYS_MAP_BASE (the direct map, where the kernel is
 * linked)), turns the MMU on and continues in the direct map on the boot
 * stack: main_bsp(dtb, 0). Secondary CPUs enter ap_start from PSCI CPU_ON
 * (context id: their cpus[] index) and do the same with the tables built.
 *
 * The identity map is needed only from the MMU switch until the branch to
 * the direct map: right after it each CPU loads TTBR0 with the empty table
 * (drop_identity), so a NULL or other low pointer faults on every CPU from
 * then on, whether or not it ever loads a user address space. The tables
 * themselves stay (boot_l0_lo, boot_l0_hi, boot_l1 in .bss, never freed):
 * a CPU started later by PSCI walks them again from its own MMU switch.
 */
/* Values of arch/mm.h (C only), repeated: */

#define KVMA 0xffff800000000000

/* MAIR_EL1: attr 0 Device-nGnRnE (0x00), attr 1 Normal WB RW-allocate (0xff). */
#define MAIR_VALUE 0xff00
/*
 * TCR_EL1: T0SZ = T1SZ = 16 (48-bit halves), 4 KiB granules (TG0 0, TG1 2),
 * inner shareable, write-back write-allocate table walks, IPS 40 bits.
 */
#define TCR_VALUE ((16 << 0) | (1 << 8) | (1 << 10) | (3 << 12) | \
	(16 << 16) | (1 << 24) | (1 << 26) | (3 << 28) | (2 << 30) | (2 << 32))
/*
 * SCTLR_EL1: RES1 bits, M (MMU), C (data cache), I (instruction cache),
 * nTWE (bit 18: EL0 may execute WFE, a spin-wait hint, as on Linux; WFI
 * stays trapped, nTWI clear: a privileged wait, like x86's hlt). Clear:
 * UMA, UCI, DZE, UCT (EL0's DAIF, cache maintenance, DC ZVA and CTR_EL0
 * trap), SA0 (no SP alignment check at EL0), A.
 */
#define SCTLR_VALUE 0x30d41805

/*
 * Level-1 block descriptors: valid block, AF, attribute index; UXN (bit 54)
 * on both: an EL0 instruction fetch is governed by UXN alone, not by AP[1]
 * (EL1-only data access), so without it EL0 could execute the kernel's
 * image and all of RAM through the direct map (`attack jump-kernel` did:
 * it ran the kernel's first instruction at EL0). PXN (bit 53) on devices.
 */
#define BLOCK_DEVICE ((1 << 0) | (1 << 10) | (0 << 2) | (1 << 53) | (1 << 54))
#define BLOCK_NORMAL ((1 << 0) | (1 << 10) | (1 << 2) | (3 << 8) | (1 << 54))

	.section .boot.text, "ax"
	.global _start
_start:
	msr daifset, #0xf
	mov x19, x0                 /* device tree (0 from QEMU for an ELF) */
	mov x20, #0                 /* the boot CPU */

	/* Zero .bss (physical addresses; 16-byte aligned stores: MMU off). */
	ldr x0, =kbss_start
	ldr x1, =kbss_end
	ldr x2, =KVMA
	sub x0, x0, x2
	sub x1, x1, x2
1:	cmp x0, x1
	b.hs 2f
	stp xzr, xzr, [x0], #16
	b 1b
2:
	/* boot_l1[i] = i GiB: the first GiB (devices) Device, the rest Normal. */
	ldr x0, =boot_l1
	sub x0, x0, x2
	mov x3, #0
	ldr x4, =BLOCK_DEVICE
	str x4, [x0]
	ldr x4, =BLOCK_NORMAL
	mov x3, #1
3:	lsl x5, x3, #30
	orr x5, x5, x4
	str x5, [x0, x3, lsl #3]
	add x3, x3, #1
	cmp x3, #64
	b.lo 3b
	/* TTBR0 root entry 0 and TTBR1 root entry 256 -> boot_l1. */
	orr x5, x0, #3
	ldr x1, =boot_l0_lo
	sub x1, x1, x2
	str x5, [x1]
	ldr x1, =boot_l0_hi
	sub x1, x1, x2
	str x5, [x1, #256 * 8]
	/* The table stores reach memory before the walker reads them. */
	dsb ish
	b mmu_on

	.global ap_start
ap_start:
	msr daifset, #0xf
	mov x19, x0                 /* cpus[] index */
	mov x20, #1                 /* a secondary CPU */
	ldr x2, =KVMA
mmu_on:
	ldr x0, =MAIR_VALUE
	msr mair_el1, x0
	ldr x0, =TCR_VALUE
	msr tcr_el1, x0
	ldr x0, =boot_l0_lo
	sub x0, x0, x2
	msr ttbr0_el1, x0
	ldr x0, =boot_l0_hi
	sub x0, x0, x2
	msr ttbr1_el1, x0
	isb
	tlbi vmalle1
	dsb nsh
	isb
	ldr x0, =SCTLR_VALUE
	msr sctlr_el1, x0
	isb
	/* Now in both halves: continue in the direct map. */
	cbnz x20, 4f
	ldr x0, =high_bsp
	br x0
4:	ldr x0, =high_ap
	br x0

	.text
/*
 * Loads this CPU's TTBR0 with paging_empty_root (paging.c) and drops every
 * translation the identity map left in its TLB. Runs in the direct map (no
 * instruction of it is fetched through TTBR0). Only this CPU's TTBR0 and TLB
 * change: the other CPUs' are their own, and boot_l0_lo stays for the CPUs
 * that PSCI starts later. Clobbers x0, x1.
 *
 * No DSB before the MSR: no table store has to reach the walker first (the
 * empty table was zeroed with .bss before the MMU went on).
 * - ISB after the MSR: the TTBR0 write is a context-changing operation that
 *   later instructions see only after a context synchronization event;
 *   without it the walker could still use boot_l0_lo after the TLBI (a
 *   speculative walk refilling an identity entry that nothing would drop).
 * - TLBI VMALLE1: this CPU's TLB entries of EL1&0 (identity ones included;
 *   the direct map's are refetched as needed).
 * - DSB NSH: a TLBI is complete only at a following DSB; no later memory
 *   access may be performed before the invalidation completes (a
 *   non-shareable one suffices: the TLBI was for this CPU only).
 * - ISB: instructions after it are fetched and translated again, so none
 *   that was fetched early runs with a translation from before the TLBI.
 */
drop_identity:
	ldr x0, =paging_empty_root
	ldr x1, =KVMA
	sub x0, x0, x1
	msr ttbr0_el1, x0
	isb
	tlbi vmalle1
	dsb nsh
	isb
	ret

high_bsp:
	bl drop_identity
	ldr x0, =boot_stack_top
	mov sp, x0
	msr sp_el0, xzr             /* THREAD = NULL */
	mov x18, xzr                /* A-RCU reader count (arch/rcu_arch.h) */
	ldr x0, =exception_vectors
	msr vbar_el1, x0
	isb
	mov x29, #0
#ifdef CONFIG_KASAN
	/* The shadow (early zero shadow, the image's) before the first
	 * instrumented function (kasan_shadow.c). */
	bl kasan_early_init
#endif
	mov x0, x19
	mov x1, #0
	bl main_bsp
5:	wfi
	b 5b

high_ap:
	bl drop_identity
	ldr x0, =ap_boot_sp
	ldr x0, [x0]
	mov sp, x0
	msr sp_el0, xzr
	mov x18, xzr
	ldr x0, =exception_vectors
	msr vbar_el1, x0
	isb
	mov x0, x19
	mov x29, #0
	bl ap_entry_index
6:	wfi
	b 6b

	.bss
	.balign 4096
	.global boot_l0_lo, boot_l0_hi, boot_l1
boot_l0_lo:
	.skip 4096
boot_l0_hi:
	.skip 4096
boot_l1:
	.skip 4096
	.balign 16
	.global boot_stack_top
boot_stack:
#ifdef CONFIG_KASAN
	.skip 32768	/* KASAN: larger frames (KERNEL_STACK_SIZE) */
#else
	.skip 16384
#endif
boot_stack_top:
