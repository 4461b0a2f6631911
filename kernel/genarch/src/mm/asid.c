/** @file asid.c
 * The TLB-tag allocator of arm64's ASIDs (genarch/mm/asid.h): a generation counter with rollover, the scheme of
 * Linux's arch/arm64/mm/context.c (read, not copied), plus the reuse of a
 * released address space's number within its generation. What a rollover
 * and a release do to the TLB is the architecture's (asid_arch_*() in
 * <arch/asid.h>).
 *
 * State and what protects it:
 *   - asid_gen: the current generation, a multiple of ASID_COUNT (so a
 *     context, generation | ASID, is never 0). Written under asid_lock by a
 *     rollover; read without the lock by the fast path (relaxed: a stale
 *     value only sends it to the slow path, see asid_switch()).
 *   - asid_map, asid_cursor, asid_hint, asid_limit, asid_flush_pending and
 *     every CPU's reserved: asid_lock.
 *   - as_t.tlb_ctx: written under asid_lock (relaxed atomic stores), read
 *     without it by the fast path and by the unmap's invalidation.
 *   - every CPU's active: the context that CPU's TTBR0 holds, kept while
 *     the CPU runs the kernel alone (arch_as_load(NULL) keeps the ASID
 *     field), 0 from a rollover until the CPU's next slow path. Written by
 *     its CPU (a compare-and-swap on the fast path, a store under asid_lock
 *     on the slow one) and by a rollover (an exchange to 0 under
 *     asid_lock). The RMWs of one location are totally ordered, so a fast
 *     path racing a rollover either swaps first (the rollover then sees its
 *     context and keeps that number for its address space) or finds 0 and
 *     takes the lock (and sees the new generation).
 *
 * Invariant: a CPU's TLB holds entries under a number N only for the
 * address space that owns N in the current generation, for one of an
 * earlier generation that this CPU cannot reach any more (a number it will
 * not load before its pending flush), or for the owner of the number its
 * TTBR0 holds, which a rollover keeps for that owner (reserved).
 * A rollover frees every number but the CPUs' active (or, for a CPU
 * that had no slow path since the previous rollover, reserved) ones and
 * marks every CPU flush-pending: each drops its entries of the old
 * generation (asid_arch_rollover_flush(); arm64 `tlbi vmalle1`, local) at
 * its next slow path, before it loads any number of the new generation. A
 * released address space's number goes through asid_arch_release() (arm64:
 * invalidated on every CPU, `tlbi aside1is`) before it is freed
 * (asid_release()), so the next owner finds no entry of the old one in any
 * TLB.
 */
#include <arch/asid.h>
#include <mm/as.h>
#include <arch/asm.h>
#include <mm/tlb_stats.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <debug.h>
#include <lib/str.h>

static uint64_t asid_gen = ASID_COUNT;
static uint64_t asid_map[ASID_COUNT / 64];
static unsigned asid_cursor = 1;
/** The number freed last (asid_release()), tried first; 0: none. */
static unsigned asid_hint;
/** Numbers [1, asid_limit) are handed out (asid_set_limit()). */
static unsigned asid_limit = ASID_COUNT;
/** CPUs that must invalidate their TLB at their next slow path. */
static uint64_t asid_flush_pending;
static irq_spinlock_t asid_lock = IRQ_SPINLOCK_INITIALIZER("asid");

/** One CPU's contexts, a cache line of its own (see the file comment). */
typedef struct {
	uint64_t active;
	uint64_t reserved;
} __attribute__((aligned(CACHE_LINE_SIZE))) asid_cpu_t;

static asid_cpu_t asid_cpu[CONFIG_MAX_CPUS];

static bool gen_current(uint64_t ctx)
{
	return ctx && !((ctx ^ __atomic_load_n(&asid_gen, __ATOMIC_RELAXED)) >>
	    ASID_BITS);
}

static bool map_test(unsigned n)
{
	return asid_map[n / 64] & (1UL << (n % 64));
}

static void map_set(unsigned n)
{
	asid_map[n / 64] |= 1UL << (n % 64);
}

/** A new generation; asid_lock held (the file comment says what it does). */
static void asid_rollover(void)
{
	memset(asid_map, 0, sizeof(asid_map));
	uint64_t all = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		uint64_t a = __atomic_exchange_n(&asid_cpu[i].active, 0,
		    __ATOMIC_RELAXED);
		/*
		 * 0: no slow path on that CPU since the previous rollover, its
		 * TTBR0 still holds the number reserved then.
		 */
		if (!a)
			a = asid_cpu[i].reserved;
		if (a)
			map_set(a & ASID_MASK);
		asid_cpu[i].reserved = a;
		all |= 1UL << i;
	}
	asid_flush_pending = all;
	asid_hint = 0;
	__atomic_store_n(&asid_gen, asid_gen + ASID_COUNT, __ATOMIC_RELAXED);
	tlb_count(TLB_ROLLOVERS, 1);
}

