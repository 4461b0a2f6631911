/** @file rcu1_parts1.c
 * The kernel test `rcu1` (see rcu1.c), parts one callback, preempted
 * readers, rcu_synchronize and rcu_barrier.
 */
#include "rcu1.h"

/* ---- part: one callback ------------------------------------------------ */

typedef struct {
	rcu_item_t item;
	uint32_t cookie;
	bool bad_context;
	uint64_t gps_at_post;
	bool gp_not_advanced;
	atomic_t runs;
} one_t;

#define ONE_COOKIE 0x5eedc0deu

static void one_cb(rcu_item_t *it)
{
	one_t *o = container_of(it, one_t, item);
	if (o->cookie != ONE_COOKIE)
		o->bad_context = true;
	if (THREAD == NULL || CPU->irq_nesting != 0 || interrupts_disabled() ||
	    CPU->preemption_disabled != 0)
		o->bad_context = true;
	if (rcu_completed_gps() <= o->gps_at_post)
		o->gp_not_advanced = true;
	atomic_inc(&o->runs);
}

const char *rcu1_part_one_cb(void)
{
	one_t *o = malloc(sizeof(*o));
	if (!o)
		return "out of memory";
	o->cookie = ONE_COOKIE;
	o->bad_context = false;
	o->gp_not_advanced = false;
	atomic_set(&o->runs, 0);
	o->gps_at_post = rcu_completed_gps();
	rcu_call(&o->item, one_cb);
	if (!rcu1_wait_atleast(&o->runs, 1))
		return rcu1_in_flight("a callback never ran");
	rcu_barrier();
	size_t runs = atomic_get(&o->runs);
	bool bad = o->bad_context, early = o->gp_not_advanced;
	free(o);
	if (runs != 1)
		return "a callback ran more than once";
	if (bad)
		return "a callback ran in a wrong context (interrupt, interrupts or "
		    "preemption disabled) or with a corrupted item";
	if (early)
		return "a callback ran before the GP counter advanced";

	for (int expedite = 0; expedite < 2; expedite++) {
		uint64_t g0 = rcu_completed_gps();
		for (int i = 0; i < 5; i++) {
			if (expedite)
				rcu_synchronize_expedite();
			else
				rcu_synchronize();
		}
		uint64_t g1 = rcu_completed_gps();
		if (g1 < g0 + 5) {
			snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "5 calls of %s "
			    "advanced the GP counter only from %lu to %lu", expedite ?
			    "rcu_synchronize_expedite" : "rcu_synchronize", g0, g1);
			return rcu1_reason_buf;
		}
	}
	return NULL;
}

/* ---- part: preempted readers ------------------------------------------- */

enum {
	PV_PREV,        /**< preempted, unlocked, then rcu_call: not lost */
	PV_INSIDE_CUR,  /**< rcu_call, then a preempted reader: not lost */
	PV_BEFORE,      /**< preempted before GP detection */
	PV_DURING,      /**< preempted (repeatedly) during GP detection */
	PV_AFTER,       /**< spins while the detector samples, then preempted */
	PV_TWICE,       /**< preempted before and twice during detection */
	PV_COUNT
};

static const char *const pv_names[PV_COUNT] = {
	"preempted, unlocked, then rcu_call",
	"rcu_call, then a preempted reader",
	"preempted before GP detection",
	"preempted during GP detection",
	"preempted after GP detection",
	"preempted twice",
};

typedef struct {
	rcu_item_t item;
	hog_t *hog;
	unsigned variant;
	/** The callback was posted inside the section: it must wait. */
	bool must_wait;
	atomic_t cb_runs;
	atomic_t reader_left;   /**< Set just before the outermost unlock. */
	atomic_t early;         /**< The callback ran with the reader inside. */
	atomic_t no_preempt;    /**< A context switch could not be forced. */
	/** Context switches forced while a GP was in progress (the reader's). */
	size_t preempted_in_gp;
} pv_t;

