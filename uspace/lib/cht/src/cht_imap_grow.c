/** @file cht_imap_grow.c
 * Growth of the inline backend of cht_map_u64_t: the segments, the split of
 * one bucket (linear hashing, its move protocol under the bucket's seq), the
 * load check and the splits owed, paid one per insert. The design and the
 * protocol readers rely on are in cht_imap.c's file comment; the types in
 * cht_imap_int.h.
 */
#include <cht.h>
#include "cht_imap_int.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/*
 * --- growth ----------------------------------------------------------------------
 */

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  /* Linux 5.14 */
#endif

/** Bytes a populate-ahead request faults in: one transparent huge page. */
#define IM_POP_BYTES ((size_t) 2 << 20)

/**
 * A populate-ahead request, owned by the worker once queued: it holds no
 * pointer to the map, so a map destroyed before the worker runs it leaves
 * nothing to wait for (the range is then unmapped, and madvise() fails with
 * ENOMEM, or mapped again by someone else, whose pages it faults in without
 * changing a byte).
 */
typedef struct {
	cht_env_work_t work;  /* first: the worker's pointer is the request's */
	void *addr;
	size_t len;
} im_pop_req_t;

/* Counts of cht__im_pop_stats(): relaxed, statistics of the process. */
static uint64_t pop_requested, pop_done, pop_failed;

/** On the worker: faults the request's range in, for writing, and frees it. */
static void im_pop_run(cht_env_work_t *w)
{
	im_pop_req_t *r = (im_pop_req_t *) w;
	int rc = madvise(r->addr, r->len, MADV_POPULATE_WRITE);
	__atomic_fetch_add(rc == 0 ? &pop_done : &pop_failed, 1,
	    __ATOMIC_RELAXED);
	free(r);
}

/**
 * Populate-ahead. The kernel zeroes each page of a bucket segment at its
 * first touch, and the first touch is a split's, inside an insert: with
 * transparent huge pages (segments of 4 MiB and more) one insert in every
 * 32,768 splits zeroed 2 MiB, 7-14 ms on this project's VM, where a page
 * the process has not touched before is a fault of the host too (growprof,
 * 1e7 keys: the slowest inserts were splits 90,112 inserts apart). So when
 * the split of @a b2 reaches the start of a 2 MiB page of a segment of 4
 * MiB or more, the library's worker is asked to fault in the next one
 * (MADV_POPULATE_WRITE: the pages, zeroed, without writing a byte, so it
 * may run beside the splits that later fill them); at a segment's last
 * page, the next segment is mapped now and its first page faulted in.
 * The zeroing moves to the worker's CPU time; the resident memory runs at
 * most one page ahead of the buckets (2 MiB, 0.02 bytes per key at 1e8).
 * Under split_lock. Skipped without memory or worker (the split faults the
 * page in itself, as before) and on kernels before 5.14 (EINVAL: counted
 * as failed).
 */
static void im_populate_ahead(cht_imap_t *m, uint64_t b2)
{
	if (b2 < ((uint64_t) 1 << IM_SEG0_BITS))
		return;
	unsigned msb = 63 - (unsigned) __builtin_clzll(b2);
	unsigned k = msb - IM_SEG0_BITS + 1;
	size_t bytes = m->seg_bytes[k];
	size_t off = (size_t) (b2 - ((uint64_t) 1 << msb)) * sizeof(ibkt_t);
	if (bytes < 2 * IM_POP_BYTES || off % IM_POP_BYTES != 0)
		return;
	char *addr;
	if (off + IM_POP_BYTES < bytes) {
		addr = (char *) m->seg[k] + off + IM_POP_BYTES;
	} else {
		if (!cht__im_seg_ensure(m, (uint64_t) 1 << (msb + 1)))
			return;
		addr = (char *) m->seg[k + 1];
	}
	im_pop_req_t *r = malloc(sizeof(*r));
	if (!r)
		return;
	r->addr = addr;
	r->len = IM_POP_BYTES;
	__atomic_fetch_add(&pop_requested, 1, __ATOMIC_RELAXED);
	/* The queue's lock orders the request's fields before the worker. */
	if (!cht_env_work_enqueue(&r->work, im_pop_run, false)) {
		__atomic_fetch_add(&pop_failed, 1, __ATOMIC_RELAXED);
		free(r);
	}
}

