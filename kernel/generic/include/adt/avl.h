/** @file avl.h
 * An intrusive AVL tree keyed by an unsigned integer (uintptr_t): insert,
 * remove and the ordered look-ups (greatest key <= k, least key > k) in
 * O(log n), heights kept within 1.44 log2(n + 2).
 *
 * The tree does no locking and no allocation: the caller embeds an avl_node_t
 * in its object, sets node->key, and serializes every call on one tree with
 * its own lock. The only traversal that may run concurrently with a writer
 * is avl_find_le_rcu() (see there); every other look-up must exclude
 * writers too. Any context, never sleeps. Recursion depth is the
 * tree's height (at most 1.44 log2(n + 2) + 1 frames of a few words each).
 */
#ifndef KERN_ADT_AVL_H_
#define KERN_ADT_AVL_H_

#include <typedefs.h>

typedef struct avl_node {
	struct avl_node *left, *right;
	/** The key; set by the caller before avl_insert(), never changed while
	 * the node is in a tree. */
	uintptr_t key;
	/** Height of the subtree rooted here (a leaf: 1); the tree's business. */
	int height;
} avl_node_t;

typedef struct {
	avl_node_t *root;
	size_t count;      /**< nodes in the tree */
} avl_tree_t;

/** Makes @a t an empty tree. */
void avl_init(avl_tree_t *t);

/**
 * Inserts @a n (its key set). @return EOK, or EEXIST if a node with that key
 * is in the tree already (nothing changed).
 */
int avl_insert(avl_tree_t *t, avl_node_t *n);

/** Removes @a n, which must be in @a t. */
void avl_remove(avl_tree_t *t, avl_node_t *n);

/** The node with the greatest key <= @a key, or NULL. */
avl_node_t *avl_find_le(const avl_tree_t *t, uintptr_t key);

/**
 * Bound on the nodes avl_find_le_rcu() visits: above the height of any AVL
 * tree that fits in memory (1.44 log2(n + 2) < 47 for n < 2^32), so only a
 * walk disturbed by concurrent rotations can reach it.
 */
#define AVL_RCU_MAX_STEPS 64

/**
 * avl_find_le() for a reader that does not exclude writers: the walk loads
 * every link with acquire order (the writers' stores are release) and gives
 * up after AVL_RCU_MAX_STEPS nodes. A rotation or removal running meanwhile
 * can make the walk miss a node or end at a wrong one, so the result is only
 * a guess that the caller must validate, e.g. with a sequence count the
 * writers bump around every change (as mm/as.c does); the nodes it may reach
 * must stay allocated until the walk is over (freed after an RCU grace
 * period, the walk inside a reader section). Keys are read plainly: they
 * never change while a node is in a tree.
 * @param out receives the node with the greatest key <= @a key, or NULL.
 * @return false if the walk gave up (*@a out unchanged); true otherwise.
 * Any context; never blocks; O(height).
 */
bool avl_find_le_rcu(const avl_tree_t *t, uintptr_t key, avl_node_t **out);

/** The node with the least key > @a key, or NULL (in-order successor). */
avl_node_t *avl_find_gt(const avl_tree_t *t, uintptr_t key);

/** The node with the least key, or NULL when the tree is empty. */
avl_node_t *avl_first(const avl_tree_t *t);

/**
 * Checks the tree's invariants (search order, heights, balance factors in
 * [-1, 1], node count). @return NULL or a static string naming the first
 * violation. For tests; O(n), recursive.
 */
const char *avl_check(const avl_tree_t *t);

#endif
