/** @file test_workfail.c
 * The library's helper threads cannot be started, then can again: no resize request and no helper start is lost for good.
 *
 * The test interposes pthread_create() (the library's helper threads are
 * started through it): while `fail_create` is set every call fails with
 * EAGAIN after a short sleep, as it does when the process is out of address
 * space (a lowered RLIMIT_AS: the thread's stack cannot be mapped). The sleep
 * widens the window in which another thread's resize request finds the first
 * request's enqueue still in flight.
 *
 *  1. The RCU reclaimer cannot start: cht_rcu_register_thread() fails with
 *     CHT_ENOMEM; once threads can be started again it must succeed.
 *  2. The resize worker cannot start: two threads insert far past the grow
 *     limit (every insert requests a resize, every enqueue fails). Afterwards
 *     no resize may be pending (nothing is running that would ever serve it),
 *     and once threads can be started again one more insert must get the
 *     table grown to fit, and cht_destroy() (which waits for pending
 *     resizes) must return.
 *
 * With the second argument "rlimit" (plain build only: the sanitizers
 * reserve terabytes of address space) the failure is the real one instead:
 * RLIMIT_AS is lowered to a few MiB above the current address-space size,
 * so no thread stack can be mapped, and raised again afterwards.
 *
 * Usage: test_workfail [all|reclaimer|worker] [inject|rlimit]
 *
 * A watchdog (alarm) turns a hang into a failure. Liveness bounds are
 * generous (sanitizer builds on a loaded machine); the verdicts are the
 * invariants above, not the times.
 */
#include "tutil.h"
#include <cht.h>

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>

/* --- pthread_create() failure injection ---------------------------------- */

static int fail_create;            /* atomics: 1 = every create fails */
static unsigned long failed_creates;  /* atomics */

typedef int (*create_fn_t)(pthread_t *, const pthread_attr_t *,
    void *(*)(void *), void *);

int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr,
    void *(*fn)(void *), void *restrict arg)
{
	static create_fn_t real;
	create_fn_t r = __atomic_load_n(&real, __ATOMIC_ACQUIRE);
	if (!r) {
		r = (create_fn_t) dlsym(RTLD_NEXT, "pthread_create");
		if (!r) {
			fprintf(stderr, "dlsym(pthread_create): %s\n", dlerror());
			abort();
		}
		__atomic_store_n(&real, r, __ATOMIC_RELEASE);
	}
	if (__atomic_load_n(&fail_create, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(&failed_creates, 1, __ATOMIC_RELAXED);
		tu_sleep_ms(1);
		return EAGAIN;
	}
	int rc = r(t, attr, fn, arg);
	if (rc != 0)
		__atomic_fetch_add(&failed_creates, 1, __ATOMIC_RELAXED);
	return rc;
}

/* Mode "rlimit": the address-space limit instead of the injection. */
static bool use_rlimit;
static struct rlimit saved_as;

/** From now on no thread can be started. */
static void threads_fail_begin(void)
{
	if (!use_rlimit) {
		__atomic_store_n(&fail_create, 1, __ATOMIC_RELEASE);
		return;
	}
	/* statm: total program size in pages. */
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%lu", &pages) != 1) {
		perror("/proc/self/statm");
		exit(2);
	}
	fclose(f);
	struct rlimit lim;
	getrlimit(RLIMIT_AS, &saved_as);
	lim = saved_as;
	/* Room for the heap; not for an 8 MiB default thread stack. */
	lim.rlim_cur = pages * (rlim_t) sysconf(_SC_PAGESIZE) + (4u << 20);
	if (setrlimit(RLIMIT_AS, &lim) != 0) {
		perror("setrlimit");
		exit(2);
	}
}

/** Threads can be started again. */
static void threads_fail_end(void)
{
	if (!use_rlimit) {
		__atomic_store_n(&fail_create, 0, __ATOMIC_RELEASE);
		return;
	}
	if (setrlimit(RLIMIT_AS, &saved_as) != 0) {
		perror("setrlimit");
		exit(2);
	}
}

