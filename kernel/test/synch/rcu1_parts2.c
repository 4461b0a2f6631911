/** @file rcu1_parts2.c
 * The kernel test `rcu1` (see rcu1.c), parts a thread exiting in a reader,
 * many empty readers, many empty callbacks, the sequence check, the
 * stress and the frees of rcu_slab_free() and slab_free_bulk().
 */
#include "rcu1.h"
#include <mm/slab.h>

/* ---- part: a thread exits inside a reader section ----------------------- */

typedef struct {
	rcu_item_t item;
	hog_t *hog;
	bool preempt;
	bool explicit_exit;
	atomic_t exiting;
	atomic_t early;
	atomic_t cb_runs;
	atomic_t no_preempt;
} ex_t;

static void ex_cb(rcu_item_t *it)
{
	ex_t *e = container_of(it, ex_t, item);
	if (atomic_get(&e->exiting) == 0)
		atomic_set(&e->early, 1);
	atomic_inc(&e->cb_runs);
}

static void ex_reader(void *arg)
{
	ex_t *e = arg;
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_lock();
	rcu_read_unlock();
	rcu_call(&e->item, ex_cb);
	rcu_read_lock();
	rcu_read_lock();
	if (e->preempt && !rcu1_preempt_me(e->hog))
		atomic_set(&e->no_preempt, 1);
	udelay(HOLD_US / 4);
	if (atomic_get(&e->cb_runs) != 0)
		atomic_set(&e->early, 1);
	atomic_set(&e->exiting, 1);
	/* Exit with four levels open: thread_exit() must close the section. */
	if (e->explicit_exit)
		thread_exit();
}

static atomic_t fresh_locked;

static void fresh_thread(void *arg)
{
	if (rcu_read_locked())
		atomic_inc(&fresh_locked);
	rcu_read_lock();
	if (!rcu_read_locked())
		atomic_inc(&fresh_locked);
	rcu_read_unlock();
	if (rcu_read_locked())
		atomic_inc(&fresh_locked);
}

const char *rcu1_part_exit(void)
{
	for (unsigned variant = 0; variant < 2; variant++) {
		cpu_t *cpu = rcu1_nth_cpu(variant);
		static hog_t hog;
		if (!rcu1_hog_start(&hog, cpu))
			return "cannot create a thread";
		ex_t *e = malloc(sizeof(*e));
		if (!e) {
			return rcu1_hog_stop(&hog) ? "out of memory" :
			    rcu1_in_flight("a thread did not finish");
		}
		e->hog = &hog;
		e->preempt = variant == 1;
		e->explicit_exit = variant == 1;
		atomic_set(&e->exiting, 0);
		atomic_set(&e->early, 0);
		atomic_set(&e->cb_runs, 0);
		atomic_set(&e->no_preempt, 0);
		thread_t *t = testlib_spawn(ex_reader, e, "rcu1-exit", cpu);
		bool ok = t && testlib_join(t, WAIT_LIMIT_US);
		bool hog_ok = rcu1_hog_stop(&hog);
		if (!t && hog_ok)
			return "cannot create a thread";  /* e leaks, unreferenced */
		if (!ok || !hog_ok)
			return rcu1_in_flight("a thread did not finish");
		if (!rcu1_wait_atleast(&e->cb_runs, 1))
			return rcu1_in_flight(e->preempt ? "RCU locked up after a thread "
			    "exited inside a preempted reader section" : "RCU locked up "
			    "after a thread exited inside a reader section");
		rcu_barrier();
		bool early = atomic_get(&e->early), no_pre = atomic_get(&e->no_preempt);
		size_t runs = atomic_get(&e->cb_runs);
		free(e);
		if (early)
			return "a callback posted inside the section of an exiting thread "
			    "ran before the thread exited";
		if (runs != 1)
			return "a callback ran more than once";
		if (no_pre)
			return "could not force a context switch inside the section";
		for (int i = 0; i < 3; i++) {
			if (!rcu1_gp_elapses())
				return rcu1_in_flight("grace periods stopped after a thread "
				    "exited inside a reader section");
		}
		TPRINTF("rcu1:   thread exits inside a reader%s: ok\n",
		    variant ? " after being preempted in it" : "");
	}
	/* New threads (possibly reusing the memory) start outside any section. */
	atomic_set(&fresh_locked, 0);
	for (unsigned k = 0; k < 2 * rcu1_online_n; k++) {
		thread_t *t = testlib_spawn(fresh_thread, NULL, "rcu1-fresh", rcu1_nth_cpu(k));
		if (!t)
			return "cannot create a thread";
		if (!testlib_join(t, WAIT_LIMIT_US))
			return rcu1_in_flight("a thread did not finish");
	}
	if (atomic_get(&fresh_locked))
		return "rcu_read_locked() wrong in a new thread (inherited a section?)";
	return NULL;
}

