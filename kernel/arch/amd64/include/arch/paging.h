/** @file paging.h
 * amd64 4-level page tables of user address spaces.
 */
#ifndef KERN_ARCH_PAGING_H_
#define KERN_ARCH_PAGING_H_

#include <typedefs.h>

/** Physical address of the kernel's top-level page table (boot_pml4). */
uintptr_t paging_kernel_pml4_phys(void);
/**
 * Allocates a top-level table for a user address space: the user half empty,
 * the kernel half shared with the kernel's table. @return its physical address
 * or 0 on ENOMEM.
 */
uintptr_t paging_create_pml4(void);
/** Frees the user half's page tables and the top-level table itself. */
void paging_destroy_pml4(uintptr_t pml4_phys);
/**
 * Returns the address of the last-level entry for @a va, allocating missing
 * intermediate tables when @a alloc (NULL if missing/ENOMEM). Caller holds the
 * address space's page table lock.
 */
uint64_t *paging_walk(uintptr_t pml4_phys, uintptr_t va, bool alloc);

#endif
