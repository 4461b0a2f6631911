/** @file page_ht.c
 * The global page hash table, keyed by (address space, virtual page).
 *
 * CONFIG_PAGE_HT_CHT: the records are items of a concurrent hash table; lookups
 * run inside an RCU reader section and take no lock. Insertion of a new mapping
 * uses cht_insert_unique, so two CPUs faulting the same page agree on one
 * record.
 *
 * A record keeps its mapping in one 64-bit word (frame | flags), so an update
 * replaces it in place with one atomic exchange: a page never has more than
 * one record (an update inserts nothing, so it cannot resurrect a removed
 * page either), and a lookup copies a whole (frame, flags) pair, old or new,
 * never a mix. The exchange hands each updater exactly the word it replaced,
 * so concurrent updates free every replaced frame exactly once.
 *
 * CONFIG_PAGE_HT_LOCKED: the previous design, a fixed chained hash table under
 * one global IRQ spinlock; every lookup takes the lock.
 *
 * In both, removed records (and frames marked PTE_REC_FREE_FRAME) are freed
 * after a grace period, because a CPU may still be walking the record (CHT) or
 * running on a TLB entry for the frame until the unmapper's shootdown ends.
 */
#include <genarch/mm/page_ht.h>
#include <mm/slab.h>
#include <mm/frame.h>
#include <synch/rcu.h>
#include <synch/spinlock.h>
#include <adt/cht.h>
#include <adt/list.h>
#include <console/console.h>
#include <print.h>
#include <panic.h>
#include <errno.h>
#include <cpu.h>

/** A mapping record. */
typedef struct pte_rec {
#ifdef CONFIG_PAGE_HT_CHT
	cht_link_t link;
#else
	link_t link;
	rcu_item_t rcu;
#endif
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

/** Frees a record (and its frame) that no CPU can reach any more. */
static void rec_free(pte_rec_t *r)
{
	pte_t pte = rec_pte(r);
	if (pte.flags & PTE_REC_FREE_FRAME)
		frame_free(pte.frame, 1);
	slab_free(rec_cache, r);
}

static void frame_rcu_free(rcu_item_t *item)
{
	frame_rcu_t *f = container_of(item, frame_rcu_t, rcu);
	frame_free(f->frame, 1);
	slab_free(frame_rcu_cache, f);
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

#ifdef CONFIG_PAGE_HT_CHT

const char *const page_ht_backend = "cht";

static cht_t table;

static size_t op_hash(const cht_link_t *item)
{
	const pte_rec_t *r = (const pte_rec_t *) item;
	return key_hash_of(r->as_id, r->page);
}

static size_t op_key_hash(void *key)
{
	pt_key_t *k = key;
	return key_hash_of(k->as_id, k->page);
}

static bool op_equal(const cht_link_t *a, const cht_link_t *b)
{
	const pte_rec_t *ra = (const pte_rec_t *) a;
	const pte_rec_t *rb = (const pte_rec_t *) b;
	return ra->as_id == rb->as_id && ra->page == rb->page;
}

static bool op_key_equal(void *key, const cht_link_t *item)
{
	pt_key_t *k = key;
	const pte_rec_t *r = (const pte_rec_t *) item;
	return r->as_id == k->as_id && r->page == k->page;
}

static void op_remove_callback(cht_link_t *item)
{
	rec_free((pte_rec_t *) item);
}

static const cht_ops_t ops = {
	.hash = op_hash,
	.key_hash = op_key_hash,
	.equal = op_equal,
	.key_equal = op_key_equal,
	.remove_callback = op_remove_callback,
};

/**
 * Buckets the page hash table never shrinks below (8 KiB of bucket heads).
 * Mapped pages come and go by the thousand (a task's exit, a fault-and-
 * unmap loop: chtbench 22 swings between 0 and 1024 records every few
 * milliseconds); with a floor of 64 every such swing grew and shrank the
 * table, and each resize rewrote the bucket array and the count lines
 * under the faulting CPUs (3-9 of 62-78 transfers per fault at -smp 4,
 * docs/SHARING.md). Below the floor the table only grows.
 */
#define PAGE_HT_MIN_BUCKETS 1024

void page_ht_init(void)
{
	caches_init();
	if (cht_create_named(&table, "page_ht", PAGE_HT_MIN_BUCKETS,
	    PAGE_HT_MIN_BUCKETS, 1, &ops) != CHT_OK)
		panic("page_ht: cannot create the page hash table");
}

int page_mapping_insert(uint64_t as_id, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as_id, page, pte);
	if (!r)
		return ENOMEM;
	cht_link_t *dup = NULL;
	rcu_read_lock();
	bool ok = cht_insert_unique_fast(&table, &r->link, &dup, &ops);
	if (!ok && existing)
		*existing = rec_pte((pte_rec_t *) dup);
	rcu_read_unlock();
	if (!ok) {
		slab_free(rec_cache, r);
		return EEXIST;
	}
	STAT_INC(inserts);
	return EOK;
}

int page_mapping_remove(uint64_t as_id, uintptr_t page)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	rcu_read_lock();
	size_t n = cht_remove_key_fast(&table, &key, &ops);
	rcu_read_unlock();
	if (!n)
		return ENOENT;
	STAT_INC(removes);
	return EOK;
}