/* --- watchdog ------------------------------------------------------------- */

static const char *volatile phase = "start";

static void watchdog(int sig)
{
	(void) sig;
	/* Async-signal-safe output only. */
	const char *p = phase;
	static const char a[] = "FAIL watchdog: no progress in phase '";
	static const char b[] = "'\ntest_workfail: FAILED (hang)\n";
	if (write(2, a, sizeof(a) - 1) < 0 || write(2, p, strlen(p)) < 0 ||
	    write(2, b, sizeof(b) - 1) < 0) {
		/* nothing more to do */
	}
	_exit(1);
}

/* --- items ------------------------------------------------------------------ */

typedef struct {
	cht_link_t link;
	uint64_t key;
} item_t;

static unsigned long callbacks;

static size_t i_hash(const cht_link_t *l)
{
	return cht_item_of(l, item_t, link)->key;
}

static size_t i_key_hash(void *key)
{
	return *(uint64_t *) key;
}

static bool i_equal(const cht_link_t *a, const cht_link_t *b)
{
	return cht_item_of(a, item_t, link)->key ==
	    cht_item_of(b, item_t, link)->key;
}

static bool i_key_equal(void *key, const cht_link_t *l)
{
	return *(uint64_t *) key == cht_item_of(l, item_t, link)->key;
}

static void i_remove(cht_link_t *l)
{
	(void) l;
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
}

static const cht_ops_t ops = {
	.hash = i_hash, .key_hash = i_key_hash, .equal = i_equal,
	.key_equal = i_key_equal, .remove_callback = i_remove,
};

#define MAX_LOAD   2
#define PER_THREAD 3000
#define NTHREADS   2
#define TOTAL      (NTHREADS * PER_THREAD + 1)

static cht_t table;
static item_t items[TOTAL];
/*
 * The inserters start together and, done, wait at the finish line until the
 * test has looked at the table: a thread that exits and is joined would
 * leave its stack in the C library's stack cache, from which the worker
 * could start even under the lowered RLIMIT_AS.
 */
static pthread_barrier_t start_line, finish_line;

static void insert_one(size_t i)
{
	items[i].key = i + 1;
	cht_rcu_read_lock();
	cht_insert(&table, &items[i].link);
	cht_rcu_read_unlock();
}

static void *inserter(void *arg)
{
	size_t first = (size_t) (uintptr_t) arg * PER_THREAD;
	CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
	pthread_barrier_wait(&start_line);
	for (size_t i = first; i < first + PER_THREAD; i++)
		insert_one(i);
	pthread_barrier_wait(&finish_line);
	return NULL;
}

static void stats(cht_stats_t *st)
{
	cht_get_stats(&table, st);
}

/* 1. The reclaimer (started by the first registration) cannot start. */
static int part_reclaimer(void)
{
	phase = "register while threads cannot start";
	unsigned long before = __atomic_load_n(&failed_creates, __ATOMIC_RELAXED);
	threads_fail_begin();
	int rc1 = cht_rcu_register_thread();
	threads_fail_end();
	CHECK_EQ(rc1, CHT_ENOMEM);
	CHECK(__atomic_load_n(&failed_creates, __ATOMIC_RELAXED) > before,
	    "the reclaimer start did not go through pthread_create");
	phase = "register after threads can start again";
	int rc2 = cht_rcu_register_thread();
	printf("register: %d while pthread_create fails, then %d\n", rc1, rc2);
	CHECK(rc2 == CHT_OK, "cht_rcu_register_thread() = %d after threads can "
	    "start again (the reclaimer start is never retried)", rc2);
	return rc2;
}

