/** @file rcu1.c
 * RCU functional test (the seed's `rcu1`), for both flavours (a-rcu and
 * podzimek-rcu).
 *
 * Parts, run in order; each prints how many grace periods (GPs) it used:
 * - one callback: rcu_call() runs its callback exactly once, in thread context
 *   with interrupts and preemption enabled, after the GP counter advanced;
 *   N rcu_synchronize() / rcu_synchronize_expedite() calls advance the counter
 *   by at least N.
 * - preempted readers: a reader thread and a helper ("hog") are wired to the
 *   same CPU; the reader forces a context switch inside its section by waking
 *   the hog and yielding until the hog ran (proof that the reader was switched
 *   out). Variants: preempted and unlocked before rcu_call (the callback is not
 *   lost);
 *   started after rcu_call and preempted (not lost); preempted before GP
 *   detection, during it (many times: at least PV_DURING_MIN context switches
 *   while a GP was in progress are required, the variant is repeated up to
 *   PV_DURING_TRIES times to get them), after the detector found the CPU in the
 *   section (spin, then preempt), and preempted twice. In the last four the
 *   callback was posted inside the section, so it must not run before the
 *   reader left: the reader checks it has not run while it holds the section
 *   (about HOLD_US) and the callback checks the reader's "left" flag, which the
 *   reader sets just before its outermost unlock.
 * - rcu_synchronize: a reader inside its section lets the main thread call
 *   rcu_synchronize() and then (a) yields (is preempted) repeatedly or (b)
 *   spins with the hog ready, so the timer preempts it; rcu_synchronize() must
 *   not
 *   return before the reader set its "done" flag (just before unlocking).
 * - rcu_barrier: threads wired to every CPU post callbacks (some from inside
 *   reader sections); after rcu_barrier() every one of them has run.
 * - a thread exits inside a (nested) reader section, once plainly and once
 *   after being preempted inside it; the callback it posted inside runs only
 *   after the exit, GPs keep completing, and a new thread does not start inside
 *   a section.
 * - many empty (and nested) reader sections in 4 threads per CPU;
 *   rcu_read_locked() is true inside and false outside.
 * - many empty callbacks from 4 threads per CPU: after rcu_barrier() the count
 *   is exact and every item was freed.
 * - sequence check: threads alternate reading and posting callbacks stamped
 *   from one global clock; a callback records the largest stamp that
 *   completed. A reader takes a stamp after entering its section and, before
 *   leaving, must never find a completed callback stamped after its own start
 *   (that callback was posted while the reader was inside, so it had to wait).
 * - stress: one reader thread (empty sections) and one updater thread (posting
 *   STRESS_TOTAL / CPUs callbacks, at least STRESS_MIN, at most
 *   STRESS_OUTSTANDING in flight) per CPU; the counts are exact and memory
 *   returns.
 * At the end (after rcu_barrier) no callback may be pending and the live heap
 * allocations, net of the threads that exist, must equal those at the start
 * (re-read a bounded number of times: exited threads are released
 * asynchronously).
 *
 * Every part runs even after an earlier one failed, and the one verdict names
 * all failing parts ("N parts failed: part: reason; ..."), so that a broken
 * implementation shows every kind of error the test can catch (the negative
 * controls require a callback run early AND rcu_synchronize returning early).
 * A part cleans up after its own failure (joins its threads, waits for its
 * callbacks); a failure that leaves threads or callbacks in flight (a thread
 * that did not finish, a callback that never ran) sets rcu1_stop and the test
 * stops after that part, since later parts (rcu_barrier) could hang or touch
 * its memory.
 *
 * Verdicts never depend on timing: the hold times only give a wrong
 * implementation the chance to show itself; waits for a callback or a thread
 * are bounded by WAIT_LIMIT_US (a liveness bound of a minute, reported as
 * "lost" or "locked up").
 */
