/** @file mapping1.c
 * The global page hash table: insert, find, update and remove mappings and check
 * every result, single-threaded and from all CPUs (either back end).
 *
 * The keys belong to two address spaces created for the test (no areas, nobody
 * enters them: the table is used directly, no page is ever faulted in).
 *
 * Phase A (this thread), over MAP_KEYS keys in the first address space, four kinds
 * of records: a real frame the table owns (PTE_REC_FREE_FRAME), a real frame the
 * test owns, and two kinds of made-up frame numbers with various flags.
 *   - find, remove and update of absent keys fail (false, ENOENT, ENOENT);
 *   - inserts succeed; every find returns exactly the inserted frame and flags;
 *   - a second insert of a present key returns EEXIST and a copy of the present
 *     record (also with existing == NULL), and changes nothing;
 *   - the same pages in the second address space are distinct keys;
 *   - updates (same frame with other flags, a new frame, a frame handed from
 *     the test to the table) are seen by find; frames the table owns are freed
 *     exactly once: a replaced frame after a grace period, a kept frame never
 *     (checked by frame accounting after rcu_barrier(), and a double free panics);
 *   - removes succeed once, then ENOENT; finds fail afterwards.
 * Phase B (one thread wired to each CPU, at least two threads):
 *   B1: each thread inserts, finds, updates and removes its own keys at random
 *       against a shadow copy (exact results), while checking stable keys that
 *       are present throughout, and goes on looking them up until this thread
 *       has run B1_WAVES resize waves (B1_WAVE_KEYS keys inserted, the table
 *       let grow, removed, let shrink): a lookup must never miss a present
 *       key; with the CHT back end the table must have grown and shrunk at
 *       least B1_WAVES times each while phase B ran;
 *   B2: all threads insert the same keys at once: exactly one insert of each key
 *       wins, the others get EEXIST and a copy of the winner's record; then all
 *       remove them at once: exactly one remove of each key succeeds;
 *   B3: one thread updates a key back and forth between two records while the
 *       others look it up: it is found every time, with one of the two records.
 * The whole workload runs twice. After each run (rcu_barrier, slab_reclaim) the
 * table entries and the live heap allocations are back at the baseline (apart
 * from bucket dummies the CHT keeps, counted exactly through the table's own
 * statistics), and so are the frames in use outside the slab allocator (data
 * frames). Heap allocations and frames are counted net of the threads that
 * exist (a stack and a descriptor each), so that a thread of an earlier test
 * released meanwhile does not move them. Frames held by slabs may differ after
 * the first run (partially used slabs, CHT dummies); after the second run they
 * must equal the first run's. Every key is removed at the end, also when a
 * check fails (the table is global).
 */
#include <test.h>
#include <testlib.h>
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <genarch/mm/page_ht.h>
#include <adt/cht.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/workqueue.h>
#include <time/delay.h>
#include <arch/mm.h>
#include <cpu.h>
#include <atomic.h>
#include <print.h>
#include <stdarg.h>
#include <errno.h>
#include <lib/str.h>
#include "mmtest.h"

#define MAP_KEYS       1536
#define MAP_BASE       0x40000000UL
#define B1_KEYS        160
#define B1_STEPS       1500
#define B1_BASE        0x80000000UL
#define STABLE_KEYS    256
#define STABLE_BASE    0x70000000UL
#define B2_KEYS        48
#define B2_ROUNDS      12
#define B2_BASE        0xC0000000UL
#define B3_UPDATES     4000
#define B3_MIN_LOOKUPS 20000
#define B3_PAGE        0xD0000000UL
#define MAX_THREADS    CONFIG_MAX_CPUS
/**
 * Resize waves of B1: this thread inserts B1_WAVE_KEYS keys into the second
 * address space, lets the table grow, removes them and lets it shrink,
 * B1_WAVES times, while the B1 threads look the stable keys up (they go on
 * until the waves are done). With the CHT back end each wave must have made
 * the table grow and shrink at least once (the race B1 exists for).
 */
#define B1_WAVES       1
#define B1_WAVE_KEYS   4096
#define B1_WAVE_BASE   0xE0000000UL
/** Made-up frame numbers (never mapped by hardware, never freed). */
#define FAKE_FRAME(x)  ((1UL << 40) + ((uintptr_t) (x) << 12))

/* Errors (any thread); the first message is kept. */
static mmtest_failure_t failure;

static bool pte_eq(const pte_t *a, const pte_t *b)
{
	return a->frame == b->frame && a->flags == b->flags;
}

/* Phase A */

static as_t *as_a;
static as_t *as_b;

static pte_t a_pte[MAP_KEYS];
/** Frames the test owns (kind 1), freed by the test after the remove. */
static uintptr_t a_owned[MAP_KEYS];

static uintptr_t a_page(unsigned i)
{
	return MAP_BASE + (uintptr_t) i * 3 * PAGE_SIZE;
}

