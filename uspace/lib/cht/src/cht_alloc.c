/** @file cht_alloc.c
 * The managed map's allocator (cht_map.c, cht_imap.c; interface in
 * cht_map_int.h): size classes carved from 64-byte-aligned slabs, per-thread
 * caches, a depot of chains between them, wholly free slabs returned to the
 * system by reclaim() (on the library's worker thread, or at a map's
 * destroy). The batched deferred frees (cht__ma_retire(),
 * cht__ma_retire64()) are in cht_retire.c; the slab reserve, which a refill
 * carves a new slab from when the worker has one ready, in cht_spare.c.
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_map_int.h"
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/*
 * Size classes (bytes). The ones from 64 up are multiples of 64 and carved
 * from 64-byte-aligned slabs, so an object of class 64 is one cache line.
 */
static const uint32_t cls_size[] = {
	16, 32, 48, 64, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
	4096,
};
#define NCLS (sizeof(cls_size) / sizeof(cls_size[0]))
/** Class of a large object (aligned_alloc()). */
#define CLS_LARGE CHT__MA_CLS_LARGE
#define SLAB_BYTES CHT__MA_SLAB_BYTES
/** Objects a thread keeps per class before it passes a chain to the depot. */
#define TC_MAX 256
/** Objects per chain between a thread cache and the depot. */
#define CHAIN 128

/**
 * A free object: the first word links the chain, the second the chains (in
 * a chain's first object) or holds the chain's length (in its second
 * object: chain_set_len()).
 */
typedef struct fobj {
	struct fobj *next;
	struct fobj *next_chain;
} fobj_t;

/**
 * Records that chain @a ch has @a n objects, where chain_len() finds it
 * without walking the chain: in the second object's second word (only a
 * chain's first object links chains). A chain of one needs no record.
 * Before the chain enters the depot.
 */
static inline void chain_set_len(fobj_t *ch, size_t n)
{
	if (ch->next)
		ch->next->next_chain = (fobj_t *) (uintptr_t) n;
}

/**
 * Length of chain @a ch taken from the depot: two loads. Walking it to count
 * was a dependent miss per object (128 for a chain of freed overflow lines):
 * 10 us in the refilling insert, the most frequent slow insert of a growing
 * inline map (bench/userspace/growprof.c).
 */
static inline unsigned chain_len(const fobj_t *ch)
{
	return ch->next ? (unsigned) (uintptr_t) ch->next->next_chain : 1;
}

/**
 * A slab's header (the slab's first 64 bytes). The links and the shape are
 * written before the slab is published under alloc_lock and then changed
 * only under alloc_lock (the links); `scratch` belongs to the reclaim (under
 * reclaim_lock).
 */
typedef struct slab {
	struct slab *next, *prev;
	/** Bytes of the slab (the header included). */
	size_t bytes;
	/** Objects the slab was carved into. */
	size_t nobj;
	/** Objects of this slab found in the depot by the running reclaim. */
	size_t scratch;
} slab_t;
_Static_assert(sizeof(slab_t) <= 64, "a slab's header is its first 64 bytes");

/**
 * Per-thread cache. Owner only, apart from the byte counters, which the
 * owner writes with relaxed atomics and cht_map_stats() reads under
 * alloc_lock (the list of caches).
 */
typedef struct tcache {
	fobj_t *head[NCLS];
	unsigned cnt[NCLS];
	/** Bytes handed out minus bytes taken back by this thread. */
	int64_t bytes;
	struct tcache *next, *prev;
} tcache_t;

/**
 * A reclaim (other than a destroy's) waits this many times its last run's
 * duration after it: at most 1/(RECLAIM_IDLE + 1) of one thread's time.
 */
#define RECLAIM_IDLE 9

/** The depot, the slab list, the caches' list and the folded counters. */
static pthread_mutex_t alloc_lock = PTHREAD_MUTEX_INITIALIZER;
static fobj_t *depot[NCLS];           /* chains of objects; alloc_lock */
static slab_t *slabs;                 /* doubly linked; alloc_lock */
/** Slabs in the list: written under alloc_lock, read by cht__ma_nslabs(). */
static size_t nslabs;
static tcache_t *tcaches;             /* alloc_lock */
static int64_t bytes_exited;          /* counters of exited threads; alloc_lock */
static size_t reserved;               /* atomics */
/** Bytes pushed into the depot since the last reclaim started; alloc_lock. */
static size_t depot_pushed;
/**
 * Bytes of the free objects in the depot, and in a running reclaim's hands
 * (depot_take() to depot_return(): frees meanwhile must still find a reclaim
 * due, so that one runs after it for them): written under alloc_lock
 * (relaxed atomic stores), read without it by reclaim_due().
 */
