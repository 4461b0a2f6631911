/** @file mm.h
 * amd64 virtual memory layout.
 *
 * - The kernel image is linked at KERNEL_VMA + its physical address (1 MiB), in the
 *   top 2 GiB so that -mcmodel=kernel works.
 * - All physical memory (and the first 4 GiB of physical address space, for MMIO)
 *   is mapped at PHYS_MAP_BASE (the direct map), with 2 MiB pages.
 */
#ifndef KERN_ARCH_MM_H_
#define KERN_ARCH_MM_H_

#include <typedefs.h>

/** e_machine of the user programs the loader accepts (EM_X86_64). */
#define ELF_MACHINE    62

#define PAGE_SIZE      4096UL
#define PAGE_WIDTH     12
#define LARGE_PAGE_SIZE (2UL << 20)

#define KERNEL_VMA     0xffffffff80000000UL
#define PHYS_MAP_BASE  0xffff800000000000UL
/** Largest physical address covered by the direct map (static page directories). */
#define PHYS_MAP_MAX   GiB(64)

/** Physical address to its direct-map kernel address. */
#define PA2KA(pa) ((void *) ((uintptr_t) (pa) + PHYS_MAP_BASE))

/** Kernel address (direct map or kernel image) to physical address. */
static inline uintptr_t KA2PA(const void *ka)
{
	uintptr_t a = (uintptr_t) ka;
	if (a >= KERNEL_VMA)
		return a - KERNEL_VMA;
	return a - PHYS_MAP_BASE;
}

/* Page table entry bits. */
#define PTE_P    (1UL << 0)
#define PTE_RW   (1UL << 1)
#define PTE_US   (1UL << 2)
#define PTE_PWT  (1UL << 3)
#define PTE_PCD  (1UL << 4)
#define PTE_A    (1UL << 5)
#define PTE_D    (1UL << 6)
#define PTE_PS   (1UL << 7)
#define PTE_G    (1UL << 8)
#define PTE_NX   (1UL << 63)
#define PTE_ADDR_MASK 0x000ffffffffff000UL

#endif
