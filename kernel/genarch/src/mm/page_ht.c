/** @file page_ht.c
 * The global page hash table, keyed by (address space, virtual page).
 *
 * CONFIG_PAGE_HT_CHT: the records are items of a concurrent hash table; lookups
 * run inside an RCU reader section and take no lock. Insertion of a new mapping
 * uses cht_insert_unique, so two CPUs faulting the same page agree on one
 * record. An update inserts the new record (a duplicate for a moment) and then
 * removes the old one, so a concurrent lookup always finds one of them.
 *
 * CONFIG_PAGE_HT_LOCKED: the previous design, a fixed chained hash table under
 * one global IRQ spinlock; every lookup takes the lock.
 *
 * In both, removed records (and frames marked PTE_REC_FREE_FRAME) are freed
 * after a grace period, because a CPU may still be walking the record (CHT) or
 * running on a TLB entry for the frame until the unmapper's shootdown ends.
 */
#include <genarch/mm/page_ht.h>
#include <mm/as.h>
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

/** A mapping record. */
typedef struct pte_rec {
#ifdef CONFIG_PAGE_HT_CHT
	cht_link_t link;
#else
	link_t link;
	rcu_item_t rcu;
#endif
	struct as *as;
	uintptr_t page;
	pte_t pte;
} pte_rec_t;

typedef struct {
	struct as *as;
	uintptr_t page;
} pt_key_t;

static slab_cache_t *rec_cache;
/** Statistics; atomics (relaxed). */
static uint64_t st_lookups;
static uint64_t st_inserts;
static uint64_t st_removes;

static inline size_t key_hash_of(struct as *as, uintptr_t page)
{
	/* The CHT mixes the hash; the locked table spreads it by a prime modulus. */
	return (size_t) ((as->id << 36) ^ (page >> 12));
}

static pte_rec_t *rec_alloc(struct as *as, uintptr_t page, const pte_t *pte)
{
	pte_rec_t *r = slab_alloc(rec_cache, SLAB_ATOMIC);
	if (!r)
		return NULL;
	r->as = as;
	r->page = page;
	r->pte = *pte;
	return r;
}

/** Frees a record (and its frame) that no CPU can reach any more. */
static void rec_free(pte_rec_t *r)
{
	if (r->pte.flags & PTE_REC_FREE_FRAME)
		frame_free(r->pte.frame, 1);
	slab_free(rec_cache, r);
}

#ifdef CONFIG_PAGE_HT_CHT

const char *const page_ht_backend = "cht";

static cht_t table;

static size_t op_hash(const cht_link_t *item)
{
	const pte_rec_t *r = (const pte_rec_t *) item;
	return key_hash_of(r->as, r->page);
}

static size_t op_key_hash(void *key)
{
	pt_key_t *k = key;
	return key_hash_of(k->as, k->page);
}

static bool op_equal(const cht_link_t *a, const cht_link_t *b)
{
	const pte_rec_t *ra = (const pte_rec_t *) a;
	const pte_rec_t *rb = (const pte_rec_t *) b;
	return ra->as == rb->as && ra->page == rb->page;
}

static bool op_key_equal(void *key, const cht_link_t *item)
{
	pt_key_t *k = key;
	const pte_rec_t *r = (const pte_rec_t *) item;
	return r->as == k->as && r->page == k->page;
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

void page_ht_init(void)
{
	rec_cache = slab_cache_create("pte_rec", sizeof(pte_rec_t), 0, NULL, NULL, 0);
	if (!rec_cache || cht_create_named(&table, "page_ht", 64, 64, 4,
	    &ops) != CHT_OK)
		panic("page_ht: cannot create the page hash table");
}

int page_mapping_insert(struct as *as, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as, page, pte);
	if (!r)
		return ENOMEM;
	cht_link_t *dup = NULL;
	rcu_read_lock();
	bool ok = cht_insert_unique(&table, &r->link, &dup);
	if (!ok && existing)
		*existing = ((pte_rec_t *) dup)->pte;
	rcu_read_unlock();
	if (!ok) {
		slab_free(rec_cache, r);
		return EEXIST;
	}
	__atomic_fetch_add(&st_inserts, 1, __ATOMIC_RELAXED);
	return EOK;
}

int page_mapping_remove(struct as *as, uintptr_t page)
{
	pt_key_t key = { .as = as, .page = page };
	rcu_read_lock();
	size_t n = cht_remove_key(&table, &key);
	rcu_read_unlock();
	if (!n)
		return ENOENT;
	__atomic_fetch_add(&st_removes, 1, __ATOMIC_RELAXED);
	return EOK;
}

bool page_mapping_find(struct as *as, uintptr_t page, pte_t *out)
{
	pt_key_t key = { .as = as, .page = page };
	__atomic_fetch_add(&st_lookups, 1, __ATOMIC_RELAXED);
	rcu_read_lock();
	cht_link_t *l = cht_find(&table, &key);
	if (l)
		*out = ((pte_rec_t *) l)->pte;
	rcu_read_unlock();
	return l != NULL;
}

