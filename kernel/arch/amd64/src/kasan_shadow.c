/** @file kasan_shadow.c
 * amd64: page tables for KASAN's shadow (SANITIZE=kasan only; compiled
 * without instrumentation: it runs before the shadow exists).
 *
 * The shadow of address a is at (a >> 3) + KASAN_SHADOW_OFFSET
 * (0xdffffc0000000000): the kernel image (KERNEL_VMA ...) has its shadow at
 * 0xfffffbfff0000000 (PML4 slot 503), the direct map (PHYS_MAP_BASE ...) at
 * 0xffffec0000000000 (slot 472). Both are mapped with 2 MiB pages into
 * boot_pml4 before any address space copies its kernel half (and before the
 * APs start, which load boot_pml4), from a static pool of page-table pages.
 */
#include <arch/mm.h>
#include <arch/asm.h>
#include <debug/kasan.h>
#include <panic.h>

extern uint64_t boot_pml4[512];

/** Page-table pages for the shadow (PDPTs and PDs); BSP, boot only. */
#define KASAN_PT_POOL 24
static uint64_t pt_pool[KASAN_PT_POOL][512] ALIGNED(4096);
static unsigned pt_used;

static uint64_t *pt_next(uint64_t *entry)
{
	if (*entry & PTE_P)
		return (uint64_t *) ((*entry & PTE_ADDR_MASK) + KERNEL_VMA);
	if (pt_used >= KASAN_PT_POOL)
		panic("KASAN: out of shadow page-table pages");
	uint64_t *t = pt_pool[pt_used++];
	for (unsigned i = 0; i < 512; i++)
		t[i] = 0;
	/* The pool is in the image: its physical address is va - KERNEL_VMA. */
	*entry = ((uintptr_t) t - KERNEL_VMA) | PTE_P | PTE_RW;
	return t;
}

/**
 * Maps [va, va + bytes) to physical [pa, ...) with 2 MiB pages (all three
 * 2 MiB aligned), read-write, not executable, global. BSP, boot, before the
 * APs and the first address space.
 */
void kasan_arch_map_shadow(uintptr_t va, uintptr_t pa, size_t bytes)
{
	for (size_t off = 0; off < bytes; off += LARGE_PAGE_SIZE) {
		uintptr_t a = va + off;
		uint64_t *pdpt = pt_next(&boot_pml4[(a >> 39) & 511]);
		uint64_t *pd = pt_next(&pdpt[(a >> 30) & 511]);
		pd[(a >> 21) & 511] = (pa + off) | PTE_P | PTE_RW | PTE_PS | PTE_G |
		    PTE_NX;
	}
	write_cr3(read_cr3());
}
