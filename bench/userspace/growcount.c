/** @file growcount.c
 * What an insert of the intrusive table costs while the table grows, counted
 * exactly (a diagnostic, not a benchmark): the inserts of the crossing window
 * (the keys around the grow point) of an auto-resized `cht` against the same
 * keys into a presized table.
 *
 *   growcount GROW END [presized] [-b B1,B2,B3] [-w] [-1] [-l]
 *
 * GROW is the grow point to cross (a power of two: the default load limit is
 * 1 item per bucket in userspace), END the last key index + 1 of the window.
 * The table (auto: created with 1 bucket, as `bench_us big cht` creates it;
 * presized: 2 * GROW buckets and no growth) is filled with key_present(0 ..
 * GROW - GROW/64 - 1) (bench_keys.h, the keys of `bench_us big`), any resize
 * finished, then the window's keys are inserted, one per reader section
 * (impl_cht.c's insert), each node from malloc. -1: the auto table is
 * created with GROW buckets, so that the window's grow is its only resize
 * (the resizer's counts under callgrind are then the window's alone).
 *
 * Phases of the window, as the inserting thread sees them before each insert
 * (two relaxed loads: the published array and the resize request count):
 *   pre     no resize requested yet
 *   link    resize requested, the new array not yet published (the resizer
 *           allocates it and links its dummies; inserts use the old array)
 *   retire  the new array published, the resizer still running (it waits a
 *           grace period and unlinks the old dummies)
 *   after   the resize is over
 * A presized run takes the auto run's phase boundaries with -b (key indices),
 * so both count the same keys per phase.
 *
 * Under callgrind (--collect-atstart=no --separate-threads=yes
 * --cache-sim=yes): collection is on only inside the window and each phase
 * is dumped on its own (CALLGRIND_DUMP_STATS_AT), one file per thread, so
 * the inserting thread's events and the resizer's are apart.
 * -l: the inserts are not collected; after each, one lookup of a present
 * key (a fixed pseudo-random one of those inserted so far) is, and only it:
 * the phases' counts are then the lookups' (Triplett's experiment, counted).
 * -w (native runs): after each insert, outside any count, walks from the
 * bucket the insert started at to the new item and counts the nodes before
 * it (dummies of the old array, of the new one, and items): the walk each
 * insert made, per phase.
 */
#define _GNU_SOURCE
#include <cht.h>
#include "bench_keys.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

typedef struct {
	cht_link_t link;
	uint64_t key;
	uint64_t value;
} gnode_t;

CHT_DEFINE_U64_KEY(g, gnode_t, link, key, cht_u64_identity)

/* Nothing is removed: no remove callback. */
static const cht_ops_t g_ops = { CHT_U64_KEY_OPS(g) };

enum { P_PRE, P_LINK, P_RETIRE, P_AFTER, P_N };
static const char *pname[P_N] = { "pre", "link", "retire", "after" };

static cht_t h;

static int phase_now(cht_buckets_t *b0)
{
	cht_buckets_t *b = __atomic_load_n(&h.b, __ATOMIC_RELAXED);
	size_t reqs = __atomic_load_n(&h.resize_reqs, __ATOMIC_RELAXED);
	if (b == b0)
		return reqs ? P_LINK : P_PRE;
	return reqs ? P_RETIRE : P_AFTER;
}

static void wait_idle(void)
{
	while (__atomic_load_n(&h.resize_reqs, __ATOMIC_ACQUIRE) != 0)
		usleep(1000);
}

/* The walk of -w: nodes passed from @a start to @a item. */
typedef struct {
	uint64_t n, old_d, new_d, items;
} walk_t;

