/** @file testlib.c
 * The kernel tests' library; see testlib.h.
 */
#include "testlib.h"
#include <mm/slab.h>
#include <synch/workqueue.h>
#include <proc/thread.h>
#include <time/delay.h>
#include <print.h>
#include <errno.h>

const char *testlib_run_parts(const char *test, const testlib_part_t *parts,
    size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (parts[i].title)
			printf("%s: %s\n", test, parts[i].title);
		const char *r = parts[i].run();
		if (r)
			return r;
	}
	return NULL;
}

thread_t *testlib_create(thread_func_t f, void *arg, const char *name,
    cpu_t *cpu)
{
	thread_t *t = thread_create(f, arg, name, THREAD_FLAG_NONE);
	if (t && cpu)
		thread_wire(t, cpu);
	return t;
}

thread_t *testlib_spawn(thread_func_t f, void *arg, const char *name,
    cpu_t *cpu)
{
	thread_t *t = testlib_create(f, arg, name, cpu);
	if (t)
		thread_start(t);
	return t;
}

bool testlib_group_add(testlib_group_t *g, thread_func_t f, void *arg,
    const char *name, cpu_t *cpu)
{
	thread_t *t = testlib_create(f, arg, name, cpu);
	if (!t) {
		g->failed = true;
		return false;
	}
	g->threads[g->n++] = t;
	return true;
}

void testlib_group_run(testlib_group_t *g, bool *abort)
{
	*abort = g->failed;
	for (unsigned k = 0; k < g->n; k++)
		thread_start(g->threads[k]);
	for (unsigned k = 0; k < g->n; k++)
		thread_join(g->threads[k]);
	*abort = false;
}

bool testlib_join(thread_t *t, uint64_t max_us)
{
	return !t || thread_join_timeout(t, max_us) == EOK;
}

void testlib_mem_snapshot(heap_stats_t *hs, frame_stats_t *fs)
{
	slab_reclaim(SLAB_RECLAIM_ALL);
	heap_get_stats(hs);
	frame_get_stats(fs);
}

void testlib_wait_workers_idle(uint64_t max_us)
{
	workq_config_t cfg;
	workq_stats_t s;
	workq_get_config(&cfg);
	uint64_t start = uptime_us();
	for (;;) {
		workq_global_get_stats(&s);
		if (s.workers <= cfg.min_idle || uptime_us() - start > max_us)
			return;
		thread_usleep(20000);
	}
}

const char *testlib_mem_back(const heap_stats_t *hb, const frame_stats_t *fb,
    uint64_t max_us)
{
	/* One test runs at a time: the reason buffer is the caller's until then. */
	static char reason[200];
	heap_stats_t hs;
	frame_stats_t fs;

	testlib_wait_workers_idle(max_us);
	uint64_t start = uptime_us();
	for (;;) {
		testlib_mem_snapshot(&hs, &fs);
		if (hs.allocs == hb->allocs && hs.bytes == hb->bytes &&
		    fs.free == fb->free)
			return NULL;
		if (uptime_us() - start > max_us)
			break;
		thread_usleep(20000);
	}
	snprintf(reason, sizeof(reason), "memory not back at the baseline: heap "
	    "%zu allocations (%zu before), %zu bytes (%zu before), free frames %zu "
	    "(%zu before)", hs.allocs, hb->allocs, hs.bytes, hb->bytes, fs.free,
	    fb->free);
	return reason;
}
