/** @file rcu.c
 * RCU: A-RCU (default) and preemptible Podzimek RCU behind one API.
 *
 * Shared machinery
 * ----------------
 * - rcu_cur_gp: number of the grace period (GP) started last; completed_gp: the
 *   GP completed last. A GP g is complete when every reader section that existed
 *   when g started has ended.
 * - Each CPU acknowledges GP g by storing last_seen_gp = g at a quiescent state
 *   (QS): a context switch, an smp_call that finds it outside a reader, and in
 *   Podzimek RCU the outermost lock/unlock. Idle CPUs count as quiescent.
 * - Readers preempted inside a section are kept on two lists under rcu_preempt_lock:
 *   rcu_cur_preempted (may predate the current GP: the GP waits for them) and
 *   next_preempted (began after this CPU acknowledged the current GP). Starting
 *   a GP moves next into cur under the same lock.
 * - Callbacks: rcu_call appends to the CPU's arriving list (interrupts off, CPU
 *   local). The CPU's reclaimer thread moves arriving -> next (needs GP
 *   cur_gp + 1, a GP that starts after the move) -> cur, waits for the GP of cur
 *   and runs it. Callbacks of one CPU run in posting order, except those of
 *   rcu_call_batched(): a per-CPU stack pushed by CAS, which the reclaimer
 *   takes whole together with the arriving list (docs/RCU.md, "Batched
 *   callbacks").
 *
 * The detection itself is one file per algorithm over rcu_impl.h, chosen by
 * the Makefile (RCU=a-rcu or RCU=podzimek-rcu): rcu_arcu.c and rcu_podzimek.c.
 *
 * Idle CPUs and memory ordering: the idle loop stores idle = true (seq_cst)
 * after everything it did before, including reader sections; an interrupt on an
 * idle CPU stores idle = false (seq_cst) before its handler may read. The
 * detector reads idle (seq_cst) after the seq_cst store that started the GP.
 * If it reads true, every earlier reader of that CPU is complete; a reader that
 * begins later comes after the detector's read in the single total order, hence
 * after the GP start and after the updater's unlink that preceded it. Idle CPUs
 * are never sent an IPI just to acknowledge a GP.
 *
 * Stall warnings (after Linux's RCU CPU stall detector): the detection records
 * when its GP started (gp_watch_t) and, whenever it waits for CPUs or preempted
 * readers, sleeps at most until the stall limit is reached. At the limit it
 * prints one warning for the GP, naming the CPUs still in a reader section
 * (Podzimek: the thread running there is read by an smp_call on that CPU, where
 * it is stable) and the threads on rcu_cur_preempted (alive while listed: a thread
 * leaves the list under rcu_preempt_lock before it can exit; A-RCU lists there also
 * the readers its cross-call found running, so a spinning reader is named with
 * its CPU). Once warned, the GP is not checked again. The limit is read on
 * every check (a test lowers it).
 *
 * fault_inject(FI_RCU_NOWAIT) (make BROKEN=rcu, the negative control of
 * rcutorture and rcu1): detection completes a GP right after starting it,
 * without waiting for anyone.
 */
#include <debug/kasan.h>
#include <synch/rcu.h>
#include <debug/fault_inject.h>
#include <synch/mutex.h>
#include <synch/waitq.h>
#include <synch/spinlock.h>
#include <synch/lockdep.h>
#include <smp/smp_call.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <console/console.h>
#include <errno.h>
#include <arch/asm.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <cpu.h>
#include <lib/str.h>
#include <time/delay.h>
#include "rcu_impl.h"

const char *const rcu_flavour_name = CONFIG_RCU_NAME;

/** Tunables (the detection's are in rcu_impl.h). */
#define EXPEDITE_THRESHOLD     RCU_EXPEDITE_THRESHOLD
#define RECLAIMER_IDLE_US      1000000 /**< reclaimer's sleep with no callbacks */

/** Started GP; written under gp_mutex (A-RCU) / by the detector, with
 * rcu_preempt_lock held; read anywhere with atomics. */
uint64_t rcu_cur_gp;
/** Completed GP; atomics (seq_cst store after the detection). */
static uint64_t completed_gp;