static unsigned a_flags(unsigned i)
{
	unsigned f = PTE_REC_PRESENT;
	if (i & 1)
		f |= PTE_REC_WRITABLE;
	if (i & 2)
		f |= PTE_REC_USER;
	if (i & 4)
		f |= PTE_REC_EXEC;
	if (i & 8)
		f |= PTE_REC_CACHEABLE;
	if (i & 16)
		f |= PTE_REC_ACCESSED | PTE_REC_DIRTY;
	if (i & 32)
		f |= PTE_REC_GLOBAL;
	return f;
}

/** Frames in use outside the slabs and thread stacks. */
static size_t busy_outside_slabs(void)
{
	mmtest_snap_t s;
	mmtest_counters(&s);
	return s.outside_slabs;
}

/** Absent keys: find, remove and update fail and leave no record. */
static const char *a_absent(const page_ht_stats_t *ps0)
{
	page_ht_stats_t ps;
	pte_t out;

	for (unsigned i = 0; i < MAP_KEYS; i += 7) {
		if (page_mapping_find(as_a->id, a_page(i), &out))
			return "find of an absent key succeeded";
		if (page_mapping_remove(as_a->id, a_page(i)) != ENOENT)
			return "remove of an absent key did not return ENOENT";
		pte_t p = { .frame = FAKE_FRAME(i), .flags = PTE_REC_PRESENT };
		if (page_mapping_update(as_a->id, a_page(i), &p) != ENOENT)
			return "update of an absent key did not return ENOENT";
	}
	/* The failed update must not have left a record behind. */
	page_ht_get_stats(&ps);
	if (ps.entries != ps0->entries)
		return "failed operations changed the number of entries";
	return NULL;
}

/** Inserts every key (kinds 0-3: a frame the table owns, one the test owns, two made-up frames). */
static const char *a_insert_all(const page_ht_stats_t *ps0)
{
	page_ht_stats_t ps;

	for (unsigned i = 0; i < MAP_KEYS; i++) {
		unsigned kind = i % 4;
		pte_t p = { .flags = a_flags(i) };
		a_owned[i] = 0;
		if (kind == 0 || kind == 1) {
			p.frame = frame_alloc(1, FRAME_NONE);
			if (!p.frame)
				return "frame_alloc failed";
			*(uint64_t *) PA2KA(p.frame) = mmtest_mix(i);
			if (kind == 0)
				p.flags |= PTE_REC_FREE_FRAME;
			else
				a_owned[i] = p.frame;
		} else {
			p.frame = FAKE_FRAME(i + kind * MAP_KEYS);
		}
		a_pte[i] = p;
		pte_t ex = { 0 };
		int rc = page_mapping_insert(as_a->id, a_page(i), &p, &ex);
		if (rc != EOK) {
			mmtest_fail(&failure, "insert of key %u returned %d", i, rc);
			return failure.msg;
		}
	}
	page_ht_get_stats(&ps);
	if (ps.entries != ps0->entries + MAP_KEYS) {
		mmtest_fail(&failure, "%zu entries after %u inserts (baseline %zu)", ps.entries,
		    MAP_KEYS, ps0->entries);
		return failure.msg;
	}
	return NULL;
}

/** Every find returns what was inserted; duplicates are refused. */
static const char *a_find_and_dups(const page_ht_stats_t *ps0)
{
	page_ht_stats_t ps;
	pte_t out;

	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (!page_mapping_find(as_a->id, a_page(i), &out) ||
		    !pte_eq(&out, &a_pte[i])) {
			mmtest_fail(&failure, "key %u: find does not return the inserted record", i);
			return failure.msg;
		}
		if (page_mapping_find(as_a->id, a_page(i) + PAGE_SIZE, &out))
			return "find of the page next to a key succeeded";
		pte_t dup = { .frame = FAKE_FRAME(7 * MAP_KEYS + i),
			.flags = PTE_REC_PRESENT | PTE_REC_WRITABLE };
		pte_t ex = { 0 };
		if (page_mapping_insert(as_a->id, a_page(i), &dup, &ex) != EEXIST)
			return "insert of a present key did not return EEXIST";
		if (!pte_eq(&ex, &a_pte[i]))
			return "EEXIST: the copy of the present record is wrong";
		if (i % 5 == 0 &&
		    page_mapping_insert(as_a->id, a_page(i), &dup, NULL) != EEXIST)
			return "insert of a present key (existing NULL) did not fail";
		if (!page_mapping_find(as_a->id, a_page(i), &out) ||
		    !pte_eq(&out, &a_pte[i]))
			return "a refused insert changed the record";
	}
	page_ht_get_stats(&ps);
	if (ps.entries != ps0->entries + MAP_KEYS)
		return "refused inserts changed the number of entries";
	return NULL;
}

