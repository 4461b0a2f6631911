/** @file chtuser.c
 * `chtuser [-t S] [-n THREADS] [-k KEYS] [-l]`: the kernel's concurrent
 * hash table (common/adt/cht.c) in a user task, through the OS's
 * libcht (uspace/lib/cht/osenv, libcht's user RCU over SYS_MEMBARRIER and
 * futexes).
 *
 * Default mode, a checked stress run: THREADS threads (default: one per
 * CPU, thread i wired to CPU i mod CPUs) share one table for S seconds
 * (default 1). Thread i owns the keys [i * KEYS, (i + 1) * KEYS) (default
 * KEYS 1024) and alone inserts and removes them, so it knows exactly which
 * of them are in the table:
 *   - a lookup of an own key must find it iff the thread inserted it and has
 *     not removed it since;
 *   - cht_insert_unique() of an own key must succeed iff it is absent;
 *   - cht_remove_key() of an own key must remove 1 item iff it is present;
 *   - a lookup of any other thread's key may hit or miss, but an item found
 *     must be alive (magic ITEM_LIVE, the key looked up) for as long as the
 *     reader section lasts: the remove callback poisons an item (ITEM_DEAD)
 *     before it frees it, so an RCU that frees too early is seen here. One
 *     such lookup in 256 holds its item for 3 ms (a slow reader).
 * Afterwards the main thread checks every key against its owner's record,
 * removes the rest, destroys the table (which waits for the callbacks),
 * checks that exactly one callback ran per removed item and checks that malloc_in_use() is back at its value before the table. It
 * prints `chtuser: threads=N ops=M errors=E` and exits with 0 when E is 0,
 * else 1.
 *
 * Negative control: the program chtnowait (uspace/app/chtnowait) is this
 * source linked with a libcht whose RCU has the fault-injection point
 * CHT_RCU_FI_NO_WAIT configured (synchronize does not wait for readers), so
 * items are poisoned and freed under readers; its run must report errors.
 *
 * -l, the lookup benchmark of `chtbench 12` in the kernel, in user space:
 * 128 buckets that never resize, keys 0..507 present, each thread looks up
 * xorshift64 keys mod 1016 (half miss) with cht_find_fast(), one reader
 * section per lookup, for S seconds; prints
 * `chtuser: lookups threads=N ops=M ns=T` (T: SYS_CLOCK_NS of the run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys.h>
#include <thread.h>
#include <adt/cht.h>
#include <cht_rcu.h>

#define THREADS_MAX 32
#define ITEM_LIVE 0x4c495645a5a5a5a5ULL
#define ITEM_DEAD 0xdeaddeaddeaddeadULL
/**
 * One lookup of a foreign key in SLOW_EVERY holds its item for SLOW_NS,
 * longer than the RCU reclaimer's batching pause (1 ms): if grace periods
 * do not wait for readers, an item removed meanwhile is poisoned under it.
 */
#define SLOW_EVERY 256
#define SLOW_NS 3000000

/* chtbench 12's table (kernel/test/bench/chtbench/ht.c). */
#define BENCH_ITEMS (127 * 4)
#define BENCH_BUCKETS 128

typedef struct {
	cht_link_t link;
	uint64_t key;
	/** ITEM_LIVE from before its insert until its remove callback. */
	uint64_t magic;
} item_t;

/**
 * One thread's state: set up by main before the thread starts, then the
 * thread's own until main has joined it (thread_join orders its writes
 * before main's reads).
 */
typedef struct {
	unsigned index;
	unsigned cpu;
	uint64_t rnd;
	/** Own keys present. */
	bool *present;
	uint64_t ops, lookups, inserts, removes, errors;
} worker_t;

/** The table (its own synchronization: RCU readers, CAS updates). */
static cht_t table;
/** Workers stop when set. Relaxed atomics. */
static bool stop;
/** Written by main before any thread starts; read-only afterwards. */
static unsigned nthreads;
static uint64_t keys_per_thread = 1024;
/** Remove callbacks run; items poisoned twice. Atomics. */
static uint64_t callbacks, double_callbacks;

static void remove_cb(cht_link_t *l)
{
	item_t *it = (item_t *) l;
	uint64_t m = __atomic_exchange_n(&it->magic, ITEM_DEAD, __ATOMIC_RELAXED);
	if (m != ITEM_LIVE)
		__atomic_fetch_add(&double_callbacks, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&callbacks, 1, __ATOMIC_RELAXED);
	free(it);
}

CHT_DEFINE_U64_KEY(item, item_t, link, key, cht_u64_identity)

static const cht_ops_t ops = {
	CHT_U64_KEY_OPS(item),
	.remove_callback = remove_cb,
};

static inline uint64_t rnd_next(worker_t *w)
{
	/* xorshift64 (Marsaglia 2003), as chtbench. */
	uint64_t x = w->rnd;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return w->rnd = x;
}

static item_t *item_new(uint64_t key)
{
	item_t *it = malloc(sizeof(*it));
	if (it) {
		it->key = key;
		__atomic_store_n(&it->magic, ITEM_LIVE, __ATOMIC_RELAXED);
	}
	return it;
}