static void pv_cb(rcu_item_t *it)
{
	pv_t *p = container_of(it, pv_t, item);
	if (p->must_wait && atomic_get(&p->reader_left) == 0)
		atomic_set(&p->early, 1);
	atomic_inc(&p->cb_runs);
}

/** Is a GP in progress (started and not completed)? */
static bool gp_in_progress(void)
{
	uint64_t done = rcu_completed_gps();
	return __atomic_load_n(&rcu_cur_gp, __ATOMIC_SEQ_CST) > done;
}

static void pv_preempt(pv_t *p)
{
	/* In progress before and after: it was in progress while switched out. */
	bool before = gp_in_progress();
	if (!rcu1_preempt_me(p->hog))
		atomic_set(&p->no_preempt, 1);
	else if (before && gp_in_progress())
		p->preempted_in_gp++;
}

/** Stays in the section for @a us, spinning or being preempted repeatedly. */
static void pv_hold(pv_t *p, uint64_t us, bool preempting)
{
	uint64_t start = uptime_us();
	while (uptime_us() - start < us) {
		if (preempting)
			pv_preempt(p);
		else
			udelay(200);
		if (p->must_wait && atomic_get(&p->cb_runs) != 0)
			atomic_set(&p->early, 1);
	}
}

static void pv_leave(pv_t *p)
{
	if (p->must_wait && atomic_get(&p->cb_runs) != 0)
		atomic_set(&p->early, 1);
	atomic_set(&p->reader_left, 1);
}

static void pv_reader(void *arg)
{
	pv_t *p = arg;
	switch (p->variant) {
	case PV_PREV:
		rcu_read_lock();
		pv_preempt(p);
		pv_leave(p);
		rcu_read_unlock();
		rcu_call(&p->item, pv_cb);
		break;
	case PV_INSIDE_CUR:
		rcu_call(&p->item, pv_cb);
		rcu_read_lock();
		pv_preempt(p);
		pv_hold(p, HOLD_US / 4, true);
		pv_leave(p);
		rcu_read_unlock();
		break;
	case PV_BEFORE:
		rcu_read_lock();
		pv_preempt(p);
		rcu_call(&p->item, pv_cb);
		pv_hold(p, HOLD_US, false);
		pv_leave(p);
		rcu_read_unlock();
		break;
	case PV_DURING:
		rcu_read_lock();
		rcu_read_lock();
		/* The unordered call must wait for the reader just the same. */
		rcu_call_batched(&p->item, pv_cb);
		pv_hold(p, HOLD_US, true);
		rcu_read_unlock();
		pv_hold(p, HOLD_US / 4, true);
		pv_leave(p);
		rcu_read_unlock();
		break;
	case PV_AFTER:
		rcu_read_lock();
		rcu_call(&p->item, pv_cb);
		pv_hold(p, HOLD_US, false);
		pv_preempt(p);
		pv_hold(p, HOLD_US / 2, false);
		pv_leave(p);
		rcu_read_unlock();
		break;
	case PV_TWICE:
		rcu_read_lock();
		pv_preempt(p);
		rcu_call_batched(&p->item, pv_cb);
		pv_hold(p, HOLD_US / 2, false);
		rcu_read_lock();
		pv_preempt(p);
		pv_hold(p, HOLD_US / 2, false);
		rcu_read_unlock();
		pv_preempt(p);
		pv_hold(p, HOLD_US / 2, false);
		pv_leave(p);
		rcu_read_unlock();
		break;
	}
}

/**
 * Runs one variant; @a in_gp gets how often the reader was switched out while
 * a GP was in progress. @return NULL or the failure reason.
 */