/** The same pages in another address space are other keys. */
static const char *a_other_as(void)
{
	pte_t out;

	for (unsigned i = 0; i < MAP_KEYS; i += 3) {
		if (page_mapping_find(as_b->id, a_page(i), &out))
			return "key found in the wrong address space";
		pte_t p = { .frame = FAKE_FRAME(9 * MAP_KEYS + i),
			.flags = PTE_REC_PRESENT };
		if (page_mapping_insert(as_b->id, a_page(i), &p, NULL) != EOK)
			return "insert into the second address space failed";
		if (!page_mapping_find(as_b->id, a_page(i), &out) || !pte_eq(&out, &p))
			return "find in the second address space is wrong";
		if (!page_mapping_find(as_a->id, a_page(i), &out) ||
		    !pte_eq(&out, &a_pte[i]))
			return "insert into the second address space changed the first";
	}
	for (unsigned i = 0; i < MAP_KEYS; i += 3) {
		if (page_mapping_remove(as_b->id, a_page(i)) != EOK)
			return "remove from the second address space failed";
	}
	for (unsigned i = 0; i < MAP_KEYS; i += 3) {
		if (page_mapping_find(as_b->id, a_page(i), &out))
			return "key found in the second address space after remove";
		if (!page_mapping_find(as_a->id, a_page(i), &out) ||
		    !pte_eq(&out, &a_pte[i]))
			return "remove from the second address space changed the first";
	}
	return NULL;
}

/** Updates of every third key (the frame kept, replaced or made real; the flags changed); each find returns the new record. */
static const char *a_update_keys(size_t *replaced)
{
	pte_t out;

	*replaced = 0;
	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (i % 3 != 0)
			continue;
		unsigned kind = i % 4;
		pte_t p = a_pte[i];
		if (kind == 0 && (i / 4) % 2 == 0) {
			/* Same frame, other flags: the table keeps owning it. */
			p.flags ^= PTE_REC_WRITABLE | PTE_REC_DIRTY;
		} else if (kind == 0) {
			/* A new frame: the old one is freed after a grace period. */
			p.frame = frame_alloc(1, FRAME_NONE);
			if (!p.frame)
				return "frame_alloc failed";
			*(uint64_t *) PA2KA(p.frame) = mmtest_mix(i + 1);
			(*replaced)++;
		} else if (kind == 1) {
			/* Same frame the test owns, other flags. */
			p.flags ^= PTE_REC_EXEC | PTE_REC_ACCESSED;
		} else if (kind == 2) {
			/* A made-up frame replaced by a real one the table owns. */
			p.frame = frame_alloc(1, FRAME_NONE);
			if (!p.frame)
				return "frame_alloc failed";
			*(uint64_t *) PA2KA(p.frame) = mmtest_mix(i + 1);
			p.flags |= PTE_REC_FREE_FRAME;
		} else {
			p.frame = FAKE_FRAME(11 * MAP_KEYS + i);
			p.flags ^= PTE_REC_USER;
		}
		int rc = page_mapping_update(as_a->id, a_page(i), &p);
		if (rc != EOK) {
			mmtest_fail(&failure, "update of key %u returned %d", i, rc);
			return failure.msg;
		}
		a_pte[i] = p;
		if (!page_mapping_find(as_a->id, a_page(i), &out) || !pte_eq(&out, &p)) {
			mmtest_fail(&failure, "key %u: find after update returns frame %#lx flags "
			    "%#x, expected %#lx %#x", i, out.frame, out.flags, p.frame,
			    p.flags);
			return failure.msg;
		}
	}
	return NULL;
}

/** Updates (cont.): frames outside the slabs are back where they were (@a outside0) plus the made-up frames replaced by real ones the table owns, once the replaced ones are freed (@a replaced: frames the updates allocated to replace others). */
static const char *a_check_frames(size_t outside0, size_t replaced)
{
	size_t added_kind2 = 0;
	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (i % 3 == 0 && i % 4 == 2)
			added_kind2++;
	}
	/*
	 * Exact, but a thread of another subsystem may be between its exit and
	 * the release of its stack: look again for a while before failing.
	 */
	rcu_barrier();
	size_t outside1 = busy_outside_slabs();
	for (unsigned k = 0; k < 100 && outside1 != outside0 + added_kind2; k++) {
		thread_usleep(10000);
		outside1 = busy_outside_slabs();
	}
	if (outside1 != outside0 + added_kind2) {
		/*
		 * Diagnosis: a replaced record that was marked deleted but not
		 * unlinked is handed to RCU (with its frame) only when another
		 * update walks past it. Walk past every key and look again.
		 */
		cht_stats_t cs = { 0 };
		bool cht = mmtest_page_ht_cht_stats(&cs);
		size_t pending = rcu_pending_callbacks();
		for (unsigned i = 0; i < MAP_KEYS; i++)
			(void) page_mapping_remove(as_b->id, a_page(i));
		rcu_barrier();
		size_t outside2 = busy_outside_slabs();
		TPRINTF("mapping1: after the updates: %zu frames outside slabs, "
		    "expected %zu; %zu RCU callbacks pending; table %zu items, %zu "
		    "buckets, resizing %d; after walking past every key: %zu\n",
		    outside1, outside0 + added_kind2, pending, cht ? cs.items : 0,
		    cht ? cs.buckets : 0, cht ? cs.resizing : 0, outside2);
		mmtest_fail(&failure, "frames outside slabs %zu after the updates, expected %zu "
		    "(%zu before, %zu frames replaced, %zu handed to the table; "
		    "%zu after walking past the keys)", outside1,
		    outside0 + added_kind2, outside0, replaced, added_kind2,
		    outside2);
		return failure.msg;
	}
	return NULL;
}

