/** @file paging.h
 * amd64 4-level page tables of user address spaces.
 */
#ifndef KERN_ARCH_PAGING_H_
#define KERN_ARCH_PAGING_H_

#include <typedefs.h>
#include <arch/mm.h>
#include <arch/asm.h>
#include <mm/tlb_stats.h>

/*
 * The entry bits of the shared 4-level walk (genarch/mm/pt4.h; its defaults:
 * 4 KiB pages, 512 entries, the PML4's lower half for user space, the upper
 * half the kernel's, shared). A new intermediate table is present, writable
 * and user: permissions are decided at the last level.
 */
#define PT4_PRESENT     PTE_P
#define PT4_TABLE_FLAGS (PTE_P | PTE_RW | PTE_US)
#define PT4_ADDR_MASK   PTE_ADDR_MASK

/**
 * After a store that made an entry valid (genarch/mm/pt4.h): nothing on
 * amd64. The x86 page walker reads the tables coherently with this CPU's
 * and other CPUs' stores (a not-present entry is not cached in the TLB, so
 * at worst a walk that raced the store faults again and finds the entry).
 */
static inline void paging_entry_installed(void)
{
}

#include <genarch/mm/pt4.h>

/**
 * amd64's TLB invalidation is local: invlpg and a CR3 reload act on this
 * CPU's TLB only, so the generic shootdown (mm/as.c, tlb_shootdown())
 * cross-calls every CPU running the address space and each runs
 * tlb_invalidate_pages_local(). See arch.h, "TLB invalidation".
 */
#define ARCH_TLB_BROADCAST 0

/**
 * Above this many pages an invalidation reloads CR3 (flushes the whole TLB
 * but for global entries) instead of one invlpg per page, as Linux's
 * tlb_single_page_flush_ceiling.
 */
#define TLB_INVLPG_MAX 32

/**
 * tlb_invalidate_pages_local() also drops every paging-structure-cache entry
 * (the walk caches of the non-last levels) of this CPU, whatever the
 * address: invlpg does (Intel SDM vol. 3, 4.10.4.1, no PCIDs are used here),
 * and so does a CR3 load; a CPU that does not run the address space loads
 * CR3 before it walks it again. So one round of the generic shootdown of
 * any one page makes freed page tables unreachable for the hardware
 * (mm/as_prune.c, tlb_shootdown_tables()).
 */
#define PAGING_LOCAL_DROPS_WALKS 1

/**
 * Invalidates this CPU's TLB entries of the user pages [@a base, @a base +
 * @a pages * PAGE_SIZE): invlpg each, or a CR3 reload above TLB_INVLPG_MAX
 * pages. Interrupts disabled or inside a cross-call.
 */
static inline void tlb_invalidate_pages_local(uintptr_t base, size_t pages)
{
	if (pages > TLB_INVLPG_MAX) {
		write_cr3(read_cr3());
		tlb_count(TLB_ALL_OPS, 1);
		return;
	}
	for (size_t i = 0; i < pages; i++)
		invlpg(base + i * PAGE_SIZE);
	tlb_count(TLB_PAGE_OPS, pages);
}

/**
 * Hardware flags of a present user page (user, read; writable and
 * executable as asked): the last-level entry is frame | these.
 */
static inline uint64_t paging_user_flags(bool writable, bool exec)
{
	uint64_t f = PTE_P | PTE_US;
	if (writable)
		f |= PTE_RW;
	if (!exec)
		f |= PTE_NX;
	return f;
}

/** Physical address of the kernel's top-level page table (boot_pml4). */
uintptr_t paging_kernel_root_phys(void);
/**
 * Allocates a top-level table for a user address space: the user half empty,
 * the kernel half shared with the kernel's table. @return its physical address
 * or 0 on ENOMEM.
 */
uintptr_t paging_create_root(void);

#endif