#include <test.h>
#include <tests.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/semaphore.h>
#include <time/delay.h>
#include <mm/malloc.h>
#include <lib/str.h>
#include "../mm/mmtest.h"

/** How long a reader holds a GP back in the preemption tests. */
#define HOLD_US 40000
/** Spin of the reader that the timer should preempt (rcu_synchronize part). */
#define SYNC_SPIN_US 150000
/** Most test threads of one kind at once. */
#define MAX_THREADS 32
#define NOP_READER_MIN 100
#define NOP_READER_MAX 30000
#define NOP_CBS 2000
#define BARRIER_CBS 200
#define SEQ_ITERS 10
#define SEQ_TOTAL 200
#define STRESS_TOTAL 24000
#define STRESS_MIN 3000
#define STRESS_OUTSTANDING 2000
/**
 * "Preempted during GP detection": the reader must have been switched out at
 * least this often while a GP was in progress (started, not completed); a run
 * that falls short is repeated, at most PV_DURING_TRIES times in all.
 */
#define PV_DURING_MIN 5
#define PV_DURING_TRIES 3
/** Memory back at its baseline: rcu_barrier() and re-reads, at most this often. */
#define SETTLE_TRIES 300
#define SETTLE_SLEEP_US 10000

/** The GP started last (synch/rcu_inline.h, both flavours); atomics. */
extern uint64_t rcu_cur_gp;

static unsigned online_ids[CONFIG_MAX_CPUS];
static unsigned online_n;
static char reason_buf[192];
/**
 * A part failed leaving threads or callbacks in flight: no later part may run.
 * Only the main test thread touches it.
 */
static bool rcu1_stop;

/** Marks failure @a why as leaving work in flight; @return @a why. */
static const char *in_flight(const char *why)
{
	rcu1_stop = true;
	return why;
}

static void collect_cpus(void)
{
	online_n = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		if (cpu_is_online(i))
			online_ids[online_n++] = i;
	}
}

static cpu_t *nth_cpu(unsigned k)
{
	return &cpus[online_ids[k % online_n]];
}

static unsigned thread_cnt(void)
{
	return MIN(MAX_THREADS, 4 * online_n);
}

/**
 * Joins (bounded) the @a made threads in @a t of the @a n a part wanted.
 * @return NULL, or why the part cannot go on.
 */
static const char *join_all(thread_t **t, unsigned made, unsigned n)
{
	for (unsigned k = 0; k < made; k++) {
		if (!testlib_join(t[k], WAIT_LIMIT_US))
			return in_flight("a thread did not finish");
	}
	return made == n ? NULL : "cannot create a thread";
}

/** Waits (polling, bounded) until *a >= v. */
static bool wait_atleast(atomic_t *a, size_t v)
{
	uint64_t start = uptime_us();
	while (atomic_get(a) < v) {
		if (uptime_us() - start > WAIT_LIMIT_US)
			return false;
		thread_usleep(1000);
	}
	return true;
}

static uint64_t gps_now(void)
{
	return rcu_completed_gps();
}

/* ---- a GP elapses (bounded wait) -------------------------------------- */

typedef struct {
	rcu_item_t item;
	atomic_t runs;
} flag_item_t;

static void flag_cb(rcu_item_t *it)
{
	flag_item_t *f = container_of(it, flag_item_t, item);
	/* Last access: the waiter may free the item as soon as it sees this. */
	atomic_inc(&f->runs);
}

/** Posts a callback and waits for it (bounded). Leaks the item on timeout. */
static bool gp_elapses(void)
{
	flag_item_t *f = malloc(sizeof(*f));
	if (!f)
		return false;
	atomic_set(&f->runs, 0);
	rcu_call(&f->item, flag_cb);
	if (!wait_atleast(&f->runs, 1))
		return false;
	free(f);
	return true;
}

/* ---- the hog: forces a context switch on its CPU ----------------------- */

typedef struct {
	semaphore_t go;
	atomic_t runs;
	bool stop;          /**< Atomics. */
	thread_t *thread;
} hog_t;