/** After the updates: the number of entries, every record, and the contents of kept and new frames. */
static const char *a_check_contents(const page_ht_stats_t *ps0)
{
	page_ht_stats_t ps;
	pte_t out;

	page_ht_get_stats(&ps);
	if (ps.entries != ps0->entries + MAP_KEYS)
		return "updates changed the number of entries";
	/* Kept and new frames still hold what was written into them. */
	for (unsigned i = 0; i < MAP_KEYS; i++) {
		unsigned kind = i % 4;
		if (!page_mapping_find(as_a->id, a_page(i), &out) ||
		    !pte_eq(&out, &a_pte[i])) {
			mmtest_fail(&failure, "key %u: find after all updates is wrong", i);
			return failure.msg;
		}
		if (kind == 0 || kind == 1 || (kind == 2 && i % 3 == 0)) {
			uint64_t want = (i % 3 == 0 && (kind == 2 ||
			    (kind == 0 && (i / 4) % 2 == 1))) ? mmtest_mix(i + 1) : mmtest_mix(i);
			if (*(uint64_t *) PA2KA(out.frame) != want) {
				mmtest_fail(&failure, "key %u: frame %#lx contents changed", i, out.frame);
				return failure.msg;
			}
		}
	}
	return NULL;
}

/** Removes every key (once EOK, then ENOENT), then frees the frames the test owns after a grace period. */
static const char *a_remove_all(const page_ht_stats_t *ps0)
{
	page_ht_stats_t ps;
	pte_t out;

	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (page_mapping_remove(as_a->id, a_page(i)) != EOK) {
			mmtest_fail(&failure, "remove of key %u failed", i);
			return failure.msg;
		}
		if (page_mapping_remove(as_a->id, a_page(i)) != ENOENT)
			return "second remove did not return ENOENT";
		if (page_mapping_find(as_a->id, a_page(i), &out))
			return "find after remove succeeded";
	}
	page_ht_get_stats(&ps);
	if (ps.entries != ps0->entries)
		return "entries not back at the baseline after the removes";
	/* After the grace period the test may free the frames it owns. */
	rcu_barrier();
	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (a_owned[i])
			frame_free(a_owned[i], 1);
		a_owned[i] = 0;
	}
	return NULL;
}

/** The extreme pages of the user half are keys like any other. */
static const char *a_edges(void)
{
	pte_t out;

	uintptr_t edge[] = { PAGE_SIZE, USER_SPACE_END - PAGE_SIZE };
	for (unsigned i = 0; i < ARRAY_SIZE(edge); i++) {
		pte_t p = { .frame = FAKE_FRAME(i), .flags = PTE_REC_PRESENT };
		if (page_mapping_insert(as_a->id, edge[i], &p, NULL) != EOK ||
		    !page_mapping_find(as_a->id, edge[i], &out) || !pte_eq(&out, &p) ||
		    page_mapping_find(as_b->id, edge[i], &out) ||
		    page_mapping_remove(as_a->id, edge[i]) != EOK ||
		    page_mapping_find(as_a->id, edge[i], &out))
			return "insert/find/remove at the edge of the user half failed";
	}
	return NULL;
}

static const char *phase_a(void)
{
	page_ht_stats_t ps0;
	page_ht_get_stats(&ps0);
	const char *r;

	if ((r = a_absent(&ps0)) || (r = a_insert_all(&ps0)) ||
	    (r = a_find_and_dups(&ps0)) || (r = a_other_as()))
		return r;
	/*
	 * Updates. Frames outside the slabs must be where they were once the
	 * replaced records are freed: every frame allocated here replaces one
	 * the table frees; a kept frame must not be freed.
	 */
	mmtest_quiesce();
	size_t outside0 = busy_outside_slabs();
	size_t replaced;
	if ((r = a_update_keys(&replaced)) ||
	    (r = a_check_frames(outside0, replaced)) ||
	    (r = a_check_contents(&ps0)) || (r = a_remove_all(&ps0)))
		return r;
	return a_edges();
}

/* Phase B */

typedef struct {
	unsigned index;
	unsigned cpu;
	uint64_t seed;
	/** Shadow of the thread's own keys (frame 0: absent). */
	pte_t shadow[B1_KEYS];
	size_t ops;
} m1_arg_t;

static m1_arg_t args[MAX_THREADS];
static thread_t *handles[MAX_THREADS];
static unsigned nthreads;
static mmtest_barrier_t bar;

static pte_t stable_pte[STABLE_KEYS];
static unsigned b2_round;
static unsigned b2_wins[B2_KEYS];
static unsigned b2_removes[B2_KEYS];
static bool b3_stop;
static const pte_t b3_ra = { .frame = FAKE_FRAME(0xa), .flags = PTE_REC_PRESENT };
static const pte_t b3_rb = { .frame = FAKE_FRAME(0xb),
	.flags = PTE_REC_PRESENT | PTE_REC_WRITABLE };
