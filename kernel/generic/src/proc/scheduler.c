/** @file scheduler.c
 * Per-CPU run queues, context switching, preemption and work stealing.
 *
 * Lock order: wait queue lock -> thread lock -> run queue lock. No code holds two
 * run queue locks at once.
 *
 * A thread can be put into a run queue (woken, preempted, stolen) before the CPU
 * it last ran on has saved its context. Its on_cpu flag stays set until that CPU
 * has switched to another thread; a CPU that picked the thread waits for the flag
 * to clear (release in finish_switch, acquire in switch_to) before it loads the
 * context.
 */
#include <proc/scheduler.h>
#include <proc/thread.h>
#include <proc/uctx.h>
#include <arch/asm.h>
#include <arch/context.h>
#include <arch.h>
#include <time/timeout.h>
#include <synch/spinlock.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <cpu.h>
#include <debug/kcsan.h>

#define HOOKS_MAX 8
/** Registered hook sets; written at boot only. */
static const sched_hooks_t *hooks[HOOKS_MAX];
static unsigned hooks_count;

/** Idle threads of every CPU (static: they exist before the allocator matters). */
static thread_t idle_threads[CONFIG_MAX_CPUS];

void sched_hooks_register(const sched_hooks_t *h)
{
	unsigned n = __atomic_load_n(&hooks_count, __ATOMIC_RELAXED);
	assert(n < HOOKS_MAX);
	/* The slot first, then the count (release): CPUs switching threads
	 * concurrently read the count with acquire and never see an empty slot. */
	__atomic_store_n(&hooks[n], h, __ATOMIC_RELAXED);
	__atomic_store_n(&hooks_count, n + 1, __ATOMIC_RELEASE);
}

static inline unsigned hooks_n(void)
{
	return __atomic_load_n(&hooks_count, __ATOMIC_ACQUIRE);
}

static void hook_before_runs(thread_t *t)
{
	for (unsigned i = 0, n = hooks_n(); i < n; i++) {
		if (hooks[i]->before_thread_runs)
			hooks[i]->before_thread_runs(t);
	}
}

static void hook_after_ran(thread_t *t)
{
	for (unsigned i = 0, n = hooks_n(); i < n; i++) {
		if (hooks[i]->after_thread_ran)
			hooks[i]->after_thread_ran(t);
	}
}

static void hook_sleeps(thread_t *t)
{
	for (unsigned i = 0, n = hooks_n(); i < n; i++) {
		if (hooks[i]->thread_sleeps)
			hooks[i]->thread_sleeps(t);
	}
}

void sched_hooks_thread_exits(thread_t *t)
{
	for (unsigned i = 0, n = hooks_n(); i < n; i++) {
		if (hooks[i]->thread_exits)
			hooks[i]->thread_exits(t);
	}
}

static void hook_wakes(thread_t *t)
{
	for (unsigned i = 0, n = hooks_n(); i < n; i++) {
		if (hooks[i]->thread_wakes)
			hooks[i]->thread_wakes(t);
	}
}

void scheduler_init(void)
{
	for (unsigned i = 0; i < CONFIG_MAX_CPUS; i++) {
		cpu_t *c = &cpus[i];
		irq_spinlock_initialize(&c->rq.lock, "runq");
		for (unsigned l = 0; l < RQ_LEVELS; l++) {
			list_initialize(&c->rq.level[l].threads);
			c->rq.level[l].n = 0;
		}
		c->rq.nrdy = 0;
		c->relink_countdown = RELINK_TICKS;
		timeout_init_cpu(c);
	}
}

void scheduler_init_cpu(void)
{
	cpu_t *c = CPU;
	thread_t *idle = &idle_threads[c->id];

	irq_spinlock_initialize(&idle->lock, "thread");
	idle->tid = 0;
	idle->name[0] = 'i';
	idle->name[1] = 'd';
	idle->name[2] = 'l';
	idle->name[3] = 'e';
	idle->name[4] = 0;
	idle->state = THREAD_RUNNING;
	idle->priority = RQ_LEVELS - 1;
	idle->cpu = c;
	idle->wired = true;
	idle->on_cpu = true;
	idle->kstack = (void *) (c->stack_top - THREAD_STACK_SIZE);
	waitq_initialize(&idle->join_wq);
	atomic_set(&idle->refcount, 1);
	link_initialize(&idle->rq_link);
	link_initialize(&idle->wq_link);
	c->idle_thread = idle;
	c->thread = idle;
	arch_thread_current_set(idle);
	thread_register_idle(idle);
}

/* Run queue operations; caller holds c->rq.lock. */

