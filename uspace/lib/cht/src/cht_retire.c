/** @file cht_retire.c
 * The managed maps' deferred frees (interface in cht_map_int.h): objects
 * retired by a thread go into its open batch, and one cht_rcu_call() per
 * batch frees them after a grace period (cht__ma_free() of cht_alloc.c, on
 * the RCU reclaimer thread): CHT_MAP_RETIRE_BATCH replaced values or removed
 * items of any class per batch, RETIRE64_BATCH overflow lines of the inline
 * map per batch of their own. Also the class-64 wrappers of the inline map
 * and cht__ma_settle(), which waits for every batch.
 */
#include <cht.h>
#include <cht_map.h>
#include "cht_map_int.h"
#include <pthread.h>
#include <stdlib.h>

/* --- deferred frees of replaced values, in batches ---------------------------------- */

typedef struct retire_batch {
	cht_rcu_head_t rcu;
	unsigned n;
	struct {
		void *p;
		uint8_t cls;
		size_t size;
	} o[CHT_MAP_RETIRE_BATCH];
} retire_batch_t;

static __thread retire_batch_t *rb;
static pthread_key_t rb_key;
static pthread_once_t rb_once = PTHREAD_ONCE_INIT;

static void rb_free_cb(cht_rcu_head_t *h)
{
	retire_batch_t *b = (retire_batch_t *) h;
	for (unsigned i = 0; i < b->n; i++)
		cht__ma_free(b->o[i].p, b->o[i].cls, b->o[i].size);
	free(b);
}

/*
 * The 64-byte lines of the inline map (cht_imap.c) retire in batches of
 * their own, RETIRE64_BATCH pointers (32 KiB): a growing inline map retires
 * an overflow line every other split (1.9 million in a 1e7-key growth), and
 * with batches of CHT_MAP_RETIRE_BATCH the RCU reclaimer woke about every
 * 1.5 ms all through a growth (its 1 ms pause between small batches), each
 * time preempting the inserting thread when they share a CPU: 29,017
 * batches, about 3,000 inserts switched out (bench/userspace/growprof.c,
 * 1e7 keys, 1 CPU); 1024 per batch: 1,813 and 3,040; 4096: 453 and 928.
 */
#define RETIRE64_BATCH 4096

typedef struct retire64_batch {
	cht_rcu_head_t rcu;
	unsigned n;
	void *p[RETIRE64_BATCH];
} retire64_batch_t;

static __thread retire64_batch_t *rb64;
static pthread_key_t rb64_key;

static void rb64_free_cb(cht_rcu_head_t *h)
{
	retire64_batch_t *b = (retire64_batch_t *) h;
	for (unsigned i = 0; i < b->n; i++)
		cht__ma_free(b->p[i], CHT__MA_CLS64, 64);
	free(b);
}

/*
 * The thread's open batch is both in rb and in rb_key's value (for the
 * exit destructor); the two are kept equal: a flushed batch belongs to the
 * RCU (its callback frees it), so the key must not point to it any longer.
 * The same for rb64 and rb64_key.
 */

/** Hands a batch (its RCU head @a rcu, its callback @a cb) to the RCU. */
static void post_batch(cht_rcu_head_t *rcu, pthread_key_t key,
    void (*cb)(cht_rcu_head_t *))
{
	CHT_IMP_BEGIN(t0);
	pthread_setspecific(key, NULL);
	cht_rcu_call(rcu, cb);
	CHT_IMP_END(t0, CHT_IMP_RCU_CALL);
}

static void flush_rb(void)
{
	if (rb && rb->n) {
		retire_batch_t *b = rb;
		rb = NULL;
		post_batch(&b->rcu, rb_key, rb_free_cb);
	}
}

static void flush_rb64(void)
{
	if (rb64 && rb64->n) {
		retire64_batch_t *b = rb64;
		rb64 = NULL;
		post_batch(&b->rcu, rb64_key, rb64_free_cb);
	}
}

void cht__ma_flush_retired(void)
{
	flush_rb();
	flush_rb64();
}

/** At a thread's exit: its open batch @a b posted if not empty, else freed. */
static void exit_batch(void *b, cht_rcu_head_t *rcu, unsigned n,
    void (*cb)(cht_rcu_head_t *))
{
	if (n)
		cht_rcu_call(rcu, cb);
	else
		free(b);
}

/** Thread exit: the open batch (@a arg, == rb). */
static void rb_exit(void *arg)
{
	retire_batch_t *b = arg;
	rb = NULL;
	exit_batch(b, &b->rcu, b->n, rb_free_cb);
}

/** Thread exit: the open line batch (@a arg, == rb64). */
static void rb64_exit(void *arg)
{
	retire64_batch_t *b = arg;
	rb64 = NULL;
	exit_batch(b, &b->rcu, b->n, rb64_free_cb);
}

static void rb_key_init(void)
{
	if (pthread_key_create(&rb_key, rb_exit) != 0 ||
	    pthread_key_create(&rb64_key, rb64_exit) != 0)
		abort();
}

/**
 * Frees @a p after a grace period: into this thread's batch, which one
 * cht_rcu_call() frees when full. Falls back to a grace period of its own
 * (cht_rcu_synchronize() is not allowed in a section: then leaks nothing but
 * waits for the batch) when no batch can be allocated.
 */
void cht__ma_retire(void *p, uint8_t cls, size_t size)
{
	if (!rb) {
		pthread_once(&rb_once, rb_key_init);
		rb = malloc(sizeof(*rb));
		if (!rb)
			abort();  /* 1.6 KiB; see cht_map.h (no error path here) */
		rb->n = 0;
		pthread_setspecific(rb_key, rb);
	}
	rb->o[rb->n].p = p;
	rb->o[rb->n].cls = cls;
	rb->o[rb->n].size = size;
	if (++rb->n == CHT_MAP_RETIRE_BATCH)
		flush_rb();
}

void cht__ma_retire64(void *p)
{
	if (!rb64) {
		pthread_once(&rb_once, rb_key_init);
		rb64 = malloc(sizeof(*rb64));
		if (!rb64)
			abort();  /* 32 KiB; as cht__ma_retire() */
		rb64->n = 0;
		pthread_setspecific(rb64_key, rb64);
	}
	rb64->p[rb64->n] = p;
	if (++rb64->n == RETIRE64_BATCH)
		flush_rb64();
}

/* --- the inline map's overflow lines (class 64), and the settle ---------------- */

void *cht__ma_alloc64(void)
{
	uint8_t cls;
	CHT_IMP_BEGIN(t0);
	void *p = cht__ma_alloc(64, &cls);
	CHT_IMP_END(t0, CHT_IMP_ALLOC);
	if (p && cls != CHT__MA_CLS64) {
		/* No thread cache (out of memory): not a class-64 object. */
		cht__ma_free(p, cls, 64);
		return NULL;
	}
	return p;
}

void cht__ma_free64(void *p)
{
	cht__ma_free(p, CHT__MA_CLS64, 64);
}

void cht__ma_settle(void)
{
	cht__ma_flush_retired();
	cht_rcu_barrier();
	cht__ma_flush_reclaimer();
	cht__ma_reclaim();
}
