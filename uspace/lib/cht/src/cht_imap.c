/** @file cht_imap.c
 * The inline backend of cht_map_u64_t (the default since libcht 2.1): keys
 * and values in the bucket's own cache line, linear hashing that grows one
 * bucket at a time, lock-free readers under libcht's RCU.
 *
 * Layout. A bucket is one 64-byte, 64-byte-aligned line:
 *
 *   seq (4 bytes) | ctl (4 bytes) | 3 x (key, value) (48 bytes) | ovf (8 bytes)
 *
 * ctl holds the occupancy of the three slots (bits 0-2), the bucket's lock
 * (bit 3), its depth (bits 4-9, see below) and a 16-bit summary of the keys in
 * its overflow chain (bits 16-31: bit (g >> 60) for every key there, so that
 * a lookup that misses in the line reads the chain only when its class is
 * present: about 1 time in 10 instead of every time the chain exists). A
 * full bucket chains overflow buckets of the same layout (ctl: occupancy
 * only) from the allocator's 64-byte class. At the default load of 2.75 keys
 * per bucket (Poisson) 26 % of the buckets have an overflow bucket and 17 %
 * of the keys live in one: a hit costs 1.17-1.24 lines on average, a miss
 * about 1.03, 23-24 bytes of bucket array per key plus 7 of overflow.
 *
 * Growth: linear hashing (Litwin, VLDB 1980). The table has 2^L + s buckets;
 * a key of hash g lives in bucket g mod 2^L, or g mod 2^(L+1) if that is
 * below s. A split takes bucket s, copies its keys whose bit L is set into
 * the new bucket s + 2^L, then advances s (to 0 and L+1 at the end of a
 * round). One split moves one bucket's keys (about 3): the updaters run them,
 * and no insert runs more than one (every 16th insert of a stripe checks the
 * load and raises the bucket count the map wants to keep 2.75 keys per
 * bucket; every insert that finds the count below it runs one split, one
 * splitter at a time, others skip), so no operation ever waits for a
 * table-sized step nor carries the splits of the 15 inserts before it (at
 * 1e7 keys the growing map's p99 went from 2.9x to 1.5x the presized map's;
 * its p99.9 has another cause: README.md),
 * the bucket count follows the key count
 * smoothly (no power-of-two rounding: bytes per key do not jump by 2 at a
 * doubling) and no second array exists at any time. Buckets live in
 * segments that never move: segment 0 holds buckets 0-63, segment k >= 1
 * buckets [2^(k+5), 2^(k+6)); a segment is an anonymous mapping (zero pages,
 * touched as splits reach them), so growth never zeroes or copies an array.
 * The map only grows (the bucket array stays after deletes; overflow buckets
 * go back when they empty; cht_map_u64_reserve() runs the splits ahead on the
 * caller's thread; why no shrink: uspace/lib/cht/README.md).
 *
 * Each bucket records its depth (the hash bits it owns): a lookup computes a
 * bucket and its depth a from the global (L, s), reads the bucket's depth in
 * the same load as its occupancy, and if the bucket was split after it read
 * (L, s) (depth > a) goes on to g mod 2^(a+1), one level at a time: the
 * split at level a made that bucket, a deeper one may not have made
 * g mod 2^depth yet (linear hashing splits b before b + 2^a). Depth 0 in ctl means the depth the bucket had at the
 * map's creation (so the zero pages of the first segments need no writes).
 *
 * Readers never block: no lock, no spinning. Writers take the bucket's lock
 * (a bit of ctl, CAS). The protocol that keeps a reader from returning a torn
 * pair or missing a present key:
 *  - insert into a free slot: the head's seq += 2 (release), the key and
 *    the value (release stores), then the occupancy bit (release). A
 *    reader reads seq (acquire), ctl (acquire), the slots (acquire loads)
 *    and seq again; it retries if seq changed, so a key or value it read from
 *    a reused slot (written after the bump) is never returned. It never waits
 *    for seq to become even: seq is always even and the bit is set only
 *    after the pair is complete, so a preempted writer delays nobody.
 *  - delete: clears the bit. A reader that saw the bit reads the old pair
 *    intact (the slot is rewritten only after a seq bump), and is linearized
 *    at its ctl load, before the delete. A delete from the head of a bucket
 *    with overflow lines then refills the head from the lines: the bit is
 *    cleared first, then seq made odd and the lines' keys moved as in a
 *    split's compaction below (im_refill(): why that order); the lines stay
 *    as packed as growth leaves them under churn.
 *  - value writes (put of a present key, cas, add) are single 8-byte atomic
 *    stores or RMWs of the value.
 *  - overflow summary: a bit is set before the key it stands for is visible
 *    and recomputed from the remaining keys (under the lock) after a delete
 *    from the chain, so a key in the chain always has its bit.
 *  - split of bucket b into b and b2: b2 is filled while nobody can reach it
 *    (b locked), then b's new depth is stored in ctl (release: the
 *    linearization point), then b's seq is made odd, the moved keys are
 *    cleared from b, the staying keys of b's overflow lines are moved into
 *    the head's free slots (value, key, head bit, then the line's bit
 *    cleared) and seq is made even again. A reader that read b's old depth
 *    finds the moved keys' copies in b (their values cannot change: writers
 *    of those keys lock b, see the new depth and go to b2), or sees seq
 *    change and retries with the new depth. A reader that reads an odd seq
 *    does not wait: it scans the lines before the head (re-reading the
 *    head's ctl), the reverse of the move's order, so a moving key is found
 *    in its line or, once cleared there, in the head; it accepts its result
 *    if seq is still the same odd value (only moves happened meanwhile).
 *    Each head slot is written at most once per phase, value before key.
 *  - an overflow bucket that empties is unlinked under the lock and freed
 *    after a grace period (cht__ma_retire64()): a reader inside it finishes.
 *
 * Why not the CHT's own resize: the CHT resizes a split-ordered list of nodes
 * (a bucket is a pointer into the list, items are found by walking it); an
 * inline table has no nodes to keep in order and its entries must move, so
 * it needs a move protocol of its own. The per-bucket depth makes that move
 * local (one bucket locked, nothing global but the split counter), where the
 * CHT's protocol marks and joins list nodes across a whole table (docs/CHT.md).
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_imap_int.h"
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static unsigned stripe_next;
static __thread unsigned my_stripe = ~0u;

static inline unsigned stripe(void)
{
	if (unlikely(my_stripe == ~0u))
		my_stripe = __atomic_fetch_add(&stripe_next, 1, __ATOMIC_RELAXED) %
		    IM_STRIPES;
	return my_stripe;
}

/** stripe() for cht_imap_grow.c (one stripe counter and one definition). */
unsigned cht__im_stripe(void)
{
	return stripe();
}