bool page_mapping_find(uint64_t as_id, uintptr_t page, pte_t *out)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	STAT_INC(lookups);
	rcu_read_lock();
	cht_link_t *l = cht_find_fast(&table, &key, &ops);
	if (l)
		*out = rec_pte((pte_rec_t *) l);
	rcu_read_unlock();
	return l != NULL;
}

size_t page_mapping_count(uint64_t as_id, uintptr_t page)
{
	pt_key_t key = { .as_id = as_id, .page = page };
	size_t n = 0;
	rcu_read_lock();
	for (cht_link_t *l = cht_find_fast(&table, &key, &ops); l;
	    l = cht_find_next(&table, &key, l))
		n++;
	rcu_read_unlock();
	return n;
}

int page_mapping_update(uint64_t as_id, uintptr_t page, const pte_t *pte)
{
	pt_key_t key = { .as_id = as_id, .page = page };
#ifdef CONFIG_BROKEN_MAPPING2
	/*
	 * Negative control (make BROKEN=mapping2): the update before fbcbc48.
	 * It finds the old record, inserts a new one and removes the old, so
	 * two updates leave two records, an update racing a remove brings the
	 * page back, and clearing the old record's PTE_REC_FREE_FRAME while
	 * lookups copy it tears mappings (test mapping2 must fail).
	 */
	pte_rec_t *nr = rec_alloc(as_id, page, pte);
	if (!nr)
		return ENOMEM;
	rcu_read_lock();
	cht_link_t *old = cht_find_fast(&table, &key, &ops);
	if (!old) {
		rcu_read_unlock();
		slab_free(rec_cache, nr);
		return ENOENT;
	}
	cht_insert(&table, &nr->link);
	pte_rec_t *o = (pte_rec_t *) old;
	/* The new record owns the frame when the update keeps it. */
	if (rec_pte(o).frame == pte->frame)
		__atomic_and_fetch(&o->word, ~(uint64_t) PTE_REC_FREE_FRAME,
		    __ATOMIC_RELAXED);
	(void) cht_remove_item(&table, old);
	rcu_read_unlock();
	return EOK;
#endif
	frame_rcu_t *spare = slab_alloc(frame_rcu_cache, SLAB_ATOMIC);
	if (!spare)
		return ENOMEM;
	rcu_read_lock();
	cht_link_t *l = cht_find_fast(&table, &key, &ops);
	if (l)
		rec_replace((pte_rec_t *) l, pte, spare);
	rcu_read_unlock();
	if (!l) {
		slab_free(frame_rcu_cache, spare);
		return ENOENT;
	}
	return EOK;
}

void page_ht_get_stats(page_ht_stats_t *st)
{
	cht_stats_t cs;
	cht_get_stats(&table, &cs);
	st->backend = page_ht_backend;
	st->entries = cs.items;
	st->buckets = cs.buckets;
	st->grows = cs.grows;
	st->shrinks = cs.shrinks;
	st->resizing = cs.resizing;
	stats_sum(st);
}