static void hog_main(void *arg)
{
	hog_t *h = arg;
	for (;;) {
		semaphore_down(&h->go);
		if (__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE))
			break;
		atomic_inc(&h->runs);
	}
}

static bool hog_start(hog_t *h, cpu_t *cpu)
{
	semaphore_initialize(&h->go, 0);
	atomic_set(&h->runs, 0);
	h->stop = false;
	h->thread = testlib_spawn(hog_main, h, "rcu1-hog", cpu);
	return h->thread != NULL;
}

static bool hog_stop(hog_t *h)
{
	__atomic_store_n(&h->stop, true, __ATOMIC_RELEASE);
	semaphore_up(&h->go);
	return testlib_join(h->thread, WAIT_LIMIT_US);
}

/**
 * Called by a thread wired to the hog's CPU (inside a reader section): wakes
 * the hog and yields until it ran, so this thread was switched out meanwhile.
 */
static bool preempt_me(hog_t *h)
{
	size_t r = atomic_get(&h->runs);
	uint64_t start = uptime_us();
	semaphore_up(&h->go);
	while (atomic_get(&h->runs) == r) {
		if (uptime_us() - start > WAIT_LIMIT_US)
			return false;
		thread_yield();
	}
	return true;
}

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

static const char *part_one_cb(void)
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
	if (!wait_atleast(&o->runs, 1))
		return in_flight("a callback never ran");
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
			snprintf(reason_buf, sizeof(reason_buf), "5 calls of %s "
			    "advanced the GP counter only from %lu to %lu", expedite ?
			    "rcu_synchronize_expedite" : "rcu_synchronize", g0, g1);
			return reason_buf;
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
	if (!preempt_me(p->hog))
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
		rcu_call(&p->item, pv_cb);
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
		rcu_call(&p->item, pv_cb);
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
	cpu_t *cpu = nth_cpu(variant + 1);
	/* Static: a thread that failed to finish may still reference it. */
	static hog_t hog;
	if (!hog_start(&hog, cpu))
		return "cannot create a thread";
	pv_t *p = malloc(sizeof(*p));
	if (!p)
		return hog_stop(&hog) ? "out of memory" : in_flight("out of memory");
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
	if (!hog_stop(&hog)) {
		if (!what)
			what = "the hog thread did not finish";
		stuck = true;
	}
	if (what) {
		/* p leaks: a thread or a callback may still reference it. */
		return stuck ? in_flight(what) : what;
	}
	if (!wait_atleast(&p->cb_runs, 1)) {
		snprintf(reason_buf, sizeof(reason_buf), "%s: the callback was lost "
		    "(not run within %llu s)", pv_names[variant],
		    WAIT_LIMIT_US / 1000000);
		return in_flight(reason_buf);
	}
	rcu_barrier();
	if (atomic_get(&p->early)) {
		snprintf(reason_buf, sizeof(reason_buf), "%s: the callback ran while "
		    "the reader was still inside its section", pv_names[variant]);
		what = reason_buf;
	} else if (atomic_get(&p->cb_runs) != 1) {
		snprintf(reason_buf, sizeof(reason_buf), "%s: the callback ran %zu "
		    "times", pv_names[variant], atomic_get(&p->cb_runs));
		what = reason_buf;
	} else if (atomic_get(&p->no_preempt)) {
		snprintf(reason_buf, sizeof(reason_buf), "%s: could not force a "
		    "context switch inside the section", pv_names[variant]);
		what = reason_buf;
	}
	*in_gp = p->preempted_in_gp;
	free(p);
	return what;
}

