/** @file avl.c
 * Intrusive AVL tree (adt/avl.h). Insert and remove are recursive and
 * rebalance on the way back up with single and double rotations; every
 * operation touches O(height) nodes. The caller's lock protects the tree
 * against other writers.
 *
 * Every store to a link (a child pointer or the root) is an __atomic store
 * with release order, so that avl_find_le_rcu() may walk the tree while a
 * writer changes it: the release forbids the stores that initialized a node
 * (its key, its children) from being reordered after the store that links
 * it, so a reader that loads the link (acquire) sees them. The writer's own
 * loads of links stay plain: only the writer stores them (race-free reads).
 */
#include <adt/avl.h>
#include <errno.h>

/** Stores a link a lock-free reader may load: see the file comment. */
#define LINK_SET(field, val) __atomic_store_n(&(field), (val), __ATOMIC_RELEASE)

static inline int height(const avl_node_t *n)
{
	return n ? n->height : 0;
}

static inline void update(avl_node_t *n)
{
	int l = height(n->left), r = height(n->right);
	n->height = (l > r ? l : r) + 1;
}

static avl_node_t *rotate_right(avl_node_t *n)
{
	avl_node_t *l = n->left;
	LINK_SET(n->left, l->right);
	LINK_SET(l->right, n);
	update(n);
	update(l);
	return l;
}

static avl_node_t *rotate_left(avl_node_t *n)
{
	avl_node_t *r = n->right;
	LINK_SET(n->right, r->left);
	LINK_SET(r->left, n);
	update(n);
	update(r);
	return r;
}

/** Restores the balance of @a n (its subtrees balanced, heights differing
 * by at most 2); @return the subtree's new root. */
static avl_node_t *rebalance(avl_node_t *n)
{
	update(n);
	int bf = height(n->left) - height(n->right);
	if (bf > 1) {
		if (height(n->left->left) < height(n->left->right))
			LINK_SET(n->left, rotate_left(n->left));
		return rotate_right(n);
	}
	if (bf < -1) {
		if (height(n->right->right) < height(n->right->left))
			LINK_SET(n->right, rotate_right(n->right));
		return rotate_left(n);
	}
	return n;
}

void avl_init(avl_tree_t *t)
{
	LINK_SET(t->root, NULL);
	t->count = 0;
}

static avl_node_t *insert(avl_node_t *root, avl_node_t *n, int *rc)
{
	if (!root)
		return n;
	if (n->key < root->key)
		LINK_SET(root->left, insert(root->left, n, rc));
	else if (n->key > root->key)
		LINK_SET(root->right, insert(root->right, n, rc));
	else {
		*rc = EEXIST;
		return root;
	}
	return rebalance(root);
}

int avl_insert(avl_tree_t *t, avl_node_t *n)
{
	int rc = EOK;
	/* Not reachable yet: plain stores, published by the linking store. */
	n->left = n->right = NULL;
	n->height = 1;
	LINK_SET(t->root, insert(t->root, n, &rc));
	if (rc == EOK)
		t->count++;
	return rc;
}

/** Unlinks the least node of @a root into *@a min; @return the new root. */
static avl_node_t *remove_min(avl_node_t *root, avl_node_t **min)
{
	if (!root->left) {
		*min = root;
		return root->right;
	}
	LINK_SET(root->left, remove_min(root->left, min));
	return rebalance(root);
}

static avl_node_t *remove(avl_node_t *root, uintptr_t key, bool *found)
{
	if (!root)
		return NULL;
	if (key < root->key) {
		LINK_SET(root->left, remove(root->left, key, found));
	} else if (key > root->key) {
		LINK_SET(root->right, remove(root->right, key, found));
	} else {
		*found = true;
		if (!root->left || !root->right)
			return root->left ? root->left : root->right;
		/* Two children: the successor takes this node's place. */
		avl_node_t *succ;
		avl_node_t *right = remove_min(root->right, &succ);
		LINK_SET(succ->left, root->left);
		LINK_SET(succ->right, right);
		root = succ;
	}
	return rebalance(root);
}

void avl_remove(avl_tree_t *t, avl_node_t *n)
{
	bool found = false;
	LINK_SET(t->root, remove(t->root, n->key, &found));
	if (found)
		t->count--;
}

avl_node_t *avl_find_le(const avl_tree_t *t, uintptr_t key)
{
	avl_node_t *best = NULL;
	for (avl_node_t *n = t->root; n; ) {
		if (n->key <= key) {
			best = n;
			n = n->right;
		} else {
			n = n->left;
		}
	}
	return best;
}

bool avl_find_le_rcu(const avl_tree_t *t, uintptr_t key, avl_node_t **out)
{
	avl_node_t *best = NULL;
	/*
	 * Acquire on every link: pairs with LINK_SET's release, so the key
	 * (and the links) of a node just linked are seen initialized.
	 */
	avl_node_t *n = __atomic_load_n(&t->root, __ATOMIC_ACQUIRE);
	for (unsigned steps = 0; n; steps++) {
		if (steps >= AVL_RCU_MAX_STEPS)
			return false;
		if (n->key <= key) {
			best = n;
			n = __atomic_load_n(&n->right, __ATOMIC_ACQUIRE);
		} else {
			n = __atomic_load_n(&n->left, __ATOMIC_ACQUIRE);
		}
	}
	*out = best;
	return true;
}

avl_node_t *avl_find_gt(const avl_tree_t *t, uintptr_t key)
{
	avl_node_t *best = NULL;
	for (avl_node_t *n = t->root; n; ) {
		if (n->key > key) {
			best = n;
			n = n->left;
		} else {
			n = n->right;
		}
	}
	return best;
}

avl_node_t *avl_first(const avl_tree_t *t)
{
	avl_node_t *n = t->root;
	while (n && n->left)
		n = n->left;
	return n;
}

/** Checks the subtree at @a n, whose keys lie in (lo, hi) where the bounds
 * exist; adds its nodes to *count. @return NULL or the violation. */
static const char *check(const avl_node_t *n, const uintptr_t *lo,
    const uintptr_t *hi, size_t *count)
{
	if (!n)
		return NULL;
	if ((lo && n->key <= *lo) || (hi && n->key >= *hi))
		return "a key out of search order";
	int l = height(n->left), r = height(n->right);
	if (n->height != (l > r ? l : r) + 1)
		return "a stored height is wrong";
	if (l - r > 1 || r - l > 1)
		return "a node out of balance";
	(*count)++;
	const char *e = check(n->left, lo, &n->key, count);
	return e ? e : check(n->right, &n->key, hi, count);
}

const char *avl_check(const avl_tree_t *t)
{
	size_t count = 0;
	const char *e = check(t->root, NULL, NULL, &count);
	if (!e && count != t->count)
		return "the node count is wrong";
	return e;
}
