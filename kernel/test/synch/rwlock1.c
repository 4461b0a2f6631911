/** @file rwlock1.c
 * Reader-writer lock: writers exclusive, readers concurrent, writer preference.
 *
 * Part 1 (semantics, deterministic): with a read lock held, read_trylock
 * succeeds and write_trylock fails. A writer that starts waiting (seen as
 * writers_waiting == 1) blocks new readers: read_trylock fails and
 * read_lock_timeout times out. When the read lock is released the writer gets
 * in; while it holds the lock both trylocks fail. A write_lock_timeout against
 * a held read lock returns ETIMEOUT and lets new readers in again afterwards.
 * Part 2 (stress): readers (one per online CPU, wired, plus one unwired) loop
 * read-locking until every writer is done; WRITERS writers (unwired) each take
 * the write lock WRITES times. Inside, atomic counters readers_in/writers_in
 * check that a writer is never inside with anyone else; readers check that the
 * shared array is consistent (all slots equal); writers bump every slot. The
 * readers run continuously, so the writers finishing (which ends the test)
 * shows they are not starved. The largest number of readers seen inside at
 * once is printed (>= 2 is expected with several CPUs but not required).
 * Final data: every slot equals WRITERS x WRITES.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/rwlock.h>

#define WRITERS 2
#define WRITES  300
#define SLOTS   16


static struct {
	rwlock_t rwl;
	/** Shared data; read under the read lock, written under the write lock. */
	uint64_t data[SLOTS];
	atomic_t readers_in;     /**< Readers inside (atomic). */
	atomic_t writers_in;     /**< Writers inside (atomic). */
	atomic_t max_readers;    /**< Most readers seen inside at once (atomic). */
	atomic_t violations;     /**< Exclusion violations (atomic). */
	atomic_t inconsistent;   /**< Torn reads (atomic). */
	atomic_t reads;          /**< Read sections completed (atomic). */
	atomic_t writers_done;   /**< Writers finished (atomic). */
	bool abort;              /**< Set before start: threads do nothing. */

	/* Part 1 helper. */
	atomic_t h_stage;        /**< Helper progress (atomic). */
	atomic_t h_rc;           /**< 100 + helper's lock result (atomic). */
	atomic_t release;        /**< Test lets the helper unlock (atomic). */
} rw;

static void update_max(atomic_t *max, size_t v)
{
	size_t m = atomic_get(max);
	while (v > m) {
		size_t prev = atomic_cas(max, m, v);
		if (prev == m)
			break;
		m = prev;
	}
}

static void reader(void *arg)
{
	unsigned seed = (unsigned) (uintptr_t) arg * 2654435761u + 7;
	if (rw.abort)
		return;
	while (atomic_get(&rw.writers_done) < WRITERS) {
		rwlock_read_lock(&rw.rwl);
		size_t r = atomic_preinc(&rw.readers_in);
		update_max(&rw.max_readers, r);
		if (atomic_get(&rw.writers_in) != 0)
			atomic_inc(&rw.violations);
		uint64_t v0 = rw.data[0];
		for (unsigned i = 1; i < SLOTS; i++) {
			if (rw.data[i] != v0)
				atomic_inc(&rw.inconsistent);
			if (i % 4 == 0)
				cpu_relax();
		}
		seed = seed * 1103515245u + 12345u;
		for (unsigned d = (seed >> 16) % 100; d > 0; d--)
			cpu_relax();
		if (atomic_get(&rw.writers_in) != 0)
			atomic_inc(&rw.violations);
		atomic_dec(&rw.readers_in);
		atomic_inc(&rw.reads);
		rwlock_read_unlock(&rw.rwl);
	}
}