/** Preempted readers; protected by rcu_preempt_lock. */
irq_spinlock_t rcu_preempt_lock = IRQ_SPINLOCK_INITIALIZER("rcu.preempt");
list_t rcu_cur_preempted = LIST_INITIALIZER(rcu_cur_preempted);
static list_t next_preempted = LIST_INITIALIZER(next_preempted);
/** The detector sleeps on readers_done_wq until rcu_cur_preempted is empty;
 * detector_waits_readers is protected by rcu_preempt_lock. */
static bool detector_waits_readers;
static waitq_t readers_done_wq;

/** See rcu_inline.h (its own cache line); atomics. */
rcu_expedite_flag_t rcu_expedite;
#define expedite_req rcu_expedite.req

/** Statistics: atomics (relaxed). */
static uint64_t stat_expedited;
uint64_t rcu_stat_delayed;
static uint64_t stat_blocked_preempted;
uint64_t rcu_stat_cross_calls;

static bool rcu_ready;


uint64_t rcu_completed_gps(void)
{
	return __atomic_load_n(&completed_gp, __ATOMIC_SEQ_CST);
}

/* Model: verify/arcu.pml, verify/podzimek.pml */
bool rcu_cpu_quiescent(unsigned i, uint64_t gp)
{
	cpu_t *c = &cpus[i];
	if (__atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_SEQ_CST) == gp)
		return true;
	/* See the file comment for why an idle CPU needs no IPI. */
	return __atomic_load_n(&c->idle, __ATOMIC_SEQ_CST);
}

/** Starts GP cur_gp + 1: preempted readers so far may predate it. */
/* Model: verify/arcu.pml, verify/podzimek.pml */
static uint64_t gp_start(void)
{
	irq_spinlock_lock(&rcu_preempt_lock, true);
	uint64_t gp = rcu_cur_gp + 1;
	__atomic_store_n(&rcu_cur_gp, gp, __ATOMIC_SEQ_CST);
	while (!list_empty(&next_preempted)) {
		link_t *l = list_first(&next_preempted);
		list_remove(l);
		list_append(l, &rcu_cur_preempted);
	}
	irq_spinlock_unlock(&rcu_preempt_lock, true);
	memory_barrier();
	return gp;
}

/**
 * Waits until every reader preempted before the GP started has left; prints
 * the stall warning of @a w when it is due meanwhile.
 */
/* Model: verify/arcu.pml, verify/podzimek.pml */
static UNUSED void wait_for_preempted_readers(gp_watch_t *w)
{
	irq_spinlock_lock(&rcu_preempt_lock, true);
	if (!list_empty(&rcu_cur_preempted))
		__atomic_fetch_add(&stat_blocked_preempted, 1, __ATOMIC_RELAXED);
	while (!list_empty(&rcu_cur_preempted)) {
		detector_waits_readers = true;
		irq_spinlock_unlock(&rcu_preempt_lock, true);
		uint64_t due = rcu_stall_due_us(w);
		if (due == 0)
			rcu_stall_report(w);
		else if (due == STALL_NEVER)
			waitq_sleep(&readers_done_wq);
		else
			(void) waitq_sleep_timeout(&readers_done_wq, due,
			    SYNCH_FLAGS_NONE);
		irq_spinlock_lock(&rcu_preempt_lock, true);
	}
	detector_waits_readers = false;
	irq_spinlock_unlock(&rcu_preempt_lock, true);
}

void rcu_detect_sleep(bool expedite, unsigned us)
{
	if (expedite)
		thread_yield();
	else
		thread_usleep(us);
}

/* Model: verify/arcu.pml, verify/podzimek.pml */
void rcu_run_gp(void)
{
	bool expedite = __atomic_exchange_n(&expedite_req, false, __ATOMIC_SEQ_CST);
	if (expedite)
		__atomic_fetch_add(&stat_expedited, 1, __ATOMIC_RELAXED);
	uint64_t gp = gp_start();
	if (!fault_inject(FI_RCU_NOWAIT)) {
		gp_watch_t w;
		rcu_gp_watch_start(&w, gp);
		rcu_alg_detect(gp, expedite, &w);
		wait_for_preempted_readers(&w);
	}
	__atomic_store_n(&completed_gp, gp, __ATOMIC_SEQ_CST);
}