void cht__im_pop_stats(uint64_t *requested, uint64_t *done, uint64_t *failed)
{
	*requested = __atomic_load_n(&pop_requested, __ATOMIC_RELAXED);
	*done = __atomic_load_n(&pop_done, __ATOMIC_RELAXED);
	*failed = __atomic_load_n(&pop_failed, __ATOMIC_RELAXED);
}

/** Segment of the bucket @a b2 (the first of its segment): mapped if missing. */
bool cht__im_seg_ensure(cht_imap_t *m, uint64_t b2)
{
	if (b2 < ((uint64_t) 1 << IM_SEG0_BITS))
		return true;
	unsigned msb = 63 - (unsigned) __builtin_clzll(b2);
	unsigned k = msb - IM_SEG0_BITS + 1;
	if (k >= IM_NSEG)
		return false;
	if (m->seg[k])
		return true;
	CHT_IMP_BEGIN(t0);
	size_t bytes = ((size_t) 1 << msb) * sizeof(ibkt_t);
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	if (bytes >= ((size_t) 4 << 20))
		(void) madvise(p, bytes, MADV_HUGEPAGE);
	m->seg_bytes[k] = bytes;
	/* Release: published before any state that leads a reader into it. */
	__atomic_store_n(&m->seg[k], (ibkt_t *) p, __ATOMIC_RELEASE);
	CHT_IMP_END(t0, CHT_IMP_SEG);
	return true;
}

/**
 * Split phase 1 (@a bk locked, head ctl @a c): copies the keys of @a bk with
 * hash bit @a bit, and values, into the empty, unreachable bucket @a nk and
 * its lines; @a nk's head ctl into *@a nc, the copied head slots of @a bk
 * into *@a moved_head. False when out of memory (im_split_undo_fill()).
 */
static bool im_split_fill(cht_imap_t *m, ibkt_t *bk, uint32_t c,
    uint64_t bit, ibkt_t *nk, uint32_t *nc, uint32_t *moved_head)
{
	ibkt_t *ntail = nk;
	unsigned ni = 0;
	*nc = 0;
	*moved_head = 0;
	for (ibkt_t *o = bk; o; o = o->ovf) {
		uint32_t oc = o == bk ? c : o->ctl;
		for (unsigned i = 0; i < IM_SLOTS; i++) {
			if (!(oc & (1u << i)))
				continue;
			uint64_t k = ld(&o->s[i].key);
			uint64_t g = im_hash(k);
			if (!(g & bit))
				continue;
			if (o == bk)
				*moved_head |= 1u << i;
			if (ni == IM_SLOTS) {
				ibkt_t *n = cht__ma_alloc64();
				if (!n)
					return false;
				memset(n, 0, sizeof(*n));
				ntail->ovf = n;
				__atomic_fetch_add(&m->st[cht__im_stripe()].ovf, 1,
				    __ATOMIC_RELAXED);
				ntail = n;
				ni = 0;
			}
			st64(&ntail->s[ni].key, k);
			st64(&ntail->s[ni].val, ld(&o->s[i].val));
			/* Head occupancy, else the line's and the summary. */
			*nc |= ntail == nk ? 1u << ni : im_sum_bit(g);
			if (ntail != nk)
				ntail->ctl |= 1u << ni;
			ni++;
		}
	}
	return true;
}

/** Undoes a failed im_split_fill(): @a nk's lines are freed, @a nk zeroed. */
static void im_split_undo_fill(cht_imap_t *m, ibkt_t *nk)
{
	for (ibkt_t *o = nk->ovf, *no; o; o = no) {
		no = o->ovf;
		cht__ma_free64(o);
		__atomic_fetch_sub(&m->st[cht__im_stripe()].ovf, 1,
		    __ATOMIC_RELAXED);
	}
	memset(nk, 0, sizeof(*nk));
}

/**
 * Split phase 2 (seq odd): the keys moved to the new bucket (hash bit
 * @a bit) leave @a bk: the head's slots @a moved_head, then every line's.
 */
static void im_split_clear_moved(ibkt_t *bk, uint32_t *c,
    uint32_t moved_head, uint64_t bit)
{
	*c &= ~moved_head;
	__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
	for (ibkt_t *o = bk->ovf; o; o = o->ovf) {
		uint32_t oc = o->ctl;
		for (unsigned i = 0; i < IM_SLOTS; i++)
			if ((oc & (1u << i)) && (im_hash(ld(&o->s[i].key)) & bit))
				oc &= ~(1u << i);
		__atomic_store_n(&o->ctl, oc, __ATOMIC_RELEASE);
	}
}