static const char *part_preempt(void)
{
	for (unsigned v = 0; v < PV_COUNT; v++) {
		uint64_t g0 = gps_now();
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
			snprintf(reason_buf, sizeof(reason_buf), "%s: the reader was "
			    "switched out only %zu times while a GP was in progress (at "
			    "least %d required; %u tries)", pv_names[v], in_gp,
			    PV_DURING_MIN, tries);
			return reason_buf;
		}
		TPRINTF("rcu1:   %s: ok (GPs: %lu; switched out %zu times during a "
		    "GP)\n", pv_names[v], gps_now() - g0, in_gp);
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
			if (!preempt_me(s->hog))
				atomic_set(&s->no_preempt, 1);
		}
	}
	if (atomic_get(&s->hog->runs) != r0)
		atomic_set(&s->preempted, 1);
	atomic_set(&s->done, 1);
	rcu_read_unlock();
}

static const char *part_synch(void)
{
	for (int spin = 0; spin < 2; spin++) {
		cpu_t *cpu = nth_cpu(online_n - 1);
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
		if (!hog_start(&hog, cpu))
			return "cannot create a thread";
		thread_t *t = testlib_spawn(sy_reader, &s, "rcu1-synch", cpu);
		if (!t) {
			return hog_stop(&hog) ? "cannot create a thread" :
			    in_flight("a thread did not finish");
		}
		if (!wait_atleast(&s.entered, 1))
			return in_flight("the reader never entered its section");
		uint64_t g0 = gps_now();
		atomic_set(&s.sync_running, 1);
		rcu_synchronize();
		size_t done = atomic_get(&s.done);
		bool joined = testlib_join(t, WAIT_LIMIT_US);
		bool hog_ok = hog_stop(&hog);
		if (!joined || !hog_ok)
			return in_flight("a thread did not finish");
		if (!done)
			return spin ? "rcu_synchronize returned while a spinning reader "
			    "(preempted by the timer) was inside" : "rcu_synchronize "
			    "returned while a preempted (yielding) reader was inside";
		if (atomic_get(&s.no_preempt))
			return "could not force a context switch inside the section";
		TPRINTF("rcu1:   reader that %s: ok (GPs: %lu; preempted inside: %s)\n",
		    spin ? "spins until the timer preempts it" : "yields",
		    gps_now() - g0, atomic_get(&s.preempted) ? "yes" : "no");
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
		} else {
			rcu_call(it, bar_cb);
		}
		if (i % 32 == 0)
			thread_yield();
	}
}

static const char *part_barrier(void)
{
	thread_t *t[CONFIG_MAX_CPUS];
	atomic_set(&bar_posted, 0);
	atomic_set(&bar_done, 0);
	atomic_set(&bar_oom, 0);
	for (unsigned round = 0; round < 3; round++) {
		unsigned n = 0;
		for (unsigned k = 0; k < online_n; k++) {
			t[k] = testlib_spawn(bar_poster, NULL, "rcu1-barrier", nth_cpu(k));
			if (!t[k])
				break;
			n++;
		}
		const char *err = join_all(t, n, online_n);
		if (err)
			return err;
		if (atomic_get(&bar_oom))
			return "out of memory";
		/* One more from here, just before the barrier. */
		rcu_item_t *it = malloc(sizeof(*it));
		if (!it)
			return "out of memory";
		atomic_inc(&bar_posted);
		rcu_call(it, bar_cb);
		rcu_barrier();
		size_t posted = atomic_get(&bar_posted), done = atomic_get(&bar_done);
		if (done != posted) {
			snprintf(reason_buf, sizeof(reason_buf), "after rcu_barrier %zu of "
			    "%zu earlier callbacks had run", done, posted);
			return reason_buf;
		}
	}
	TPRINTF("rcu1:   %zu callbacks from %u CPUs, all done after rcu_barrier\n",
	    atomic_get(&bar_posted), online_n);
	return NULL;
}

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
	if (e->preempt && !preempt_me(e->hog))
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