/* 2. The resize worker (started by the first request) cannot start. */
static void part_worker(void)
{
	phase = "create";
	CHECK_EQ(cht_create(&table, 1, 1, MAX_LOAD, &ops), CHT_OK);
	cht_stats_t st0;
	stats(&st0);

	pthread_t t[NTHREADS];
	pthread_barrier_init(&start_line, NULL, NTHREADS + 1);
	pthread_barrier_init(&finish_line, NULL, NTHREADS + 1);
	for (uintptr_t i = 0; i < NTHREADS; i++)
		tu_spawn(&t[i], inserter, (void *) i);
	phase = "inserts while the worker cannot start";
	unsigned long before = __atomic_load_n(&failed_creates, __ATOMIC_RELAXED);
	threads_fail_begin();
	pthread_barrier_wait(&start_line);
	pthread_barrier_wait(&finish_line);
	/* Every insert is done and still no thread can start. */
	unsigned long failed = __atomic_load_n(&failed_creates,
	    __ATOMIC_RELAXED) - before;
	cht_stats_t st1;
	stats(&st1);
	size_t reqs = __atomic_load_n(&table.resize_reqs, __ATOMIC_ACQUIRE);
	threads_fail_end();
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&start_line);
	pthread_barrier_destroy(&finish_line);

	printf("while the worker could not start: %lu failed starts, %zu items "
	    "in %zu buckets, %lu grows, resize_reqs %zu\n", failed, st1.items,
	    st1.buckets, (unsigned long) st1.grows, reqs);
	CHECK(failed >= 2, "%lu failed worker starts: a failed start is never "
	    "retried (or the injection was not exercised)", failed);
	CHECK_EQ(st1.items, NTHREADS * PER_THREAD);
	CHECK_EQ(st1.grows, 0);
	CHECK(reqs == 0, "resize_reqs = %zu with no worker running: the "
	    "request is lost and the table can never resize again", reqs);

	/* Threads can start again: the next request must grow the table. */
	phase = "grow after the worker can start again";
	insert_one(TOTAL - 1);
	cht_stats_t st2;
	uint64_t t0 = tu_now_ns();
	for (;;) {
		stats(&st2);
		if (!st2.resizing)
			break;
		if (tu_now_ns() - t0 > 30ull * 1000000000ull)
			break;
		tu_sleep_ms(1);
	}
	printf("after one more insert: %zu items in %zu buckets, %lu grows, "
	    "resizing %s\n", st2.items, st2.buckets, (unsigned long) st2.grows,
	    st2.resizing ? "yes" : "no");
	CHECK(!st2.resizing, "the resize still pending after 30 s");
	CHECK(st2.grows >= 1, "the table never grew once the worker could "
	    "start (%lu grows)", (unsigned long) st2.grows);
	CHECK(st2.items <= (size_t) MAX_LOAD * st2.buckets,
	    "%zu items in %zu buckets exceed max_load %d", st2.items,
	    st2.buckets, MAX_LOAD);

	/* Empty the table and destroy it: destroy waits for pending resizes. */
	phase = "remove all";
	for (size_t i = 0; i < TOTAL; i++) {
		uint64_t k = items[i].key;
		cht_rcu_read_lock();
		CHECK_EQ(cht_remove_key(&table, &k), 1);
		cht_rcu_read_unlock();
	}
	phase = "cht_destroy (waits for pending resizes)";
	CHECK_EQ(cht_destroy(&table), CHT_OK);
	printf("cht_destroy returned; %lu remove callbacks\n",
	    __atomic_load_n(&callbacks, __ATOMIC_RELAXED));
	CHECK_EQ(__atomic_load_n(&callbacks, __ATOMIC_RELAXED), TOTAL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "all";
	use_rlimit = argc > 2 && strcmp(argv[2], "rlimit") == 0;
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	if (use_rlimit) {
		printf("rlimit mode skipped in a sanitizer build\n");
		return tu_finish("test_workfail");
	}
#endif
	signal(SIGALRM, watchdog);
	alarm(120);
	setvbuf(stdout, NULL, _IONBF, 0);
	if (strcmp(mode, "worker") == 0) {
		/* The reclaimer starts normally; only the worker cannot. */
		CHECK_EQ(cht_rcu_register_thread(), CHT_OK);
		part_worker();
	} else if (part_reclaimer() == CHT_OK && strcmp(mode, "reclaimer") != 0) {
		part_worker();
	}
	alarm(0);
	return tu_finish("test_workfail");
}
