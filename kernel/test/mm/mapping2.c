/** @file mapping2.c
 * Test `mapping2`: page_mapping_update() racing itself,
 * page_mapping_remove() and lookups on one page.
 *
 * The defect: an update found the old record, inserted a new one and removed
 * the old one. Two concurrent updates of a page both inserted and left two
 * records (tens of thousands piled up); an update racing a remove inserted
 * its record after the remove and brought the page back; and an update that
 * kept the frame cleared PTE_REC_FREE_FRAME in the old record while lookups
 * copied it, so a lookup could return a mapping nobody wrote.
 *
 * Part 1: T threads (one per CPU, at least two) update the same page
 * MAP2_ROUNDS times each, each with its own made-up frames. Afterwards the
 * page has exactly one record, holding one of the last values written, and
 * the table has exactly one entry more than before.
 *
 * Part 2: MAP2_RACES rounds of: insert the page; one thread updates it in a
 * loop until it sees ENOENT (bounded), another removes it once after a
 * varied delay. Afterwards the page must be absent (no record) and the table
 * back at its entry count.
 *
 * Part 3: the page maps a real frame the table owns (PTE_REC_FREE_FRAME).
 * Updaters flip its flags between two sets, keeping the frame; readers
 * require every lookup to return exactly one of the two written mappings.
 * At the end the page is removed: the frame must be freed with the record
 * (frames outside the slabs back at the baseline).
 *
 * Counts must show the races ran: in part 2 the updater must have succeeded
 * at least once before the remove in most rounds.
 */
#include <test.h>
#include <testlib.h>
#include "mmtest.h"
#include <mm/as.h>
#include <mm/frame.h>
#include <genarch/mm/page_ht.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <print.h>

#define MAP2_PAGE        0x40000000UL
#define MAP2_MAX_THREADS 16
#define MAP2_ROUNDS      3000
#define MAP2_RACES       150
#define MAP2_READS       20000
/** Made-up frames (never freed: no PTE_REC_FREE_FRAME). */
#define MAP2_FAKE(t, n)  (0x7f00000000UL + (((uint64_t) (t) << 24) + (n)) * PAGE_SIZE)
#define MAP2_X_FLAGS     (PTE_REC_PRESENT | PTE_REC_WRITABLE | PTE_REC_FREE_FRAME)
#define MAP2_Y_FLAGS     (PTE_REC_PRESENT | PTE_REC_EXEC | PTE_REC_FREE_FRAME)

static as_t *m2_as;
static unsigned nthreads;
static mmtest_barrier_t barrier;
static mmtest_failure_t failure;
/** Part 3: the frame and when to stop (release/acquire). */
static uintptr_t p3_frame;
static bool p3_stop;
/** Part 2 statistics (written by thread 0 only). */
static uint64_t p2_updates_before_remove;
static uint64_t p2_rounds_raced;
/** Part 2: the remover of this round is done (release/acquire). */
static bool p2_removed;

typedef struct {
	unsigned index;
	uint64_t seed;
	pte_t last;  /**< part 1: the last value this thread wrote */
} m2_thread_t;

static m2_thread_t th_state[MAP2_MAX_THREADS];
static page_ht_stats_t ps_before;
/** Part 3's record was inserted (then removing it frees the frame). */
static bool p3_inserted;

/** Barrier function after part 1 (run by one thread while the others wait). */
static void after_part1(mmtest_barrier_t *b)
{
	page_ht_stats_t ps;
	page_ht_get_stats(&ps);
	size_t n = page_mapping_count(m2_as->id, MAP2_PAGE);
	pte_t out = { 0 };
	bool found = page_mapping_find(m2_as->id, MAP2_PAGE, &out);
	bool last = false;
	for (unsigned i = 0; i < nthreads; i++) {
		if (th_state[i].last.frame == out.frame &&
		    th_state[i].last.flags == out.flags)
			last = true;
	}
	if (n != 1 || ps.entries != ps_before.entries || !found || !last) {
		mmtest_fail(&failure, "part 1: after %u concurrent updates each the "
		    "page has %zu records (table: %ld entries more than before), "
		    "mapping %s %#lx", MAP2_ROUNDS, n,
		    (long) (ps.entries - ps_before.entries),
		    found ? (last ? "last written" : "not a last written") : "none",
		    out.frame);
	}
	/* Part 2 starts with the page absent. */
	while (page_mapping_remove(m2_as->id, MAP2_PAGE) == EOK)
		;
}