static size_t depot_bytes;
/**
 * A free asks for a background reclaim only when the depot holds at least
 * 1/RECLAIM_SHARE of the reserved bytes and RECLAIM_MIN (four of the inline
 * map's retire batches, which pass through the depot while it grows): a reclaim
 * returns only wholly free slabs, whose objects are all in the depot, and
 * costs O((D + S) log S) for D free objects and S slabs. Without the gate
 * every free asked: a growing inline map (its splits retire overflow lines
 * that its inserts take back from the depot at once, so no slab ever
 * empties) had the worker reclaiming 1/(RECLAIM_IDLE + 1) of the time for
 * nothing, 3,659 reclaims in a 1e7-key growth, each on the inserting
 * thread's CPU when the process has one: the growing map's largest inserts,
 * 7 ms (bench/userspace/growprof.c).
 */
#define RECLAIM_SHARE 8
#define RECLAIM_MIN ((size_t) 1 << 20)
/**
 * Idle decay: below the gate above, the depot may keep up to RECLAIM_MIN of
 * free objects, whole slabs among them, for as long as no free pushes more
 * (a map whose deletes stopped just below the gate kept 1 MiB forever). So
 * a push into the depot by a free (a thread cache's chain, an exiting
 * thread's cache, a free without a cache) also arms a check on the worker
 * thread RECLAIM_DECAY_MS later (cht_env_work_enqueue_after(); one armed
 * at a time, a free pays one relaxed load while it is): if pushes came
 * meanwhile, it looks again one period later; after a whole period without
 * one, the RCU reclaimer's cache (where the remove callbacks' frees are)
 * goes to the depot and a reclaim runs, without the rate limit: whole free
 * slabs go back to the system within one to two periods of the map going
 * idle. While frees go on this costs one wake-up of the worker per period
 * (a counter read); an idle process pays nothing.
 */
#define RECLAIM_DECAY_MS 100
/** One reclaim at a time; taken before alloc_lock, never inside it. */
static pthread_mutex_t reclaim_lock = PTHREAD_MUTEX_INITIALIZER;
/** Background reclaims that took the depot (statistics; relaxed). */
static uint64_t bg_reclaims;
/** Idle-decay reclaims that took the depot (statistics; relaxed). */
static uint64_t decay_reclaims;
/**
 * Pushes into the depot, ever: written under alloc_lock (relaxed atomic
 * stores), read by decay_check() without it.
 */
static uint64_t depot_pushes;
/** 1 while the idle decay is armed (decay_arm() to decay_run()); atomics. */
static int decay_armed;
/** depot_pushes at the last decay_check(); the worker thread only. */
static uint64_t decay_seen;
static cht_env_work_t decay_work;
static cht_rcu_head_t decay_head;
/** When the next background reclaim may start (CLOCK_MONOTONIC ns); reclaim_lock. */
static uint64_t reclaim_next_ns;
/** 1 while reclaim_head is posted (reclaim_soon()); atomics. */
static int reclaim_posted;
/** 1 while reclaim_work is queued (reclaim_cb()); atomics. */
static int reclaim_queued;
static cht_rcu_head_t reclaim_head;
static cht_env_work_t reclaim_work;

static __thread tcache_t *tc;
static pthread_key_t tc_key;
static pthread_once_t tc_once = PTHREAD_ONCE_INIT;

/** The kinds of reclaim (reclaim()). */
typedef enum {
	/** Asked for by a free: rate-limited, gives up if one runs. */
	RECLAIM_BG,
	/** The idle decay's: waits for a running one, no rate limit. */
	RECLAIM_DECAY,
	/** A destroy's or cht__ma_settle()'s: as DECAY, even if nothing was
	 *  pushed since the last one. */
	RECLAIM_FORCE,
} reclaim_kind_t;

