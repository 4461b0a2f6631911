/** @file kasan_shadow.c
 * arm64: translation tables for KASAN's shadow (SANITIZE=kasan only;
 * compiled without instrumentation: it runs before the shadow exists).
 *
 * The shadow of address a is at (a >> 3) + KASAN_SHADOW_OFFSET. TTBR1 (48
 * bits, T1SZ = 16) translates the upper half [0xffff000000000000, 2^64),
 * whose shadow is 2^45 bytes (32 TiB). The offset puts that shadow right
 * below the direct map: its end, the shadow of 2^64, is PHYS_MAP_BASE, so
 * KASAN_SHADOW_OFFSET = PHYS_MAP_BASE - 2^61 = 0xdfff800000000000 (the
 * Makefile's value; checked below) and the shadow is
 * [0xffff600000000000, 0xffff800000000000), level-0 slots 192 to 255 of
 * boot_l0_hi. The direct map (slot 256) holds the image, the stacks and
 * the heap, so its shadow, [0xffff700000000000, ...), covers them all. A
 * lower-half (user or NULL) address has its shadow in neither half
 * (0xdfff...): an instrumented access to it takes a translation fault, as
 * amd64's non-canonical shadow address takes a #GP.
 *
 * GCC's inline checks load the shadow of every kernel address the code
 * touches, so the whole range is mapped from the start
 * (kasan_arch_early_shadow()): slots 192-255 point to one shared level-1
 * table whose entries all point to one level-2 table, whose entries all
 * point to one level-3 table, whose entries all map one zero page read-only
 * ("all accessible"). The real shadow (the image, then the direct map's
 * RAM) replaces parts of it with writable 2 MiB blocks
 * (kasan_arch_map_shadow()), un-sharing the tables on its path.
 *
 * Every CPU uses boot_l0_hi as its TTBR1 (start.S), so what the BSP maps
 * here is every CPU's; all of it runs on the BSP before the APs start,
 * with interrupts masked and no instrumented code in between.
 *
 * Changing a valid descriptor (the zero tables replaced by private copies,
 * a block of the image's shadow replaced by the direct map's) follows
 * break-before-make (Arm ARM, "TLB maintenance requirements and the TLB
 * conflict abort"): the entry is made invalid, the invalidation completed
 * for every walker and TLB (DSB ISHST; TLBI VMALLE1IS; DSB ISH; ISB), then
 * the new entry written. Nothing reads the shadow in the window (this file
 * and kasan.c are not instrumented).
 */
#include <arch/mm.h>
#include <arch/asm.h>
#include <debug/kasan.h>
#include <panic.h>

_Static_assert(KASAN_SHADOW_OFFSET == PHYS_MAP_BASE - (1UL << 61),
    "arm64's shadow must end at the direct map (Makefile KASAN_SHADOW_OFFSET)");

extern uint64_t boot_l0_hi[512];

/** The shared early-shadow tables and page (read-only mappings). */
static uint64_t zero_page[512] ALIGNED(4096);
static uint64_t zero_l3[512] ALIGNED(4096);
static uint64_t zero_l2[512] ALIGNED(4096);
static uint64_t zero_l1[512] ALIGNED(4096);

/** Table pages for the real shadow (level 1 and 2); BSP, boot only. */
#define KASAN_PT_POOL 24
static uint64_t pt_pool[KASAN_PT_POOL][512] ALIGNED(4096);
static unsigned pt_used;

#define SHADOW_START 0xffff600000000000UL
#define SHADOW_END   PHYS_MAP_BASE

/** A table descriptor: permissions are decided at the last level. */
#define DESC_TABLE (PTE_VALID | PTE_TABLE)
/** The zero page: Normal, read-only at EL1, no EL0 access, never executable. */
#define DESC_ZERO_PAGE (PTE_VALID | PTE_TABLE | PTE_ATTR(MAIR_IDX_NORMAL) | \
	PTE_SH_INNER | PTE_AF | PTE_AP_RO | PTE_PXN | PTE_UXN)
