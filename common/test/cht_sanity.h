/** @file cht_sanity.h
 * The CHT sanity sequence, one source (cht_sanity.c) compiled into both the
 * kernel test `cht` (kernel/test/cht/cht1.c) and the userspace library's
 * tests (uspace/tests/test_api.c), the way common/adt/cht.c itself
 * is shared. The sequence reaches its environment only through the
 * cht_sanity_env_* functions below, which each side defines.
 */
#ifndef KERN_TEST_CHT_SANITY_H_
#define KERN_TEST_CHT_SANITY_H_

#include <adt/cht.h>

/**
 * Runs the sanity sequence on a table of its own (16 buckets, also the
 * minimum, max_load 4; hashes collide on purpose: (key >> 3) & 1023): 200
 * inserts that make it grow, lookups of present and absent keys (some sharing
 * a hash), duplicates seen exactly once by cht_find_next and
 * cht_find_next_equal, cht_insert_unique refusing a duplicate and returning
 * it, cht_remove_item true once then false, cht_remove_key returning the
 * count and removing only matching keys of an equal-hash run, destroy
 * refusing a non-empty table which stays usable, every remove callback
 * exactly once after a barrier, the table empty at the end and destroyed.
 *
 * Called from one thread, outside any reader section; the thread must be
 * able to wait for grace periods (kernel: thread context, sleeps).
 *
 * @return NULL on success, else the reason of the failure (a string
 * literal). On failure the items and the table may be leaked deliberately
 * when the table cannot be destroyed.
 */
const char *cht_sanity_run(void);

/* ---- provided by the environment (kernel or userspace test) ---- */

/** Zeroed memory of @a size bytes, or NULL. */
void *cht_sanity_env_alloc(size_t size);
/** Frees what cht_sanity_env_alloc() returned. */
void cht_sanity_env_free(void *p);
/** Enters an RCU reader section. */
void cht_sanity_env_read_lock(void);
/** Leaves the RCU reader section. */
void cht_sanity_env_read_unlock(void);
/** Waits until every remove callback queued so far has run. */
void cht_sanity_env_barrier(void);
/** Destroys @a h: CHT_OK, or CHT_EBUSY for a non-empty table. */
int cht_sanity_env_destroy(cht_t *h);
/** Reads @a h's statistics. */
void cht_sanity_env_get_stats(cht_t *h, cht_stats_t *st);
/** Reports a finished sequence (one progress line). */
void cht_sanity_env_report(size_t items, size_t callbacks,
    const cht_stats_t *st);

#endif