static void tc_exit(void *arg);
static void reclaim(reclaim_kind_t kind);
static void decay_arm(void);

static void tc_key_init(void)
{
	if (pthread_key_create(&tc_key, tc_exit) != 0)
		abort();
}

static tcache_t *tc_get(void)
{
	if (likely(tc != NULL))
		return tc;
	pthread_once(&tc_once, tc_key_init);
	tcache_t *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	pthread_mutex_lock(&alloc_lock);
	c->next = tcaches;
	if (tcaches)
		tcaches->prev = c;
	tcaches = c;
	pthread_mutex_unlock(&alloc_lock);
	pthread_setspecific(tc_key, c);
	tc = c;
	return c;
}

/** Pushes chain @a ch of @a n objects of class @a k into the depot. alloc_lock. */
static void depot_push_locked(unsigned k, fobj_t *ch, size_t n)
{
	chain_set_len(ch, n);
	ch->next_chain = depot[k];
	depot[k] = ch;
	depot_pushed += n * cls_size[k];
	__atomic_store_n(&depot_bytes, depot_bytes + n * cls_size[k],
	    __ATOMIC_RELAXED);
	__atomic_store_n(&depot_pushes, depot_pushes + 1, __ATOMIC_RELAXED);
}

/** Whether a reclaim could be worth it now (see RECLAIM_SHARE). */
static inline bool reclaim_due(void)
{
	size_t d = __atomic_load_n(&depot_bytes, __ATOMIC_RELAXED);
	return d >= RECLAIM_MIN && d * RECLAIM_SHARE >=
	    __atomic_load_n(&reserved, __ATOMIC_RELAXED);
}

static void tc_flush_self(void);

/** Worker thread: the reclaim; the next free may ask for another one. */
static void reclaim_work_fn(cht_env_work_t *w)
{
	(void) w;
	/*
	 * Release: the worker read the item's links before calling us; the
	 * thread that queues it again (acquire in reclaim_cb()) writes them
	 * after that.
	 */
	__atomic_store_n(&reclaim_queued, 0, __ATOMIC_RELEASE);
#ifdef CHT_IM_PROF
	uint64_t t0 = __builtin_ia32_rdtsc();
	__atomic_fetch_add(&cht__im_prof_reclaims, 1, __ATOMIC_RELAXED);
#endif
	reclaim(RECLAIM_BG);
#ifdef CHT_IM_PROF
	__atomic_fetch_add(&cht__im_prof_reclaim_tsc, __builtin_ia32_rdtsc() -
	    t0, __ATOMIC_RELAXED);
#endif
}

/**
 * RCU reclaimer thread, after the callbacks whose frees asked for it: its
 * cache goes to the depot (cheap), then the reclaim itself goes to the
 * library's worker thread, so that it never holds up the callbacks.
 */
static void reclaim_cb(cht_rcu_head_t *h)
{
	(void) h;
	/*
	 * Cleared first (release, as in reclaim_work_fn()): a free after the
	 * flush below asks again, so none is left in this cache unasked.
	 */
	__atomic_store_n(&reclaim_posted, 0, __ATOMIC_RELEASE);
	tc_flush_self();
	if (__atomic_exchange_n(&reclaim_queued, 1, __ATOMIC_ACQUIRE))
		return;  /* queued, not started: it will see our flush */
	if (!cht_env_work_enqueue(&reclaim_work, reclaim_work_fn, false))
		__atomic_store_n(&reclaim_queued, 0, __ATOMIC_RELAXED);
}

/**
 * Asks for a reclaim: a callback on the RCU reclaimer thread, after the
 * callbacks already posted (the remove callbacks whose frees led here),
 * then a work item on the worker thread (reclaim_cb()). One request at a
 * time, so a free pays one relaxed load while one is pending.
 */
static inline void reclaim_soon(void)
{
	if (likely(__atomic_load_n(&reclaim_posted, __ATOMIC_RELAXED)))
		return;
	if (__atomic_exchange_n(&reclaim_posted, 1, __ATOMIC_ACQUIRE))
		return;
	cht_rcu_call(&reclaim_head, reclaim_cb);
}