static const char *part_exit(void)
{
	for (unsigned variant = 0; variant < 2; variant++) {
		cpu_t *cpu = nth_cpu(variant);
		static hog_t hog;
		if (!hog_start(&hog, cpu))
			return "cannot create a thread";
		ex_t *e = malloc(sizeof(*e));
		if (!e) {
			return hog_stop(&hog) ? "out of memory" :
			    in_flight("a thread did not finish");
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
		bool hog_ok = hog_stop(&hog);
		if (!t && hog_ok)
			return "cannot create a thread";  /* e leaks, unreferenced */
		if (!ok || !hog_ok)
			return in_flight("a thread did not finish");
		if (!wait_atleast(&e->cb_runs, 1))
			return in_flight(e->preempt ? "RCU locked up after a thread "
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
			if (!gp_elapses())
				return in_flight("grace periods stopped after a thread "
				    "exited inside a reader section");
		}
		TPRINTF("rcu1:   thread exits inside a reader%s: ok\n",
		    variant ? " after being preempted in it" : "");
	}
	/* New threads (possibly reusing the memory) start outside any section. */
	atomic_set(&fresh_locked, 0);
	for (unsigned k = 0; k < 2 * online_n; k++) {
		thread_t *t = testlib_spawn(fresh_thread, NULL, "rcu1-fresh", nth_cpu(k));
		if (!t)
			return "cannot create a thread";
		if (!testlib_join(t, WAIT_LIMIT_US))
			return in_flight("a thread did not finish");
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

static const char *part_nop_readers(void)
{
	thread_t *t[MAX_THREADS];
	unsigned n = thread_cnt(), made = 0;
	size_t total = 0;
	atomic_set(&nop_bad, 0);
	for (unsigned k = 0; k < n; k++) {
		size_t iters = NOP_READER_MIN + (size_t) (NOP_READER_MAX -
		    NOP_READER_MIN) * k / (n > 1 ? n - 1 : 1);
		t[k] = testlib_spawn(nop_reader, (void *) iters, "rcu1-nopr", nth_cpu(k));
		if (!t[k])
			break;
		total += iters;
		made++;
	}
	const char *err = join_all(t, made, n);
	if (err)
		return err;
	if (atomic_get(&nop_bad))
		return "rcu_read_locked() was wrong inside or outside a section";
	if (!gp_elapses())
		return in_flight("no grace period after the empty readers");
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

static const char *part_nop_cbs(void)
{
	thread_t *t[MAX_THREADS];
	unsigned n = thread_cnt(), made = 0;
	atomic_set(&nop_runs, 0);
	atomic_set(&nop_live, 0);
	atomic_set(&nop_oom, 0);
	for (unsigned k = 0; k < n; k++) {
		t[k] = testlib_spawn(nop_updater, NULL, "rcu1-nopcb", nth_cpu(k));
		if (!t[k])
			break;
		made++;
	}
	const char *err = join_all(t, made, n);
	if (err)
		return err;
	rcu_barrier();
	if (atomic_get(&nop_oom))
		return "out of memory";
	size_t expected = (size_t) n * NOP_CBS, runs = atomic_get(&nop_runs);
	if (runs != expected || atomic_get(&nop_live) != 0) {
		snprintf(reason_buf, sizeof(reason_buf), "%zu of %zu empty callbacks "
		    "ran after rcu_barrier (%zu items not freed)", runs, expected,
		    atomic_get(&nop_live));
		return reason_buf;
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

static const char *part_seq(void)
{
	static seq_work_t work[MAX_THREADS];
	thread_t *t[MAX_THREADS];
	unsigned n = thread_cnt(), made = 0;
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
		t[k] = testlib_spawn(seq_func, &work[k], "rcu1-seq", nth_cpu(k));
		if (!t[k])
			break;
		made++;
	}
	const char *err = join_all(t, made, n);
	if (err)
		return err;
	rcu_barrier();
	if (atomic_get(&seq_oom))
		return "out of memory";
	if (atomic_get(&seq_races)) {
		snprintf(reason_buf, sizeof(reason_buf), "%zu readers saw a callback "
		    "posted after their start complete while they were inside",
		    atomic_get(&seq_races));
		return reason_buf;
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

static const char *part_stress(void)
{
	thread_t *rd[CONFIG_MAX_CPUS], *up[CONFIG_MAX_CPUS];
	unsigned nr = 0, nu = 0;
	const char *what = NULL;
	__atomic_store_n(&stress_done, false, __ATOMIC_RELEASE);
	atomic_set(&stress_reads, 0);
	stress_cbs = MAX(STRESS_MIN, STRESS_TOTAL / online_n);
	for (unsigned k = 0; k < online_n; k++) {
		stress_upd[k] = (stress_upd_t) { .stalled = false, .oom = false };
		atomic_set(&stress_upd[k].posted, 0);
		atomic_set(&stress_upd[k].run, 0);
	}
	for (unsigned k = 0; k < online_n; k++) {
		rd[nr] = testlib_spawn(stress_reader, NULL, "rcu1-stress-r", nth_cpu(k));
		if (!rd[nr])
			break;
		nr++;
		up[nu] = testlib_spawn(stress_updater, &stress_upd[k], "rcu1-stress-u",
		    nth_cpu(k));
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
		return in_flight(what);
	if (nr != online_n || nu != online_n)
		return "cannot create a thread";
	rcu_barrier();
	size_t posted = 0, run = 0;
	for (unsigned k = 0; k < online_n; k++) {
		if (stress_upd[k].stalled)
			return "callbacks stopped completing during the stress";
		if (stress_upd[k].oom)
			return "out of memory";
		posted += atomic_get(&stress_upd[k].posted);
		run += atomic_get(&stress_upd[k].run);
	}
	if (posted != (size_t) online_n * stress_cbs || run != posted) {
		snprintf(reason_buf, sizeof(reason_buf), "stress: %zu callbacks "
		    "posted, %zu run after rcu_barrier", posted, run);
		return reason_buf;
	}
	TPRINTF("rcu1:   %u readers (%zu sections), %u updaters, %zu callbacks\n",
	    nr, atomic_get(&stress_reads), nu, posted);
	return NULL;
}

/* ---- driver ------------------------------------------------------------ */

/**
 * Live heap allocations net of the threads that exist (each thread holds one
 * heap allocation, released asynchronously after its exit; modular: threads
 * not from the heap make it "negative") and of the page hash table's bucket
 * dummies (a resize left by an earlier test may still change them), read
 * until two
 * readings 1 ms apart agree (at most @a tries readings).
 */
static size_t settled_live_allocs(unsigned tries)
{
	size_t prev = (size_t) -1, cur = 0;
	for (unsigned k = 0; k < tries + 1; k++) {
		heap_stats_t hs;
		cht_stats_t cs = { 0 };
		size_t t = thread_count();
		heap_get_stats(&hs);
		(void) mmtest_pageht_cht_stats(&cs);
		cur = hs.allocs - t - cs.dummies;
		if (cur == prev)
			break;
		prev = cur;
		thread_usleep(1000);
	}
	return cur;
}

typedef struct {
	const char *name;
	const char *(*func)(void);
} rcu1_part_t;

static const rcu1_part_t parts[] = {
	{ "one callback, synchronize", part_one_cb },
	{ "preempted readers", part_preempt },
	{ "rcu_synchronize waits for a reader", part_synch },
	{ "rcu_barrier", part_barrier },
	{ "thread exits inside a reader", part_exit },
	{ "many empty readers", part_nop_readers },
	{ "many empty callbacks", part_nop_cbs },
	{ "sequence check", part_seq },
	{ "stress: a reader and an updater per CPU", part_stress },
};

/** The failure reasons of the parts, "part: reason; ..." (bounded). */
static char fail_list[768];
static size_t fail_len;
static unsigned fail_cnt;

/** Appends "@a part: @a why" to fail_list (truncated with "..." when full). */
static void note_failure(const char *part, const char *why)
{
	fail_cnt++;
	size_t room = sizeof(fail_list) - fail_len;
	if (room <= 4)
		return;  /* already truncated */
	int n = snprintf(fail_list + fail_len, room, "%s%s: %s",
	    fail_cnt > 1 ? "; " : "", part, why);
	if (n < 0)
		return;
	if ((size_t) n >= room) {
		/* Truncated: end with "..." (the buffer is full from here on). */
		memcpy(fail_list + sizeof(fail_list) - 4, "...", 4);
		fail_len = sizeof(fail_list);
		return;
	}
	fail_len += (size_t) n;
}

const char *test_rcu1(void)
{
	static char reason[sizeof(fail_list) + 64];

	collect_cpus();
	if (online_n == 0)
		return "no CPU online";
	rcu1_stop = false;
	fail_list[0] = '\0';
	fail_len = 0;
	fail_cnt = 0;
	mmtest_quiesce();
	size_t live0 = settled_live_allocs(SETTLE_TRIES);
	uint64_t g_start = gps_now(), t_start = uptime_us();
	TPRINTF("rcu1: flavour %s, %u CPUs\n", rcu_flavour_name, online_n);
	size_t i;
	for (i = 0; i < ARRAY_SIZE(parts) && !rcu1_stop; i++) {
		uint64_t g0 = gps_now(), t0 = uptime_us();
		TPRINTF("rcu1: %s\n", parts[i].name);
		const char *r = parts[i].func();
		if (r) {
			TPRINTF("rcu1: %s: FAILED: %s%s\n", parts[i].name, r, rcu1_stop ?
			    " (threads or callbacks left in flight: stopping)" : "");
			note_failure(parts[i].name, r);
			continue;
		}
		TPRINTF("rcu1: %s: ok (GPs: %lu, %lu ms)\n", parts[i].name,
		    gps_now() - g0, (uptime_us() - t0) / 1000);
	}
	if (rcu1_stop) {
		snprintf(reason, sizeof(reason), "%u part%s failed (stopped after "
		    "part %zu of %zu): %s", fail_cnt, fail_cnt == 1 ? "" : "s", i,
		    ARRAY_SIZE(parts), fail_list);
		return reason;
	}
	/*
	 * Memory back at its baseline: every callback ran (rcu_barrier) and the
	 * test's threads were released (asynchronously, by the CPU that switched
	 * away from them: bounded re-reads).
	 */
	size_t live1 = 0, pending = 0;
	unsigned tries;
	for (tries = 1; tries <= SETTLE_TRIES; tries++) {
		rcu_barrier();
		pending = rcu_pending_callbacks();
		live1 = settled_live_allocs(1);
		if (pending == 0 && live1 == live0)
			break;
		thread_usleep(SETTLE_SLEEP_US);
	}
	/* The harness parses "all parts ok: N GPs" (and only on success). */
	TPRINTF("rcu1: %s: %lu GPs in %lu ms; pending callbacks %zu; "
	    "live heap allocations (net of threads) %ld before, %ld after (%u "
	    "reads)\n", fail_cnt ? "some parts failed" : "all parts ok",
	    gps_now() - g_start, (uptime_us() - t_start) / 1000,
	    pending, (long) live0, (long) live1, tries);
	if (pending != 0) {
		char why[96];
		snprintf(why, sizeof(why), "%zu callbacks still pending after "
		    "rcu_barrier", pending);
		note_failure("at the end", why);
	} else if (live1 != live0) {
		char why[128];
		snprintf(why, sizeof(why), "memory not back at its baseline: %ld "
		    "live heap allocations (net of threads) before, %ld after",
		    (long) live0, (long) live1);
		note_failure("at the end", why);
	}
	if (fail_cnt == 0)
		return NULL;
	snprintf(reason, sizeof(reason), "%u part%s failed: %s", fail_cnt,
	    fail_cnt == 1 ? "" : "s", fail_list);
	return reason;
}