/* Model: verify/arcu.pml, verify/podzimek.pml */
void rcu_preempted_reader_left_locked(void)
{
	assert(irq_spinlock_locked_by_me(&rcu_preempt_lock));
	if (detector_waits_readers && list_empty(&rcu_cur_preempted)) {
		detector_waits_readers = false;
		waitq_wake_one(&readers_done_wq);
	}
}

/* Model: verify/arcu.pml, verify/podzimek.pml */
void rcu_add_preempted_locked(thread_t *t)
{
	assert(irq_spinlock_locked_by_me(&rcu_preempt_lock));
	cpu_t *c = CPU;
	if (__atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED) != rcu_cur_gp)
		list_append(&t->rcu_preempt_link, &rcu_cur_preempted);
	else
		list_append(&t->rcu_preempt_link, &next_preempted);
}

#ifdef CONFIG_DEBUG
/**
 * Scheduler hook: @a t, still the thread of this CPU, is about to sleep
 * (interrupts disabled). Blocking inside a reader section would hold up every
 * grace period for as long as it sleeps (and forever if the waker waits for a
 * grace period). Preemption is not a sleep and does not come here.
 */
void rcu_thread_sleeps(thread_t *t)
{
	assert_verbose(!rcu_thread_in_reader(t),
	    "blocking inside an RCU reader section (thread goes to sleep)");
}
#endif

void rcu_thread_exits_hook(thread_t *t)
{
	(void) t;
	rcu_thread_exiting();
}


/* Callbacks */

void rcu_call_wake(cpu_t *c)
{
	if (rcu_ready) {
		__atomic_store_n(&c->rcu.reclaimer_idle, false, __ATOMIC_RELAXED);
		waitq_wake_one(&c->rcu.reclaimer_wq);
	}
}

