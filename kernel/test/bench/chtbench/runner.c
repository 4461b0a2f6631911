/** @file runner.c
 * `chtbench`: the seed's RCU and hash table benchmarks, the relativistic
 * paper's continuous-resize experiment and the page hash table paths, run
 * inside the kernel (docs/CHTBENCH.md). This part holds the benchmark
 * table and runs one benchmark; the subjects are in list.c, ht.c, resize.c
 * and bench_page_ht.c, the command in console/cmd_bench.c.
 *
 * One thread per CPU 0..cpus-1 (wired with -w) repeats its operation until the
 * time is up and counts completed operations in a local variable; nothing
 * shared is written for bookkeeping. Threads start together (a start flag) and
 * stop when the controlling thread raises the stop flag after -t seconds.
 */
#include "chtbench_parts.h"
#include <sharing.h>

/* Shared state of one run (see chtbench.h). */
bench_cfg_t bench_cfg;
bool start_flag;
bool stop_flag;
atomic_t threads_ready;

static const bench_t benches[] = {
	{ 1, "rcu-empty", "empty RCU reader sections (read-side overhead alone)",
	    NULL, b_rcu_empty, NULL, 0, false, false },
	{ 2, "list-read/ideal", "traversals of a 5-element immutable list, no "
	    "synchronization", s_list, b_list_ideal, t_list, 0, false, false },
	{ 3, "list-read/rcu", "the same traversals in an RCU reader section", s_list,
	    b_list_rcu, t_list, 0, false, false },
	{ 4, "list-read/spinlock", "the same under a preemption-disabling spinlock",
	    s_list, b_list_spin, t_list, 0, false, false },
	{ 5, "list-read/rwlock", "the same under a spinning reader-writer lock "
	    "(read side)", s_list, b_list_rw, t_list, 0, false, false },
	{ 6, "list-upd/ideal", "walk or replace (update %) an element, one CPU, no "
	    "synchronization", s_list, b_list_upd_ideal, t_list, 0, true, true },
	{ 7, "list-upd/rcu", "walk (RCU reader) or replace an element (spinlock, "
	    "old one freed by rcu_call)", s_list, b_list_upd_rcu, t_list, 0, false,
	    true },
	{ 8, "list-upd/spinlock", "the same mix, everything under one spinlock",
	    s_list, b_list_upd_spin, t_list, 0, false, true },
	{ 10, "ht-lookup/spinlock", "lookups in a fixed 127-bucket chained table "
	    "under one spinlock (load 4, half miss)", s_fixed, b_ht_spin, t_fixed, 0,
	    false, false },
	{ 11, "ht-lookup/bktlock", "the same table with a spinlock per bucket",
	    s_fixed, b_ht_bkt, t_fixed, 0, false, false },
	{ 12, "ht-lookup/cht", "the CHT with 128 buckets, resizing out of reach, "
	    "same keys", s_cht, b_ht_cht, t_cht, 0, false, false },
	{ 13, "ht-upd/spinlock", "lookups mixed with (update %) insert/remove pairs, "
	    "global spinlock", s_fixed, b_htu_spin, t_fixed, 0, false, true },
	{ 14, "ht-upd/bktlock", "the same, per-bucket locks", s_fixed, b_htu_bkt,
	    t_fixed, 0, false, true },
	{ 15, "ht-upd/cht", "the same on the CHT", s_cht, b_htu_cht, t_cht, 0,
	    false, true },
	{ 16, "resize/cht-fixed-8k", "CHT lookups, 2^16 items, fixed 2^13 buckets "
	    "(every lookup must hit)", s_rs_cht13, b_rs_cht, t_rs_cht, 0, false,
	    false },
	{ 17, "resize/cht-fixed-16k", "the same with fixed 2^14 buckets", s_rs_cht14,
	    b_rs_cht, t_rs_cht, 0, false, false },
	{ 18, "resize/cht-continuous", "the same while a resizer flips 2^13 <-> 2^14 "
	    "buckets", s_rs_cht_cont, b_rs_cht, t_rs_cht, 1, false, false },
	{ 19, "resize/rwlock-fixed-8k", "a reader-writer-lock chained table, 2^16 "
	    "items, fixed 2^13 buckets", s_rs_rw, b_rs_rw, t_rs_rw, 0, false,
	    false },
	{ 20, "resize/rwlock-continuous", "the same while a resizer rehashes 2^13 <-> "
	    "2^14 under the write lock", s_rs_rw, b_rs_rw, t_rs_rw, 2, false, false },
	{ 21, "page_ht-lookup", "page_mapping_find on 1024 mapped pages of one address "
	    "space (page hash table back end as built)", s_ph_lookup, b_ph_lookup,
	    t_ph, 0, false, false },
	{ 22, "page_ht-fault", "page faults: touch 1024 pages (each thread its slice), "
	    "unmap, repeat; ops = faults", s_ph, b_ph_fault, t_ph, 0, false, false },
};

static const bench_t *bench_find(unsigned id)
{
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++) {
		if (benches[i].id == id)
			return &benches[i];
	}
	return NULL;
}

