/** @file chttest.h
 * Helpers shared by the CHT tests (cht1.c, chtresize.c): a memory baseline
 * that tolerates the system work queue's surplus workers (a resize runs as
 * system work and may make the queue create workers that retire only after
 * their idle timeout) and exited threads that are released asynchronously.
 *
 * Tests run one at a time (kconsole runs them in its own thread); the helpers
 * keep no state of their own.
 */
#ifndef KERN_TEST_CHT_CHTTEST_H_
#define KERN_TEST_CHT_CHTTEST_H_

#include <typedefs.h>
#include <mm/malloc.h>
#include <mm/frame.h>

/**
 * Gives the slab magazines and empty slabs back, then reads the heap and the
 * frame counters into @a hs and @a fs. Thread context; may sleep.
 */
void chttest_mem_snapshot(heap_stats_t *hs, frame_stats_t *fs);

/**
 * Waits until the system work queue has retired its surplus workers (no more
 * than its configured minimum of idle workers), at most @a max_us
 * microseconds. Gives no verdict: a busy queue only makes the wait end at the
 * bound. Thread context; sleeps in 20 ms steps.
 */
void chttest_wait_workers_idle(uint64_t max_us);

/**
 * Waits until the heap (allocation count and bytes) and the free frames are
 * back at the baseline @a hb / @a fb taken with chttest_mem_snapshot(): first
 * chttest_wait_workers_idle(@a max_us), then a snapshot every 20 ms for at
 * most @a max_us microseconds.
 *
 * @return NULL when the counters matched the baseline, else a failure reason
 * with the last readings and the baseline (a static buffer, valid until the
 * next call). Thread context; sleeps.
 */
const char *chttest_mem_back(const heap_stats_t *hb, const frame_stats_t *fb,
    uint64_t max_us);

#endif