void rcu_call_batched_first(cpu_t *c)
{
	/*
	 * Against the reclaimer going idle (store-buffering): it stores idle
	 * (seq_cst) and then loads the stack (seq_cst); we pushed and then,
	 * after this fence, load idle. At least one of us sees the other: it
	 * finds our item and does not sleep, or we find it idle and wake it
	 * (a wake-up before its sleep is kept by the wait queue).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (rcu_ready && __atomic_load_n(&c->rcu.reclaimer_idle, __ATOMIC_RELAXED))
		waitq_wake_one(&c->rcu.reclaimer_wq);
}

/**
 * Appends @a b, a stack of rcu_call_batched() callbacks taken from CPU
 * @a c (its last item's next is NULL), to @a c's arriving list. Interrupts
 * disabled on @a c. Walks the stack once (its count and last item):
 * rcu_barrier()'s smp_call only; the reclaimer links a taken stack behind
 * the arriving ones it moves and counts it with interrupts enabled.
 */
static void batched_append(cpu_t *c, rcu_item_t *b)
{
	size_t n = 1;
	rcu_item_t *last = b;
	while (last->next) {
		last = last->next;
		n++;
	}
	*c->rcu.arriving_tail = b;
	c->rcu.arriving_tail = &last->next;
	c->rcu.arriving_cnt += n;
	c->rcu.stat_posted += n;
}

/**
 * Takes and runs CPU @a c's current batch (its reclaimer, once the batch's
 * grace period is complete). cur_cnt of its callbacks were counted as posted
 * when they were taken (all but those of a batched stack beyond the first
 * RCU_EXPEDITE_THRESHOLD + 1: see batched_count()); the others are counted
 * as posted here.
 */
static void exec_batch(cpu_t *c)
{
	rcu_item_t *head = c->rcu.cur_cbs;
	size_t counted = c->rcu.cur_cnt;
	c->rcu.cur_cbs = NULL;
	c->rcu.cur_cnt = 0;
	size_t n = 0;
	/* rcu_slab_free()'s batch: this thread's frees, flushed below. */
	rcu_free_batch_t fb = { .cache = NULL, .n = 0 };
	thread_t *self = THREAD;
	self->rcu_free_batch = &fb;
	rcu_func_t last = NULL;
	lockdep_rcu_cb_enter();
	kasan_rcu_cb_enter();
	while (head) {
		rcu_item_t *next = head->next;
		/*
		 * A callback of another function (rcu_barrier()'s marker,
		 * rcu_synchronize()'s wake-up) finds every free of the ones
		 * before it done, as without the batch.
		 */
		if (unlikely(head->func != last)) {
			rcu_free_batch_flush(&fb);
			last = head->func;
		}
		head->func(head);
		head = next;
		n++;
	}
	rcu_free_batch_flush(&fb);
	self->rcu_free_batch = NULL;
	kasan_rcu_cb_exit();
	lockdep_rcu_cb_exit();
	c->rcu.stat_posted += n - counted;
	c->rcu.stat_run += n;
	c->rcu.stat_batches++;
	if (n > c->rcu.stat_max_batch)
		c->rcu.stat_max_batch = n;
}

void rcu_free_batch_flush(rcu_free_batch_t *b)
{
	if (b->n != 0)
		slab_free_bulk(b->cache, b->objs, b->n);
	b->n = 0;
}

void rcu_slab_free_slow(struct slab_cache *cache, void *obj)
{
	rcu_free_batch_t *b = THREAD->rcu_free_batch;
	if (b == NULL) {
		slab_free(cache, obj);
		return;
	}
	rcu_free_batch_flush(b);
	b->cache = cache;
	b->objs[b->n++] = obj;
}

/**
 * Counts @a b, the rcu_call_batched() stack the reclaimer of CPU @a c (the
 * caller, on @a c) took and linked behind its arriving callbacks, up to
 * RCU_EXPEDITE_THRESHOLD + 1: the expedite request rcu_call() makes past the
 * threshold (a flood of batched callbacks asks for shorter grace periods
 * too), and the statistics. A longer stack (chtbench 15 takes tens of
 * thousands per grace period) is not walked to its end here: exec_batch()
 * counts the rest as posted when it runs them (the walk cost 4 instructions
 * per callback). @return the callbacks counted, all of @a b's if at most
 * RCU_EXPEDITE_THRESHOLD + 1.
 */
static size_t batched_count(cpu_t *c, rcu_item_t *b)
{
	size_t n = 0;
	for (; b && n <= RCU_EXPEDITE_THRESHOLD; b = b->next)
		n++;
	ipl_t ipl = interrupts_disable();
	c->rcu.stat_posted += n;
	if (n > RCU_EXPEDITE_THRESHOLD &&
	    !__atomic_load_n(&rcu_expedite.req, __ATOMIC_RELAXED)) {
		__atomic_store_n(&rcu_expedite.req, true, __ATOMIC_RELAXED);
		c->rcu.stat_expedite_reqs++;
	}
	interrupts_restore(ipl);
	return n;
}

/** Per-CPU reclaimer: advances this CPU's batches and runs completed ones. */
/* Model: verify/arcu.pml, verify/podzimek.pml */
static void reclaimer_thread(void *arg)
{
	cpu_t *c = arg;
	assert(CPU == c);
	for (;;) {
		/* Run the current batch once its GP is complete. */
		if (c->rcu.cur_cbs && rcu_completed_gps() >= c->rcu.cur_cbs_gp)
			exec_batch(c);
		if (!c->rcu.cur_cbs && c->rcu.next_cbs) {
			c->rcu.cur_cbs = c->rcu.next_cbs;
			c->rcu.cur_cbs_gp = c->rcu.next_cbs_gp;
			c->rcu.cur_cnt = c->rcu.next_cnt;
			c->rcu.next_cbs = NULL;
			c->rcu.next_cnt = 0;
		}
		/*
		 * arriving -> next (interrupts off: rcu_call on this CPU), and
		 * rcu_call_batched()'s stack behind them, taken with interrupts
		 * off too: rcu_barrier()'s smp_call here finds each callback
		 * still on the stack or already ahead of its marker.
		 */
		ipl_t ipl = interrupts_disable();
		rcu_item_t *batched = __atomic_exchange_n(&c->rcu.batched, NULL,
		    __ATOMIC_ACQUIRE);
		if (c->rcu.arriving_head || batched) {
			*c->rcu.arriving_tail = batched;
			rcu_item_t *head = c->rcu.arriving_head;
			size_t n = c->rcu.arriving_cnt;
			c->rcu.arriving_head = NULL;
			c->rcu.arriving_tail = &c->rcu.arriving_head;
			c->rcu.arriving_cnt = 0;
			interrupts_restore(ipl);
			if (batched)
				n += batched_count(c, batched);
			/* Append to next; a GP that starts after now covers them all. */
			rcu_item_t **tail = &c->rcu.next_cbs;
			while (*tail)
				tail = &(*tail)->next;
			*tail = head;
			c->rcu.next_cnt += n;
			memory_barrier();
			c->rcu.next_cbs_gp = rcu_started_gp() + 1;
			if (!c->rcu.cur_cbs) {
				c->rcu.cur_cbs = c->rcu.next_cbs;
				c->rcu.cur_cbs_gp = c->rcu.next_cbs_gp;
				c->rcu.cur_cnt = c->rcu.next_cnt;
				c->rcu.next_cbs = NULL;
				c->rcu.next_cnt = 0;
			}
			continue;
		}
		if (c->rcu.cur_cbs) {
			interrupts_restore(ipl);
			rcu_wait_for_gp(c->rcu.cur_cbs_gp);
			continue;
		}
		/*
		 * Nothing at all: sleep until rcu_call wakes us. Seq_cst store,
		 * then the seq_cst re-load of the stack: see
		 * rcu_call_batched_first().
		 */
		__atomic_store_n(&c->rcu.reclaimer_idle, true, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->rcu.batched, __ATOMIC_SEQ_CST)) {
			__atomic_store_n(&c->rcu.reclaimer_idle, false,
			    __ATOMIC_RELAXED);
			interrupts_restore(ipl);
			continue;
		}
		interrupts_restore(ipl);
		(void) waitq_sleep_timeout(&c->rcu.reclaimer_wq, RECLAIMER_IDLE_US,
		    SYNCH_FLAGS_NONE);
		ipl = interrupts_disable();
		__atomic_store_n(&c->rcu.reclaimer_idle, false, __ATOMIC_RELAXED);
		interrupts_restore(ipl);
	}
}