/** True if @a it is alive and has @a key (read inside the section). */
static inline bool item_ok(const item_t *it, uint64_t key)
{
	return __atomic_load_n(&it->magic, __ATOMIC_RELAXED) == ITEM_LIVE &&
	    __atomic_load_n(&it->key, __ATOMIC_RELAXED) == key;
}

static void worker_step(worker_t *w)
{
	uint64_t r = rnd_next(w);
	uint64_t own = r % keys_per_thread;
	uint64_t key = (uint64_t) w->index * keys_per_thread + own;
	unsigned op = (unsigned) ((r >> 32) % 100);
	cht_rcu_read_lock();
	if (op < 30) {
		/* Own key: found iff present. */
		item_t *it = (item_t *) cht_find(&table, &key);
		if ((it != NULL) != w->present[own] || (it && !item_ok(it, key)))
			w->errors++;
		w->lookups++;
	} else if (op < 60) {
		/* Any key: an item found stays alive during the section. */
		uint64_t any = (r >> 8) % (keys_per_thread * nthreads);
		item_t *it = (item_t *) cht_find(&table, &any);
		if (it && (r >> 40) % SLOW_EVERY == 0) {
			/* A slow reader (system calls are fine in a section). */
			long t0 = sys_clock_ns();
			while (item_ok(it, any) && sys_clock_ns() - t0 < SLOW_NS)
				cht_env_cpu_relax();
		}
		if (it && !item_ok(it, any))
			w->errors++;
		w->lookups++;
	} else if (op < 80) {
		item_t *it = item_new(key);
		if (it) {
			cht_link_t *dup = NULL;
			bool ok = cht_insert_unique(&table, &it->link, &dup);
			if (ok != !w->present[own] ||
			    (!ok && (!dup || !item_ok((item_t *) dup, key))))
				w->errors++;
			if (ok)
				w->present[own] = true;
			else
				free(it);
			w->inserts++;
		}
	} else {
		size_t n = cht_remove_key(&table, &key);
		if (n != (w->present[own] ? 1u : 0u))
			w->errors++;
		w->present[own] = false;
		w->removes += n;
	}
	cht_rcu_read_unlock();
	w->ops++;
}

/** Wires the calling thread to its CPU and registers it with the RCU. */
static bool thread_setup(worker_t *w)
{
	if (sys_thread_wire(w->cpu) != 0 ||
	    cht_rcu_register_thread() != CHT_OK) {
		w->errors++;
		return false;
	}
	return true;
}

static int worker_main(void *arg)
{
	worker_t *w = arg;
	if (!thread_setup(w))
		return 1;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED))
		worker_step(w);
	return 0;
}

/* The lookup benchmark (-l). */

static int bench_main(void *arg)
{
	worker_t *w = arg;
	if (!thread_setup(w))
		return 1;
	uint64_t ops_n = 0, hits = 0;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		uint64_t key = rnd_next(w) % (2 * BENCH_ITEMS);
		cht_rcu_read_lock();
		hits += cht_find_fast(&table, &key, &ops) != NULL;
		cht_rcu_read_unlock();
		ops_n++;
	}
	w->ops = ops_n;
	w->lookups = hits;
	return 0;
}

static void usage(void)
{
	printf("usage: chtuser [-t SECONDS (1..600)] [-n THREADS (1..%d)] "
	    "[-k KEYS (1..65536)] [-l]\n", THREADS_MAX);
}

/** Parses a decimal in [lo, hi]. @return false for junk. */
static bool parse_num(const char *s, long lo, long hi, long *out)
{
	if (!s || !*s)
		return false;
	char *end;
	long v = strtol(s, &end, 10);
	if (*end || v < lo || v > hi)
		return false;
	*out = v;
	return true;
}

/** Checks every key against its owner, removes the rest. @return errors. */
static uint64_t final_check(worker_t *w, uint64_t *removed)
{
	uint64_t errors = 0;
	cht_rcu_read_lock();
	for (unsigned i = 0; i < nthreads; i++) {
		for (uint64_t k = 0; k < keys_per_thread; k++) {
			uint64_t key = (uint64_t) i * keys_per_thread + k;
			item_t *it = (item_t *) cht_find(&table, &key);
			if ((it != NULL) != w[i].present[k] ||
			    (it && !item_ok(it, key)))
				errors++;
			size_t n = cht_remove_key(&table, &key);
			if (n != (w[i].present[k] ? 1u : 0u))
				errors++;
			*removed += n;
		}
	}
	cht_rcu_read_unlock();
	return errors;
}