int page_mapping_update(struct as *as, uintptr_t page, const pte_t *pte)
{
	pt_key_t key = { .as = as, .page = page };
	pte_rec_t *r = rec_alloc(as, page, pte);
	if (!r)
		return ENOMEM;
	rcu_read_lock();
	cht_link_t *old = cht_find(&table, &key);
	if (!old) {
		rcu_read_unlock();
		slab_free(rec_cache, r);
		return ENOENT;
	}
	/*
	 * The old record must not take its frame along when the update keeps
	 * the frame: the new record owns the frame from now on.
	 */
	pte_rec_t *o = (pte_rec_t *) old;
	cht_insert(&table, &r->link);
	if (o->pte.frame == pte->frame)
		__atomic_and_fetch(&o->pte.flags, ~PTE_REC_FREE_FRAME, __ATOMIC_RELAXED);
	(void) cht_remove_item(&table, old);
	rcu_read_unlock();
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
	st->lookups = __atomic_load_n(&st_lookups, __ATOMIC_RELAXED);
	st->inserts = __atomic_load_n(&st_inserts, __ATOMIC_RELAXED);
	st->removes = __atomic_load_n(&st_removes, __ATOMIC_RELAXED);
}

#elif defined(CONFIG_PAGE_HT_LOCKED)

const char *const page_ht_backend = "locked";

/** Buckets of the fixed table (a prime, as the old kernel hash table used). */
#define LOCKED_BUCKETS 1021

/** The table; every field and every chain is protected by table_lock. */
static list_t buckets[LOCKED_BUCKETS];
static size_t entries;
static irq_spinlock_t table_lock = IRQ_SPINLOCK_INITIALIZER("page_ht");

static inline size_t bucket_index(struct as *as, uintptr_t page)
{
	return key_hash_of(as, page) % LOCKED_BUCKETS;
}

static pte_rec_t *find_locked(struct as *as, uintptr_t page)
{
	list_t *b = &buckets[bucket_index(as, page)];
	for (link_t *l = list_first(b); l; l = list_next(l, b)) {
		pte_rec_t *r = list_get_instance(l, pte_rec_t, link);
		if (r->as == as && r->page == page)
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
	rec_cache = slab_cache_create("pte_rec", sizeof(pte_rec_t), 0, NULL, NULL, 0);
	if (!rec_cache)
		panic("page_ht: cannot create the record cache");
	for (size_t i = 0; i < LOCKED_BUCKETS; i++)
		list_initialize(&buckets[i]);
}

int page_mapping_insert(struct as *as, uintptr_t page, const pte_t *pte,
    pte_t *existing)
{
	pte_rec_t *r = rec_alloc(as, page, pte);
	if (!r)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as, page);
	if (o) {
		if (existing)
			*existing = o->pte;
		irq_spinlock_unlock(&table_lock, true);
		slab_free(rec_cache, r);
		return EEXIST;
	}
	list_append(&r->link, &buckets[bucket_index(as, page)]);
	entries++;
	irq_spinlock_unlock(&table_lock, true);
	__atomic_fetch_add(&st_inserts, 1, __ATOMIC_RELAXED);
	return EOK;
}

int page_mapping_remove(struct as *as, uintptr_t page)
{
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as, page);
	if (o) {
		list_remove(&o->link);
		entries--;
	}
	irq_spinlock_unlock(&table_lock, true);
	if (!o)
		return ENOENT;
	rcu_call(&o->rcu, rec_rcu_free);
	__atomic_fetch_add(&st_removes, 1, __ATOMIC_RELAXED);
	return EOK;
}

bool page_mapping_find(struct as *as, uintptr_t page, pte_t *out)
{
	__atomic_fetch_add(&st_lookups, 1, __ATOMIC_RELAXED);
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as, page);
	if (o)
		*out = o->pte;
	irq_spinlock_unlock(&table_lock, true);
	return o != NULL;
}

int page_mapping_update(struct as *as, uintptr_t page, const pte_t *pte)
{
	pte_rec_t *r = rec_alloc(as, page, pte);
	if (!r)
		return ENOMEM;
	irq_spinlock_lock(&table_lock, true);
	pte_rec_t *o = find_locked(as, page);
	if (!o) {
		irq_spinlock_unlock(&table_lock, true);
		slab_free(rec_cache, r);
		return ENOENT;
	}
	list_remove(&o->link);
	list_append(&r->link, &buckets[bucket_index(as, page)]);
	if (o->pte.frame == pte->frame)
		o->pte.flags &= ~PTE_REC_FREE_FRAME;
	irq_spinlock_unlock(&table_lock, true);
	rcu_call(&o->rcu, rec_rcu_free);
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
	st->lookups = __atomic_load_n(&st_lookups, __ATOMIC_RELAXED);
	st->inserts = __atomic_load_n(&st_inserts, __ATOMIC_RELAXED);
	st->removes = __atomic_load_n(&st_removes, __ATOMIC_RELAXED);
}

#else
#error "Define CONFIG_PAGE_HT_CHT or CONFIG_PAGE_HT_LOCKED (make PAGE_HT=...)"
#endif

void page_ht_print(void)
{
	page_ht_stats_t st;
	page_ht_get_stats(&st);
	size_t load10 = st.buckets ? st.entries * 10 / st.buckets : 0;
	console_lock();
	printf("page hash table: backend %s\n", st.backend);
	printf("entries: %zu\n", st.entries);
	printf("buckets: %zu\n", st.buckets);
	printf("load: %zu.%zu entries per bucket\n", load10 / 10, load10 % 10);
	printf("resizes: %lu grows, %lu shrinks\n", st.grows, st.shrinks);
	printf("operations: %lu lookups, %lu inserts, %lu removes\n", st.lookups,
	    st.inserts, st.removes);
	console_unlock();
}