void chtbench_list(void)
{
	printf("chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS] [-m]\n");
	printf("  id  name                      flags  measures\n");
	for (size_t i = 0; i < ARRAY_SIZE(benches); i++) {
		const bench_t *b = &benches[i];
		char flags[4];
		size_t n = 0;
		if (b->updates)
			flags[n++] = 'u';
		if (b->resizer)
			flags[n++] = 'r';
		if (b->single_cpu)
			flags[n++] = '1';
		if (n == 0)
			flags[n++] = '-';
		flags[n] = '\0';
		printf("  %2u  %-24s  %-5s  %s\n", b->id, b->name, flags, b->desc);
	}
	printf("flags: u takes the update percentage, r runs a resizer thread "
	    "(on CPU <cpus> when online), 1 runs updates on one CPU only\n");
}

static bench_thread_t bt[CONFIG_MAX_CPUS];

static void bench_thread(void *arg)
{
	bench_thread_t *t = arg;
	const bench_t *b = bench_find(bench_cfg.id);
	atomic_inc(&threads_ready);
	while (!__atomic_load_n(&start_flag, __ATOMIC_ACQUIRE))
		cpu_relax();
	t->cpu_seen = CPU->id;
	b->body(t);
}

void chtbench_usage(const char *msg)
{
	if (msg)
		printf("chtbench: %s\n", msg);
	printf("Usage: chtbench <bench-id> <cpus> <update-percent> [-w] [-t SECONDS] [-m]"
	    "\n  'chtbench 0 0 0' or 'chtbench' lists the benchmarks.\n");
}

/** At most this many ranges in the slab map of `chtbench -m`. */
#define SLABMAP_MAX 4096

/* Prints the slab allocator's ranges (chtbench -m, docs/SHARING.md). */
static void print_slabmap(void)
{
	slab_map_entry_t *map = malloc(SLABMAP_MAX * sizeof(*map));
	if (!map) {
		printf("slabmap: out of memory\n");
		return;
	}
	size_t n = slab_map_snapshot(map, SLABMAP_MAX);
	for (size_t i = 0; i < n; i++)
		printf("slabmap %s %s %#lx %zu\n", map[i].name,
		    map[i].desc ? "desc" : "slab", map[i].start, map[i].bytes);
	if (n == SLABMAP_MAX)
		printf("slabmap: truncated at %u ranges\n", SLABMAP_MAX);
	free(map);
}

/** Checks the command's CPU count (@a ncpus: 1 to the online CPUs, which
 *  must be 0..ncpus-1) and update percentage for benchmark @a b; prints the
 *  usage and returns false when one is out of range. */
static bool bench_args_ok(const bench_t *b, int64_t ncpus, int64_t pct)
{
	size_t online = atomic_get(&cpu_active_count);
	if (ncpus < 1 || (size_t) ncpus > online || ncpus > CONFIG_MAX_CPUS) {
		chtbench_usage("cpus must be between 1 and the number of online CPUs");
		return false;
	}
	if (pct < 0 || pct > 100) {
		chtbench_usage("update-percent must be between 0 and 100");
		return false;
	}
	for (int64_t i = 0; i < ncpus; i++) {
		if (!cpu_is_online((unsigned) i)) {
			chtbench_usage("CPUs 0..cpus-1 must be online");
			return false;
		}
	}
	/*
	 * A single-CPU baseline's updates replace and free list elements with
	 * no synchronization at all: on two CPUs a walker reads a freed element
	 * (a general protection fault on the slab poison). Read-only runs are
	 * safe on any number of CPUs.
	 */
	if (b->single_cpu && ncpus != 1 && pct > 0) {
		chtbench_usage("this benchmark has no synchronization: with updates it runs "
		    "on one CPU only (cpus=1)");
		return false;
	}
	return true;
}

/** The notes printed before a run of benchmark @a b (id @a id). */
static void bench_notes(const bench_t *b, int64_t id, int64_t ncpus)
{
#ifdef CONFIG_DEBUG
	printf("chtbench: note: this is a debug build (asserts on, -O1); benchmarks "
	    "are meant for a release build (make DEBUG=0)\n");
#endif
	if (b->single_cpu && ncpus != 1)
		printf("chtbench: note: %s is the seed's single-CPU baseline; run it "
		    "with cpus=1\n", b->name);
	if (id >= 10 && id <= 15)
		printf("chtbench: note: as in the seed, the fixed tables divide keys by "
		    "the prime 127 and the keys give exactly 4 items per bucket (in "
		    "their favour); the CHT mixes hashes (buckets hold 0..9 items) and "
		    "still counts items and checks for a resize on updates\n");
}

/** Creates and starts the benchmark threads of @a c into @a th. @return
 *  how many were created (fewer than c->cpus when memory ran out). */