static void walk_count(cht_node_t *d0, size_t nb0, cht_node_t *start,
    cht_node_t *item, walk_t *w)
{
	/* d0: the old array's dummies, compared only (it may be freed). */
	for (cht_node_t *n = start; n && n != item;
	    n = (cht_node_t *) (n->next & ~(uintptr_t) CHT_LINK_MARKS)) {
		if (n->hash & 1)
			w->items++;
		else if (n >= d0 && n < d0 + nb0)
			w->old_d++;
		else
			w->new_d++;
	}
	w->n++;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: growcount GROW END [presized] "
		    "[-b B1,B2,B3] [-w]\n");
		return 2;
	}
	size_t grow = strtoull(argv[1], NULL, 0);
	size_t end = strtoull(argv[2], NULL, 0);
	bool presized = false, walk = false, one = false, look = false;
	size_t bnd[P_N] = { 0 };
	bool have_bnd = false;
	for (int i = 3; i < argc; i++) {
		if (!strcmp(argv[i], "presized"))
			presized = true;
		else if (!strcmp(argv[i], "-w"))
			walk = true;
		else if (!strcmp(argv[i], "-1"))
			one = true;
		else if (!strcmp(argv[i], "-l"))
			look = true;
		else if (!strcmp(argv[i], "-b") && i + 1 < argc) {
			have_bnd = sscanf(argv[++i], "%zu,%zu,%zu", &bnd[1],
			    &bnd[2], &bnd[3]) == 3;
		}
	}
	size_t start = grow - grow / 64;
	if (cht_rcu_register_thread() != 0)
		abort();
	int rc = presized ? cht_create(&h, 2 * grow, 2 * grow, (size_t) 1 << 20,
	    &g_ops) : cht_create(&h, one ? grow : 1, 1, 0, &g_ops);
	if (rc != CHT_OK)
		abort();
	for (size_t i = 0; i < start; i++) {
		gnode_t *n = malloc(sizeof(*n));
		n->key = key_present(i);
		n->value = i;
		cht_rcu_read_lock();
		if (!cht_insert_unique(&h, &n->link, NULL))
			abort();
		cht_rcu_read_unlock();
		if ((i & 0xffff) == 0)
			wait_idle();
	}
	wait_idle();
	cht_stats_t st;
	cht_get_stats(&h, &st);
	fprintf(stderr, "window %zu..%zu, buckets %zu at its start\n", start,
	    end, st.buckets);
	cht_buckets_t *b0 = h.b;
	cht_node_t *d0 = b0->d;
	size_t nb0 = (size_t) 1 << b0->order;
	int ph = P_PRE;
	size_t at[P_N] = { start, 0, 0, 0 };
	walk_t wk[P_N];
	memset(wk, 0, sizeof(wk));
	uint64_t ls = 4242, lhits = 0;
	if (!look)
		CALLGRIND_TOGGLE_COLLECT;
	for (size_t i = start; i < end; i++) {
		int p = ph;
		if (presized) {
			while (have_bnd && p + 1 < P_N && i >= bnd[p + 1])
				p++;
		} else {
			p = phase_now(b0);
		}
		while (p > ph) {
			/* Every phase dumped, an empty one too. */
			CALLGRIND_DUMP_STATS_AT(pname[ph]);
			ph++;
			at[ph] = i;
		}
		gnode_t *n = malloc(sizeof(*n));
		n->key = key_present(i);
		n->value = i;
		cht_rcu_read_lock();
		cht_buckets_t *b = walk ? h.b : NULL;
		if (!cht_insert_unique(&h, &n->link, NULL))
			abort();
		if (walk) {
			uint64_t hash = n->link.n.hash;
			walk_count(d0, nb0, &b->d[hash >> b->shift], &n->link.n,
			    &wk[ph]);
		}
		cht_rcu_read_unlock();
		if (look) {
			/* Only this lookup is collected (-l). */
			uint64_t k = key_present(rnd(&ls) % i);
			CALLGRIND_TOGGLE_COLLECT;
			cht_rcu_read_lock();
			lhits += cht_find_fast(&h, &k, &g_ops) != NULL;
			cht_rcu_read_unlock();
			CALLGRIND_TOGGLE_COLLECT;
		}
	}
	if (look && lhits != end - start)
		abort();  /* every key looked up is present */
	while (ph < P_N) {
		CALLGRIND_DUMP_STATS_AT(pname[ph]);
		if (++ph < P_N)
			at[ph] = end;
	}
	if (!look)
		CALLGRIND_TOGGLE_COLLECT;
	wait_idle();
	cht_get_stats(&h, &st);
	printf("growcount,%s,grow,%zu,end,%zu,buckets_end,%zu,bounds,%zu,%zu,%zu\n",
	    presized ? "presized" : "auto", grow, end, st.buckets, at[1], at[2],
	    at[3]);
	for (int p = 0; p < P_N; p++) {
		size_t len = (p + 1 < P_N ? at[p + 1] : end) - at[p];
		printf("phase,%s,inserts,%zu", pname[p], len);
		if (walk && wk[p].n)
			printf(",nodes_before_item,%.3f,old_dummies,%.3f,"
			    "new_dummies,%.3f,items,%.3f",
			    (double) (wk[p].old_d + wk[p].new_d + wk[p].items) /
			    wk[p].n, (double) wk[p].old_d / wk[p].n,
			    (double) wk[p].new_d / wk[p].n,
			    (double) wk[p].items / wk[p].n);
		printf("\n");
	}
	return 0;
}
