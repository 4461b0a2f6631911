/** @file paging.c
 * 4-level page tables for user address spaces (PML4 -> PDPT -> PD -> PT):
 * the roots. The walk and the freeing are genarch/src/mm/pt4.c.
 */
#include <arch/paging.h>
#include <arch/boot.h>
#include <arch/mm.h>
#include <mm/frame.h>


uintptr_t paging_kernel_root_phys(void)
{
	return KA2PA(boot_pml4);
}

uintptr_t paging_create_root(void)
{
	uintptr_t pa = frame_alloc(1, FRAME_ZERO);
	if (!pa)
		return 0;
	uint64_t *t = PA2KA(pa);
	/* Kernel half: the same lower-level tables as the kernel (shared). */
	for (unsigned i = PT4_USER_SLOTS; i < PT4_ENTRIES; i++)
		t[i] = __atomic_load_n(&boot_pml4[i], __ATOMIC_RELAXED);
	return pa;
}
