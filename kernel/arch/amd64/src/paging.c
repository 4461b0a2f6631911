/** @file paging.c
 * 4-level page tables for user address spaces (PML4 -> PDPT -> PD -> PT).
 */
#include <arch/paging.h>
#include <arch/mm.h>
#include <mm/frame.h>
#include <lib/str.h>

extern uint64_t boot_pml4[512];

/** First PML4 slot of the kernel half. */
#define KERNEL_PML4_FIRST 256

uintptr_t paging_kernel_pml4_phys(void)
{
	return KA2PA(boot_pml4);
}

uintptr_t paging_create_pml4(void)
{
	uintptr_t pa = frame_alloc(1, FRAME_ZERO);
	if (!pa)
		return 0;
	uint64_t *t = PA2KA(pa);
	/* Kernel half: the same lower-level tables as the kernel (shared). */
	for (unsigned i = KERNEL_PML4_FIRST; i < 512; i++)
		t[i] = __atomic_load_n(&boot_pml4[i], __ATOMIC_RELAXED);
	return pa;
}

static void free_level(uint64_t entry, int level)
{
	if (!(entry & PTE_P))
		return;
	uintptr_t pa = entry & PTE_ADDR_MASK;
	if (level > 1) {
		uint64_t *t = PA2KA(pa);
		for (unsigned i = 0; i < 512; i++)
			free_level(t[i], level - 1);
	}
	/* Level 1 entries map data frames owned by the page hash table records. */
	if (level > 0)
		frame_free(pa, 1);
}

void paging_destroy_pml4(uintptr_t pml4_phys)
{
	uint64_t *t = PA2KA(pml4_phys);
	for (unsigned i = 0; i < KERNEL_PML4_FIRST; i++) {
		/* PDPT (level 3) -> PD (2) -> PT (1) -> frames (0, not freed here). */
		free_level(t[i], 3);
		t[i] = 0;
	}
	frame_free(pml4_phys, 1);
}

uint64_t *paging_walk(uintptr_t pml4_phys, uintptr_t va, bool alloc)
{
	uint64_t *t = PA2KA(pml4_phys);
	for (int shift = 39; shift > 12; shift -= 9) {
		unsigned idx = (va >> shift) & 511;
		/* Acquire: pairs with the installer's release (a zeroed table). */
		uint64_t e = __atomic_load_n(&t[idx], __ATOMIC_ACQUIRE);
		if (!(e & PTE_P)) {
			if (!alloc)
				return NULL;
			uintptr_t pa = frame_alloc(1, FRAME_ZERO);
			if (!pa)
				return NULL;
			/* Permissions are decided at the last level. */
			uint64_t mine = pa | PTE_P | PTE_RW | PTE_US;
#ifdef CONFIG_BROKEN_PTWALK1
			/*
			 * BROKEN=ptwalk1 (negative control): the defect afe5735
			 * fixed, a store that overwrites a table another CPU
			 * installed since the load above (its entry is orphaned;
			 * ptwalk1long must fail).
			 */
			__atomic_store_n(&t[idx], mine, __ATOMIC_RELEASE);
			e = mine;
#else
			if (__atomic_compare_exchange_n(&t[idx], &e, mine, false,
			    __ATOMIC_RELEASE, __ATOMIC_ACQUIRE)) {
				e = mine;
			} else {
				/* Another CPU installed one first: use it. */
				frame_free(pa, 1);
			}
#endif
		}
		t = PA2KA(e & PTE_ADDR_MASK);
	}
	return &t[(va >> 12) & 511];
}

uint64_t *paging_next_leaf(uintptr_t pml4_phys, uintptr_t *vap, uintptr_t end)
{
	uintptr_t va = *vap;
	while (va < end) {
		uint64_t *t = PA2KA(pml4_phys);
		int shift;
		for (shift = 39; shift > 12; shift -= 9) {
			/* Acquire: pairs with paging_walk()'s release install. */
			uint64_t e = __atomic_load_n(&t[(va >> shift) & 511],
			    __ATOMIC_ACQUIRE);
			if (!(e & PTE_P))
				break;
			t = PA2KA(e & PTE_ADDR_MASK);
		}
		if (shift == 12) {
			*vap = va;
			return t;
		}
		/* The entry at this level is absent: skip what it would map. */
		uintptr_t step = 1UL << shift;
		uintptr_t next = (va & ~(step - 1)) + step;
		if (next <= va)
			break;
		va = next;
	}
	*vap = end;
	return NULL;
}
