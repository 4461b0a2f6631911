/** @file cht_imap_int.h
 * Private interface of the inline backend of cht_map_u64_t, shared by
 * cht_imap.c (the operations, readers and writers; the design is in its file
 * comment) and cht_imap_grow.c (growth: segments, split, load check, the
 * splits owed). The layout's constants, the bucket and the map, and the small
 * inline helpers both use. Not installed; the cht__im_* functions below are
 * local to libcht.so (libcht.map).
 */
#ifndef CHT_IMAP_INT_H_
#define CHT_IMAP_INT_H_

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "cht_map_int.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define IM_SLOTS 3
#define IM_OCC 7u
#define IM_LOCK (1u << 3)
#define IM_DD_SHIFT 4
#define IM_DD_MASK (0x3fu << IM_DD_SHIFT)
#define IM_SUM_SHIFT 16
/** Grow limit: IM_LOAD_NUM / IM_LOAD_DEN keys per bucket on average. */
#ifndef IM_LOAD_NUM
#define IM_LOAD_NUM 11
#endif
#define IM_LOAD_DEN 4
/** Buckets of segment 0 (2^IM_SEG0_BITS); the smallest level. */
#define IM_SEG0_BITS 6
#define IM_NSEG 40
/** Counter stripes (threads are spread over them). */
#define IM_STRIPES 16
/** A thread checks the load every IM_CHECK inserts of its stripe. */
#define IM_CHECK 16
#define IM_S_BITS 40
#define IM_S_MASK (((uint64_t) 1 << IM_S_BITS) - 1)

/** A bucket or an overflow bucket: one cache line. */
typedef struct ibkt {
	/** Head only: even; += 2 before a slot is rewritten (see the file comment). */
	uint32_t seq;
	/** Occupancy; head only: lock, depth, overflow summary. */
	uint32_t ctl;
	struct {
		uint64_t key;
		uint64_t val;
	} s[IM_SLOTS];
	/** The next overflow bucket (release store, acquire load), or NULL. */
	struct ibkt *ovf;
} __attribute__((aligned(64))) ibkt_t;
_Static_assert(sizeof(ibkt_t) == 64, "a bucket is one cache line");

typedef struct {
	/** Keys inserted minus deleted by the threads of this stripe. */
	int64_t items;
	/** Overflow buckets allocated minus freed. */
	int64_t ovf;
} __attribute__((aligned(64))) im_stripe_t;

/**
 * The readers' copy of the state (cht_imap_t.rstate) lags the state by less
 * than 2^L >> IM_RSTATE_SHIFT splits (L the level): at most 1/1024 of the
 * buckets, whose lookups take one step more (im_lookup()).
 */
#define IM_RSTATE_SHIFT 10

struct cht_imap {
	/**
	 * (L << IM_S_BITS) | s; written by the splitter (release) at every
	 * split, read acquire by the writers (and by the splitter, its counters
	 * beside it). Its line is the splitter's: lookups read rstate instead.
	 */
	uint64_t state __attribute__((aligned(64)));
	/**
	 * The bucket count the last load check asked for: ceil(items / 2.75)
	 * at that check (raised only, CAS, relaxed; a hint: the splitter reads
	 * it again under split_lock). Every insert that finds the bucket count
	 * below it runs one split (cht__im_pay()): the splits owed are paid one per
	 * insert. Beside state: every insert reads both.
	 */
	uint64_t want;
	/** Splits done (under split_lock; read relaxed): statistics. */
	uint64_t splits;
	/** The most splits one insert ran (relaxed): the bound's check. */
	uint64_t max_op_splits;
	/**
	 * A past value of state, for lookups: written by the splitter (release,
	 * after state) at most once per 2^L >> IM_RSTATE_SHIFT splits, at every
	 * new level and when cht__im_reserve() ends, so a lookup does not take
	 * the state's line from the splitter at every split (a line transfer per
	 * lookup while the map grows: mapgrow_share.c). Any past state is
	 * correct for a lookup: its buckets exist (segments are published
	 * before the state that leads to them and never unmapped while the map
	 * lives), and a bucket split since then says so in its depth, which
	 * im_lookup() follows one level at a time. With l0, s0 and seg[] (read
	 * by every lookup, written rarely) on a line the splitter does not write
	 * at every split.
	 */
	uint64_t rstate __attribute__((aligned(64)));
	/** The level and split point at creation (depth 0 in ctl means theirs). */
	unsigned l0;
	uint64_t s0;
	/** Segments (release store by the splitter before any reader needs one). */
	ibkt_t *seg[IM_NSEG];
	size_t seg_bytes[IM_NSEG];
	/** One splitter at a time (trylock: the others go on). */
	pthread_mutex_t split_lock;
	im_stripe_t st[IM_STRIPES];
};