/*
 * --- readers ------------------------------------------------------------------
 */

/** Scans the overflow lines of @a bk for @a key (a reader). */
static bool im_scan_lines(ibkt_t *bk, uint64_t key, uint64_t *v)
{
	for (ibkt_t *o = __atomic_load_n(&bk->ovf, __ATOMIC_ACQUIRE); o;
	    o = __atomic_load_n(&o->ovf, __ATOMIC_ACQUIRE)) {
		uint32_t oc = __atomic_load_n(&o->ctl, __ATOMIC_ACQUIRE);
		for (unsigned i = 0; i < IM_SLOTS; i++)
			if ((oc & (1u << i)) && ld(&o->s[i].key) == key) {
				*v = ld(&o->s[i].val);
				return true;
			}
	}
	return false;
}

/**
 * Looks @a key (hash @a g) up; inside a reader section (the overflow chain is
 * freed after grace periods). Never waits: retries only when a writer
 * rewrote a slot of the bucket while it read.
 */
static inline __attribute__((always_inline)) bool im_lookup(cht_imap_t *m,
    uint64_t key, uint64_t g, uint64_t *val)
{
	unsigned a;
	/* The readers' copy: a past state (cht_imap_t.rstate). */
	uint64_t b = im_index(__atomic_load_n(&m->rstate, __ATOMIC_ACQUIRE), g,
	    &a);
	ibkt_t *bk = im_bucket(m, b);
	for (;;) {
		uint32_t s1 = __atomic_load_n(&bk->seq, __ATOMIC_ACQUIRE);
		uint32_t c = __atomic_load_n(&bk->ctl, __ATOMIC_ACQUIRE);
		if (unlikely(im_depth(m, b, c) > a)) {
			/*
			 * Split after we read the state: one level deeper (the
			 * split at level a made bucket b + 2^a; one at a
			 * deeper level may not have reached g's bucket yet).
			 */
			a++;
			uint64_t nb = g & (((uint64_t) 1 << a) - 1);
			if (nb != b) {
				b = nb;
				bk = im_bucket(m, b);
			}
			continue;
		}
		bool found = false;
		uint64_t v = 0;
		if (unlikely(s1 & 1)) {
			/* A split compacts this bucket: lines first, then head. */
			if (im_scan_lines(bk, key, &v))
				found = true;
			else
				c = __atomic_load_n(&bk->ctl, __ATOMIC_ACQUIRE);
		}
#pragma GCC unroll 3
		for (unsigned i = 0; i < IM_SLOTS && !found; i++)
			if ((c & (1u << i)) && ld(&bk->s[i].key) == key) {
				v = ld(&bk->s[i].val);
				found = true;
			}
		if (!found && !(s1 & 1) && (c & im_sum_bit(g)))
			found = im_scan_lines(bk, key, &v);
		/*
		 * The slot and ctl loads above were acquire: this load is not
		 * done before them. A writer bumps seq before it rewrites a
		 * slot (its slot stores are release), so if we read anything
		 * it wrote after the bump we see the bump here.
		 */
		if (likely(__atomic_load_n(&bk->seq, __ATOMIC_RELAXED) == s1)) {
			if (found && val)
				*val = v;
			return found;
		}
	}
}