/**
 * True when some CPU kept @a old at the last rollover: that CPU's reserved
 * context becomes @a ctx (the same number, the new generation), since the
 * owner now takes it over. asid_lock held.
 */
static bool update_reserved(uint64_t old, uint64_t ctx)
{
	bool hit = false;
	for (unsigned i = 0; i < cpu_count; i++) {
		if (asid_cpu[i].reserved == old) {
			asid_cpu[i].reserved = ctx;
			hit = true;
		}
	}
	return hit;
}

/** A free number of the current generation, 0 if none; asid_lock held. */
static unsigned find_free(void)
{
	if (asid_hint && asid_hint < asid_limit && !map_test(asid_hint)) {
		unsigned n = asid_hint;
		asid_hint = 0;
		return n;
	}
	for (unsigned k = 0; k + 1 < asid_limit; k++) {
		unsigned n = asid_cursor + k;
		if (n >= asid_limit)
			n -= asid_limit - 1;
		if (!map_test(n)) {
			asid_cursor = n + 1 < asid_limit ? n + 1 : 1;
			return n;
		}
	}
	return 0;
}

/** A context of the current generation for an owner of @a old; asid_lock. */
static uint64_t new_ctx(uint64_t old)
{
	if (old) {
		unsigned n = old & ASID_MASK;
		uint64_t ctx = asid_gen | n;
		/* Kept by a rollover for this owner (its bit is set). */
		if (update_reserved(old, ctx))
			return ctx;
		/* Its old number is free in this generation: keep it. */
		if (n < asid_limit && !map_test(n)) {
			map_set(n);
			return ctx;
		}
	}
	unsigned n = find_free();
	if (!n) {
		asid_rollover();
		n = find_free();
		/* asid_limit > cpu_count + 1: the reserved ones leave one. */
		assert(n);
	}
	map_set(n);
	tlb_count(TLB_ASID_ALLOCS, 1);
	return asid_gen | n;
}

uint64_t asid_switch(as_t *as)
{
	unsigned cpu = CPU->id;
	uint64_t ctx = __atomic_load_n(&as->tlb_ctx, __ATOMIC_RELAXED);
	uint64_t old = __atomic_load_n(&asid_cpu[cpu].active, __ATOMIC_RELAXED);
	/*
	 * Fast path: a context of the current generation, and no rollover
	 * since this CPU's last slow path (active not 0). Relaxed CAS: it
	 * only has to be ordered with the rollover's exchange on the same
	 * location (the file comment); the TTBR0 write after it is ordered
	 * by arch_as_load()'s DSB.
	 */
	if (old && gen_current(ctx) &&
	    __atomic_compare_exchange_n(&asid_cpu[cpu].active, &old, ctx, false,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		return ctx;
	irq_spinlock_lock(&asid_lock, false);
	ctx = __atomic_load_n(&as->tlb_ctx, __ATOMIC_RELAXED);
	if (!gen_current(ctx)) {
		ctx = new_ctx(ctx);
		__atomic_store_n(&as->tlb_ctx, ctx, __ATOMIC_RELAXED);
	}
	if (asid_flush_pending & (1UL << cpu)) {
		asid_flush_pending &= ~(1UL << cpu);
		/*
		 * This CPU's entries of the old generation go before it loads
		 * a number of the new one. Local: every other CPU does its own
		 * at its next slow path.
		 */
		asid_arch_rollover_flush();
	}
	__atomic_store_n(&asid_cpu[cpu].active, ctx, __ATOMIC_RELAXED);
	irq_spinlock_unlock(&asid_lock, false);
	return ctx;
}

void asid_release(as_t *as)
{
	uint64_t ctx = __atomic_load_n(&as->tlb_ctx, __ATOMIC_RELAXED);
	if (!ctx)
		return;
	/* The architecture's invalidation first (<arch/asid.h>). */
	asid_arch_release(ctx);
	irq_spinlock_lock(&asid_lock, true);
	/*
	 * Of an earlier generation: the number is not this owner's any more
	 * (or is kept for a CPU's TTBR0 until the next rollover): not freed.
	 */
	if (gen_current(ctx)) {
		unsigned n = ctx & ASID_MASK;
		asid_map[n / 64] &= ~(1UL << (n % 64));
		asid_hint = n;
	}
	irq_spinlock_unlock(&asid_lock, true);
}

unsigned asid_set_limit(unsigned limit)
{
	if (limit < cpu_count + 2)
		limit = cpu_count + 2;
	if (limit > ASID_COUNT)
		limit = ASID_COUNT;
	irq_spinlock_lock(&asid_lock, true);
	unsigned old = asid_limit;
	asid_limit = limit;
	asid_cursor = 1;
	asid_rollover();
	irq_spinlock_unlock(&asid_lock, true);
	return old;
}

uint64_t asid_generation(void)
{
	return __atomic_load_n(&asid_gen, __ATOMIC_RELAXED) / ASID_COUNT - 1;
}