static size_t b3_lookups;
static unsigned b3_updates;

static uintptr_t b1_page(unsigned t, unsigned k)
{
	return B1_BASE + ((uintptr_t) t * B1_KEYS + k) * PAGE_SIZE;
}

static void b1_check_stable(uint64_t r)
{
	unsigned k = r % STABLE_KEYS;
	pte_t out;
	if (!page_mapping_find(as_a->id, STABLE_BASE + k * PAGE_SIZE, &out))
		mmtest_fail(&failure, "stable key %u not found (lookup missed a present key)", k);
	else if (!pte_eq(&out, &stable_pte[k]))
		mmtest_fail(&failure, "stable key %u: wrong record found", k);
}

/** Set by this thread when the resize waves are over. Atomics. */
static bool b1_waves_over;

static void b1_step(m1_arg_t *a)
{
	uint64_t r = mmtest_rand(&a->seed);
	unsigned k = r % B1_KEYS;
	uintptr_t page = b1_page(a->index, k);
	pte_t *sh = &a->shadow[k];
	pte_t out, ex;
	unsigned op = (r >> 20) % 6;

	b1_check_stable(r >> 32);
	a->ops++;
	if (sh->frame == 0) {
		if (page_mapping_find(as_a->id, page, &out)) {
			mmtest_fail(&failure, "thread %u key %u: found while absent", a->index, k);
			return;
		}
		pte_t p = { .flags = PTE_REC_PRESENT | (unsigned) ((r >> 40) & 0xfe) };
		if (op == 0) {
			p.frame = frame_alloc(1, FRAME_NONE);
			if (!p.frame) {
				mmtest_fail(&failure, "frame_alloc failed");
				return;
			}
			p.flags |= PTE_REC_FREE_FRAME;
		} else {
			p.frame = FAKE_FRAME(((uint64_t) a->index << 20) + (r & 0xfffff));
		}
		int rc = page_mapping_insert(as_a->id, page, &p, NULL);
		if (rc != EOK) {
			mmtest_fail(&failure, "thread %u key %u: insert returned %d", a->index, k, rc);
			if (p.flags & PTE_REC_FREE_FRAME)
				frame_free(p.frame, 1);
			return;
		}
		*sh = p;
		return;
	}
	switch (op) {
	case 0:
	case 1:
		if (!page_mapping_find(as_a->id, page, &out) || !pte_eq(&out, sh))
			mmtest_fail(&failure, "thread %u key %u: find does not match", a->index, k);
		if (page_mapping_find(as_b->id, page, &out))
			mmtest_fail(&failure, "thread %u key %u: found in the other address space",
			    a->index, k);
		break;
	case 2: {
		pte_t p = { .frame = FAKE_FRAME(1), .flags = PTE_REC_PRESENT };
		if (page_mapping_insert(as_a->id, page, &p, &ex) != EEXIST)
			mmtest_fail(&failure, "thread %u key %u: duplicate insert not refused",
			    a->index, k);
		else if (!pte_eq(&ex, sh))
			mmtest_fail(&failure, "thread %u key %u: EEXIST copy is wrong", a->index, k);
		break;
	}
	case 3: {
		/* Keeps a table-owned frame, or moves to a made-up one. */
		pte_t p = *sh;
		if (!(p.flags & PTE_REC_FREE_FRAME))
			p.frame = FAKE_FRAME(((uint64_t) a->index << 20) + (r & 0xfffff));
		p.flags ^= PTE_REC_DIRTY;
		int rc = page_mapping_update(as_a->id, page, &p);
		if (rc != EOK) {
			mmtest_fail(&failure, "thread %u key %u: update returned %d", a->index, k, rc);
			break;
		}
		*sh = p;
		if (!page_mapping_find(as_a->id, page, &out) || !pte_eq(&out, sh))
			mmtest_fail(&failure, "thread %u key %u: find after update does not match",
			    a->index, k);
		break;
	}
	default:
		if (page_mapping_remove(as_a->id, page) != EOK) {
			mmtest_fail(&failure, "thread %u key %u: remove failed", a->index, k);
			break;
		}
		sh->frame = 0;
		if (page_mapping_find(as_a->id, page, &out))
			mmtest_fail(&failure, "thread %u key %u: found after remove", a->index, k);
		if (page_mapping_remove(as_a->id, page) != ENOENT)
			mmtest_fail(&failure, "thread %u key %u: second remove did not fail", a->index,
			    k);
		break;
	}
}

static void b2_check_wins(mmtest_barrier_t *b)
{
	for (unsigned k = 0; k < B2_KEYS; k++) {
		if (b2_wins[k] != 1)
			mmtest_fail(&failure, "round %u key %u: %u inserts succeeded", b2_round, k,
			    b2_wins[k]);
		b2_wins[k] = 0;
	}
}

static void b2_check_removes(mmtest_barrier_t *b)
{
	for (unsigned k = 0; k < B2_KEYS; k++) {
		if (b2_removes[k] != 1)
			mmtest_fail(&failure, "round %u key %u: %u removes succeeded", b2_round, k,
			    b2_removes[k]);
		b2_removes[k] = 0;
	}
	b2_round++;
}