static const char *pv_run(unsigned variant, size_t *in_gp)
{
	cpu_t *cpu = rcu1_nth_cpu(variant + 1);
	/* Static: a thread that failed to finish may still reference it. */
	static hog_t hog;
	if (!rcu1_hog_start(&hog, cpu))
		return "cannot create a thread";
	pv_t *p = malloc(sizeof(*p));
	if (!p)
		return rcu1_hog_stop(&hog) ? "out of memory" : rcu1_in_flight("out of memory");
	p->hog = &hog;
	p->variant = variant;
	p->must_wait = variant >= PV_BEFORE;
	atomic_set(&p->cb_runs, 0);
	atomic_set(&p->reader_left, 0);
	atomic_set(&p->early, 0);
	atomic_set(&p->no_preempt, 0);
	p->preempted_in_gp = 0;

	const char *what = NULL;
	bool stuck = false;
	thread_t *t = testlib_spawn(pv_reader, p, "rcu1-preempt", cpu);
	if (!t) {
		what = "cannot create a thread";
	} else if (!testlib_join(t, WAIT_LIMIT_US)) {
		what = "the reader thread did not finish";
		stuck = true;
	}
	if (!rcu1_hog_stop(&hog)) {
		if (!what)
			what = "the hog thread did not finish";
		stuck = true;
	}
	if (what) {
		/* p leaks: a thread or a callback may still reference it. */
		return stuck ? rcu1_in_flight(what) : what;
	}
	if (!rcu1_wait_atleast(&p->cb_runs, 1)) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%s: the callback was lost "
		    "(not run within %llu s)", pv_names[variant],
		    WAIT_LIMIT_US / 1000000);
		return rcu1_in_flight(rcu1_reason_buf);
	}
	rcu_barrier();
	if (atomic_get(&p->early)) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%s: the callback ran while "
		    "the reader was still inside its section", pv_names[variant]);
		what = rcu1_reason_buf;
	} else if (atomic_get(&p->cb_runs) != 1) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%s: the callback ran %zu "
		    "times", pv_names[variant], atomic_get(&p->cb_runs));
		what = rcu1_reason_buf;
	} else if (atomic_get(&p->no_preempt)) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%s: could not force a "
		    "context switch inside the section", pv_names[variant]);
		what = rcu1_reason_buf;
	}
	*in_gp = p->preempted_in_gp;
	free(p);
	return what;
}

const char *rcu1_part_preempt(void)
{
	for (unsigned v = 0; v < PV_COUNT; v++) {
		uint64_t g0 = rcu1_gps_now();
		size_t in_gp = 0;
		unsigned tries = 0;
		const char *r;
		do {
			r = pv_run(v, &in_gp);
			tries++;
			if (r)
				return r;
			if (v == PV_DURING && in_gp < PV_DURING_MIN)
				TPRINTF("rcu1:   %s: switched out %zu times during GP "
				    "detection (try %u), again\n", pv_names[v], in_gp, tries);
		} while (v == PV_DURING && in_gp < PV_DURING_MIN &&
		    tries < PV_DURING_TRIES);
		if (v == PV_DURING && in_gp < PV_DURING_MIN) {
			snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "%s: the reader was "
			    "switched out only %zu times while a GP was in progress (at "
			    "least %d required; %u tries)", pv_names[v], in_gp,
			    PV_DURING_MIN, tries);
			return rcu1_reason_buf;
		}
		TPRINTF("rcu1:   %s: ok (GPs: %lu; switched out %zu times during a "
		    "GP)\n", pv_names[v], rcu1_gps_now() - g0, in_gp);
	}
	return NULL;
}

/* ---- part: rcu_synchronize waits for a preempted / spinning reader ------ */

typedef struct {
	hog_t *hog;
	bool spin;
	atomic_t entered;
	atomic_t sync_running;
	atomic_t done;
	atomic_t preempted;
	atomic_t no_preempt;
} sy_t;

static void sy_reader(void *arg)
{
	sy_t *s = arg;
	rcu_read_lock();
	atomic_set(&s->entered, 1);
	uint64_t start = uptime_us();
	while (atomic_get(&s->sync_running) == 0 &&
	    uptime_us() - start < WAIT_LIMIT_US)
		thread_yield();
	size_t r0 = atomic_get(&s->hog->runs);
	if (s->spin) {
		/* The hog becomes ready; the timer ends our quantum meanwhile. */
		semaphore_up(&s->hog->go);
		start = uptime_us();
		while (uptime_us() - start < SYNC_SPIN_US)
			udelay(500);
	} else {
		start = uptime_us();
		while (uptime_us() - start < 2 * HOLD_US) {
			if (!rcu1_preempt_me(s->hog))
				atomic_set(&s->no_preempt, 1);
		}
	}
	if (atomic_get(&s->hog->runs) != r0)
		atomic_set(&s->preempted, 1);
	atomic_set(&s->done, 1);
	rcu_read_unlock();
}