/**
 * Split phase 3 (seq odd): the staying keys of the lines fill the head's
 * free slots (*@a c) so that the lines can go (else 34 bytes per key, not
 * 31, at 2^22 random keys). Value before key: a reader that reads the new
 * key (acquire) reads its value.
 */
void cht__im_compact(ibkt_t *bk, uint32_t *c)
{
	for (ibkt_t *o = bk->ovf; o && (~*c & IM_OCC); o = o->ovf) {
		for (unsigned i = 0; i < IM_SLOTS && (~*c & IM_OCC); i++) {
			if (!(o->ctl & (1u << i)))
				continue;
			unsigned j = (unsigned) __builtin_ctz(~*c & IM_OCC);
			st64(&bk->s[j].val, ld(&o->s[i].val));
			st64(&bk->s[j].key, ld(&o->s[i].key));
			*c |= 1u << j;
			__atomic_store_n(&bk->ctl, *c, __ATOMIC_RELEASE);
			__atomic_store_n(&o->ctl, o->ctl & ~(1u << i),
			    __ATOMIC_RELEASE);
		}
	}
}

/**
 * Splits bucket b (the state word's, depth L) into b and b + 2^L (depth
 * L + 1). Under split_lock. im_split_fill(), the linearization point, then
 * under an odd seq im_split_clear_moved(), cht__im_compact(), cht__im_tidy().
 * @return false if it could not (no segment or no memory; nothing changed).
 */
static bool im_split(cht_imap_t *m)
{
	uint64_t st = __atomic_load_n(&m->state, __ATOMIC_RELAXED);
	unsigned L = (unsigned) (st >> IM_S_BITS);
	uint64_t b = st & IM_S_MASK, b2 = b + ((uint64_t) 1 << L);
	if (L + 1 >= 64 || !cht__im_seg_ensure(m, b2))
		return false;
	ibkt_t *nk = im_bucket(m, b2);
	im_populate_ahead(m, b2);
	uint64_t bi;
	uint32_t c;
	/* Every key of bucket b has b's low L bits; lock it by one of them. */
	ibkt_t *bk = cht__im_lock(m, b, &bi, &c);
	if (bi != b || im_depth(m, b, c) != L)
		abort();  /* the split order is broken */
	uint64_t bit = (uint64_t) 1 << L;
	uint32_t nc, moved_head;  /* nk's head ctl, the slots leaving bk's */
	if (!im_split_fill(m, bk, c, bit, nk, &nc, &moved_head)) {
		im_split_undo_fill(m, nk);
		im_unlock(bk, c);
		return false;
	}
	__atomic_store_n(&nk->ctl, nc | im_dd(m, L + 1), __ATOMIC_RELAXED);
	/* The linearization point: b owns only the keys without bit L now. */
	c = (c & ~IM_DD_MASK) | im_dd(m, L + 1);
	__atomic_store_n(&bk->ctl, c, __ATOMIC_RELEASE);
	/*
	 * seq odd (release: after the depth): readers that read the old depth
	 * retry from here on, and readers that start now scan the overflow
	 * lines before the head (im_lookup()), so a key moved from a line
	 * into the head (copied there first, cleared in its line second) is
	 * always found by them.
	 */
	uint32_t sq = __atomic_load_n(&bk->seq, __ATOMIC_RELAXED);
	__atomic_store_n(&bk->seq, sq + 1, __ATOMIC_RELEASE);
	im_split_clear_moved(bk, &c, moved_head, bit);
	cht__im_compact(bk, &c);
	cht__im_tidy(m, bk, &c);
	__atomic_store_n(&bk->ctl, c, __ATOMIC_RELEASE);
	/* seq even again (release: after every store of the phase). */
	__atomic_store_n(&bk->seq, sq + 2, __ATOMIC_RELEASE);
	im_unlock(bk, c);
	uint64_t ns = b + 1 == bit ? ((uint64_t) (L + 1) << IM_S_BITS) :
	    (st + 1);
	__atomic_store_n(&m->state, ns, __ATOMIC_RELEASE);
	/*
	 * The readers' copy, every 2^L >> IM_RSTATE_SHIFT splits (each split
	 * when that is 0) and at a new level (s = 0): release, after the
	 * segment and the buckets the state leads to.
	 */
	uint64_t every = ((uint64_t) 1 << (unsigned) (ns >> IM_S_BITS)) >>
	    IM_RSTATE_SHIFT;
	if (every <= 1 || (ns & IM_S_MASK & (every - 1)) == 0)
		__atomic_store_n(&m->rstate, ns, __ATOMIC_RELEASE);
	/*
	 * The next splits' lines, fetched while this insert returns and the
	 * next ones run (the splits walk b and b2 upward, one per insert,
	 * among inserts that miss at random, so a hardware stream prefetcher
	 * does not see the stream): b + 2 and b2 + 2, and the first overflow
	 * line of b + 1, whose bucket the previous split fetched. Within the
	 * level (b + 2 < 2^L) they lie in b's and b2's segments, which exist.
	 * Hints only: the ovf pointer is read relaxed and may be stale or
	 * freed by the time it is fetched; a prefetch never faults, and the
	 * split rereads everything under the bucket's lock.
	 */
	if (b + 2 < bit) {
		__builtin_prefetch(im_bucket(m, b + 2), 1, 3);
		__builtin_prefetch(im_bucket(m, b2 + 2), 1, 3);
		ibkt_t *o = __atomic_load_n(&im_bucket(m, b + 1)->ovf,
		    __ATOMIC_RELAXED);
		if (o)
			__builtin_prefetch(o, 1, 3);
	}
	return true;
}