/* ---- part: many empty readers ------------------------------------------- */

static atomic_t nop_bad;

static void nop_reader(void *arg)
{
	size_t iters = (size_t) arg;
	size_t bad = 0;
	for (size_t i = 0; i < iters; i++) {
		rcu_read_lock();
		if ((i & 63) == 0 && !rcu_read_locked())
			bad++;
		if (i % 7 == 0) {
			rcu_read_lock();
			rcu_read_unlock();
		}
		rcu_read_unlock();
		if ((i & 63) == 1 && rcu_read_locked())
			bad++;
	}
	if (rcu_read_locked())
		bad++;
	atomic_add(&nop_bad, bad);
}

const char *rcu1_part_nop_readers(void)
{
	thread_t *t[MAX_THREADS];
	unsigned n = rcu1_thread_cnt(), made = 0;
	size_t total = 0;
	atomic_set(&nop_bad, 0);
	for (unsigned k = 0; k < n; k++) {
		size_t iters = NOP_READER_MIN + (size_t) (NOP_READER_MAX -
		    NOP_READER_MIN) * k / (n > 1 ? n - 1 : 1);
		t[k] = testlib_spawn(nop_reader, (void *) iters, "rcu1-nopr", rcu1_nth_cpu(k));
		if (!t[k])
			break;
		total += iters;
		made++;
	}
	const char *err = rcu1_join_all(t, made, n);
	if (err)
		return err;
	if (atomic_get(&nop_bad))
		return "rcu_read_locked() was wrong inside or outside a section";
	if (!rcu1_gp_elapses())
		return rcu1_in_flight("no grace period after the empty readers");
	TPRINTF("rcu1:   %u threads, %zu empty sections\n", n, total);
	return NULL;
}

/* ---- part: many empty callbacks ----------------------------------------- */

static atomic_t nop_runs, nop_live, nop_oom;

static void nop_cb(rcu_item_t *it)
{
	atomic_inc(&nop_runs);
	atomic_dec(&nop_live);
	free(it);
}

static void nop_updater(void *arg)
{
	for (unsigned i = 0; i < NOP_CBS; i++) {
		rcu_item_t *it = malloc(sizeof(*it));
		if (!it) {
			atomic_inc(&nop_oom);
			return;
		}
		atomic_inc(&nop_live);
		rcu_call(it, nop_cb);
	}
}

/** Callbacks of the one-CPU flood below (an array, freed after a barrier). */
static atomic_t flood_runs;

static void flood_cb(rcu_item_t *it)
{
	(void) it;
	atomic_inc(&flood_runs);
}

/**
 * A flood of FLOOD_CBS callbacks posted on one CPU with preemption disabled
 * (so its reclaimer cannot take the arriving list and every call past the
 * expedite threshold asks for an expedited grace period) must write the
 * shared expedite request at most once per grace period that starts meanwhile
 * (the detection clears it once per grace period), plus once. Storing it on
 * every call made the flag's cache line bounce between CPUs posting callbacks
 * (chtbench 15 at 20 % updates posts about a million per second per CPU).
 */