int main(int argc, char **argv)
{
	long seconds = 1, threads = sys_cpu_count(), keys = 1024;
	bool lookup_bench = false;
	if (threads < 1)
		threads = 1;
	if (threads > THREADS_MAX)
		threads = THREADS_MAX;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		bool ok = true;
		if (strcmp(a, "-t") == 0)
			ok = parse_num(i + 1 < argc ? argv[++i] : NULL, 1, 600, &seconds);
		else if (strcmp(a, "-n") == 0)
			ok = parse_num(i + 1 < argc ? argv[++i] : NULL, 1, THREADS_MAX,
			    &threads);
		else if (strcmp(a, "-k") == 0)
			ok = parse_num(i + 1 < argc ? argv[++i] : NULL, 1, 65536, &keys);
		else if (strcmp(a, "-l") == 0)
			lookup_bench = true;
		else
			ok = false;
		if (!ok) {
			usage();
			return 2;
		}
	}
	nthreads = (unsigned) threads;
	keys_per_thread = (uint64_t) keys;
	long cpus = sys_cpu_count();
	if (cpus < 1)
		cpus = 1;

	if (cht_rcu_register_thread() != CHT_OK) {
		printf("chtuser: cannot register with the RCU\n");
		return 1;
	}
	size_t heap_base = malloc_in_use();
	uint64_t errors = 0, total_ops = 0, removed = 0;
	worker_t *w = calloc(nthreads, sizeof(*w));
	uthread_t **t = calloc(nthreads, sizeof(*t));
	if (!w || !t) {
		printf("chtuser: out of memory\n");
		return 1;
	}
	int rc = lookup_bench ?
	    cht_create(&table, BENCH_BUCKETS, BENCH_BUCKETS, 1u << 20, &ops) :
	    cht_create(&table, 0, 0, 0, &ops);
	if (rc != CHT_OK) {
		printf("chtuser: cht_create failed (%d)\n", rc);
		return 1;
	}
	if (lookup_bench) {
		cht_rcu_read_lock();
		for (uint64_t k = 0; k < BENCH_ITEMS; k++) {
			item_t *it = item_new(k);
			if (!it)
				errors++;
			else
				cht_insert(&table, &it->link);
		}
		cht_rcu_read_unlock();
	}
	long t0 = sys_clock_ns();
	for (unsigned i = 0; i < nthreads; i++) {
		w[i].index = i;
		w[i].cpu = i % (unsigned) cpus;
		w[i].rnd = 0x9e3779b97f4a7c15ULL * (i + 1) + (uint64_t) t0;
		if (!lookup_bench) {
			w[i].present = calloc(keys_per_thread, sizeof(bool));
			if (!w[i].present) {
				printf("chtuser: out of memory\n");
				return 1;
			}
		}
	}
	unsigned started = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		t[i] = thread_create(lookup_bench ? bench_main : worker_main, &w[i]);
		if (!t[i]) {
			printf("chtuser: cannot start thread %u\n", i);
			errors++;
			break;
		}
		started++;
	}
	thread_sleep_ns((uint64_t) seconds * 1000000000ULL);
	__atomic_store_n(&stop, true, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < started; i++) {
		if (thread_join(t[i]) != 0)
			errors++;
	}
	long t1 = sys_clock_ns();
	for (unsigned i = 0; i < started; i++) {
		total_ops += w[i].ops;
		errors += w[i].errors;
		removed += w[i].removes;
	}
	if (lookup_bench) {
		printf("chtuser: lookups threads=%u ops=%llu hits=%llu ns=%ld\n",
		    nthreads, (unsigned long long) total_ops,
		    (unsigned long long) w[0].lookups, t1 - t0);
		cht_rcu_read_lock();
		for (uint64_t k = 0; k < BENCH_ITEMS; k++)
			removed += cht_remove_key(&table, &k);
		cht_rcu_read_unlock();
	} else if (started == nthreads) {
		errors += final_check(w, &removed);
	}
	/*
	 * Every removed item gets its callback once, after a grace period; the
	 * destroy unlinks what removals left marked and waits for every
	 * callback (cht_rcu_barrier()).
	 */
	rc = cht_destroy(&table);
	if (rc != CHT_OK) {
		printf("chtuser: cht_destroy failed (%d)\n", rc);
		errors++;
	}
	uint64_t cbs = __atomic_load_n(&callbacks, __ATOMIC_RELAXED);
	uint64_t dbl = __atomic_load_n(&double_callbacks, __ATOMIC_RELAXED);
	if (cbs != removed || dbl) {
		printf("chtuser: %llu removed, %llu callbacks, %llu twice\n",
		    (unsigned long long) removed, (unsigned long long) cbs,
		    (unsigned long long) dbl);
		errors++;
	}
	for (unsigned i = 0; i < nthreads; i++)
		free(w[i].present);
	free(w);
	free(t);
	size_t heap_end = malloc_in_use();
	if (heap_end != heap_base) {
		printf("chtuser: heap %zu bytes in use, %zu before the table\n",
		    heap_end, heap_base);
		errors++;
	}
	if (!lookup_bench)
		printf("chtuser: threads=%u ops=%llu errors=%llu\n", nthreads,
		    (unsigned long long) total_ops, (unsigned long long) errors);
	else if (errors)
		printf("chtuser: errors=%llu\n", (unsigned long long) errors);
	return errors ? 1 : 0;
}