/** Every object of the calling thread's cache goes to the depot. */
static void tc_flush_self(void)
{
	tcache_t *c = tc;
	if (!c)
		return;
	pthread_mutex_lock(&alloc_lock);
	for (unsigned k = 0; k < NCLS; k++) {
		if (c->head[k])
			depot_push_locked(k, c->head[k], c->cnt[k]);
		c->head[k] = NULL;
		c->cnt[k] = 0;
	}
	pthread_mutex_unlock(&alloc_lock);
}

/** Thread exit: the cache's objects go to the depot, its count is folded. */
static void tc_exit(void *arg)
{
	tcache_t *c = arg;
	pthread_mutex_lock(&alloc_lock);
	for (unsigned k = 0; k < NCLS; k++)
		if (c->head[k])
			depot_push_locked(k, c->head[k], c->cnt[k]);
	bytes_exited += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	if (c->prev)
		c->prev->next = c->next;
	else
		tcaches = c->next;
	if (c->next)
		c->next->prev = c->prev;
	pthread_mutex_unlock(&alloc_lock);
	tc = NULL;
	free(c);
	decay_arm();
}

static unsigned cls_of(size_t size)
{
	for (unsigned k = 0; k < NCLS; k++)
		if (size <= cls_size[k])
			return k;
	return CLS_LARGE;
}

/**
 * Refills class @a k of @a c: a chain from the depot, else a new slab, a
 * spare of the slab reserve (cht_spare.c) when it is SLAB_BYTES and there
 * is one.
 */
static bool tc_refill(tcache_t *c, unsigned k)
{
	CHT_IMP_BEGIN(t0);
	pthread_mutex_lock(&alloc_lock);
	fobj_t *ch = depot[k];
	if (ch) {
		depot[k] = ch->next_chain;
		unsigned n = chain_len(ch);
		__atomic_store_n(&depot_bytes, depot_bytes - n * cls_size[k],
		    __ATOMIC_RELAXED);
		pthread_mutex_unlock(&alloc_lock);
		c->head[k] = ch;
		c->cnt[k] = n;
		CHT_IMP_END(t0, CHT_IMP_REFILL);
		return true;
	}
	size_t n_after = nslabs + 1;
	pthread_mutex_unlock(&alloc_lock);
	size_t sz = cls_size[k];
	size_t bytes = SLAB_BYTES > 64 * sz ? SLAB_BYTES : 64 * sz;
	char *s = bytes == SLAB_BYTES ? cht__spare_take(n_after) : NULL;
	if (!s)
		s = aligned_alloc(64, bytes);
	if (!s)
		return false;
	__atomic_fetch_add(&reserved, bytes, __ATOMIC_RELAXED);
	/* The first 64 bytes are the slab header; objects in address order. */
	unsigned n = (unsigned) ((bytes - 64) / sz);
	slab_t *sl = (slab_t *) s;
	sl->bytes = bytes;
	sl->nobj = n;
	sl->scratch = 0;
	sl->prev = NULL;
	pthread_mutex_lock(&alloc_lock);
	sl->next = slabs;
	if (slabs)
		slabs->prev = sl;
	slabs = sl;
	__atomic_store_n(&nslabs, nslabs + 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&alloc_lock);
	fobj_t *head = NULL;
	for (unsigned i = n; i-- > 0;) {
		fobj_t *o = (fobj_t *) (s + 64 + (size_t) i * sz);
		o->next = head;
		head = o;
	}
	c->head[k] = head;
	c->cnt[k] = n;
	CHT_IMP_END(t0, CHT_IMP_SLAB);
	return true;
}

/**
 * An object of at least @a size bytes; its class into *@a cls (CLS_LARGE:
 * from malloc). NULL when out of memory.
 */
void *cht__ma_alloc(size_t size, uint8_t *cls)
{
	tcache_t *c = tc_get();
	unsigned k = cls_of(size);
	if (k == CLS_LARGE || !c) {
		void *p = aligned_alloc(64, (size + 63) & ~(size_t) 63);
		if (!p)
			return NULL;
		*cls = CLS_LARGE;
		__atomic_fetch_add(&reserved, size, __ATOMIC_RELAXED);
		return p;
	}
	if (unlikely(!c->head[k]) && !tc_refill(c, k))
		return NULL;
	fobj_t *o = c->head[k];
	c->head[k] = o->next;
	c->cnt[k]--;
	__atomic_store_n(&c->bytes, c->bytes + (int64_t) cls_size[k],
	    __ATOMIC_RELAXED);
	*cls = (uint8_t) k;
	return o;
}

