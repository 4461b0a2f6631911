/** @file paging.c
 * arm64 user page tables (TTBR0): four levels of 512 entries (level 0 ->
 * 1 -> 2 -> 3), 4 KiB pages, the amd64 functions' shape. The kernel lives
 * in TTBR1: a user root has no kernel half to share. The walk and the
 * freeing are genarch/src/mm/pt4.c.
 *
 * A table entry is published with a release store after the new table was
 * zeroed, as on amd64. The hardware walker is not ordered by a release store
 * on arm64: paging_entry_installed() (arch/paging.h), a DSB ISHST after every
 * store that makes an entry valid, completes it for the walkers before the
 * faulting access is retried.
 */
#include <arch/paging.h>
#include <arch/mm.h>
#include <mm/frame.h>

/*
 * The lower half of a CPU with no user address space: empty. Read-only (all
 * zero in .bss). start.S loads it into TTBR0 right after the jump to the
 * direct map, dropping the boot identity map (boot_l0_lo) on every CPU.
 */
uint64_t paging_empty_root[512] ALIGNED(4096);

uintptr_t paging_kernel_root_phys(void)
{
	return KA2PA(paging_empty_root);
}

uintptr_t paging_create_root(void)
{
	uintptr_t pa = frame_alloc(1, FRAME_ZERO);
	if (!pa)
		return 0;
	return pa;
}