/**
 * Every IM_CHECK inserts of a stripe: the bucket count that keeps the load at
 * IM_LOAD_NUM / IM_LOAD_DEN keys per bucket, ceil(items * DEN / NUM), into
 * m->want if it is higher. No split here: the inserts pay them (cht__im_pay()).
 */
void cht__im_check(cht_imap_t *m)
{
	int64_t items = im_items(m);
	if (items <= 0)
		return;
	uint64_t w = ((uint64_t) items * IM_LOAD_DEN + IM_LOAD_NUM - 1) /
	    IM_LOAD_NUM;
	uint64_t cur = __atomic_load_n(&m->want, __ATOMIC_RELAXED);
	while (cur < w && !__atomic_compare_exchange_n(&m->want, &cur, w, true,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/**
 * One split if the bucket count is below m->want and no other thread splits
 * (trylock: the others go on, the next insert pays). @return the splits run
 * (0 or 1): at most one per insert, whatever the debt.
 */
unsigned cht__im_pay(cht_imap_t *m)
{
	if (pthread_mutex_trylock(&m->split_lock) != 0)
		return 0;  /* another thread splits */
	CHT_IMP_BEGIN(t0);
	unsigned did = 0;
	if (im_nbuckets(__atomic_load_n(&m->state, __ATOMIC_RELAXED)) <
	    __atomic_load_n(&m->want, __ATOMIC_RELAXED) && im_split(m)) {
		__atomic_store_n(&m->splits, m->splits + 1, __ATOMIC_RELAXED);
		did = 1;
	}
	pthread_mutex_unlock(&m->split_lock);
	CHT_IMP_END(t0, CHT_IMP_SPLIT);
	return did;
}

/**
 * cht_map_u64_reserve(): splits until the map has the buckets @a keys need
 * at the load limit, ceil(keys * DEN / NUM), each split under split_lock
 * (taken and released per split, so inserts' cht__im_pay() skips only while
 * one split runs). The caller is registered and outside a reader section.
 * @return CHT_OK, CHT_ENOMEM (im_split() failed: no segment or no memory).
 */
int cht__im_reserve(cht_imap_t *m, size_t keys)
{
	uint64_t w = ((uint64_t) keys * IM_LOAD_DEN + IM_LOAD_NUM - 1) /
	    IM_LOAD_NUM;
	for (;;) {
		pthread_mutex_lock(&m->split_lock);
		bool more = im_nbuckets(__atomic_load_n(&m->state,
		    __ATOMIC_RELAXED)) < w;
		bool ok = more && im_split(m);
		if (ok)
			__atomic_store_n(&m->splits, m->splits + 1,
			    __ATOMIC_RELAXED);
		if (!more)
			/* Growth done: the readers' copy catches up. */
			__atomic_store_n(&m->rstate, __atomic_load_n(&m->state,
			    __ATOMIC_RELAXED), __ATOMIC_RELEASE);
		pthread_mutex_unlock(&m->split_lock);
		if (!more)
			return CHT_OK;
		if (!ok)
			return CHT_ENOMEM;
	}
}