typedef struct {
	rcu_item_t item;
	waitq_t wq;
} rcu_sync_t;

static void sync_cb(rcu_item_t *item)
{
	rcu_sync_t *s = container_of(item, rcu_sync_t, item);
	/* The waiter sleeps exactly once; a wake-up before its sleep is kept. */
	waitq_wake_one(&s->wq);
}

void rcu_synchronize(void)
{
	assert_verbose(!rcu_read_locked(), "rcu_synchronize inside a reader section");
	/* A held lock a callback or reader takes; any spinlock held. */
	lockdep_rcu_wait("rcu_synchronize",
	    (uintptr_t) __builtin_return_address(0));
	rcu_sync_t s;
	waitq_initialize(&s.wq);
	rcu_call(&s.item, sync_cb);
	waitq_sleep(&s.wq);
}

void rcu_synchronize_expedite(void)
{
	__atomic_store_n(&expedite_req, true, __ATOMIC_SEQ_CST);
	rcu_synchronize();
}

/* rcu_barrier: one marker callback per CPU, posted on that CPU by smp_call. */
static mutex_t barrier_mtx;
static rcu_item_t barrier_items[CONFIG_MAX_CPUS];
static size_t barrier_pending;
static waitq_t barrier_wq;

static void barrier_cb(rcu_item_t *item)
{
	if (__atomic_sub_fetch(&barrier_pending, 1, __ATOMIC_SEQ_CST) == 0)
		waitq_wake_one(&barrier_wq);
}

static void barrier_post(void *arg)
{
	/*
	 * On the marker's CPU with interrupts off: the batched stack goes
	 * onto the arriving list first, so the marker runs after every
	 * callback it held (the reclaimer takes the stack with interrupts off
	 * too, so none is in between).
	 */
	ipl_t ipl = interrupts_disable();
	cpu_t *c = CPU;
	rcu_item_t *b = __atomic_exchange_n(&c->rcu.batched, NULL,
	    __ATOMIC_ACQUIRE);
	if (b)
		batched_append(c, b);
	rcu_call(arg, barrier_cb);
	interrupts_restore(ipl);
}