static void rq_add_locked(cpu_t *c, thread_t *t)
{
	assert(irq_spinlock_locked_by_me(&c->rq.lock));
	int p = t->priority;
	list_append(&t->rq_link, &c->rq.level[p].threads);
	c->rq.level[p].n++;
	__atomic_store_n(&c->rq.nrdy, c->rq.nrdy + 1, __ATOMIC_RELAXED);
}

static void rq_remove_locked(cpu_t *c, thread_t *t)
{
	assert(irq_spinlock_locked_by_me(&c->rq.lock));
	list_remove(&t->rq_link);
	c->rq.level[t->priority].n--;
	__atomic_store_n(&c->rq.nrdy, c->rq.nrdy - 1, __ATOMIC_RELAXED);
}

static thread_t *rq_take_best_locked(cpu_t *c)
{
	assert(irq_spinlock_locked_by_me(&c->rq.lock));
	for (int p = 0; p < RQ_LEVELS; p++) {
		link_t *l = list_first(&c->rq.level[p].threads);
		if (l) {
			thread_t *t = list_get_instance(l, thread_t, rq_link);
			rq_remove_locked(c, t);
			return t;
		}
	}
	return NULL;
}

/** Highest priority level with a ready thread, RQ_LEVELS if none (racy). */
static int rq_best_level(cpu_t *c)
{
	if (__atomic_load_n(&c->rq.nrdy, __ATOMIC_RELAXED) == 0)
		return RQ_LEVELS;
	for (int p = 0; p < RQ_LEVELS; p++) {
		if (__atomic_load_n(&c->rq.level[p].n, __ATOMIC_RELAXED))
			return p;
	}
	return RQ_LEVELS;
}

static void cpu_kick(cpu_t *c)
{
	/*
	 * Pairs with the idle loop: it sets idle = true (seq_cst) and then looks
	 * at its run queue; we enqueue and then read idle (seq_cst). One of the two
	 * sees the other's store, so a wake-up is never slept through.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (c != CPU && __atomic_load_n(&c->idle, __ATOMIC_SEQ_CST))
		arch_ipi_send(c, INTR_WAKEUP);
}

void thread_ready(thread_t *t)
{
	ipl_t ipl = interrupts_disable();

	/*
	 * The hook runs before the thread can run (it is in no run queue yet), so
	 * hooks see wake-ups and the thread's next run in order.
	 */
	hook_wakes(t);
	irq_spinlock_lock(&t->lock, false);
	assert(t->state == THREAD_ENTERING || t->state == THREAD_SLEEPING);
	cpu_t *c = t->cpu;
	if (!c)
		c = CPU;
	if (t->state == THREAD_SLEEPING && t->priority > 0)
		t->priority--;  /* a woken thread rises */
	t->state = THREAD_READY;
	t->cpu = c;
	/* After the unlock another CPU may run t, and t may exit and be freed:
	 * nothing below touches t. */
	int prio = t->priority;
	irq_spinlock_lock(&c->rq.lock, false);
	rq_add_locked(c, t);
	irq_spinlock_unlock(&c->rq.lock, false);
	irq_spinlock_unlock(&t->lock, false);

	cpu_t *me = CPU;
	if (c == me) {
		thread_t *cur = me->thread;
		if (cur && (cur == me->idle_thread || prio < cur->priority))
			me->need_resched = true;
	} else {
		cpu_kick(c);
	}
	interrupts_restore(ipl);
}

/** Steals one unwired ready thread from the busiest other CPU (racy choice). */
static thread_t *steal_thread(cpu_t *me)
{
	cpu_t *victim = NULL;
	size_t most = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		if (c == me || !cpu_is_online(i))
			continue;
		size_t n = __atomic_load_n(&c->rq.nrdy, __ATOMIC_RELAXED);
		if (n > most) {
			most = n;
			victim = c;
		}
	}
	if (!victim)
		return NULL;

	thread_t *stolen = NULL;
	irq_spinlock_lock(&victim->rq.lock, false);
	/* Take from the lowest priority first: the victim keeps its urgent work. */
	for (int p = RQ_LEVELS - 1; p >= 0 && !stolen; p--) {
		list_t *lst = &victim->rq.level[p].threads;
		list_foreach(lst, l) {
			thread_t *t = list_get_instance(l, thread_t, rq_link);
			if (!t->wired) {
				rq_remove_locked(victim, t);
				stolen = t;
				break;
			}
		}
	}
	irq_spinlock_unlock(&victim->rq.lock, false);
	if (stolen) {
		/* The thread is READY and in no queue: nobody else changes its CPU. */
		irq_spinlock_lock(&stolen->lock, false);
		stolen->cpu = me;
		stolen->migrations++;
		irq_spinlock_unlock(&stolen->lock, false);
		me->migrations_in++;
	}
	return stolen;
}