/** Barrier function before part 3: the page maps the owned frame. */
static void before_part3(mmtest_barrier_t *b)
{
	pte_t p = { .frame = p3_frame, .flags = MAP2_X_FLAGS };
	if (page_mapping_insert(m2_as->id, MAP2_PAGE, &p, NULL) == EOK)
		p3_inserted = true;
	else
		mmtest_fail(&failure, "part 3: insert failed");
}

static void part1(m2_thread_t *t)
{
	for (unsigned n = 0; n < MAP2_ROUNDS && !mmtest_failed(&failure); n++) {
		pte_t p = { .frame = MAP2_FAKE(t->index, n), .flags = PTE_REC_PRESENT };
		int rc = page_mapping_update(m2_as->id, MAP2_PAGE, &p);
		if (rc != EOK) {
			mmtest_fail(&failure, "part 1: update returned %d", rc);
			return;
		}
		t->last = p;
		if (n % 64 == 0)
			thread_yield();
	}
}

static void part2(m2_thread_t *t)
{
	for (unsigned r = 0; r < MAP2_RACES && !mmtest_failed(&failure); r++) {
		if (t->index == 0) {
			__atomic_store_n(&p2_removed, false, __ATOMIC_RELAXED);
			pte_t p = { .frame = MAP2_FAKE(0, 0), .flags = PTE_REC_PRESENT };
			if (page_mapping_insert(m2_as->id, MAP2_PAGE, &p, NULL) != EOK)
				mmtest_fail(&failure, "part 2: insert failed");
		}
		mmtest_barrier_wait(&barrier, NULL);
		if (t->index == 0) {
			/* Updater: until the remover is done (bounded), then once more. */
			uint64_t ok = 0;
			for (unsigned n = 0; n < 20000; n++) {
				bool last = __atomic_load_n(&p2_removed, __ATOMIC_ACQUIRE);
				pte_t p = { .frame = MAP2_FAKE(1, n), .flags = PTE_REC_PRESENT };
				int rc = page_mapping_update(m2_as->id, MAP2_PAGE, &p);
				if (rc == ENOENT)
					break;
				if (rc != EOK) {
					mmtest_fail(&failure, "part 2: update returned %d", rc);
					break;
				}
				if (last) {
					mmtest_fail(&failure, "part 2 round %u: update after the "
					    "remove returned EOK", r);
					break;
				}
				ok++;
				if (n % 32 == 31)
					thread_yield();  /* the remover may share the CPU */
				if (n % 512 == 511)
					thread_usleep(1000);  /* a descheduled vCPU (TCG) */
			}
			p2_updates_before_remove += ok;
			if (ok)
				p2_rounds_raced++;
		} else if (t->index == 1) {
			unsigned spin = mmtest_rand(&t->seed) % 3000;
			for (unsigned i = 0; i < spin; i++)
				cpu_relax();
			if (page_mapping_remove(m2_as->id, MAP2_PAGE) != EOK)
				mmtest_fail(&failure, "part 2 round %u: remove found no "
				    "mapping", r);
			__atomic_store_n(&p2_removed, true, __ATOMIC_RELEASE);
		}
		mmtest_barrier_wait(&barrier, NULL);
		if (t->index == 0) {
			pte_t out;
			size_t n = page_mapping_count(m2_as->id, MAP2_PAGE);
			if (page_mapping_find(m2_as->id, MAP2_PAGE, &out) || n != 0) {
				mmtest_fail(&failure, "part 2 round %u: the page is mapped "
				    "again after its remove (%zu records, frame %#lx): an "
				    "update resurrected it", r, n, out.frame);
				/* Clean up so that the baseline check still means something. */
				while (page_mapping_remove(m2_as->id, MAP2_PAGE) == EOK)
					;
			}
		}
		mmtest_barrier_wait(&barrier, NULL);
	}
}

static void part3(m2_thread_t *t)
{
	uintptr_t f = __atomic_load_n(&p3_frame, __ATOMIC_ACQUIRE);
	if (t->index % 2 == 0) {
		for (unsigned n = 0; n < MAP2_READS / 4; n++) {
			pte_t p = { .frame = f, .flags = n % 2 ? MAP2_X_FLAGS : MAP2_Y_FLAGS };
			if (page_mapping_update(m2_as->id, MAP2_PAGE, &p) != EOK) {
				mmtest_fail(&failure, "part 3: update failed");
				break;
			}
			if (n % 64 == 0)
				thread_yield();
		}
		__atomic_store_n(&p3_stop, true, __ATOMIC_RELEASE);
	} else {
		for (unsigned n = 0; n < MAP2_READS &&
		    !__atomic_load_n(&p3_stop, __ATOMIC_ACQUIRE); n++) {
			pte_t out;
			if (!page_mapping_find(m2_as->id, MAP2_PAGE, &out)) {
				mmtest_fail(&failure, "part 3: lookup missed the page");
				break;
			}
			if (out.frame != f || (out.flags != MAP2_X_FLAGS &&
			    out.flags != MAP2_Y_FLAGS)) {
				mmtest_fail(&failure, "part 3: lookup returned frame %#lx "
				    "flags %#x, never written (frame %#lx, flags %#x or %#x)",
				    out.frame, out.flags, f, MAP2_X_FLAGS, MAP2_Y_FLAGS);
				break;
			}
			if (n % 64 == 0)
				thread_yield();
		}
	}
}

