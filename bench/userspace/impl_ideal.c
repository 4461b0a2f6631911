/** @file impl_ideal.c
 * The floor of the miss count (bench_us misses, make -C uspace bench-misses):
 * an ideal open-addressing table, not a concurrent one. 16-byte inline slots
 * (key, value), 2^k >= 2 * keys slots (load <= 0.5), linear probing from the
 * top bits of the mixed hash, key 0 = empty (never a harness key), deletion by
 * backward shift (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so no tombstones.
 * A successful lookup reads one line unless its probe run crosses a line
 * boundary; an unsuccessful one reads to the first empty slot. One writer, no
 * reclamation, no resizing (the adapter aborts when the table is full):
 * a single-threaded reference point, never run with 2 threads.
 */
#include "bench.h"
#include <stdio.h>
#include <stdlib.h>

typedef struct {
	uint64_t key;
	uint64_t value;
} islot_t;

typedef struct {
	islot_t *s;
	size_t mask;
	unsigned shift;
	size_t n;
} itable_t;

static void *i_create(size_t expect, size_t initial)
{
	(void) initial;
	itable_t *t = calloc(1, sizeof(*t));
	size_t cap = bench_pow2(2 * (expect ? expect : 1));
	if (cap < 64)
		cap = 64;
	/* 64-byte aligned: four slots per line, none straddles. */
	if (!t || posix_memalign((void **) &t->s, 64, cap * sizeof(islot_t)))
		abort();
	for (size_t i = 0; i < cap; i++)
		t->s[i] = (islot_t) { 0, 0 };
	t->mask = cap - 1;
	t->shift = 64 - (unsigned) __builtin_ctzll(cap);
	return t;
}

static inline size_t i_home(const itable_t *t, uint64_t key)
{
	return (size_t) (bench_mix(key) >> t->shift);
}

static void i_destroy(void *tp)
{
	itable_t *t = tp;
	free(t->s);
	free(t);
}

static void i_nop(void)
{
}

static int i_lookup(void *tp, uint64_t key, uint64_t *val)
{
	itable_t *t = tp;
	for (size_t i = i_home(t, key);; i = (i + 1) & t->mask) {
		uint64_t k = t->s[i].key;
		if (k == key) {
			*val = t->s[i].value;
			return 1;
		}
		if (k == 0)
			return 0;
	}
}

static int i_insert(void *tp, uint64_t key, uint64_t val)
{
	itable_t *t = tp;
	if (2 * (t->n + 1) > t->mask + 1) {
		fprintf(stderr, "ideal: table full (load 0.5)\n");
		abort();
	}
	for (size_t i = i_home(t, key);; i = (i + 1) & t->mask) {
		if (t->s[i].key == key)
			return 0;
		if (t->s[i].key == 0) {
			t->s[i] = (islot_t) { key, val };
			t->n++;
			return 1;
		}
	}
}

static int i_remove(void *tp, uint64_t key)
{
	itable_t *t = tp;
	size_t i = i_home(t, key);
	for (;; i = (i + 1) & t->mask) {
		if (t->s[i].key == 0)
			return 0;
		if (t->s[i].key == key)
			break;
	}
	/* Backward shift: move up every later slot of the run whose home
	 * lies cyclically at or before the hole. */
	for (size_t j = i;;) {
		j = (j + 1) & t->mask;
		if (t->s[j].key == 0)
			break;
		size_t h = i_home(t, t->s[j].key);
		if (((j - h) & t->mask) >= ((j - i) & t->mask)) {
			t->s[i] = t->s[j];
			i = j;
		}
	}
	t->s[i] = (islot_t) { 0, 0 };
	t->n--;
	return 1;
}

static int i_update(void *tp, uint64_t key, uint64_t val)
{
	itable_t *t = tp;
	for (size_t i = i_home(t, key);; i = (i + 1) & t->mask) {
		if (t->s[i].key == key) {
			t->s[i].value = val;
			return 1;
		}
		if (t->s[i].key == 0)
			return 0;
	}
}

static long i_buckets(void *tp)
{
	return (long) (((itable_t *) tp)->mask + 1);
}

static void i_settle(void *tp)
{
	(void) tp;
}

const bench_impl_t impl_ideal = {
	.name = "ideal", .library = "ideal open addressing (reference, 1 thread)",
	.layout = "inline", .presized = true, .create = i_create,
	.destroy = i_destroy, .thread_init = i_nop, .thread_fini = i_nop,
	.lookup = i_lookup, .insert = i_insert, .remove = i_remove,
	.update = i_update, .buckets = i_buckets, .settle = i_settle,
};

