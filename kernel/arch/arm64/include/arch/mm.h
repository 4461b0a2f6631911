/** @file mm.h
 * arm64 virtual memory layout (4 KiB granule, 48-bit virtual addresses).
 *
 * - TTBR1 (the upper half) maps all physical memory at PHYS_MAP_BASE (the
 *   direct map, 1 GiB blocks; the first GiB, QEMU virt's devices, as Device
 *   memory). The kernel image runs inside it: KERNEL_VMA == PHYS_MAP_BASE,
 *   linked at PHYS_MAP_BASE + its load address (_link.ld).
 * - TTBR0 (the lower half) holds the user address space, or an empty table.
 */
#ifndef KERN_ARCH_MM_H_
#define KERN_ARCH_MM_H_

#include <typedefs.h>

/** e_machine of the user programs the loader accepts (EM_AARCH64). */
#define ELF_MACHINE    183

#define PAGE_SIZE      4096UL
#define PAGE_WIDTH     12
#define LARGE_PAGE_SIZE (2UL << 20)

#define PHYS_MAP_BASE  0xffff800000000000UL
#define KERNEL_VMA     PHYS_MAP_BASE
/** Largest physical address covered by the direct map. */
#define PHYS_MAP_MAX   GiB(64)

/** Physical address to its direct-map kernel address. */
#define PA2KA(pa) ((void *) ((uintptr_t) (pa) + PHYS_MAP_BASE))

/** Kernel address (direct map, which holds the image too) to physical. */
static inline uintptr_t KA2PA(const void *ka)
{
	return (uintptr_t) ka - PHYS_MAP_BASE;
}

/* Stage 1 translation table descriptor bits (VMSAv8-64, 4 KiB granule). */
#define PTE_VALID     (1UL << 0)
#define PTE_TABLE     (1UL << 1)   /**< table (levels 0-2) or page (level 3) */
#define PTE_ATTR(i)   ((uint64_t) (i) << 2)  /**< MAIR_EL1 index */
#define PTE_AP_EL0    (1UL << 6)   /**< AP[1]: EL0 access */
#define PTE_AP_RO     (1UL << 7)   /**< AP[2]: read-only */
#define PTE_SH_INNER  (3UL << 8)
#define PTE_AF        (1UL << 10)
#define PTE_NG        (1UL << 11)
#define PTE_PXN       (1UL << 53)
#define PTE_UXN       (1UL << 54)
#define PTE_ADDR_MASK 0x0000fffffffff000UL

/** MAIR_EL1 attribute indices (start.S programs MAIR_EL1 to match). */
#define MAIR_IDX_DEVICE 0
#define MAIR_IDX_NORMAL 1

/* QEMU virt's devices (the memory map of QEMU's virt board). */
#define VIRT_GICD_PHYS   0x08000000UL
#define VIRT_GICC_PHYS   0x08010000UL
#define VIRT_UART_PHYS   0x09000000UL
#define VIRT_RAM_PHYS    0x40000000UL
/** PL011 interrupt: SPI 1. */
#define VIRT_UART_INTID  33

#endif
