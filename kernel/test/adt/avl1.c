/** @file avl1.c
 * Test `avl1`: the AVL tree (adt/avl.h) against a model.
 *
 * Keys are multiples of 4096 below AVL1_KEYS * 4096; a bitmap is the model.
 * 1. AVL1_KEYS keys inserted in ascending order (the worst case of an
 *    unbalanced search tree): the invariants hold and the height stays
 *    within 1.44 log2(n + 2); a second insert of each key gives EEXIST.
 * 2. AVL1_OPS random inserts and removes (a fixed LCG seed): after each, a
 *    random greatest-key-<= and least-key-> query agrees with the bitmap
 *    (and avl_find_le_rcu(), the lock-free walk, with avl_find_le());
 *    the invariants are checked every 64 operations and at the end.
 * 3. Everything removed in random order: the tree is empty.
 */
#include <test.h>
#include <adt/avl.h>
#include <mm/malloc.h>
#include <errno.h>
#include <lib/str.h>

#define AVL1_KEYS 2048
#define AVL1_OPS  20000

static uint64_t avl1_seed;

static unsigned avl1_rand(unsigned n)
{
	avl1_seed = avl1_seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned) ((avl1_seed >> 33) % n);
}

/** floor(1.44 * log2(n + 2)) in integer arithmetic (1.44 ~ 144/100). */
static int avl1_height_bound(size_t n)
{
	int lg = 0;
	for (size_t v = n + 2; v > 1; v >>= 1)
		lg++;
	/* lg = ceil-ish log2; the bound uses it plus one for the rounding. */
	return (144 * (lg + 1)) / 100;
}

static const char *avl1_query(const avl_tree_t *t, const bool *in)
{
	unsigned q = avl1_rand(AVL1_KEYS + 1);
	uintptr_t key = (uintptr_t) q * 4096 + avl1_rand(4096) - 2048;
	if (q == 0)
		key = 0;
	/* Model: the greatest present key <= key, the least > key. */
	long le = -1, gt = -1;
	for (long i = 0; i < AVL1_KEYS; i++) {
		if (!in[i])
			continue;
		if ((uintptr_t) i * 4096 <= key)
			le = i;
		else if (gt < 0)
			gt = i;
	}
	avl_node_t *a = avl_find_le(t, key);
	avl_node_t *b = avl_find_gt(t, key);
	if ((le < 0) != (a == NULL) || (a && a->key != (uintptr_t) le * 4096))
		return "avl_find_le disagrees with the model";
	if ((gt < 0) != (b == NULL) || (b && b->key != (uintptr_t) gt * 4096))
		return "avl_find_gt disagrees with the model";
	/* The lock-free walk on a tree nobody changes: the same answer. */
	avl_node_t *r = (avl_node_t *) 1;
	if (!avl_find_le_rcu(t, key, &r))
		return "avl_find_le_rcu gave up on a quiescent tree";
	if (r != a)
		return "avl_find_le_rcu disagrees with avl_find_le";
	return NULL;
}

const char *test_avl1(void)
{
	avl_node_t *nodes = malloc(AVL1_KEYS * sizeof(avl_node_t));
	bool *in = malloc(AVL1_KEYS * sizeof(bool));
	if (!nodes || !in) {
		free(nodes);
		free(in);
		return "out of memory";
	}
	memset(in, 0, AVL1_KEYS * sizeof(bool));
	avl1_seed = 29;
	const char *err = NULL;
	avl_tree_t t;
	avl_init(&t);

	for (unsigned i = 0; i < AVL1_KEYS && !err; i++) {
		nodes[i].key = (uintptr_t) i * 4096;
		if (avl_insert(&t, &nodes[i]) != EOK)
			err = "ascending insert failed";
		in[i] = true;
	}
	if (!err)
		err = avl_check(&t);
	if (!err && t.root->height > avl1_height_bound(AVL1_KEYS))
		err = "ascending inserts: the tree is higher than 1.44 log2(n + 2)";
	for (unsigned i = 0; i < AVL1_KEYS && !err; i++) {
		avl_node_t dup = { .key = (uintptr_t) i * 4096 };
		if (avl_insert(&t, &dup) != EEXIST)
			err = "a duplicate key was inserted";
	}
	if (!err && t.count != AVL1_KEYS)
		err = "the count changed on a duplicate insert";

	for (unsigned op = 0; op < AVL1_OPS && !err; op++) {
		unsigned k = avl1_rand(AVL1_KEYS);
		if (in[k]) {
			avl_remove(&t, &nodes[k]);
			in[k] = false;
		} else {
			nodes[k].key = (uintptr_t) k * 4096;
			if (avl_insert(&t, &nodes[k]) != EOK)
				err = "insert of an absent key failed";
			in[k] = true;
		}
		if (!err)
			err = avl1_query(&t, in);
		if (!err && op % 64 == 0)
			err = avl_check(&t);
	}
	if (!err)
		err = avl_check(&t);
	if (!err && t.root && t.root->height > avl1_height_bound(t.count))
		err = "the tree is higher than 1.44 log2(n + 2)";

	for (unsigned left = AVL1_KEYS * 4; left && !err && t.count; left--) {
		unsigned k = avl1_rand(AVL1_KEYS);
		if (in[k]) {
			avl_remove(&t, &nodes[k]);
			in[k] = false;
		}
	}
	for (unsigned k = 0; k < AVL1_KEYS && !err; k++) {
		if (in[k]) {
			avl_remove(&t, &nodes[k]);
			in[k] = false;
		}
	}
	if (!err && (t.count != 0 || t.root != NULL || avl_first(&t) != NULL))
		err = "the tree is not empty after removing every key";
	free(nodes);
	free(in);
	return err;
}