#elif defined(CONFIG_PAGE_HT_LOCKED)

const char *const page_ht_backend = "locked";

/** Buckets of the fixed table (a prime, as the old kernel hash table used). */
#define LOCKED_BUCKETS 1021

/** The table; every field and every chain is protected by table_lock. */
static list_t buckets[LOCKED_BUCKETS];
static size_t entries;
static irq_spinlock_t table_lock = IRQ_SPINLOCK_INITIALIZER("page_ht");

static inline size_t bucket_index(uint64_t as_id, uintptr_t page)
{
	return key_hash_of(as_id, page) % LOCKED_BUCKETS;
}

static pte_rec_t *find_locked(uint64_t as_id, uintptr_t page)
{
	assert(irq_spinlock_locked_by_me(&table_lock));
	list_t *b = &buckets[bucket_index(as_id, page)];
	list_foreach(b, l) {
		pte_rec_t *r = list_get_instance(l, pte_rec_t, link);
		if (r->as_id == as_id && r->page == page)
			return r;
	}
	return NULL;
}

static void rec_rcu_free(rcu_item_t *item)
{
	rec_free(container_of(item, pte_rec_t, rcu));
}

void page_ht_init(void)
{
	caches_init();
	for (size_t i = 0; i < LOCKED_BUCKETS; i++)
		list_initialize(&buckets[i]);
}

int page_mapping_insert(uint64_t as_id, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as_id, page, pte);
	if (!r)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o) {
		if (existing)
			*existing = rec_pte(o);
		irq_spinlock_unlock(&table_lock, true);
		slab_free(rec_cache, r);
		return EEXIST;
	}
	list_append(&r->link, &buckets[bucket_index(as_id, page)]);
	entries++;
	irq_spinlock_unlock(&table_lock, true);
	STAT_INC(inserts);
	return EOK;
}

int page_mapping_remove(uint64_t as_id, uintptr_t page)
{
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o) {
		list_remove(&o->link);
		entries--;
	}
	irq_spinlock_unlock(&table_lock, true);
	if (!o)
		return ENOENT;
	rcu_call(&o->rcu, rec_rcu_free);
	STAT_INC(removes);
	return EOK;
}

bool page_mapping_find(uint64_t as_id, uintptr_t page, pte_t *out)
{
	STAT_INC(lookups);
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o)
		*out = rec_pte(o);
	irq_spinlock_unlock(&table_lock, true);
	return o != NULL;
}

size_t page_mapping_count(uint64_t as_id, uintptr_t page)
{
	size_t n = 0;
	irq_spinlock_lock(&table_lock, true);
	list_t *b = &buckets[bucket_index(as_id, page)];
	list_foreach(b, l) {
		pte_rec_t *r = list_get_instance(l, pte_rec_t, link);
		if (r->as_id == as_id && r->page == page)
			n++;
	}
	irq_spinlock_unlock(&table_lock, true);
	return n;
}

int page_mapping_update(uint64_t as_id, uintptr_t page, const pte_t *pte)
{
	frame_rcu_t *spare = slab_alloc(frame_rcu_cache, SLAB_ATOMIC);
	if (!spare)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as_id, page);
	if (o)
		rec_replace(o, pte, spare);
	irq_spinlock_unlock(&table_lock, true);
	if (!o) {
		slab_free(frame_rcu_cache, spare);
		return ENOENT;
	}
	return EOK;
}

void page_ht_get_stats(page_ht_stats_t *st)
{
	irq_spinlock_lock(&table_lock, true);
	st->entries = entries;
	irq_spinlock_unlock(&table_lock, true);
	st->backend = page_ht_backend;
	st->buckets = LOCKED_BUCKETS;
	st->grows = 0;
	st->shrinks = 0;
	st->resizing = false;
	stats_sum(st);
}

#else
#error "Define CONFIG_PAGE_HT_CHT or CONFIG_PAGE_HT_LOCKED (make PAGE_HT=...)"
#endif
