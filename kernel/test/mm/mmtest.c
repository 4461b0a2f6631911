/** @file mmtest.c
 * Helpers shared by the memory-management tests; see mmtest.h.
 */
#include <arch/asm.h>
#include "mmtest.h"
#include "prng.h"
#include <test.h>
#include <testlib.h>
#include <mm/as.h>
#include <mm/frame.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <stdarg.h>
#include <lib/str.h>

void mmtest_failure_reset(mmtest_failure_t *f)
{
	atomic_set(&f->errors, 0);
	__atomic_store_n(&f->claimed, false, __ATOMIC_SEQ_CST);
	f->msg[0] = '\0';
}

void mmtest_fail(mmtest_failure_t *f, const char *fmt, ...)
{
	atomic_inc(&f->errors);
	bool expected = false;
	if (__atomic_compare_exchange_n(&f->claimed, &expected, true, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(f->msg, sizeof(f->msg), fmt, ap);
		va_end(ap);
	}
}

uint64_t mmtest_mix(uint64_t x)
{
	return prng_fmix64(x);
}

uint64_t mmtest_rand(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

unsigned mmtest_nthreads(unsigned max, unsigned *online)
{
	unsigned ids[CONFIG_MAX_CPUS];
	unsigned n = test_online_cpus(ids);

	*online = n;
	if (n < 2)
		n = 2;
	return n > max ? max : n;
}

void mmtest_barrier_wait(mmtest_barrier_t *b, void (*fn)(mmtest_barrier_t *))
{
	unsigned gen = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
		if (fn)
			fn(b);
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->gen, gen + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == gen) {
		if (b->yield)
			thread_yield();
		else
			cpu_relax();
	}
}

/* Result of the registry walk; one test at a time uses it (see mmtest.h). */
static cht_stats_t found_stats;
static bool found;

static void visit(cht_env_link_t *link)
{
	cht_t *h = list_get_instance(link, cht_t, reg_link);
	if (h->name && strcmp(h->name, "page_ht") == 0) {
		cht_get_stats(h, &found_stats);
		found = true;
	}
}

bool mmtest_page_ht_cht_stats(cht_stats_t *st)
{
	found = false;
	cht_env_registry_foreach(visit);
	if (found)
		*st = found_stats;
	return found;
}

/** Frames of one kernel stack (released threads give theirs back). */
#define STACK_FRAMES (THREAD_STACK_SIZE / PAGE_SIZE)

void mmtest_counters(mmtest_snap_t *s)
{
	/*
	 * The counters are updated one after another (a slab's frames are freed
	 * before the slab count drops, a thread leaves the list before its stack
	 * is freed): two equal readings mean nothing was in between.
	 */
	size_t prev[5] = { 0 }, cur[5] = { 0 };
	for (unsigned k = 0; k < 200; k++) {
		size_t t = thread_count();
		frame_stats_t fs;
		heap_stats_t hs;
		frame_get_stats(&fs);
		heap_get_stats(&hs);
		size_t sl = slab_frames_held();
		cur[0] = fs.busy - sl - t * STACK_FRAMES;
		cur[1] = sl;
		cur[2] = hs.allocs - t;
		cur[3] = fs.free;
		cur[4] = t;
		if (k > 0 && memcmp(prev, cur, sizeof(cur)) == 0)
			break;
		memcpy(prev, cur, sizeof(cur));
		thread_usleep(1000);
	}
	s->outside_slabs = cur[0];
	s->slab_frames = cur[1];
	s->heap_allocs = cur[2];
	s->free = cur[3];
	s->threads = cur[4];
}

void mmtest_quiesce(void)
{
	cht_stats_t cs = { 0 };
	for (unsigned k = 0; k < 2000; k++) {
		rcu_barrier();
		if (!mmtest_page_ht_cht_stats(&cs) || !cs.resizing)
			break;
		thread_usleep(10000);
	}
	rcu_barrier();
}

void mmtest_snap(mmtest_snap_t *s)
{
	mmtest_quiesce();
	/* Surplus workers of the system work queue retire after a timeout. */
	testlib_wait_workers_idle(3000000);
	/* Exited threads are released by the CPU that switched away from them. */
	size_t n = thread_count();
	for (unsigned k = 0, same = 0; k < 200 && same < 5; k++) {
		thread_usleep(10000);
		size_t m = thread_count();
		same = m == n ? same + 1 : 0;
		n = m;
	}
	rcu_barrier();
	slab_reclaim(SLAB_RECLAIM_ALL);
	mmtest_counters(s);
	page_ht_get_stats(&s->ps);
	s->entries = s->ps.entries;
	/*
	 * Heap allocations of the page hash table's own: none per bucket dummy
	 * any more (the dummies live in the bucket array, one allocation of any
	 * size), so the heap allocation count must come back exactly.
	 */
	s->dummies = 0;
	s->ases = as_count();
}

const char *mmtest_check_repeat(const mmtest_snap_t s[2], char *buf,
    size_t size)
{
	if (s[1].free == s[0].free && s[1].slab_frames == s[0].slab_frames)
		return NULL;
	snprintf(buf, size, "second run left %zu free frames, the first %zu "
	    "(slab frames %zu, %zu)", s[1].free, s[0].free, s[1].slab_frames,
	    s[0].slab_frames);
	return buf;
}