static void m2_thread(void *arg)
{
	m2_thread_t *t = arg;
	part1(t);
	mmtest_barrier_wait(&barrier, after_part1);
	part2(t);
	mmtest_barrier_wait(&barrier, before_part3);
	if (!mmtest_failed(&failure))
		part3(t);
}

const char *test_mapping2(void)
{
	static char reason[200];
	mmtest_snap_t s0, s1;
	unsigned online[CONFIG_MAX_CPUS];
	unsigned ncpu = test_online_cpus(online);
	nthreads = ncpu < 2 ? 2 : ncpu;
	if (nthreads > MAP2_MAX_THREADS)
		nthreads = MAP2_MAX_THREADS;
	mmtest_failure_reset(&failure);
	mmtest_snap(&s0);
	m2_as = as_create();
	if (!m2_as)
		return "as_create failed";
	barrier = (mmtest_barrier_t) { .n = nthreads, .yield = true };
	p2_updates_before_remove = p2_rounds_raced = 0;
	p3_stop = false;
	p3_frame = frame_alloc(1, FRAME_NONE);
	if (!p3_frame) {
		as_release(m2_as);
		return "frame_alloc failed";
	}

	/* Part 1 starts from one record. */
	pte_t p = { .frame = MAP2_FAKE(0, 0), .flags = PTE_REC_PRESENT };
	if (page_mapping_insert(m2_as->id, MAP2_PAGE, &p, NULL) != EOK) {
		frame_free(p3_frame, 1);
		as_release(m2_as);
		return "insert failed";
	}
	page_ht_get_stats(&ps_before);
	p3_inserted = false;

	thread_t *th[MAP2_MAX_THREADS];
	unsigned n = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		th_state[i] = (m2_thread_t) { .index = i, .seed = mmtest_mix(i + 7) | 1 };
		th[i] = testlib_create(m2_thread, &th_state[i], "mapping2",
		    &cpus[online[i % ncpu]]);
		if (!th[i])
			break;
		n++;
	}
	if (n != nthreads) {
		/* Not started: the created threads are never run (leaked). */
		return "thread_create failed";
	}
	for (unsigned i = 0; i < n; i++)
		thread_start(th[i]);
	for (unsigned i = 0; i < n; i++)
		(void) thread_join(th[i]);
	/* Removing part 3's record frees the frame (after a grace period). */
	while (page_mapping_remove(m2_as->id, MAP2_PAGE) == EOK)
		;
	if (!p3_inserted)
		frame_free(p3_frame, 1);
	if (mmtest_failed(&failure)) {
		as_release(m2_as);
		return failure.msg;
	}
	as_release(m2_as);
	m2_as = NULL;
	mmtest_snap(&s1);
	TPRINTF("mapping2: %u threads; part 2: %lu of %u rounds updated before the "
	    "remove (%lu updates); entries %zu (baseline %zu), frames outside "
	    "slabs %ld\n", nthreads, p2_rounds_raced, MAP2_RACES,
	    p2_updates_before_remove, s1.entries, s0.entries,
	    (long) (s1.outside_slabs - s0.outside_slabs));
	if (s1.entries != s0.entries)
		return "page hash table entries not back at the baseline";
	if (s1.outside_slabs != s0.outside_slabs) {
		snprintf(reason, sizeof(reason), "%ld frames outside the slabs not "
		    "given back (the part 3 frame must go with its record)",
		    (long) (s1.outside_slabs - s0.outside_slabs));
		return reason;
	}
	if (p2_rounds_raced < MAP2_RACES / 4) {
		snprintf(reason, sizeof(reason), "part 2: the update ran before the "
		    "remove in only %lu of %u rounds", p2_rounds_raced, MAP2_RACES);
		return reason;
	}
	return NULL;
}