const char *rcu1_part_synch(void)
{
	for (int spin = 0; spin < 2; spin++) {
		cpu_t *cpu = rcu1_nth_cpu(rcu1_online_n - 1);
		/* Static: a thread that failed to finish may still reference them. */
		static hog_t hog;
		static sy_t s;
		s.hog = &hog;
		s.spin = spin;
		atomic_set(&s.entered, 0);
		atomic_set(&s.sync_running, 0);
		atomic_set(&s.done, 0);
		atomic_set(&s.preempted, 0);
		atomic_set(&s.no_preempt, 0);
		if (!rcu1_hog_start(&hog, cpu))
			return "cannot create a thread";
		thread_t *t = testlib_spawn(sy_reader, &s, "rcu1-synch", cpu);
		if (!t) {
			return rcu1_hog_stop(&hog) ? "cannot create a thread" :
			    rcu1_in_flight("a thread did not finish");
		}
		if (!rcu1_wait_atleast(&s.entered, 1))
			return rcu1_in_flight("the reader never entered its section");
		uint64_t g0 = rcu1_gps_now();
		atomic_set(&s.sync_running, 1);
		rcu_synchronize();
		size_t done = atomic_get(&s.done);
		bool joined = testlib_join(t, WAIT_LIMIT_US);
		bool hog_ok = rcu1_hog_stop(&hog);
		if (!joined || !hog_ok)
			return rcu1_in_flight("a thread did not finish");
		if (!done)
			return spin ? "rcu_synchronize returned while a spinning reader "
			    "(preempted by the timer) was inside" : "rcu_synchronize "
			    "returned while a preempted (yielding) reader was inside";
		if (atomic_get(&s.no_preempt))
			return "could not force a context switch inside the section";
		TPRINTF("rcu1:   reader that %s: ok (GPs: %lu; preempted inside: %s)\n",
		    spin ? "spins until the timer preempts it" : "yields",
		    rcu1_gps_now() - g0, atomic_get(&s.preempted) ? "yes" : "no");
	}
	return NULL;
}

/* ---- part: rcu_barrier -------------------------------------------------- */

static atomic_t bar_posted, bar_done, bar_oom;

static void bar_cb(rcu_item_t *it)
{
	atomic_inc(&bar_done);
	free(it);
}

static void bar_poster(void *arg)
{
	for (unsigned i = 0; i < BARRIER_CBS; i++) {
		rcu_item_t *it = malloc(sizeof(*it));
		if (!it) {
			atomic_inc(&bar_oom);
			return;
		}
		atomic_inc(&bar_posted);
		if (i % 4 == 0) {
			rcu_read_lock();
			rcu_call(it, bar_cb);
			udelay(20);
			rcu_read_unlock();
		} else if (i % 2 == 1) {
			/* Every other one unordered: the barrier waits for it too. */
			rcu_call_batched(it, bar_cb);
		} else {
			rcu_call(it, bar_cb);
		}
		if (i % 32 == 0)
			thread_yield();
	}
}

/*
 * A full batched stack on a CPU that the barrier's smp_call reaches while a
 * thread holds that CPU (preemption disabled, so its reclaimer cannot take
 * the stack first): the callbacks must run before rcu_barrier() returns on
 * another CPU. A barrier that posted its marker without taking the stack
 * left them behind the marker, to run after the waiter woke (the round
 * above did not see that: there the waiter shares the reclaimer's CPU, and
 * here each callback spins, so that they outlast the other CPU's marker).
 */
#define BAR_HELD_CBS 256
/** Each callback's spin: a window of 100 ms for the waiter to see them. */
#define BAR_HELD_CB_US 400
static atomic_t bar_held_ready, bar_held_done;

