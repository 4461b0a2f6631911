/** @file kasan_shadow.c
 * amd64: page tables for KASAN's shadow (SANITIZE=kasan only; compiled
 * without instrumentation: it runs before the shadow exists).
 *
 * The shadow of address a is at (a >> 3) + KASAN_SHADOW_OFFSET
 * (0xdffffc0000000000), so the kernel half [0xffff800000000000, 2^64) has
 * its shadow in [0xffffec0000000000, 0xfffffc0000000000) (PML4 slots 472 to
 * 503). GCC's inline checks load the shadow of every kernel address the
 * code touches, so the whole range is mapped from the start
 * (kasan_arch_early_shadow()): every slot points to one shared read-only
 * PDPT whose entries all point to one PD, whose entries all point to one
 * page table, whose entries all map one zero page ("all accessible";
 * Linux's early shadow works the same way). The real shadow (the kernel
 * image, then the direct map up to the top of RAM) replaces parts of it
 * with writable 2 MiB pages (kasan_arch_map_shadow()), un-sharing the
 * tables on its path. All before any address space copies the kernel half
 * of boot_pml4 and before the APs start.
 */
#include <arch/mm.h>
#include <arch/asm.h>
#include <arch/boot.h>
#include <debug/kasan.h>
#include <panic.h>


/** The shared early-shadow tables and page (read-only mappings). */
static uint64_t zero_page[512] ALIGNED(4096);
static uint64_t zero_pt[512] ALIGNED(4096);
static uint64_t zero_pd[512] ALIGNED(4096);
static uint64_t zero_pdpt[512] ALIGNED(4096);

/** Page-table pages for the real shadow (PDPTs and PDs); BSP, boot only. */
#define KASAN_PT_POOL 24
static uint64_t pt_pool[KASAN_PT_POOL][512] ALIGNED(4096);
static unsigned pt_used;

static inline uintptr_t img_pa(const void *p)
{
	/* Static tables live in the image: physical = virtual - KERNEL_VMA. */
	return (uintptr_t) p - KERNEL_VMA;
}

#define SHADOW_START 0xffffec0000000000UL
#define SHADOW_END   0xfffffc0000000000UL

void kasan_arch_early_shadow(void)
{
	for (unsigned i = 0; i < 512; i++) {
		zero_page[i] = 0;
		zero_pt[i] = img_pa(zero_page) | PTE_P | PTE_NX;
		zero_pd[i] = img_pa(zero_pt) | PTE_P;
		zero_pdpt[i] = img_pa(zero_pd) | PTE_P;
	}
	for (unsigned s = (SHADOW_START >> 39) & 511; s < ((SHADOW_END >> 39) & 511);
	    s++)
		boot_pml4[s] = img_pa(zero_pdpt) | PTE_P;
	write_cr3(read_cr3());
}

/**
 * The table that @a entry points to, made private and writable: a new one
 * from the pool when @a entry is empty or points to the shared @a zero table
 * (copying its entries, which point to the next shared level).
 */
static uint64_t *pt_private(uint64_t *entry, const uint64_t *zero)
{
	if ((*entry & PTE_P) && (*entry & PTE_ADDR_MASK) != img_pa(zero))
		return (uint64_t *) ((*entry & PTE_ADDR_MASK) + KERNEL_VMA);
	if (pt_used >= KASAN_PT_POOL)
		panic("KASAN: out of shadow page-table pages");
	uint64_t *t = pt_pool[pt_used++];
	for (unsigned i = 0; i < 512; i++)
		t[i] = zero[i];
	*entry = img_pa(t) | PTE_P | PTE_RW;
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
		uint64_t *pdpt = pt_private(&boot_pml4[(a >> 39) & 511], zero_pdpt);
		uint64_t *pd = pt_private(&pdpt[(a >> 30) & 511], zero_pd);
		pd[(a >> 21) & 511] = (pa + off) | PTE_P | PTE_RW | PTE_PS | PTE_G |
		    PTE_NX;
	}
	write_cr3(read_cr3());
}