static const char *nop_flood_flag(void)
{
	rcu_item_t *items = malloc(FLOOD_CBS * sizeof(rcu_item_t));
	if (!items)
		return "out of memory";
	atomic_set(&flood_runs, 0);
	rcu_stats_t g0, g1;
	rcu_cpu_stats_t c0, c1;
	preemption_disable();
	unsigned cpu = CPU->id;
	rcu_get_stats(&g0);
	rcu_cpu_get_stats(cpu, &c0);
	for (unsigned i = 0; i < FLOOD_CBS; i++)
		rcu_call(&items[i], flood_cb);
	rcu_cpu_get_stats(cpu, &c1);
	rcu_get_stats(&g1);
	preemption_enable();
	rcu_barrier();
	size_t runs = atomic_get(&flood_runs);
	free(items);
	uint64_t sets = c1.expedite_reqs - c0.expedite_reqs;
	uint64_t gps = g1.gps_started - g0.gps_started;
	if (runs != FLOOD_CBS) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%zu of %u "
		    "flood callbacks ran after rcu_barrier", runs, FLOOD_CBS);
		return rcu1_reason_buf;
	}
	if (sets > gps + 1) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "rcu_call set "
		    "the shared expedite request %lu times in a flood of %u "
		    "callbacks on CPU %u while %lu grace periods started (at most "
		    "one per grace period, plus one)", sets, FLOOD_CBS, cpu, gps);
		return rcu1_reason_buf;
	}
	TPRINTF("rcu1:   flood of %u callbacks on cpu %u: expedite request set "
	    "%lu times, %lu grace periods started\n", FLOOD_CBS, cpu, sets, gps);
	return NULL;
}

const char *rcu1_part_nop_cbs(void)
{
	const char *ferr = nop_flood_flag();
	if (ferr)
		return ferr;

	thread_t *t[MAX_THREADS];
	unsigned n = rcu1_thread_cnt();
	atomic_set(&nop_runs, 0);
	atomic_set(&nop_live, 0);
	atomic_set(&nop_oom, 0);
	unsigned made = rcu1_spawn_n(t, n, nop_updater, NULL, 0, "rcu1-nopcb");
	const char *err = rcu1_join_barrier(t, made, n, &nop_oom);
	if (err)
		return err;
	size_t expected = (size_t) n * NOP_CBS, runs = atomic_get(&nop_runs);
	if (runs != expected || atomic_get(&nop_live) != 0) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%zu of %zu empty callbacks "
		    "ran after rcu_barrier (%zu items not freed)", runs, expected,
		    atomic_get(&nop_live));
		return rcu1_reason_buf;
	}
	TPRINTF("rcu1:   %u threads, %zu callbacks, all run once\n", n, expected);
	return NULL;
}

/* ---- part: sequence check ------------------------------------------------ */

typedef struct {
	rcu_item_t item;
	size_t stamp;
} seq_item_t;

typedef struct {
	size_t reads;
	size_t updates;
} seq_work_t;

static atomic_t seq_clock;
/** Largest stamp of a completed callback. Atomics. */
static size_t seq_max_done;
static atomic_t seq_races, seq_oom, seq_live, seq_posted;