/*
 * `ideal-node`: the floor of a table whose items the user allocates (libcht's
 * intrusive API, cds_lfht): the table cannot hold the key, only what it
 * computed from it. The same open addressing, but a slot is (the full mixed
 * hash, a pointer to the item), and the item (key, value) is a line of its own
 * from bench_line_alloc() (the layout <cht.h> documents). A hit reads its slot's
 * line, then its item's line, a dependent second miss that no table of this
 * kind avoids; a slot of another key is passed on its hash without reading the
 * item (the 64-bit hash: a false match has probability 2^-64 per slot), so an
 * unsuccessful lookup reads the slots' lines only. Single-threaded like
 * `ideal`: no reader section, no reclamation; items are freed at once.
 */
typedef struct {
	uint64_t key;
	uint64_t value;
} inode_t;

typedef struct {
	uint64_t hash;
	inode_t *item;  /* NULL: empty */
} nslot_t;

typedef struct {
	nslot_t *s;
	size_t mask;
	unsigned shift;
	size_t n;
} ntable_t;

static void *n_create(size_t expect, size_t initial)
{
	(void) initial;
	ntable_t *t = calloc(1, sizeof(*t));
	size_t cap = bench_pow2(2 * (expect ? expect : 1));
	if (cap < 64)
		cap = 64;
	if (!t || posix_memalign((void **) &t->s, 64, cap * sizeof(nslot_t)))
		abort();
	for (size_t i = 0; i < cap; i++)
		t->s[i] = (nslot_t) { 0, NULL };
	t->mask = cap - 1;
	t->shift = 64 - (unsigned) __builtin_ctzll(cap);
	return t;
}

static void n_destroy(void *tp)
{
	ntable_t *t = tp;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->s[i].item)
			bench_line_free(t->s[i].item);
	free(t->s);
	free(t);
}

/* The slot of @a key, or of the empty slot that ends its probe run. */
static size_t n_slot(const ntable_t *t, uint64_t key)
{
	uint64_t h = bench_mix(key);
	for (size_t i = (size_t) (h >> t->shift);; i = (i + 1) & t->mask) {
		const nslot_t *s = &t->s[i];
		if (!s->item || (s->hash == h && s->item->key == key))
			return i;
	}
}

static int n_lookup(void *tp, uint64_t key, uint64_t *val)
{
	ntable_t *t = tp;
	inode_t *it = t->s[n_slot(t, key)].item;
	if (!it)
		return 0;
	*val = it->value;
	return 1;
}

static int n_insert(void *tp, uint64_t key, uint64_t val)
{
	ntable_t *t = tp;
	if (2 * (t->n + 1) > t->mask + 1) {
		fprintf(stderr, "ideal-node: table full (load 0.5)\n");
		abort();
	}
	size_t i = n_slot(t, key);
	if (t->s[i].item)
		return 0;
	inode_t *it = bench_line_alloc();
	*it = (inode_t) { key, val };
	t->s[i] = (nslot_t) { bench_mix(key), it };
	t->n++;
	return 1;
}

static int n_remove(void *tp, uint64_t key)
{
	ntable_t *t = tp;
	size_t i = n_slot(t, key);
	if (!t->s[i].item)
		return 0;
	bench_line_free(t->s[i].item);
	/* Backward shift, as in i_remove(), on the stored hashes. */
	for (size_t j = i;;) {
		j = (j + 1) & t->mask;
		if (!t->s[j].item)
			break;
		size_t h = (size_t) (t->s[j].hash >> t->shift);
		if (((j - h) & t->mask) >= ((j - i) & t->mask)) {
			t->s[i] = t->s[j];
			i = j;
		}
	}
	t->s[i] = (nslot_t) { 0, NULL };
	t->n--;
	return 1;
}

static int n_update(void *tp, uint64_t key, uint64_t val)
{
	ntable_t *t = tp;
	inode_t *it = t->s[n_slot(t, key)].item;
	if (!it)
		return 0;
	it->value = val;
	return 1;
}

static long n_buckets(void *tp)
{
	return (long) (((ntable_t *) tp)->mask + 1);
}

const bench_impl_t impl_ideal_node = {
	.name = "ideal-node",
	.library = "ideal open addressing over user items (reference, 1 thread)",
	.layout = "node", .presized = true, .create = n_create,
	.destroy = n_destroy, .thread_init = i_nop, .thread_fini = i_nop,
	.lookup = n_lookup, .insert = n_insert, .remove = n_remove,
	.update = n_update, .buckets = n_buckets, .settle = i_settle,
	.est_bytes_per_key = 110,
};
BENCH_REGISTER(impl_ideal_node);