/** Frees object @a p of class @a cls (@a size: its requested size). */
void cht__ma_free(void *p, uint8_t cls, size_t size)
{
	if (cls == CLS_LARGE) {
		__atomic_fetch_sub(&reserved, size, __ATOMIC_RELAXED);
		free(p);
		return;
	}
	tcache_t *c = tc_get();
	if (reclaim_due())
		reclaim_soon();
	if (!c) {
		/* No cache for this thread: straight into the depot. */
		fobj_t *o = p;
		o->next = NULL;
		pthread_mutex_lock(&alloc_lock);
		depot_push_locked(cls, o, 1);
		bytes_exited -= cls_size[cls];
		pthread_mutex_unlock(&alloc_lock);
		decay_arm();
		return;
	}
	fobj_t *o = p;
	o->next = c->head[cls];
	c->head[cls] = o;
	__atomic_store_n(&c->bytes, c->bytes - (int64_t) cls_size[cls],
	    __ATOMIC_RELAXED);
	if (++c->cnt[cls] >= TC_MAX) {
		/* Pass a chain of CHAIN objects to the depot. */
		fobj_t *ch = c->head[cls], *last = ch;
		for (unsigned i = 1; i < CHAIN; i++)
			last = last->next;
		c->head[cls] = last->next;
		c->cnt[cls] -= CHAIN;
		last->next = NULL;
		pthread_mutex_lock(&alloc_lock);
		depot_push_locked(cls, ch, CHAIN);
		pthread_mutex_unlock(&alloc_lock);
		decay_arm();
	}
}

static int slab_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) *(slab_t *const *) a;
	uintptr_t y = (uintptr_t) *(slab_t *const *) b;
	return x < y ? -1 : x > y;
}

/** The slab of @a sv[0..n) (sorted) that holds @a p, or NULL. */
static slab_t *slab_of(slab_t **sv, size_t n, const void *p)
{
	size_t lo = 0, hi = n;  /* the first slab above p is in [lo, hi] */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t) sv[mid] <= (uintptr_t) p)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	slab_t *s = sv[lo - 1];
	return (uintptr_t) p < (uintptr_t) s + s->bytes ? s : NULL;
}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t) t.tv_sec * 1000000000u + (uint64_t) t.tv_nsec;
}

/**
 * Reclaim phase 1: takes reclaim_lock (waits for it when @a force, else
 * gives up if another reclaim runs) and checks the rate limit (not when
 * @a force). On true, reclaim_lock is held and *@a t0 is the start time;
 * on false nothing is held and another reclaim has been asked for if this
 * one was refused.
 */
static bool reclaim_enter(bool force, uint64_t *t0)
{
	if (force) {
		pthread_mutex_lock(&reclaim_lock);
	} else if (pthread_mutex_trylock(&reclaim_lock) != 0) {
		/*
		 * The running one may have missed our frees (it took the
		 * depot, so reclaim_due() cannot tell): ask again.
		 */
		reclaim_soon();
		return false;
	}
	*t0 = now_ns();
	if (!force && *t0 < reclaim_next_ns) {
		pthread_mutex_unlock(&reclaim_lock);
		if (reclaim_due())
			reclaim_soon();
		return false;
	}
	return true;
}

/**
 * Reclaim phase 2 (reclaim_lock held): the calling thread's cache goes to
 * the depot, then under alloc_lock the depot's chains are taken whole into
 * @a dk (their bytes into *@a taken) and the head of the slab list into
 * *@a first. False (nothing taken)
 * when nothing was pushed into the depot since the last reclaim started,
 * unless @a force.
 */
static bool depot_take(bool force, fobj_t *dk[NCLS], slab_t **first,
    size_t *taken)
{
	tc_flush_self();
	pthread_mutex_lock(&alloc_lock);
	if (!force && depot_pushed == 0) {
		pthread_mutex_unlock(&alloc_lock);
		return false;
	}
	for (unsigned k = 0; k < NCLS; k++) {
		dk[k] = depot[k];
		depot[k] = NULL;
	}
	depot_pushed = 0;
	*taken = depot_bytes;  /* still counted: see depot_bytes */
	*first = slabs;
	pthread_mutex_unlock(&alloc_lock);
	return true;
}

