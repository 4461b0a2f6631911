/** @file boot.h
 * amd64's boot page tables, defined by boot/multiboot.S (page aligned,
 * 512 entries each) and declared once here for the C files that edit them.
 */
#ifndef KERN_ARCH_BOOT_H_
#define KERN_ARCH_BOOT_H_

#include <typedefs.h>

/** The kernel's top-level page table (PML4), the one every CPU loads. */
extern uint64_t boot_pml4[512];

#endif