static void m1_thread(void *p)
{
	m1_arg_t *a = p;

	/* B1 */
	mmtest_barrier_wait(&bar, NULL);
	for (unsigned s = 0; s < B1_STEPS; s++)
		b1_step(a);
	/* Stable keys are looked up until the resize waves are over. */
	for (unsigned n = 1; !__atomic_load_n(&b1_waves_over, __ATOMIC_ACQUIRE);
	    n++) {
		b1_check_stable(mmtest_rand(&a->seed) >> 32);
		/* Rest a tick now and then: resizes wait for grace periods. */
		if (n % 64 == 0)
			thread_usleep(1);
	}
	for (unsigned k = 0; k < B1_KEYS; k++) {
		if (a->shadow[k].frame && page_mapping_remove(as_a->id,
		    b1_page(a->index, k)) != EOK)
			mmtest_fail(&failure, "thread %u key %u: final remove failed", a->index, k);
		a->shadow[k].frame = 0;
	}

	/* B2: all threads on the same keys. */
	for (unsigned round = 0; round < B2_ROUNDS; round++) {
		mmtest_barrier_wait(&bar, NULL);
		for (unsigned j = 0; j < B2_KEYS; j++) {
			/* Start at different keys so that threads meet everywhere. */
			unsigned k = (j + a->index * 5) % B2_KEYS;
			uintptr_t page = B2_BASE + k * PAGE_SIZE;
			pte_t mine = { .frame = FAKE_FRAME((round << 16) |
			    (a->index << 8) | k), .flags = PTE_REC_PRESENT };
			pte_t ex = { 0 };
			int rc = page_mapping_insert(as_b->id, page, &mine, &ex);
			if (rc == EOK) {
				__atomic_fetch_add(&b2_wins[k], 1, __ATOMIC_RELAXED);
				continue;
			}
			if (rc != EEXIST) {
				mmtest_fail(&failure, "contended insert returned %d", rc);
				continue;
			}
			/* The winner's record: this round, this key, some thread. */
			uintptr_t v = (ex.frame - FAKE_FRAME(0)) >> 12;
			if (ex.flags != PTE_REC_PRESENT || (v >> 16) != round ||
			    (v & 0xff) != k || ((v >> 8) & 0xff) >= nthreads)
				mmtest_fail(&failure, "contended insert: EEXIST copy %#lx is not a record "
				    "of round %u key %u", ex.frame, round, k);
			pte_t out;
			if (!page_mapping_find(as_b->id, page, &out) || !pte_eq(&out, &ex))
				mmtest_fail(&failure, "contended key %u: find differs from the winner", k);
		}
		mmtest_barrier_wait(&bar, b2_check_wins);
		for (unsigned j = 0; j < B2_KEYS; j++) {
			unsigned k = (j + a->index * 7) % B2_KEYS;
			if (page_mapping_remove(as_b->id, B2_BASE + k * PAGE_SIZE) == EOK)
				__atomic_fetch_add(&b2_removes[k], 1, __ATOMIC_RELAXED);
		}
		mmtest_barrier_wait(&bar, b2_check_removes);
	}

	/* B3: thread 0 updates one key, the others look it up. */
	mmtest_barrier_wait(&bar, NULL);
	if (a->index == 0) {
		/*
		 * At least B3_UPDATES updates, and on until the readers did some
		 * lookups (they may not have run yet); bounded.
		 */
		unsigned u;
		for (u = 0; u < B3_UPDATES || (u < 16 * B3_UPDATES &&
		    __atomic_load_n(&b3_lookups, __ATOMIC_RELAXED) < B3_MIN_LOOKUPS);
		    u++) {
			int rc = page_mapping_update(as_a->id, B3_PAGE, u % 2 ? &b3_ra : &b3_rb);
			if (rc != EOK)
				mmtest_fail(&failure, "B3 update returned %d", rc);
			if (bar.yield && u % 16 == 0)
				thread_yield();
		}
		b3_updates = u;
		__atomic_store_n(&b3_stop, true, __ATOMIC_RELEASE);
	} else {
		size_t n = 0;
		while (!__atomic_load_n(&b3_stop, __ATOMIC_ACQUIRE)) {
			pte_t out;
			if (!page_mapping_find(as_a->id, B3_PAGE, &out))
				mmtest_fail(&failure, "B3: a lookup missed the key while "
				    "page_mapping_update replaced its record");
			else if (!pte_eq(&out, &b3_ra) && !pte_eq(&out, &b3_rb))
				mmtest_fail(&failure, "B3: lookup found a record never inserted");
			n++;
			if (n % 64 == 0)
				__atomic_fetch_add(&b3_lookups, 64, __ATOMIC_RELAXED);
			if (bar.yield && n % 16 == 0)
				thread_yield();
		}
		__atomic_fetch_add(&b3_lookups, n % 64, __ATOMIC_RELAXED);
	}
	if (CPU->id != a->cpu)
		mmtest_fail(&failure, "wired thread runs on another CPU");
}