static void seq_cb(rcu_item_t *it)
{
	seq_item_t *s = container_of(it, seq_item_t, item);
	size_t st = s->stamp;
	size_t m = __atomic_load_n(&seq_max_done, __ATOMIC_SEQ_CST);
	while (st > m && !__atomic_compare_exchange_n(&seq_max_done, &m, st, false,
	    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		;
	atomic_dec(&seq_live);
	free(s);
}

static void seq_func(void *arg)
{
	seq_work_t *w = arg;
	for (unsigned k = 0; k < SEQ_ITERS; k++) {
		for (size_t i = 0; i < w->reads; i++) {
			rcu_read_lock();
			size_t start = atomic_postinc(&seq_clock);
			for (size_t d = 0; d < 10 * i; d++)
				compiler_barrier();
			if (start < __atomic_load_n(&seq_max_done, __ATOMIC_SEQ_CST))
				atomic_inc(&seq_races);
			rcu_read_unlock();
		}
		for (size_t i = 0; i < w->updates; i++) {
			seq_item_t *a = malloc(sizeof(*a));
			if (!a) {
				atomic_inc(&seq_oom);
				return;
			}
			atomic_inc(&seq_live);
			atomic_inc(&seq_posted);
			a->stamp = atomic_postinc(&seq_clock);
			rcu_call(&a->item, seq_cb);
		}
	}
}

const char *rcu1_part_seq(void)
{
	static seq_work_t work[MAX_THREADS];
	thread_t *t[MAX_THREADS];
	unsigned n = rcu1_thread_cnt();
	atomic_set(&seq_clock, 1);
	__atomic_store_n(&seq_max_done, 0, __ATOMIC_SEQ_CST);
	atomic_set(&seq_races, 0);
	atomic_set(&seq_oom, 0);
	atomic_set(&seq_live, 0);
	atomic_set(&seq_posted, 0);
	for (unsigned k = 0; k < n; k++) {
		work[k].reads = (size_t) SEQ_TOTAL * k / (n > 1 ? n - 1 : 1);
		work[k].updates = SEQ_TOTAL - work[k].reads;
		if (work[k].updates == 0)
			work[k].updates = 1;
	}
	unsigned made = rcu1_spawn_n(t, n, seq_func, work, sizeof(work[0]), "rcu1-seq");
	const char *err = rcu1_join_barrier(t, made, n, &seq_oom);
	if (err)
		return err;
	if (atomic_get(&seq_races)) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%zu readers saw a callback "
		    "posted after their start complete while they were inside",
		    atomic_get(&seq_races));
		return rcu1_reason_buf;
	}
	if (atomic_get(&seq_live) != 0)
		return "sequence-check callbacks not all run after rcu_barrier";
	TPRINTF("rcu1:   %u threads, %zu callbacks, clock %zu, no race\n", n,
	    atomic_get(&seq_posted), atomic_get(&seq_clock));
	return NULL;
}

/* ---- part: stress (one reader and one updater per CPU) ------------------- */

typedef struct {
	atomic_t posted;
	atomic_t run;
	bool stalled;
	bool oom;
} stress_upd_t;

typedef struct {
	rcu_item_t item;
	stress_upd_t *owner;
} stress_item_t;

static stress_upd_t stress_upd[CONFIG_MAX_CPUS];
/** Callbacks per updater. */
static unsigned stress_cbs;
static bool stress_done;   /**< Atomics. */
static atomic_t stress_reads;

static void stress_reader(void *arg)
{
	size_t n = 0;
	while (!__atomic_load_n(&stress_done, __ATOMIC_ACQUIRE)) {
		rcu_read_lock();
		rcu_read_unlock();
		n++;
		/* Work outside the section so preemption mostly hits outside. */
		udelay(5);
	}
	atomic_add(&stress_reads, n);
}

static void stress_cb(rcu_item_t *it)
{
	stress_item_t *s = container_of(it, stress_item_t, item);
	stress_upd_t *u = s->owner;
	udelay(1);
	free(s);
	atomic_inc(&u->run);
}

static void stress_updater(void *arg)
{
	stress_upd_t *u = arg;
	for (unsigned i = 0; i < stress_cbs; i++) {
		if (atomic_get(&u->posted) - atomic_get(&u->run) >=
		    STRESS_OUTSTANDING) {
			uint64_t start = uptime_us();
			size_t last = atomic_get(&u->run);
			while (atomic_get(&u->posted) - atomic_get(&u->run) >=
			    STRESS_OUTSTANDING) {
				thread_usleep(1000);
				if (atomic_get(&u->run) != last) {
					last = atomic_get(&u->run);
					start = uptime_us();
				} else if (uptime_us() - start > WAIT_LIMIT_US) {
					u->stalled = true;
					return;
				}
			}
		}
		stress_item_t *s = malloc(sizeof(*s));
		if (!s) {
			u->oom = true;
			return;
		}
		s->owner = u;
		atomic_inc(&u->posted);
		rcu_call(&s->item, stress_cb);
	}
}