/*
 * --- writers (under the bucket lock) ----------------------------------------------
 */

/** Locks the bucket that owns hash @a g; returns it, its index and its ctl. */
static ibkt_t *im_lock(cht_imap_t *m, uint64_t g, uint64_t *bi, uint32_t *ctl)
{
	unsigned a;
	uint64_t b = im_index(__atomic_load_n(&m->state, __ATOMIC_ACQUIRE), g,
	    &a);
	for (;;) {
		ibkt_t *bk = im_bucket(m, b);
		uint32_t c = __atomic_load_n(&bk->ctl, __ATOMIC_RELAXED);
		unsigned spins = 0;
#ifdef CHT_IM_PROF
		uint64_t tw = 0;
#endif
		for (;;) {
			if (!(c & IM_LOCK) &&
			    __atomic_compare_exchange_n(&bk->ctl, &c, c | IM_LOCK,
			    true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				break;
			if (c & IM_LOCK) {
#ifdef CHT_IM_PROF
				if (!tw)
					tw = __builtin_ia32_rdtsc();
#endif
				if (++spins > 64) {
					sched_yield();
					spins = 0;
				} else {
					cpu_relax();
				}
				c = __atomic_load_n(&bk->ctl, __ATOMIC_RELAXED);
			}
		}
#ifdef CHT_IM_PROF
		if (tw)
			CHT_IMP_END(tw, CHT_IMP_LOCKWAIT);
#endif
		c |= IM_LOCK;
		if (im_depth(m, b, c) == a) {
			*bi = b;
			*ctl = c;
			return bk;
		}
		/* Split meanwhile: one level deeper (see im_lookup()). */
		__atomic_store_n(&bk->ctl, c & ~IM_LOCK, __ATOMIC_RELEASE);
		a++;
		b = g & (((uint64_t) 1 << a) - 1);
	}
}


/** Before a slot of @a head's chain is rewritten: seq += 2. */
static inline void im_bump(ibkt_t *head)
{
	uint32_t s = __atomic_load_n(&head->seq, __ATOMIC_RELAXED);
	/*
	 * Release store: a reader that reads the new seq (acquire) also sees
	 * the ctl stores before it (the cleared bit of the slot we reuse). The
	 * slot stores that follow are release stores (st64()), so none of them
	 * is seen without this one.
	 */
	__atomic_store_n(&head->seq, s + 2, __ATOMIC_RELEASE);
}

/** Where @a key is in the locked chain of @a bk (ctl @a c): bucket and slot. */
static ibkt_t *im_find_locked(ibkt_t *bk, uint32_t c, uint64_t key,
    unsigned *slot)
{
	for (unsigned i = 0; i < IM_SLOTS; i++)
		if ((c & (1u << i)) && ld(&bk->s[i].key) == key) {
			*slot = i;
			return bk;
		}
	for (ibkt_t *o = bk->ovf; o; o = o->ovf) {
		uint32_t oc = o->ctl;
		for (unsigned i = 0; i < IM_SLOTS; i++)
			if ((oc & (1u << i)) && ld(&o->s[i].key) == key) {
				*slot = i;
				return o;
			}
	}
	return NULL;
}

/**
 * Puts key -> val into a free slot of the locked chain of @a bk (ctl *@a c,
 * updated). @return false when no overflow bucket could be allocated.
 */
static bool im_place(cht_imap_t *m, ibkt_t *bk, uint32_t *c, uint64_t key,
    uint64_t val, uint64_t g)
{
	uint32_t free_bits = ~*c & IM_OCC;
	if (free_bits) {
		unsigned i = (unsigned) __builtin_ctz(free_bits);
		im_bump(bk);
		st64(&bk->s[i].key, key);
		st64(&bk->s[i].val, val);
		*c |= 1u << i;
		__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
		return true;
	}
	/* The summary bit first: a key in the chain always has its bit. */
	if (!(*c & im_sum_bit(g))) {
		*c |= im_sum_bit(g);
		__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
	}
	ibkt_t *tail = bk;
	for (ibkt_t *o = bk->ovf; o; o = o->ovf) {
		free_bits = ~o->ctl & IM_OCC;
		if (free_bits) {
			unsigned i = (unsigned) __builtin_ctz(free_bits);
			im_bump(bk);
			st64(&o->s[i].key, key);
			st64(&o->s[i].val, val);
			__atomic_store_n(&o->ctl, o->ctl | (1u << i),
			    __ATOMIC_RELEASE);
			return true;
		}
		tail = o;
	}
	ibkt_t *n = cht__ma_alloc64();
	if (!n)
		return false;
	n->seq = 0;
	n->ovf = NULL;
	st64(&n->s[0].key, key);
	st64(&n->s[0].val, val);
	__atomic_store_n(&n->ctl, 1u, __ATOMIC_RELAXED);
	/* Release: the new bucket's contents before the link. */
	__atomic_store_n(&tail->ovf, n, __ATOMIC_RELEASE);
	__atomic_fetch_add(&m->st[stripe()].ovf, 1, __ATOMIC_RELAXED);
	return true;
}

/**
 * After keys left the chain of @a bk: unlinks the overflow buckets that
 * emptied (freed after a grace period) and recomputes the summary into *@a c
 * (stored by the caller).
 */
static void im_tidy(cht_imap_t *m, ibkt_t *bk, uint32_t *c)
{
	uint32_t sum = 0;
	ibkt_t *prev = bk;
	for (ibkt_t *o = bk->ovf, *no; o; o = no) {
		no = o->ovf;
		uint32_t oc = o->ctl & IM_OCC;
		if (!oc) {
			__atomic_store_n(&prev->ovf, no, __ATOMIC_RELEASE);
			cht__ma_retire64(o);
			__atomic_fetch_sub(&m->st[stripe()].ovf, 1,
			    __ATOMIC_RELAXED);
			continue;
		}
		for (unsigned i = 0; i < IM_SLOTS; i++)
			if (oc & (1u << i))
				sum |= im_sum_bit(im_hash(ld(&o->s[i].key)));
		prev = o;
	}
	*c = (*c & ~(0xffffu << IM_SUM_SHIFT)) | sum;
}

/* For the split (cht_imap_grow.c); the operations here call the static ones. */
ibkt_t *cht__im_lock(cht_imap_t *m, uint64_t g, uint64_t *bi, uint32_t *ctl)
{
	return im_lock(m, g, bi, ctl);
}

void cht__im_tidy(cht_imap_t *m, ibkt_t *bk, uint32_t *c)
{
	im_tidy(m, bk, c);
}

/*
 * --- counting (the load check and the split: cht_imap_grow.c) ------------
 */

/**
 * After an insert (@a d = 1) or a delete (-1): the stripe's count; an insert
 * checks the load every IM_CHECK of its stripe and pays one split owed.
 * @return the splits this call ran (0 or 1).
 */
static inline unsigned im_count(cht_imap_t *m, int64_t d)
{
	int64_t n = __atomic_add_fetch(&m->st[stripe()].items, d,
	    __ATOMIC_RELAXED);
	if (d <= 0)
		return 0;
	if ((n & (IM_CHECK - 1)) == 0)
		cht__im_check(m);
	if (unlikely(im_nbuckets(__atomic_load_n(&m->state, __ATOMIC_RELAXED)) <
	    __atomic_load_n(&m->want, __ATOMIC_RELAXED)))
		return cht__im_pay(m);
	return 0;
}

/** Records that one insert ran @a did splits (statistics). */
static inline void im_note_splits(cht_imap_t *m, unsigned did)
{
	uint64_t cur = __atomic_load_n(&m->max_op_splits, __ATOMIC_RELAXED);
	while (did > cur && !__atomic_compare_exchange_n(&m->max_op_splits,
	    &cur, did, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/*
 * --- the operations ------------------------------------------------------------------
 */

int cht__im_create(cht_imap_t **out, size_t expect_keys)
{
	cht_imap_t *m = aligned_alloc(64, sizeof(*m));
	if (!m)
		return CHT_ENOMEM;
	memset(m, 0, sizeof(*m));
	pthread_mutex_init(&m->split_lock, NULL);
	/* 2^l0 + s0 buckets: expect_keys at the load limit. */
	uint64_t want = (uint64_t) expect_keys * IM_LOAD_DEN / IM_LOAD_NUM;
	unsigned l0 = IM_SEG0_BITS;
	while (l0 < 36 && ((uint64_t) 2 << l0) <= want)
		l0++;
	uint64_t s0 = want > ((uint64_t) 1 << l0) ? want - ((uint64_t) 1 << l0) : 0;
	if (s0 >= ((uint64_t) 1 << l0))
		s0 = 0;
	m->l0 = l0;
	m->s0 = s0;
	m->state = ((uint64_t) l0 << IM_S_BITS) | s0;
	m->rstate = m->state;
	uint64_t n = ((uint64_t) 1 << l0) + s0;
	/* Map the segments of buckets [0, n). */
	size_t bytes = ((size_t) 1 << IM_SEG0_BITS) * sizeof(ibkt_t);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED) {
		free(m);
		return CHT_ENOMEM;
	}
	m->seg[0] = p;
	m->seg_bytes[0] = bytes;
	for (uint64_t b = (uint64_t) 1 << IM_SEG0_BITS; b < n; b <<= 1)
		if (!cht__im_seg_ensure(m, b)) {
			cht__im_destroy(m);
			return CHT_ENOMEM;
		}
	*out = m;
	return CHT_OK;
}

void cht__im_destroy(cht_imap_t *m)
{
	uint64_t n = im_nbuckets(m->state);
	for (uint64_t b = 0; b < n; b++) {
		ibkt_t *bk = im_bucket(m, b);
		for (ibkt_t *o = bk->ovf, *no; o; o = no) {
			no = o->ovf;
			cht__ma_free64(o);
		}
	}
	for (unsigned k = 0; k < IM_NSEG; k++)
		if (m->seg[k])
			munmap(m->seg[k], m->seg_bytes[k]);
	pthread_mutex_destroy(&m->split_lock);
	free(m);
	/* Overflow buckets retired earlier: freed, and their slabs returned. */
	cht__ma_settle();
}

int cht__im_get(cht_imap_t *m, uint64_t key, uint64_t *val)
{
	cht_rcu_read_lock();
	bool f = im_lookup(m, key, im_hash(key), val);
	cht_rcu_read_unlock();
	return f ? CHT_OK : CHT_ENOENT;
}

int cht__im_upsert(cht_imap_t *m, uint64_t key, uint64_t val, int mode,
    uint64_t *out)
{
	uint64_t g = im_hash(key), bi;
	uint32_t c;
	ibkt_t *bk = im_lock(m, g, &bi, &c);
	unsigned slot;
	ibkt_t *o = im_find_locked(bk, c, key, &slot);
	int rc = CHT_OK;
	uint64_t after = val;
	if (o) {
		if (mode == CHT__IM_INSERT) {
			rc = CHT_EEXIST;
		} else if (mode == CHT__IM_PUT) {
			st64(&o->s[slot].val, val);
		} else {
			/* The empty asm: see cht_map_u64_add() (GCC 12.2). */
			uint64_t old = __atomic_fetch_add(&o->s[slot].val, val,
			    __ATOMIC_RELAXED);
			__asm__("" : "+r"(old));
			after = old + val;
		}
		im_unlock(bk, c);
	} else {
		bool ok = im_place(m, bk, &c, key, val, g);
		im_unlock(bk, c);
		if (!ok)
			return CHT_ENOMEM;
		im_note_splits(m, im_count(m, 1));
	}
	if (out)
		*out = after;
	return rc;
}

/**
 * A delete freed a head slot of @a bk (its bit cleared in *@a c, not yet
 * stored) while overflow lines hold keys: a key of a line moves into the
 * head and a line that empties goes, as in a split's phase 3 and under the
 * same reader protocol (the slot's bit cleared, seq odd, cht__im_compact(),
 * im_tidy(), seq even: the file comment). Without it a line keeps its keys
 * behind a head with free slots: churn at constant size raised the overflow
 * lines from 0.36 to 0.55 per bucket in one turnover of 1e6 keys (31.6 to
 * 36.0 bytes per key; test_map's test_inline_churn_packed()).
 */
static void im_refill(cht_imap_t *m, ibkt_t *bk, uint32_t *c)
{
	uint32_t sq = __atomic_load_n(&bk->seq, __ATOMIC_RELAXED);
	/*
	 * The deleted key's bit cleared first (the delete's linearization
	 * point), then seq odd (release: after it). The other order would let
	 * a reader that reads the odd seq still read the old bit, then the
	 * deleted key in its slot and the value that cht__im_compact() has
	 * already stored there for the key it moves in (value before key):
	 * the deleted key with another key's value, accepted because seq is
	 * still the same odd value. (A split clears its moved keys' bits after
	 * seq is odd, but readers of those keys have gone to the new bucket by
	 * then: the depth was stored before.) With this order a reader of the
	 * odd seq sees the bit cleared; one of the even seq that read the old
	 * bit and then anything the move wrote sees seq changed and retries.
	 */
	__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
	__atomic_store_n(&bk->seq, sq + 1, __ATOMIC_RELEASE);
	cht__im_compact(bk, c);
	im_tidy(m, bk, c);
	__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
	/* seq even again (release: after every store of the move). */
	__atomic_store_n(&bk->seq, sq + 2, __ATOMIC_RELEASE);
}

int cht__im_delete(cht_imap_t *m, uint64_t key)
{
	uint64_t bi;
	uint32_t c;
	ibkt_t *bk = im_lock(m, im_hash(key), &bi, &c);
	unsigned slot;
	ibkt_t *o = im_find_locked(bk, c, key, &slot);
	if (!o) {
		im_unlock(bk, c);
		return CHT_ENOENT;
	}
	if (o == bk) {
		c &= ~(1u << slot);
		if (bk->ovf)
			im_refill(m, bk, &c);
	} else {
		__atomic_store_n(&o->ctl, o->ctl & ~(1u << slot),
		    __ATOMIC_RELEASE);
		im_tidy(m, bk, &c);
	}
	im_unlock(bk, c);
	(void) im_count(m, -1);
	return CHT_OK;
}

int cht__im_cas(cht_imap_t *m, uint64_t key, uint64_t *expect, uint64_t val)
{
	uint64_t bi;
	uint32_t c;
	ibkt_t *bk = im_lock(m, im_hash(key), &bi, &c);
	unsigned slot;
	ibkt_t *o = im_find_locked(bk, c, key, &slot);
	int rc = CHT_ENOENT;
	if (o)
		rc = __atomic_compare_exchange_n(&o->s[slot].val, expect, val,
		    false, __ATOMIC_RELAXED, __ATOMIC_RELAXED) ? CHT_OK :
		    CHT_ESTALE;
	im_unlock(bk, c);
	return rc;
}

/** Keys whose buckets are prefetched ahead of their lookups. */
#define IM_AHEAD 8

long cht__im_get_many(cht_imap_t *m, const uint64_t *keys, size_t n,
    uint64_t *vals, unsigned char *found)
{
	long hits = 0;
	cht_rcu_read_lock();
	/* The readers' copy (cht_imap_t.rstate): the prefetches' buckets are
	 * those im_lookup() starts at. */
	uint64_t st = __atomic_load_n(&m->rstate, __ATOMIC_ACQUIRE);
	unsigned a;
	for (size_t i = 0; i < n && i < IM_AHEAD; i++)
		__builtin_prefetch(im_bucket(m, im_index(st, im_hash(keys[i]),
		    &a)), 0, 0);
	for (size_t i = 0; i < n; i++) {
		if (i + IM_AHEAD < n)
			__builtin_prefetch(im_bucket(m, im_index(st,
			    im_hash(keys[i + IM_AHEAD]), &a)), 0, 0);
		uint64_t v;
		bool f = im_lookup(m, keys[i], im_hash(keys[i]), &v);
		if (f) {
			vals[i] = v;
			hits++;
		}
		if (found)
			found[i] = f;
	}
	cht_rcu_read_unlock();
	return hits;
}

void cht__im_stats(cht_imap_t *m, size_t *items, size_t *buckets,
    size_t *bucket_bytes, size_t *ovf_bytes, int *growing)
{
	int64_t it = im_items(m), ov = 0;
	for (unsigned i = 0; i < IM_STRIPES; i++)
		ov += __atomic_load_n(&m->st[i].ovf, __ATOMIC_RELAXED);
	uint64_t n = im_nbuckets(__atomic_load_n(&m->state, __ATOMIC_ACQUIRE));
	*items = it > 0 ? (size_t) it : 0;
	*buckets = n;
	*bucket_bytes = sizeof(*m) + n * sizeof(ibkt_t);
	*ovf_bytes = ov > 0 ? (size_t) ov * sizeof(ibkt_t) : 0;
	/* Splits run inside inserts: no resize is ever pending. */
	*growing = 0;
}

void cht__im_split_stats(cht_imap_t *m, uint64_t *splits,
    uint64_t *max_per_insert)
{
	*splits = __atomic_load_n(&m->splits, __ATOMIC_RELAXED);
	*max_per_insert = __atomic_load_n(&m->max_op_splits, __ATOMIC_RELAXED);
}