void rcu_barrier(void)
{
	lockdep_rcu_wait("rcu_barrier", (uintptr_t) __builtin_return_address(0));
	mutex_lock(&barrier_mtx);
	unsigned n = 0;
	for (unsigned i = 0; i < cpu_count; i++)
		n += cpu_is_online(i);
	/* One extra reference held while posting, dropped below. */
	__atomic_store_n(&barrier_pending, n + 1, __ATOMIC_SEQ_CST);
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i))
			continue;
		if (smp_call(i, barrier_post, &barrier_items[i]) != EOK)
			barrier_cb(&barrier_items[i]);
	}
	if (__atomic_sub_fetch(&barrier_pending, 1, __ATOMIC_SEQ_CST) != 0)
		waitq_sleep(&barrier_wq);
	mutex_unlock(&barrier_mtx);
}

size_t rcu_pending_callbacks(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		n += __atomic_load_n(&c->rcu.arriving_cnt, __ATOMIC_RELAXED) +
		    __atomic_load_n(&c->rcu.next_cnt, __ATOMIC_RELAXED) +
		    __atomic_load_n(&c->rcu.cur_cnt, __ATOMIC_RELAXED);
	}
	return n;
}

void rcu_get_stats(rcu_stats_t *st)
{
	st->algorithm = rcu_flavour_name;
	st->broken = fault_inject_enabled(FI_RCU_NOWAIT);
	st->detect_sleep_us = DETECT_SLEEP_US;
	st->poll_sleep_us = POLL_SLEEP_US;
	st->expedite_threshold = EXPEDITE_THRESHOLD;
	st->critical_threshold = RCU_CRITICAL_THRESHOLD;
	st->gps_completed = rcu_completed_gps();
	st->gps_started = rcu_started_gp();
	st->gps_expedited = __atomic_load_n(&stat_expedited, __ATOMIC_RELAXED);
	st->gps_delayed = __atomic_load_n(&rcu_stat_delayed, __ATOMIC_RELAXED);
	st->gps_blocked_preempted = __atomic_load_n(&stat_blocked_preempted,
	    __ATOMIC_RELAXED);
	st->cross_calls = __atomic_load_n(&rcu_stat_cross_calls, __ATOMIC_RELAXED);
	st->stall_limit_ms = rcu_stall_limit_get();
	st->stall_warnings = rcu_stall_warnings();
	st->pending_callbacks = rcu_pending_callbacks();
}

void rcu_cpu_get_stats(unsigned cpu, rcu_cpu_stats_t *st)
{
	cpu_t *c = &cpus[cpu];
	st->last_seen_gp = __atomic_load_n(&c->rcu.last_seen_gp, __ATOMIC_RELAXED);
	st->posted = c->rcu.stat_posted;
	st->run = c->rcu.stat_run;
	st->pending = c->rcu.arriving_cnt + c->rcu.next_cnt + c->rcu.cur_cnt;
	st->max_batch = c->rcu.stat_max_batch;
	st->batches = c->rcu.stat_batches;
	st->expedite_reqs = c->rcu.stat_expedite_reqs;
}

void rcu_init(void)
{
	waitq_initialize(&readers_done_wq);
	mutex_initialize_named(&barrier_mtx, MUTEX_PASSIVE, "rcu.barrier");
	waitq_initialize(&barrier_wq);
	rcu_alg_init();
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		cpu_t *c = &cpus[i];
		c->rcu.arriving_head = NULL;
		c->rcu.arriving_tail = &c->rcu.arriving_head;
		waitq_initialize(&c->rcu.reclaimer_wq);
	}
	sched_hooks_register(&rcu_alg_hooks);
}

void rcu_start_threads(void)
{
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i))
			continue;
		char name[THREAD_NAME_MAX];
		snprintf(name, sizeof(name), "rcu-reclaim/%u", i);
		thread_t *t = thread_create(reclaimer_thread, &cpus[i], name,
		    THREAD_FLAG_NONE);
		if (!t)
			panic("rcu: cannot create the reclaimer thread of CPU %u", i);
		thread_wire(t, &cpus[i]);
		cpus[i].rcu.reclaimer = t;
		thread_start(t);
		thread_detach(t);
	}
	rcu_alg_start_threads();
	__atomic_store_n(&rcu_ready, true, __ATOMIC_SEQ_CST);
}