const char *rcu1_part_stress(void)
{
	thread_t *rd[CONFIG_MAX_CPUS], *up[CONFIG_MAX_CPUS];
	unsigned nr = 0, nu = 0;
	const char *what = NULL;
	__atomic_store_n(&stress_done, false, __ATOMIC_RELEASE);
	atomic_set(&stress_reads, 0);
	stress_cbs = MAX(STRESS_MIN, STRESS_TOTAL / rcu1_online_n);
	for (unsigned k = 0; k < rcu1_online_n; k++) {
		stress_upd[k] = (stress_upd_t) { .stalled = false, .oom = false };
		atomic_set(&stress_upd[k].posted, 0);
		atomic_set(&stress_upd[k].run, 0);
	}
	for (unsigned k = 0; k < rcu1_online_n; k++) {
		rd[nr] = testlib_spawn(stress_reader, NULL, "rcu1-stress-r", rcu1_nth_cpu(k));
		if (!rd[nr])
			break;
		nr++;
		up[nu] = testlib_spawn(stress_updater, &stress_upd[k], "rcu1-stress-u",
		    rcu1_nth_cpu(k));
		if (!up[nu])
			break;
		nu++;
	}
	for (unsigned k = 0; k < nu; k++) {
		if (!testlib_join(up[k], WAIT_LIMIT_US) && !what)
			what = "an updater did not finish";
	}
	__atomic_store_n(&stress_done, true, __ATOMIC_RELEASE);
	for (unsigned k = 0; k < nr; k++) {
		if (!testlib_join(rd[k], WAIT_LIMIT_US) && !what)
			what = "a reader did not finish";
	}
	if (what)
		return rcu1_in_flight(what);
	if (nr != rcu1_online_n || nu != rcu1_online_n)
		return "cannot create a thread";
	rcu_barrier();
	size_t posted = 0, run = 0;
	for (unsigned k = 0; k < rcu1_online_n; k++) {
		if (stress_upd[k].stalled)
			return "callbacks stopped completing during the stress";
		if (stress_upd[k].oom)
			return "out of memory";
		posted += atomic_get(&stress_upd[k].posted);
		run += atomic_get(&stress_upd[k].run);
	}
	if (posted != (size_t) rcu1_online_n * stress_cbs || run != posted) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "stress: %zu callbacks "
		    "posted, %zu run after rcu_barrier", posted, run);
		return rcu1_reason_buf;
	}
	TPRINTF("rcu1:   %u readers (%zu sections), %u updaters, %zu callbacks\n",
	    nr, atomic_get(&stress_reads), nu, posted);
	return NULL;
}

/* ---- part: rcu_slab_free() and slab_free_bulk() ------------------------- */

/** Objects freed through RCU: not a multiple of RCU_FREE_BATCH. */
#define SFREE_OBJS 1000
/** Objects of the direct slab_free_bulk() rounds. */
#define SFREE_BULK 100

typedef struct {
	rcu_item_t item;
	uint64_t payload[2];
} sfree_obj_t;

/** The part's own cache; set before any callback is posted. */
static slab_cache_t *sfree_cache;
/** Objects in use that sfree_check_cb() saw (atomics); SIZE_MAX: not run. */
static size_t sfree_seen;

static void sfree_cb(rcu_item_t *it)
{
	rcu_slab_free(sfree_cache, container_of(it, sfree_obj_t, item));
}

/** Posted after the frees on the same CPU: runs after them (rcu_call order). */
static void sfree_check_cb(rcu_item_t *it)
{
	slab_cache_stats_t st;
	slab_cache_get_stats(sfree_cache, &st);
	__atomic_store_n(&sfree_seen, st.objs_in_use, __ATOMIC_RELEASE);
	free(it);
}