static unsigned bench_start_threads(thread_t **th, const bench_cfg_t *c)
{
	unsigned created = 0;
	for (unsigned i = 0; i < c->cpus; i++) {
		bt[i] = (bench_thread_t) { .index = i,
		    .rnd = 0x9e3779b97f4a7c15ULL * (i + 1) + uptime_us() };
		th[i] = thread_create(bench_thread, &bt[i], "chtbench",
		    THREAD_FLAG_NONE);
		if (!th[i])
			break;
		if (c->wired)
			thread_wire(th[i], &cpus[i]);
		thread_start(th[i]);
		created++;
	}
	return created;
}

/** Creates and starts benchmark @a b's resizer thread, if it has one.
 *  @return it, or NULL (none, or out of memory). */
static thread_t *bench_start_resizer(const bench_t *b, const bench_cfg_t *c)
{
	thread_t *resizer = NULL;
	if (b->resizer) {
		/*
		 * Keep the resizer off the reader CPUs when there is a spare CPU
		 * (as in the paper, readers and the resizer do not share a CPU);
		 * with every CPU reading it floats and steals reader time, which
		 * the result then includes.
		 */
		resizer = thread_create(resizer_thread,
		    (void *) (uintptr_t) (b->resizer == 1), "chtbench-resizer",
		    THREAD_FLAG_NONE);
		if (resizer) {
			if (c->cpus < CONFIG_MAX_CPUS && cpu_is_online(c->cpus)) {
				thread_wire(resizer, &cpus[c->cpus]);
				printf("resizer wired to cpu %u\n", c->cpus);
			} else {
				printf("resizer shares the reader CPUs\n");
			}
			thread_start(resizer);
		}
	}
	return resizer;
}

void chtbench_run(int64_t id, int64_t ncpus, int64_t pct, bool wired,
    unsigned seconds, bool slabmap)
{
	bench_cfg_t c = { .seconds = seconds, .wired = wired };
	const bench_t *b = id > 0 && id < 1000 ? bench_find((unsigned) id) : NULL;
	if (!b) {
		chtbench_usage("unknown benchmark id");
		return;
	}
	if (!bench_args_ok(b, ncpus, pct))
		return;
	c.id = (unsigned) id;
	c.cpus = (unsigned) ncpus;
	c.update_pct = (unsigned) pct;
	bench_cfg = c;

	bench_notes(b, id, ncpus);

	if (b->setup && b->setup() != EOK) {
		printf("chtbench: out of memory while setting up %s\n", b->name);
		if (b->teardown)
			b->teardown();
		return;
	}

	__atomic_store_n(&start_flag, false, __ATOMIC_RELAXED);
	__atomic_store_n(&stop_flag, false, __ATOMIC_RELAXED);
	atomic_set(&threads_ready, 0);
	__atomic_store_n(&resizes_done, 0, __ATOMIC_RELAXED);
	thread_t *th[CONFIG_MAX_CPUS];
	unsigned created = bench_start_threads(th, &c);
	thread_t *resizer = created == c.cpus ? bench_start_resizer(b, &c) :
	    NULL;
	while (atomic_get(&threads_ready) < created)
		thread_usleep(1000);

	bool ok = created == c.cpus && (!b->resizer || resizer);
	uint64_t t0 = uptime_us();
	/*
	 * The sharing counter's window (docs/SHARING.md): from just before the
	 * start to the stop, so the set-up, the thread creation and the joins
	 * stay out; the controller's sleep and the timer ticks are in, as on
	 * real hardware. NOPs without the plugin.
	 */
	sharing_window_open();
	__atomic_store_n(&start_flag, true, __ATOMIC_RELEASE);
	thread_sleep(ok ? c.seconds : 0);
	__atomic_store_n(&stop_flag, true, __ATOMIC_RELEASE);
	sharing_window_close();
	uint64_t t1 = uptime_us();
	for (unsigned i = 0; i < created; i++)
		thread_join(th[i]);
	if (resizer)
		thread_join(resizer);

	uint64_t total = 0, errors = 0;
	for (unsigned i = 0; i < created; i++) {
		printf("thread %u (cpu %u): ops=%lu\n", i, bt[i].cpu_seen, bt[i].ops);
		total += bt[i].ops;
		errors += bt[i].errors;
	}
	/* The operations of the window (those finished after the stop are few:
	 * at most one per thread). */
	sharing_window_report(ok ? total : 0);
	if (slabmap)
		print_slabmap();
	if (b->resizer)
		printf("resizes=%lu\n", __atomic_load_n(&resizes_done, __ATOMIC_RELAXED));
	if (errors)
		printf("chtbench: %lu lookups missed an item that was present\n", errors);
	if (b->teardown)
		b->teardown();
	rcu_barrier();

	if (!ok) {
		printf("chtbench: could not create the benchmark threads\n");
		return;
	}
	uint64_t us = t1 - t0;
	uint64_t rate = us ? total * 1000000 / us : 0;
	printf("result: bench=%u name=%s rcu=%s cpus=%u update=%u seconds=%u ops=%lu "
	    "ops_per_s=%lu%s%s\n", c.id, b->name, rcu_flavour_name, c.cpus,
	    c.update_pct, c.seconds, total, rate,
	    id >= 21 ? " page_ht=" : "", id >= 21 ? page_ht_backend : "");
	return;
}