/** Grows and shrinks of the page hash table while phase B ran. */
static uint64_t b_grows, b_shrinks;

/** The resize waves of B1 (this thread); failures go to the record. */
static void b1_resize_waves(void)
{
	for (unsigned w = 0; w < B1_WAVES; w++) {
		unsigned in = 0;
		for (; in < B1_WAVE_KEYS; in++) {
			pte_t p = { .frame = FAKE_FRAME(0x77000 + in),
				.flags = PTE_REC_PRESENT };
			if (page_mapping_insert(as_b->id, B1_WAVE_BASE + in * PAGE_SIZE, &p,
			    NULL) != EOK) {
				mmtest_fail(&failure, "resize wave %u: insert %u failed", w, in);
				break;
			}
		}
		mmtest_quiesce();
		for (unsigned i = 0; i < in; i++) {
			if (page_mapping_remove(as_b->id, B1_WAVE_BASE + i * PAGE_SIZE) != EOK)
				mmtest_fail(&failure, "resize wave %u: remove %u failed", w, i);
		}
		mmtest_quiesce();
	}
}

static const char *phase_b(void)
{
	unsigned online;
	nthreads = mmtest_nthreads(MAX_THREADS, &online);
	bar = (mmtest_barrier_t) { .n = nthreads, .yield = nthreads > online };
	b2_round = 0;
	b3_stop = false;
	b3_lookups = 0;
	b3_updates = 0;
	for (unsigned k = 0; k < B2_KEYS; k++)
		b2_wins[k] = b2_removes[k] = 0;

	for (unsigned k = 0; k < STABLE_KEYS; k++) {
		stable_pte[k] = (pte_t) { .frame = FAKE_FRAME(0x55000 + k),
			.flags = PTE_REC_PRESENT | PTE_REC_USER };
		if (page_mapping_insert(as_a->id, STABLE_BASE + k * PAGE_SIZE,
		    &stable_pte[k], NULL) != EOK)
			return "insert of a stable key failed";
	}
	if (page_mapping_insert(as_a->id, B3_PAGE, &b3_ra, NULL) != EOK)
		return "insert of the B3 key failed";

	unsigned n = 0;
	for (unsigned c = 0; n < nthreads; c = (c + 1) % cpu_count) {
		if (!cpu_is_online(c))
			continue;
		m1_arg_t *a = &args[n];
		a->index = n;
		a->cpu = c;
		a->seed = mmtest_mix(0x6d61707069ULL + n) | 1;
		a->ops = 0;
		for (unsigned k = 0; k < B1_KEYS; k++)
			a->shadow[k].frame = 0;
		handles[n] = testlib_create(m1_thread, a, "mapping1", &cpus[c]);
		if (!handles[n])
			return "thread_create failed";
		n++;
	}
	page_ht_stats_t ps0, ps1;
	page_ht_get_stats(&ps0);
	__atomic_store_n(&b1_waves_over, false, __ATOMIC_RELEASE);
	for (unsigned i = 0; i < n; i++)
		thread_start(handles[i]);
	b1_resize_waves();
	__atomic_store_n(&b1_waves_over, true, __ATOMIC_RELEASE);
	size_t ops = 0;
	for (unsigned i = 0; i < n; i++) {
		if (thread_join(handles[i]) != EOK)
			mmtest_fail(&failure, "thread_join failed");
		ops += args[i].ops;
	}
	page_ht_get_stats(&ps1);
	b_grows = ps1.grows - ps0.grows;
	b_shrinks = ps1.shrinks - ps0.shrinks;

	for (unsigned k = 0; k < STABLE_KEYS; k++) {
		pte_t out;
		if (!page_mapping_find(as_a->id, STABLE_BASE + k * PAGE_SIZE, &out) ||
		    !pte_eq(&out, &stable_pte[k]))
			mmtest_fail(&failure, "stable key %u lost", k);
		if (page_mapping_remove(as_a->id, STABLE_BASE + k * PAGE_SIZE) != EOK)
			mmtest_fail(&failure, "stable key %u: remove failed", k);
	}
	pte_t out;
	if (!page_mapping_find(as_a->id, B3_PAGE, &out) ||
	    !pte_eq(&out, (b3_updates - 1) % 2 ? &b3_ra : &b3_rb))
		mmtest_fail(&failure, "B3 key: the last update is not what find returns");
	if (page_mapping_remove(as_a->id, B3_PAGE) != EOK)
		mmtest_fail(&failure, "B3 key: remove failed");
	if (page_mapping_find(as_a->id, B3_PAGE, &out))
		mmtest_fail(&failure, "B3 key: two records after the updates");
	TPRINTF("mapping1: %u threads: %zu own-key operations, %u contended rounds "
	    "over %u keys, %u updates against %zu lookups\n", n, ops, B2_ROUNDS,
	    B2_KEYS, b3_updates, b3_lookups);
	return NULL;
}

/**
 * Removes every key the test may have inserted (a failed check returns early)
 * and frees the frames the test owns. @return how many keys were still there.
 */