/** Objects of the part's cache in use (slab_alloc() minus slab_free()). */
static size_t sfree_in_use(void)
{
	slab_cache_stats_t st;
	slab_cache_get_stats(sfree_cache, &st);
	return st.objs_in_use;
}

/**
 * SFREE_BULK objects allocated and given back with one slab_free_bulk(),
 * twice (the second round takes the first's objects from the magazines).
 */
static const char *sfree_bulk_rounds(sfree_obj_t **o)
{
	for (unsigned round = 0; round < 2; round++) {
		for (unsigned i = 0; i < SFREE_BULK; i++) {
			o[i] = slab_alloc(sfree_cache, SLAB_KM_NONE);
			if (!o[i]) {
				slab_free_bulk(sfree_cache, (void **) o, i);
				return "out of memory";
			}
			o[i]->payload[0] = i;
		}
		for (unsigned i = 0; i < SFREE_BULK; i++) {
			if (o[i]->payload[0] != i)
				return "slab_alloc gave one object twice";
		}
		slab_free_bulk(sfree_cache, (void **) o, SFREE_BULK);
		if (sfree_in_use() != 0)
			return "objects in use after slab_free_bulk";
	}
	return NULL;
}

/**
 * Frees through RCU callbacks with rcu_slab_free() (the reclaimer gathers
 * them and frees them in bulk): a callback of another function posted after
 * them on the same CPU must find every one of them back in the cache, and
 * so must the caller after rcu_barrier(). Then slab_free_bulk() directly.
 */
static const char *sfree_run(sfree_obj_t **o)
{
	for (unsigned i = 0; i < SFREE_OBJS; i++) {
		o[i] = slab_alloc(sfree_cache, SLAB_KM_NONE);
		if (!o[i]) {
			slab_free_bulk(sfree_cache, (void **) o, i);
			return "out of memory";
		}
	}
	rcu_item_t *check = malloc(sizeof(*check));
	if (!check) {
		slab_free_bulk(sfree_cache, (void **) o, SFREE_OBJS);
		return "out of memory";
	}
	__atomic_store_n(&sfree_seen, SIZE_MAX, __ATOMIC_RELAXED);
	/* One CPU for all: its callbacks run in the order posted. */
	preemption_disable();
	for (unsigned i = 0; i < SFREE_OBJS; i++)
		rcu_call(&o[i]->item, sfree_cb);
	rcu_call(check, sfree_check_cb);
	preemption_enable();
	rcu_barrier();
	size_t seen = __atomic_load_n(&sfree_seen, __ATOMIC_ACQUIRE);
	size_t after = sfree_in_use();
	if (seen != 0 || after != 0) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "rcu_slab_free: "
		    "%zu of %u objects in use at a later callback (SIZE_MAX: it "
		    "did not run), %zu after rcu_barrier", seen, SFREE_OBJS, after);
		return rcu1_reason_buf;
	}
	return sfree_bulk_rounds(o);
}

const char *rcu1_part_slab_free(void)
{
	sfree_obj_t **o = malloc(SFREE_OBJS * sizeof(*o));
	if (!o)
		return "out of memory";
	sfree_cache = slab_cache_create("rcu1-sfree", sizeof(sfree_obj_t), 0,
	    NULL, NULL, 0);
	if (!sfree_cache) {
		free(o);
		return "slab_cache_create failed";
	}
	const char *err = sfree_run(o);
	free(o);
	if (slab_cache_destroy(sfree_cache) != EOK && !err)
		err = "slab_cache_destroy failed after the frees";
	if (!err)
		TPRINTF("rcu1:   %u objects freed through rcu_slab_free, %u twice "
		    "with slab_free_bulk: none in use after\n", SFREE_OBJS,
		    SFREE_BULK);
	return err;
}
