/** @file page_ht_impl.h
 * Private to the page hash table: the part both designs share (the record,
 * its in-place update, the record caches and the per-CPU operation counts).
 * The design is chosen at build time (`make PAGE_HT=`), and the Makefile
 * compiles exactly one of
 *
 * - page_ht_cht.c (CONFIG_PAGE_HT_CHT, the default): the records are items of
 *   a concurrent hash table; lookups run inside an RCU reader section and take
 *   no lock; a new mapping goes in with cht_insert_unique, so two CPUs
 *   faulting the same page agree on one record;
 * - page_ht_locked.c (CONFIG_PAGE_HT_LOCKED): the previous design, a fixed
 *   chained hash table under one global IRQ spinlock; every lookup takes the
 *   lock.
 *
 * A record keeps its mapping in one 64-bit word (frame | flags), so an update
 * replaces it in place with one atomic exchange: a page never has more than
 * one record (an update inserts nothing, so it cannot resurrect a removed
 * page either), and a lookup copies a whole (frame, flags) pair, old or new,
 * never a mix. The exchange hands each updater exactly the word it replaced,
 * so concurrent updates free every replaced frame exactly once.
 *
 * In both designs, removed records (and frames marked PTE_REC_FREE_FRAME) are
 * freed after a grace period, because a CPU may still be walking the record
 * (CHT) or running on a TLB entry for the frame until the unmapper's shootdown
 * ends.
 *
 * Included by the design's file only, once per kernel: it defines the shared
 * functions and data as static, so that the compiler sees them in the same
 * translation unit as the table's functions (the hot paths inline them, as
 * when both designs were one file). The includer first defines pte_link_t, the
 * record's link into its table.
 */
#ifndef KERN_GENARCH_PAGE_HT_IMPL_H_
#define KERN_GENARCH_PAGE_HT_IMPL_H_

#include <genarch/mm/page_ht.h>
#include <mm/slab.h>
#include <mm/frame.h>
#include <synch/rcu.h>
#include <console/console.h>
#include <print.h>
#include <panic.h>
#include <errno.h>
#include <cpu.h>

/** A mapping record. */
typedef struct pte_rec {
	pte_link_t link;   /**< the design's link (first: the CHT casts to it) */
	uint64_t as_id;
	uintptr_t page;
	/**
	 * The mapping: frame | flags (frames are page aligned, flags below
	 * PAGE_SIZE). Atomics: replaced by page_mapping_update() with an
	 * exchange, read with one relaxed load (the word is self-contained; the
	 * record itself was published by the table's insert).
	 */
	uint64_t word;
} pte_rec_t;

/** A replaced frame waiting for a grace period before it is freed. */
typedef struct {
	rcu_item_t rcu;
	uintptr_t frame;
} frame_rcu_t;

typedef struct {
	uint64_t as_id;
	uintptr_t page;
} pt_key_t;

static slab_cache_t *rec_cache;
static slab_cache_t *frame_rcu_cache;
/**
 * Operation counts (statistics for `page_ht`), one slot per CPU on its own
 * cache line, so that lookups on different CPUs never write a shared line (a
 * global counter made page-hash lookups stop scaling). A thread may migrate
 * between reading its CPU and the add, so a slot is occasionally written by
 * another CPU: the adds are relaxed atomics and every count stays exact.
 * page_ht_get_stats() sums the slots.
 */
typedef struct {
	uint64_t lookups;
	uint64_t inserts;
	uint64_t removes;
} __attribute__((aligned(64))) page_ht_cpu_stats_t;

static page_ht_cpu_stats_t cpu_stats[CONFIG_MAX_CPUS];

#define STAT_INC(field) \
	__atomic_fetch_add(&cpu_stats[CPU->id].field, 1, __ATOMIC_RELAXED)

/** Sums the per-CPU operation counts into @a st. Any context. */
static void stats_sum(page_ht_stats_t *st)
{
	st->lookups = st->inserts = st->removes = 0;
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		st->lookups += __atomic_load_n(&cpu_stats[i].lookups,
		    __ATOMIC_RELAXED);
		st->inserts += __atomic_load_n(&cpu_stats[i].inserts,
		    __ATOMIC_RELAXED);
		st->removes += __atomic_load_n(&cpu_stats[i].removes,
		    __ATOMIC_RELAXED);
	}
}

static inline size_t key_hash_of(uint64_t as_id, uintptr_t page)
{
	/* The CHT mixes the hash; the locked table spreads it by a prime modulus. */
	return (size_t) ((as_id << 36) ^ (page >> 12));
}

static inline uint64_t word_of(const pte_t *pte)
{
	assert((pte->frame & (PAGE_SIZE - 1)) == 0 && pte->flags < PAGE_SIZE);
	return (uint64_t) pte->frame | pte->flags;
}

static inline pte_t pte_of(uint64_t word)
{
	return (pte_t) { .frame = (uintptr_t) (word & ~(uint64_t) (PAGE_SIZE - 1)),
	    .flags = (unsigned) (word & (PAGE_SIZE - 1)) };
}

static inline pte_t rec_pte(pte_rec_t *r)
{
	return pte_of(__atomic_load_n(&r->word, __ATOMIC_RELAXED));
}

static pte_rec_t *rec_alloc(uint64_t as_id, uintptr_t page, const pte_t *pte)
{
	pte_rec_t *r = slab_alloc(rec_cache, SLAB_ATOMIC);
	if (!r)
		return NULL;
	r->as_id = as_id;
	r->page = page;
	r->word = word_of(pte);
	return r;
}

/**
 * Frees a record (and its frame) that no CPU can reach any more. RCU
 * callbacks only (rcu_slab_free()).
 */
static void rec_free(pte_rec_t *r)
{
	pte_t pte = rec_pte(r);
	if (pte.flags & PTE_REC_FREE_FRAME)
		frame_free(pte.frame, 1);
	rcu_slab_free(rec_cache, r);
}

static void frame_rcu_free(rcu_item_t *item)
{
	frame_rcu_t *f = container_of(item, frame_rcu_t, rcu);
	frame_free(f->frame, 1);
	rcu_slab_free(frame_rcu_cache, f);
}

/**
 * Replaces the word of @a r by @a pte. The frame of the replaced word is freed
 * after a grace period if the record owned it (PTE_REC_FREE_FRAME) and the new
 * word does not keep it; @a spare (allocated by the caller) carries it there,
 * or is freed if not needed. Any context; the caller keeps @a r alive (a
 * reader section or the table lock).
 */
static void rec_replace(pte_rec_t *r, const pte_t *pte, frame_rcu_t *spare)
{
	pte_t old = pte_of(__atomic_exchange_n(&r->word, word_of(pte),
	    __ATOMIC_RELAXED));
	if ((old.flags & PTE_REC_FREE_FRAME) && old.frame != pte->frame) {
		spare->frame = old.frame;
		rcu_call(&spare->rcu, frame_rcu_free);
	} else {
		slab_free(frame_rcu_cache, spare);
	}
}

static void caches_init(void)
{
	rec_cache = slab_cache_create("pte_rec", sizeof(pte_rec_t), 0, NULL, NULL, 0);
	frame_rcu_cache = slab_cache_create("pte_frame_rcu", sizeof(frame_rcu_t), 0,
	    NULL, NULL, 0);
	if (!rec_cache || !frame_rcu_cache)
		panic("page_ht: cannot create the record caches");
}

#endif