/**
 * Reclaim phase 3 (reclaim_lock held, alloc_lock not): the slabs from
 * @a first on, sorted by address (their count into *@a ns), with every free
 * object of the taken chains @a dk counted into its slab's `scratch`.
 * NULL when there is no slab or the array cannot be allocated (then no slab
 * is freed by this reclaim).
 */
static slab_t **slabs_count_free(slab_t *first, fobj_t *const dk[NCLS],
    size_t *ns)
{
	/*
	 * Only a reclaim unlinks a slab (we hold reclaim_lock) and a new slab
	 * only writes the prev of the head, so the next links from `first` on
	 * are stable without alloc_lock.
	 */
	size_t n = 0;
	for (slab_t *s = first; s; s = s->next)
		n++;
	*ns = n;
	slab_t **sv = n ? malloc(n * sizeof(*sv)) : NULL;
	if (!sv)
		return NULL;
	size_t i = 0;
	for (slab_t *s = first; s; s = s->next) {
		s->scratch = 0;
		sv[i++] = s;
	}
	qsort(sv, n, sizeof(*sv), slab_cmp);
	for (unsigned k = 0; k < NCLS; k++)
		for (fobj_t *ch = dk[k]; ch; ch = ch->next_chain)
			for (fobj_t *o = ch; o; o = o->next) {
				slab_t *s = slab_of(sv, n, o);
				if (s)
					s->scratch++;
			}
	return sv;
}

/**
 * Appends chain @a ch of @a n objects (next_chain cleared, its length
 * recorded) to the list *@a h .. *@a t.
 */
static void chain_append(fobj_t **h, fobj_t **t, fobj_t *ch, unsigned n)
{
	chain_set_len(ch, n);
	ch->next_chain = NULL;
	if (*t)
		(*t)->next_chain = ch;
	else
		*h = ch;
	*t = ch;
}

/**
 * Reclaim phase 4 (alloc_lock not held): the chains @a dk of one class
 * rebuilt into chains of CHAIN objects (the last one shorter), *@a kh to
 * *@a kt, without the objects of the slabs of @a sv[0..ns) whose objects
 * are all free (their scratch count is their object count: no object of
 * such a slab is in use or in a cache, as the depot holds each free object
 * once). With @a sv NULL every object is kept. @return the objects kept.
 */
static size_t chains_rebuild(fobj_t *dk, slab_t **sv, size_t ns, fobj_t **kh,
    fobj_t **kt)
{
	size_t kept = 0;
	*kh = *kt = NULL;
	fobj_t *cur = NULL, *cur_tail = NULL;
	unsigned n = 0;
	for (fobj_t *ch = dk, *nch; ch; ch = nch) {
		nch = ch->next_chain;
		for (fobj_t *o = ch, *no; o; o = no) {
			no = o->next;
			slab_t *s = sv ? slab_of(sv, ns, o) : NULL;
			if (s && s->scratch == s->nobj)
				continue;  /* its slab goes */
			o->next = NULL;
			kept++;
			if (cur_tail)
				cur_tail->next = o;
			else
				cur = o;
			cur_tail = o;
			if (++n == CHAIN) {
				chain_append(kh, kt, cur, n);
				cur = cur_tail = NULL;
				n = 0;
			}
		}
	}
	if (cur)  /* the last, short chain */
		chain_append(kh, kt, cur, n);
	return kept;
}

/**
 * Reclaim phase 5: under alloc_lock the rebuilt chains @a kh .. @a kt go
 * back into the depot (ahead of what was pushed meanwhile) and the wholly
 * free slabs of @a sv[0..ns) leave the slab list; depot_bytes counts
 * @a kept_bytes where it counted @a taken_bytes. Returns those slabs,
 * linked through next, for slabs_free().
 */