/**
 * Work done by the thread that runs after a switch: release the previous
 * thread's CPU and finish an exit.
 */
static void finish_switch(void)
{
	cpu_t *c = CPU;
	thread_t *prev = c->prev_thread;
	c->prev_thread = NULL;
	if (!prev)
		return;
	/*
	 * A racy read on purpose (KCSAN: data-race in finish_switch /
	 * thread_ready): a waker may set prev->state from SLEEPING to READY
	 * under prev->lock right now (a woken thread is queued before on_cpu
	 * clears, see the top of this file). Benign: only THREAD_EXITING
	 * matters here, which prev stored itself before its last switch on this
	 * CPU (program order), and nobody changes an exiting thread's state
	 * (thread_ready() takes ENTERING or SLEEPING only).
	 */
	bool exiting = data_race(prev->state) == THREAD_EXITING;
	/* Release: the saved context is complete before anyone may load it. */
	__atomic_store_n(&prev->on_cpu, false, __ATOMIC_RELEASE);
	if (exiting)
		thread_finish_exit(prev);
}

void scheduler_finish_switch_new(void)
{
	finish_switch();
	hook_before_runs(CPU->thread);
}

static void switch_to(cpu_t *c, thread_t *prev, thread_t *next)
{
	/* Wait until the CPU that last ran next has saved its context. */
	while (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
		cpu_relax();
	__atomic_store_n(&next->on_cpu, true, __ATOMIC_RELAXED);

	hook_after_ran(prev);
	c->prev_thread = prev;
	c->thread = next;
	arch_thread_current_set(next);
	c->context_switches++;
	irq_spinlock_lock(&next->lock, false);
	next->state = THREAD_RUNNING;
	next->quantum = (unsigned) next->priority + 1;
	next->cpu = c;
	irq_spinlock_unlock(&next->lock, false);
	/*
	 * The user register state context_switch does not carry (proc/uctx.h):
	 * saved for a user thread leaving, loaded for one coming; a switch
	 * between kernel threads pays the two tests only.
	 */
	if (prev->uctx)
		uctx_save(prev->uctx);
	if (next->uctx)
		uctx_load(next->uctx);
	context_switch(&prev->ctx, &next->ctx);
	/* Back in prev, possibly on another CPU. */
	finish_switch();
	hook_before_runs(CPU->thread);
}

void scheduler(void)
{
	assert(interrupts_disabled());
	cpu_t *c = CPU;
	thread_t *prev = c->thread;
	assert(c->preemption_disabled == 0);

	c->need_resched = false;

	irq_spinlock_lock(&prev->lock, false);
	bool sleeping = prev->state == THREAD_SLEEPING;
	if (prev->state == THREAD_RUNNING && prev != c->idle_thread) {
		/* Preempted or yielding: back to the run queue. */
		if (prev->quantum == 0 && prev->priority < RQ_LEVELS - 1)
			prev->priority++;  /* used its whole quantum: drops */
		irq_spinlock_lock(&c->rq.lock, false);
		if (c->rq.nrdy == 0) {
			/*
			 * Nothing else is ready here: adding prev and taking it
			 * back would pick prev again, but would write nrdy twice,
			 * and idle CPUs read nrdy on every tick (a cache-line
			 * transfer per quantum per CPU, docs/SHARING.md). Keep
			 * running it with a new quantum instead.
			 */
			irq_spinlock_unlock(&c->rq.lock, false);
			prev->quantum = (unsigned) prev->priority + 1;
			irq_spinlock_unlock(&prev->lock, false);
			return;
		}
		prev->state = THREAD_READY;
		rq_add_locked(c, prev);
		irq_spinlock_unlock(&c->rq.lock, false);
	}
	irq_spinlock_unlock(&prev->lock, false);
	/*
	 * Hooks run without the thread lock, so they may take their own locks
	 * (the work queue takes its queue lock here). The thread may already have
	 * been woken (it is then READY); the hook must cope with that.
	 */
	if (sleeping)
		hook_sleeps(prev);

	irq_spinlock_lock(&c->rq.lock, false);
	thread_t *next = rq_take_best_locked(c);
	irq_spinlock_unlock(&c->rq.lock, false);
	if (!next)
		next = steal_thread(c);
	if (!next) {
		if (prev == c->idle_thread)
			return;
		next = c->idle_thread;
	}
	if (next == prev) {
		prev->state = THREAD_RUNNING;
		prev->quantum = (unsigned) prev->priority + 1;
		return;
	}
	if (next != c->idle_thread)
		next->cpu = c;
	switch_to(c, prev, next);
}

void scheduler_preempt_check(void)
{
	cpu_t *c = CPU;
	if (!c->need_resched || c->preemption_disabled || c->irq_nesting ||
	    !c->thread)
		return;
	ipl_t ipl = interrupts_disable();
	thread_t *t = c->thread;
	/* state stays RUNNING: scheduler() puts the thread back as READY */
	if (t->state == THREAD_RUNNING)
		scheduler();
	interrupts_restore(ipl);
}

/** Moves every ready thread one level up (starvation avoidance). */
static void relink_rq(cpu_t *c)
{
	irq_spinlock_lock(&c->rq.lock, false);
	for (int p = 1; p < RQ_LEVELS; p++) {
		list_t *from = &c->rq.level[p].threads;
		while (!list_empty(from)) {
			thread_t *t = list_get_instance(list_first(from), thread_t,
			    rq_link);
			list_remove(&t->rq_link);
			c->rq.level[p].n--;
			t->priority = p - 1;
			list_append(&t->rq_link, &c->rq.level[p - 1].threads);
			c->rq.level[p - 1].n++;
		}
	}
	irq_spinlock_unlock(&c->rq.lock, false);
}

void scheduler_tick(void)
{
	cpu_t *c = CPU;
	thread_t *t = c->thread;
	if (!t)
		return;
	if (t == c->idle_thread) {
		c->idle_ticks++;
		if (__atomic_load_n(&c->rq.nrdy, __ATOMIC_RELAXED))
			c->need_resched = true;
	} else {
		t->ticks++;
		if (t->quantum > 0)
			t->quantum--;
		if (t->quantum == 0 || rq_best_level(c) < t->priority)
			c->need_resched = true;
	}
	if (--c->relink_countdown == 0) {
		c->relink_countdown = RELINK_TICKS;
		if (__atomic_load_n(&c->rq.nrdy, __ATOMIC_RELAXED))
			relink_rq(c);
	}
}

void scheduler_idle_loop(void)
{
	cpu_t *c = CPU;
	for (;;) {
		interrupts_disable();
		/*
		 * seq_cst store, then seq_cst load (cpu_kick()'s pair): C11's
		 * single order of seq_cst operations keeps the load after the
		 * store (amd64: xchg; arm64: STLR then LDAR, which the
		 * architecture keeps in order). The store is a release: the
		 * readers this CPU ran are ordered before it, for the grace-period
		 * detector that takes an idle CPU as quiescent.
		 */
		__atomic_store_n(&c->idle, true, __ATOMIC_SEQ_CST);
		bool work = __atomic_load_n(&c->rq.nrdy, __ATOMIC_SEQ_CST) != 0;
		if (!work) {
			/* Anything to steal? (racy peek; the steal re-checks) */
			for (unsigned i = 0; i < cpu_count && !work; i++) {
				if (&cpus[i] != c &&
				    __atomic_load_n(&cpus[i].rq.nrdy, __ATOMIC_RELAXED) > 1)
					work = true;
			}
		}
		if (work) {
			__atomic_store_n(&c->idle, false, __ATOMIC_SEQ_CST);
			/*
			 * Full barrier (as irq_dispatch's on arm64): forbids the
			 * reader loads of the threads scheduled next from being
			 * satisfied before idle = false is visible. The detector
			 * takes a CPU it sees idle as quiescent without asking it
			 * (store buffering against its GP start and idle load).
			 */
			memory_barrier_after_atomic();
			scheduler();
			interrupts_enable();
			continue;
		}
		/* Enable and wait as one step: an interrupt in between still wakes us. */
		cpu_sleep_enable_irq();
		__atomic_store_n(&c->idle, false, __ATOMIC_SEQ_CST);
		/*
		 * Full barrier, the same reordering: interrupts are enabled
		 * now, and a handler that finds idle already false skips its
		 * own fence and may enter a reader section at once.
		 */
		memory_barrier_after_atomic();
	}
}

void sched_print(void)
{
	printf("cpu  ready  per-level (0..15)                         switches    "
	    "migr-in  idle-ticks\n");
	for (unsigned i = 0; i < cpu_count; i++) {
		cpu_t *c = &cpus[i];
		if (!cpu_is_online(i))
			continue;
		char levels[64];
		size_t pos = 0;
		for (int p = 0; p < RQ_LEVELS; p++) {
			size_t n = __atomic_load_n(&c->rq.level[p].n, __ATOMIC_RELAXED);
			pos += (size_t) snprintf(levels + pos, sizeof(levels) - pos,
			    "%zu%s", n, p < RQ_LEVELS - 1 ? " " : "");
			if (pos >= sizeof(levels))
				break;
		}
		printf("%3u  %5zu  %-40s  %9lu  %7lu  %10lu\n", i,
		    __atomic_load_n(&c->rq.nrdy, __ATOMIC_RELAXED), levels,
		    c->context_switches, c->migrations_in, c->idle_ticks);
	}
}