static void bar_held_cb(rcu_item_t *it)
{
	(void) it;
	udelay(BAR_HELD_CB_US);
	atomic_inc(&bar_held_done);
}

static void bar_holder(void *arg)
{
	rcu_item_t *items = arg;
	preemption_disable();
	for (unsigned i = 0; i < BAR_HELD_CBS; i++)
		rcu_call_batched(&items[i], bar_held_cb);
	atomic_set(&bar_held_ready, 1);
	/* Until the barrier's marker is here (or a bound passed). */
	uint64_t start = uptime_us();
	while (!__atomic_load_n(&CPU->rcu.arriving_head, __ATOMIC_ACQUIRE) &&
	    uptime_us() - start < 2000000)
		cpu_relax();
	preemption_enable();
}

static const char *bar_held_check(void)
{
	if (rcu1_online_n < 2)
		return NULL;
	rcu_item_t *items = malloc(BAR_HELD_CBS * sizeof(*items));
	if (!items)
		return "out of memory";
	atomic_set(&bar_held_ready, 0);
	atomic_set(&bar_held_done, 0);
	/* A CPU other than this thread's (it may move: then less sensitive). */
	cpu_t *other = rcu1_nth_cpu(0) == CPU ? rcu1_nth_cpu(1) : rcu1_nth_cpu(0);
	thread_t *t = testlib_spawn(bar_holder, items, "rcu1-barhold", other);
	if (!t) {
		free(items);
		return "cannot create a thread";
	}
	bool ready = rcu1_wait_atleast(&bar_held_ready, 1);
	rcu_barrier();
	size_t done = atomic_get(&bar_held_done);
	if (!testlib_join(t, 60000000))
		return rcu1_in_flight("the holder did not finish");
	/* Every callback has run before the items go (a second barrier). */
	rcu_barrier();
	free(items);
	if (!ready)
		return "the holder did not post its callbacks";
	if (done != BAR_HELD_CBS) {
		snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "after rcu_barrier "
		    "%zu of %u callbacks batched on a held CPU had run", done,
		    BAR_HELD_CBS);
		return rcu1_reason_buf;
	}
	TPRINTF("rcu1:   %u callbacks batched on a held CPU, all done after "
	    "rcu_barrier\n", BAR_HELD_CBS);
	return NULL;
}

const char *rcu1_part_barrier(void)
{
	thread_t *t[CONFIG_MAX_CPUS];
	atomic_set(&bar_posted, 0);
	atomic_set(&bar_done, 0);
	atomic_set(&bar_oom, 0);
	for (unsigned round = 0; round < 3; round++) {
		unsigned n = rcu1_spawn_n(t, rcu1_online_n, bar_poster, NULL, 0,
		    "rcu1-barrier");
		const char *err = rcu1_join_all(t, n, rcu1_online_n);
		if (err)
			return err;
		if (atomic_get(&bar_oom))
			return "out of memory";
		/*
		 * Two more from here, just before the barrier: the batched one
		 * is most likely still on this CPU's stack (the reclaimer has
		 * not run since), which the barrier's smp_call must take.
		 */
		rcu_item_t *it = malloc(sizeof(*it));
		rcu_item_t *it2 = malloc(sizeof(*it2));
		if (!it || !it2) {
			free(it);
			free(it2);
			return "out of memory";
		}
		(void) atomic_add(&bar_posted, 2);
		rcu_call(it, bar_cb);
		rcu_call_batched(it2, bar_cb);
		rcu_barrier();
		size_t posted = atomic_get(&bar_posted), done = atomic_get(&bar_done);
		if (done != posted) {
			snprintf(rcu1_reason_buf, sizeof(rcu1_reason_buf), "after rcu_barrier %zu of "
			    "%zu earlier callbacks had run", done, posted);
			return rcu1_reason_buf;
		}
	}
	TPRINTF("rcu1:   %zu callbacks from %u CPUs, all done after rcu_barrier\n",
	    atomic_get(&bar_posted), rcu1_online_n);
	return bar_held_check();
}