static slab_t *depot_return(fobj_t *const kh[NCLS], fobj_t *const kt[NCLS],
    size_t taken_bytes, size_t kept_bytes, slab_t **sv, size_t ns)
{
	slab_t *dead = NULL;
	pthread_mutex_lock(&alloc_lock);
	__atomic_store_n(&depot_bytes, depot_bytes - taken_bytes + kept_bytes,
	    __ATOMIC_RELAXED);
	for (unsigned k = 0; k < NCLS; k++) {
		if (kh[k]) {
			kt[k]->next_chain = depot[k];
			depot[k] = kh[k];
		}
	}
	for (size_t i = 0; i < ns && sv; i++) {
		slab_t *s = sv[i];
		if (s->scratch != s->nobj)
			continue;
		if (s->prev)
			s->prev->next = s->next;
		else
			slabs = s->next;
		if (s->next)
			s->next->prev = s->prev;
		s->next = dead;
		dead = s;
		__atomic_store_n(&nslabs, nslabs - 1, __ATOMIC_RELAXED);
	}
	pthread_mutex_unlock(&alloc_lock);
	return dead;
}

/** Reclaim phase 6: the slabs of the list @a dead go back to the system. */
static void slabs_free(slab_t *dead)
{
	while (dead) {
		slab_t *s = dead;
		dead = s->next;
		__atomic_fetch_sub(&reserved, s->bytes, __ATOMIC_RELAXED);
		free(s);
	}
}

/**
 * Returns to the system every slab whose objects are all in the depot, in
 * the phases above (reclaim_enter() .. slabs_free()).
 *
 * The calling thread's cache goes to the depot first (no other thread's
 * cache is touched: it is its owner's alone; its objects keep their slabs
 * until the owner passes them on or exits). Under alloc_lock the depot's
 * chains are taken whole and the slab list is read; then, outside the lock,
 * the slabs are sorted by address, every free object is counted into its
 * slab's header, and the chains are rebuilt without the objects of the
 * slabs whose count is their object count (all free: no object of such a
 * slab is in use or in a cache, as the depot holds each free object once);
 * under alloc_lock again the rebuilt chains go back into the depot and the
 * free slabs leave the list, and they are freed. Meanwhile frees push into
 * the (now short) depot and a refill that finds it empty carves a slab.
 *
 * Cost: O((D + S) log S) for D free objects and S slabs, without the lock,
 * never on the caller of an alloc or a free: @a force runs it from
 * cht_map_*_destroy(); otherwise the worker thread runs it, asked for by a
 * free (reclaim_soon(), reclaim_cb()), and it starts only when
 * RECLAIM_IDLE times its last duration has passed since the last one ended
 * (else it asks again: about one request per RCU batch until then) and something
 * was pushed into the depot since. The idle decay's (@a kind RECLAIM_DECAY,
 * decay_run()) waits for a running reclaim instead of giving up and skips
 * the rate limit; a forced one (RECLAIM_FORCE) also runs when nothing was
 * pushed.
 */
static void reclaim(reclaim_kind_t kind)
{
	uint64_t t0;
	if (!reclaim_enter(kind != RECLAIM_BG, &t0))
		return;
	fobj_t *dk[NCLS];
	slab_t *first;
	size_t taken_bytes;
	if (!depot_take(kind == RECLAIM_FORCE, dk, &first, &taken_bytes)) {
		pthread_mutex_unlock(&reclaim_lock);
		return;
	}
	if (kind == RECLAIM_BG)
		__atomic_fetch_add(&bg_reclaims, 1, __ATOMIC_RELAXED);
	else if (kind == RECLAIM_DECAY)
		__atomic_fetch_add(&decay_reclaims, 1, __ATOMIC_RELAXED);
	size_t ns;
	slab_t **sv = slabs_count_free(first, dk, &ns);
	fobj_t *kh[NCLS], *kt[NCLS];  /* the rebuilt chains, head and tail */
	size_t kept_bytes = 0;
	for (unsigned k = 0; k < NCLS; k++)
		kept_bytes += chains_rebuild(dk[k], sv, ns, &kh[k], &kt[k]) *
		    cls_size[k];
	slab_t *dead = depot_return(kh, kt, taken_bytes, kept_bytes, sv, ns);
	free(sv);
	/*
	 * Freed before reclaim_lock goes: a destroy's reclaim, which waits for
	 * a running one, then finds reserved final.
	 */
	slabs_free(dead);
	/* The slab reserve follows the list down. */
	cht__spare_trim(cht__ma_nslabs());
	uint64_t t1 = now_ns();
	reclaim_next_ns = t1 + RECLAIM_IDLE * (t1 - t0);
	pthread_mutex_unlock(&reclaim_lock);
}