/** A 2 MiB block of real shadow: Normal, read-write at EL1, never executable. */
#define DESC_BLOCK (PTE_VALID | PTE_ATTR(MAIR_IDX_NORMAL) | PTE_SH_INNER | \
	PTE_AF | PTE_PXN | PTE_UXN)

static inline uintptr_t img_pa(const void *p)
{
	return KA2PA(p);
}

/**
 * The translation-table stores so far are complete for the walkers (DSB
 * ISHST: a store is seen by a table walk only after a DSB), and every TLB
 * entry of EL1&0 is dropped on every CPU (TLBI VMALLE1IS, complete at the
 * DSB ISH); ISB: later instructions are translated with the new tables.
 */
static void tables_sync(void)
{
	asm volatile ("dsb ishst\n\ttlbi vmalle1is\n\tdsb ish\n\tisb" ::: "memory");
}

/** Writes descriptor @a v to @a e, break-before-make if @a e held another valid one. */
static void desc_set(uint64_t *e, uint64_t v)
{
	if ((*e & PTE_VALID) && *e != v) {
		__atomic_store_n(e, 0, __ATOMIC_RELAXED);
		tables_sync();
	}
	/* Single-copy atomic: a walker sees the old or the new descriptor. */
	__atomic_store_n(e, v, __ATOMIC_RELAXED);
}

void kasan_arch_early_shadow(void)
{
	for (unsigned i = 0; i < 512; i++) {
		zero_page[i] = 0;
		zero_l3[i] = img_pa(zero_page) | DESC_ZERO_PAGE;
		zero_l2[i] = img_pa(zero_l3) | DESC_TABLE;
		zero_l1[i] = img_pa(zero_l2) | DESC_TABLE;
	}
	for (unsigned s = (SHADOW_START >> 39) & 511; s < ((SHADOW_END - 1) >> 39 & 511) + 1;
	    s++)
		desc_set(&boot_l0_hi[s], img_pa(zero_l1) | DESC_TABLE);
	tables_sync();
}

/**
 * The table that @a entry points to, made private and writable: a new one
 * from the pool when @a entry is empty or points to the shared @a zero table
 * (copying its entries, which point to the next shared level).
 */
static uint64_t *pt_private(uint64_t *entry, const uint64_t *zero)
{
	if ((*entry & PTE_VALID) && (*entry & PTE_TABLE) &&
	    (*entry & PTE_ADDR_MASK) != img_pa(zero))
		return (uint64_t *) PA2KA(*entry & PTE_ADDR_MASK);
	if (pt_used >= KASAN_PT_POOL)
		panic("KASAN: out of shadow translation-table pages");
	uint64_t *t = pt_pool[pt_used++];
	for (unsigned i = 0; i < 512; i++)
		t[i] = zero[i];
	/* The copy's entries are complete before the table is linked. */
	asm volatile ("dsb ishst" ::: "memory");
	desc_set(entry, img_pa(t) | DESC_TABLE);
	return t;
}

/**
 * Maps [va, va + bytes) to physical [pa, ...) with 2 MiB blocks (all three
 * 2 MiB aligned), read-write, never executable. BSP, boot, interrupts
 * masked, before the APs start.
 */
void kasan_arch_map_shadow(uintptr_t va, uintptr_t pa, size_t bytes)
{
	if (va < SHADOW_START || va + bytes > SHADOW_END)
		panic("KASAN: shadow %#lx (+%#lx) outside the shadow region",
		    (unsigned long) va, (unsigned long) bytes);
	for (size_t off = 0; off < bytes; off += LARGE_PAGE_SIZE) {
		uintptr_t a = va + off;
		uint64_t *l1 = pt_private(&boot_l0_hi[(a >> 39) & 511], zero_l1);
		uint64_t *l2 = pt_private(&l1[(a >> 30) & 511], zero_l2);
		desc_set(&l2[(a >> 21) & 511], (pa + off) | DESC_BLOCK);
	}
	tables_sync();
}