/**
 * The hash: SplitMix64's finalizer (Steele, Lea and Flood, OOPSLA 2014), a
 * bijection whose low bits (the bucket index) and top 4 bits (the summary
 * class) depend on every key bit. The CHT's one multiply (cht_mix_hash())
 * is not enough here: the CHT indexes by the product's top bits, this table
 * by its low ones, and keys k << 20 put 40 % more keys into overflow lines
 * with it (the low bits of a product see only the key's low bits).
 */
static inline uint64_t im_hash(uint64_t key)
{
	uint64_t z = key;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static inline ibkt_t *im_bucket(cht_imap_t *m, uint64_t i)
{
	if (i < ((uint64_t) 1 << IM_SEG0_BITS))
		return &__atomic_load_n(&m->seg[0], __ATOMIC_ACQUIRE)[i];
	unsigned msb = 63 - (unsigned) __builtin_clzll(i);
	ibkt_t *sg = __atomic_load_n(&m->seg[msb - IM_SEG0_BITS + 1],
	    __ATOMIC_ACQUIRE);
	return &sg[i - ((uint64_t) 1 << msb)];
}

/**
 * Bucket index of hash @a g under state @a st, and the depth it has under
 * that state into *@a a (L or L + 1).
 */
static inline uint64_t im_index(uint64_t st, uint64_t g, unsigned *a)
{
	unsigned L = (unsigned) (st >> IM_S_BITS);
	uint64_t b = g & (((uint64_t) 1 << L) - 1);
	*a = L;
	if (b < (st & IM_S_MASK)) {
		b = g & (((uint64_t) 1 << (L + 1)) - 1);
		*a = L + 1;
	}
	return b;
}

/** Depth of bucket @a b whose ctl is @a c. */
static inline unsigned im_depth(const cht_imap_t *m, uint64_t b, uint32_t c)
{
	unsigned dd = (c & IM_DD_MASK) >> IM_DD_SHIFT;
	if (dd)
		return m->l0 + dd - 1;
	return (b < m->s0 || b >= ((uint64_t) 1 << m->l0)) ? m->l0 + 1 : m->l0;
}

static inline uint32_t im_dd(const cht_imap_t *m, unsigned depth)
{
	return (uint32_t) (depth - m->l0 + 1) << IM_DD_SHIFT;
}

static inline uint32_t im_sum_bit(uint64_t g)
{
	return 1u << (IM_SUM_SHIFT + (unsigned) (g >> 60));
}

/*
 * Slot accesses: acquire loads and release stores. With them the seqcount
 * needs no fences (which ThreadSanitizer does not model): a slot store after
 * a seq bump is ordered after the bump (release), and a reader's second seq
 * load after every slot load (acquire), so a reader that read a rewritten
 * slot sees the bump. On x86-64 both are plain moves.
 */
static inline uint64_t ld(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void st64(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/** Unlocks bucket @a bk (head ctl @a c, lock bit set or not). */
static inline void im_unlock(ibkt_t *bk, uint32_t c)
{
	__atomic_store_n(&bk->ctl, c & ~IM_LOCK, __ATOMIC_RELEASE);
}

/** Keys in the map: the sum of the stripes' counts (relaxed reads). */
static inline int64_t im_items(cht_imap_t *m)
{
	int64_t n = 0;
	for (unsigned i = 0; i < IM_STRIPES; i++)
		n += __atomic_load_n(&m->st[i].items, __ATOMIC_RELAXED);
	return n;
}

/** Buckets under state @a st: 2^L + s. */
static inline uint64_t im_nbuckets(uint64_t st)
{
	return ((uint64_t) 1 << (st >> IM_S_BITS)) + (st & IM_S_MASK);
}

/* --- cht_imap.c, for the growth --- */

/** The calling thread's counter stripe (stripe() of cht_imap.c). */
unsigned cht__im_stripe(void);
/** im_lock() of cht_imap.c: locks the bucket that owns hash @a g. */
ibkt_t *cht__im_lock(cht_imap_t *m, uint64_t g, uint64_t *bi, uint32_t *ctl);
/** im_tidy() of cht_imap.c: empty lines unlinked, summary into *@a c. */
void cht__im_tidy(cht_imap_t *m, ibkt_t *bk, uint32_t *c);

/* --- cht_imap_grow.c --- */

/** Segment of bucket @a b2 (the first of its segment): mapped if missing. */
bool cht__im_seg_ensure(cht_imap_t *m, uint64_t b2);
/**
 * The keys of @a bk's overflow lines fill the head's free slots (*@a c):
 * value, key, the head's bit, then the line's bit cleared. Under @a bk's lock
 * and an odd seq (a split's phase 3, and a delete that freed a head slot).
 */
void cht__im_compact(ibkt_t *bk, uint32_t *c);
/**
 * The load check (every IM_CHECK inserts of a stripe): raises m->want to the
 * bucket count that keeps IM_LOAD_NUM / IM_LOAD_DEN keys per bucket.
 */
void cht__im_check(cht_imap_t *m);
/**
 * One split if the bucket count is below m->want and no other thread splits.
 * @return the splits run (0 or 1).
 */
unsigned cht__im_pay(cht_imap_t *m);

#endif