uint64_t cht__ma_bg_reclaims(void)
{
	return __atomic_load_n(&bg_reclaims, __ATOMIC_RELAXED);
}

uint64_t cht__ma_decay_reclaims(void)
{
	return __atomic_load_n(&decay_reclaims, __ATOMIC_RELAXED);
}

/* --- the idle decay (RECLAIM_DECAY_MS) ---------------------------------------------- */

/** Worker thread, the map idle a whole period: the decay's reclaim. */
static void decay_run(cht_env_work_t *w)
{
	(void) w;
	/*
	 * Cleared first (release: the worker read the item's links before
	 * calling us, the next decay_arm() writes them after its acquire):
	 * a push after our depot_take() arms the decay again.
	 */
	__atomic_store_n(&decay_armed, 0, __ATOMIC_RELEASE);
	reclaim(RECLAIM_DECAY);
}

/**
 * RCU reclaimer thread: its cache, where the remove callbacks' frees wait,
 * goes to the depot; then the reclaim on the worker thread.
 */
static void decay_cb(cht_rcu_head_t *h)
{
	(void) h;
	tc_flush_self();
	if (!cht_env_work_enqueue(&decay_work, decay_run, false))
		__atomic_store_n(&decay_armed, 0, __ATOMIC_RELEASE);
}

/**
 * Worker thread, RECLAIM_DECAY_MS after the decay was armed or last looked:
 * pushes came meanwhile, so the map is not idle: look again one period
 * later; none came: the reclaim (through decay_cb()).
 */
static void decay_check(cht_env_work_t *w)
{
	uint64_t p = __atomic_load_n(&depot_pushes, __ATOMIC_RELAXED);
	if (p != decay_seen) {
		decay_seen = p;
		if (!cht_env_work_enqueue_after(w, decay_check, RECLAIM_DECAY_MS))
			__atomic_store_n(&decay_armed, 0, __ATOMIC_RELEASE);
		return;
	}
	cht_rcu_call(&decay_head, decay_cb);
}

/** A free pushed into the depot: arms the idle decay unless it is armed. */
static void decay_arm(void)
{
	if (likely(__atomic_load_n(&decay_armed, __ATOMIC_RELAXED)))
		return;
	if (__atomic_exchange_n(&decay_armed, 1, __ATOMIC_ACQUIRE))
		return;
	if (!cht_env_work_enqueue_after(&decay_work, decay_check,
	    RECLAIM_DECAY_MS))
		__atomic_store_n(&decay_armed, 0, __ATOMIC_RELAXED);
}

/** Bytes handed out by the allocator (every map of the process). */
size_t cht__ma_in_use(void)
{
	pthread_mutex_lock(&alloc_lock);
	int64_t b = bytes_exited;
	for (tcache_t *c = tcaches; c; c = c->next)
		b += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&alloc_lock);
	return b > 0 ? (size_t) b : 0;
}

/* --- the interface to the maps (cht_map_int.h) ------------------------------------ */

unsigned cht__ma_cls_of(size_t size)
{
	return cls_of(size);
}

size_t cht__ma_cls_size(unsigned cls)
{
	return cls < NCLS ? cls_size[cls] : 0;
}

/** RCU callback: the reclaimer thread's cache goes to the depot. */
static void tc_flush_cb(cht_rcu_head_t *h)
{
	(void) h;
	tc_flush_self();
}

void cht__ma_flush_reclaimer(void)
{
	cht_rcu_head_t flush;
	cht_rcu_call(&flush, tc_flush_cb);
	cht_rcu_barrier();
}

void cht__ma_reclaim(void)
{
	reclaim(RECLAIM_FORCE);
}

#ifdef CHT_IM_PROF
__thread cht_im_prof_t cht__im_prof;
uint64_t cht__im_prof_reclaims, cht__im_prof_reclaim_tsc;
#endif

size_t cht__ma_reserved(void)
{
	return __atomic_load_n(&reserved, __ATOMIC_RELAXED) + cht__spare_bytes();
}

size_t cht__ma_nslabs(void)
{
	return __atomic_load_n(&nslabs, __ATOMIC_RELAXED);
}