static void writer(void *arg)
{
	unsigned seed = (unsigned) (uintptr_t) arg * 2654435761u + 3;
	if (rw.abort)
		return;
	for (unsigned k = 0; k < WRITES; k++) {
		/* Pause between writes so that readers get phases of their own. */
		seed = seed * 1103515245u + 12345u;
		for (unsigned d = (seed >> 16) % 4000; d > 0; d--)
			cpu_relax();
		rwlock_write_lock(&rw.rwl);
		if (atomic_preinc(&rw.writers_in) != 1 ||
		    atomic_get(&rw.readers_in) != 0)
			atomic_inc(&rw.violations);
		if (!rwlock_write_locked_by_me(&rw.rwl))
			atomic_inc(&rw.violations);
		for (unsigned i = 0; i < SLOTS; i++) {
			/* Read, pause, write: a second writer would lose updates. */
			uint64_t v = rw.data[i];
			compiler_barrier();
			cpu_relax();
			rw.data[i] = v + 1;
		}
		if (atomic_get(&rw.readers_in) != 0)
			atomic_inc(&rw.violations);
		atomic_dec(&rw.writers_in);
		rwlock_write_unlock(&rw.rwl);
	}
	atomic_inc(&rw.writers_done);
}

/** Part 1 helper: write-locks, holds the lock until told, unlocks. */
static void helper_writer(void *arg)
{
	(void) arg;
	atomic_set(&rw.h_stage, 1);
	rwlock_write_lock(&rw.rwl);
	atomic_set(&rw.h_stage, 2);
	for (uint64_t w = 0; w < WAIT_LIMIT_US && !atomic_get(&rw.release);
	    w += 1000)
		thread_usleep(1000);
	rwlock_write_unlock(&rw.rwl);
	atomic_set(&rw.h_stage, 3);
}

/** Part 1 helper: a write_lock_timeout that must time out. */
static void helper_timeout(void *arg)
{
	(void) arg;
	errno_t rc = rwlock_write_lock_timeout(&rw.rwl, 20000);
	if (rc == EOK)
		rwlock_write_unlock(&rw.rwl);
	atomic_set(&rw.h_rc, (size_t) (100 + rc));
}

/** Polls until @a cond(); false after WAIT_LIMIT_US. */
static bool wait_until(bool (*cond)(void))
{
	for (uint64_t w = 0; w < WAIT_LIMIT_US; w += 1000) {
		if (cond())
			return true;
		thread_usleep(1000);
	}
	return false;
}

static bool writer_waiting(void)
{
	return __atomic_load_n(&rw.rwl.writers_waiting, __ATOMIC_RELAXED) == 1;
}

static bool writer_inside(void)
{
	return atomic_get(&rw.h_stage) == 2;
}

static const char *part_semantics(void)
{
	rwlock_t *l = &rw.rwl;
	rwlock_initialize_named(l, "rwlock1.rw");
	atomic_set(&rw.h_stage, 0);
	atomic_set(&rw.release, 0);

	CHECK(rwlock_write_trylock(l), "write_trylock of a free lock failed");
	CHECK(rwlock_write_locked_by_me(l), "write-locked but not by me");
	CHECK(!rwlock_read_trylock(l), "read_trylock succeeded against a writer");
	CHECK(!rwlock_write_trylock(l), "write_trylock succeeded twice");
	rwlock_write_unlock(l);
	CHECK(!rwlock_write_locked_by_me(l), "still mine after write_unlock");

	rwlock_read_lock(l);
	CHECK(rwlock_read_trylock(l), "second reader refused with no writer");
	rwlock_read_unlock(l);
	CHECK(!rwlock_write_trylock(l), "write_trylock succeeded against a reader");

	thread_t *t = testlib_spawn(helper_writer, NULL, "rwlock1-w", NULL);
	if (!t) {
		rwlock_read_unlock(l);
		return "cannot create a thread";
	}
	const char *reason = NULL;
	if (!wait_until(writer_waiting)) {
		reason = "the writer never started waiting";
	} else if (rwlock_read_trylock(l)) {
		rwlock_read_unlock(l);
		reason = "a new reader got in past a waiting writer";
	} else if (rwlock_read_lock_timeout(l, 20000) != ETIMEOUT) {
		rwlock_read_unlock(l);
		reason = "read_lock_timeout past a waiting writer did not time out";
	}
	rwlock_read_unlock(l);
	if (!reason && !wait_until(writer_inside))
		reason = "the writer did not get the lock after the reader left";
	if (!reason && atomic_get(&rw.h_stage) == 2) {
		if (rwlock_read_trylock(l))
			reason = "read_trylock succeeded while a writer is inside";
		else if (rwlock_write_trylock(l))
			reason = "write_trylock succeeded while a writer is inside";
	}
	atomic_set(&rw.release, 1);
	thread_join(t);
	if (reason)
		return reason;
	CHECK(atomic_get(&rw.h_stage) == 3, "the writer did not finish");

	/* A writer that gives up lets readers in again. */
	rwlock_read_lock(l);
	atomic_set(&rw.h_rc, 0);
	t = testlib_spawn(helper_timeout, NULL, "rwlock1-wt", NULL);
	if (!t) {
		rwlock_read_unlock(l);
		return "cannot create a thread";
	}
	thread_join(t);
	bool again = rwlock_read_trylock(l);
	if (again)
		rwlock_read_unlock(l);
	rwlock_read_unlock(l);
	CHECK(atomic_get(&rw.h_rc) == (size_t) (100 + ETIMEOUT),
	    "write_lock_timeout against a reader did not time out");
	CHECK(again, "readers still blocked after the writer gave up");
	CHECK(rwlock_write_trylock(l), "lock not free at the end of part 1");
	rwlock_write_unlock(l);
	return NULL;
}