static size_t m1_cleanup(void)
{
	size_t left = 0;
	uintptr_t edge[] = { PAGE_SIZE, USER_SPACE_END - PAGE_SIZE };

	for (unsigned i = 0; i < MAP_KEYS; i++) {
		left += page_mapping_remove(as_a->id, a_page(i)) == EOK;
		left += page_mapping_remove(as_b->id, a_page(i)) == EOK;
	}
	for (unsigned i = 0; i < ARRAY_SIZE(edge); i++) {
		left += page_mapping_remove(as_a->id, edge[i]) == EOK;
		left += page_mapping_remove(as_b->id, edge[i]) == EOK;
	}
	for (unsigned k = 0; k < STABLE_KEYS; k++)
		left += page_mapping_remove(as_a->id, STABLE_BASE + k * PAGE_SIZE) == EOK;
	for (unsigned t = 0; t < nthreads; t++) {
		for (unsigned k = 0; k < B1_KEYS; k++)
			left += page_mapping_remove(as_a->id, b1_page(t, k)) == EOK;
	}
	for (unsigned k = 0; k < B2_KEYS; k++)
		left += page_mapping_remove(as_b->id, B2_BASE + k * PAGE_SIZE) == EOK;
	for (unsigned i = 0; i < B1_WAVE_KEYS; i++)
		left += page_mapping_remove(as_b->id, B1_WAVE_BASE + i * PAGE_SIZE) == EOK;
	left += page_mapping_remove(as_a->id, B3_PAGE) == EOK;
	/* After a grace period nobody can reach the frames the test owns. */
	rcu_barrier();
	for (unsigned i = 0; i < MAP_KEYS; i++) {
		if (a_owned[i])
			frame_free(a_owned[i], 1);
		a_owned[i] = 0;
	}
	return left;
}

const char *test_mapping1(void)
{
	static char reason[200];
	mmtest_snap_t s0, s[2];
	page_ht_stats_t ps;

	uint64_t t0 = uptime_us();
	mmtest_failure_reset(&failure);
	mmtest_snap(&s0);
	page_ht_get_stats(&ps);
	TPRINTF("mapping1: back end %s, %zu entries, %zu buckets\n", ps.backend,
	    ps.entries, ps.buckets);

	for (unsigned run = 0; run < 2; run++) {
		as_a = as_create();
		as_b = as_create();
		if (!as_a || !as_b)
			return "as_create failed";
		nthreads = 0;
		b_grows = b_shrinks = 0;
		const char *r = phase_a();
		if (!r)
			r = phase_b();
		size_t left = m1_cleanup();
		as_release(as_a);
		as_release(as_b);
		if (r)
			return r;
		if (left) {
			snprintf(reason, sizeof(reason), "%zu keys left in the table after "
			    "every remove succeeded", left);
			return reason;
		}
		if (mmtest_failed(&failure)) {
			snprintf(reason, sizeof(reason), "%zu errors, first: %s",
			    (size_t) atomic_get(&failure.errors), failure.msg);
			return reason;
		}
		mmtest_snap(&s[run]);
		mmtest_snap_t *e = &s[run];
		page_ht_get_stats(&ps);
		TPRINTF("mapping1: run %u: table resized %lu times up, %lu down so far, "
		    "%zu buckets; while phase B ran: %lu grows, %lu shrinks\n",
		    run + 1, ps.grows, ps.shrinks, ps.buckets, b_grows, b_shrinks);
		if (strcmp(page_ht_backend, "cht") == 0 &&
		    (b_grows < B1_WAVES || b_shrinks < B1_WAVES)) {
			snprintf(reason, sizeof(reason), "run %u: the page hash table "
			    "grew %lu and shrank %lu times during %d resize waves of "
			    "phase B (at least %d each required)", run + 1, b_grows,
			    b_shrinks, B1_WAVES, B1_WAVES);
			return reason;
		}
		TPRINTF("mapping1: run %u: entries %zu (baseline %zu); against the "
		    "baseline: heap allocations %ld, CHT dummies %ld, frames outside "
		    "slabs %ld, slab frames %ld\n", run + 1, e->entries, s0.entries,
		    (long) (e->heap_allocs - s0.heap_allocs),
		    (long) (e->dummies - s0.dummies),
		    (long) (e->outside_slabs - s0.outside_slabs),
		    (long) (e->slab_frames - s0.slab_frames));
		if (e->entries != s0.entries)
			return "page hash table entries not back at the baseline";
		if (e->heap_allocs - s0.heap_allocs != e->dummies - s0.dummies)
			return "live heap allocations not back at the baseline";
		if (e->outside_slabs != s0.outside_slabs)
			return "frames outside the slabs not back at the baseline (leak)";
		if (e->threads > s0.threads)
			return "threads left behind";
	}
	if (mmtest_check_repeat(s, reason, sizeof(reason)))
		return reason;
	TPRINTF("mapping1: free frames %zu after both runs (%ld against the "
	    "baseline: slabs kept partially used); %lu ms\n", s[1].free,
	    (long) s[1].free - (long) s0.free, (uptime_us() - t0) / 1000);
	return NULL;
}