static const char *part_stress(void)
{
	static thread_t *threads[CONFIG_MAX_CPUS + 1 + WRITERS];
	unsigned ids[CONFIG_MAX_CPUS], online = test_online_cpus(ids);
	testlib_group_t g = { .threads = threads };

	rwlock_initialize_named(&rw.rwl, "rwlock1.rw");
	for (unsigned i = 0; i < SLOTS; i++)
		rw.data[i] = 0;
	atomic_set(&rw.readers_in, 0);
	atomic_set(&rw.writers_in, 0);
	atomic_set(&rw.max_readers, 0);
	atomic_set(&rw.violations, 0);
	atomic_set(&rw.inconsistent, 0);
	atomic_set(&rw.reads, 0);
	atomic_set(&rw.writers_done, 0);

	unsigned readers = online + 1;
	for (unsigned k = 0; k < readers + WRITERS; k++) {
		bool is_reader = k < readers;
		if (!testlib_group_add(&g, is_reader ? reader : writer,
		    (void *) (uintptr_t) k, is_reader ? "rwlock1-r" : "rwlock1-w",
		    k < online ? &cpus[ids[k]] : NULL))
			break;
	}
	testlib_group_run(&g, &rw.abort);
	CHECK(!g.failed, "cannot create threads");

	TPRINTF("rwlock1: %u readers (%zu read sections, at most %zu inside at "
	    "once), %u writers x %u; violations %zu, torn reads %zu, data %lu\n",
	    readers, atomic_get(&rw.reads), atomic_get(&rw.max_readers), WRITERS,
	    WRITES, atomic_get(&rw.violations), atomic_get(&rw.inconsistent),
	    rw.data[0]);
	CHECK(atomic_get(&rw.violations) == 0,
	    "a writer was inside together with someone else");
	CHECK(atomic_get(&rw.inconsistent) == 0, "a reader saw a torn update");
	for (unsigned i = 0; i < SLOTS; i++)
		CHECK(rw.data[i] == (uint64_t) WRITERS * WRITES,
		    "final data wrong (lost write)");
	CHECK(rwlock_write_trylock(&rw.rwl), "lock not free at the end");
	rwlock_write_unlock(&rw.rwl);
	return NULL;
}

const char *test_rwlock1(void)
{
	static const testlib_part_t parts[] = {
		{ "trylock, timeout and writer-preference semantics",
		    part_semantics },
		{ "readers and writers on every CPU", part_stress },
	};
	return testlib_run_parts("rwlock1", parts, ARRAY_SIZE(parts));
}
