/** @file rcu_stall.c
 * RCU CPU stall warnings (after Linux's RCU CPU stall detector; see rcu.c,
 * "Stall warnings"): the stall limit, the watch a grace-period detection keeps
 * of its GP, and the warning that names the readers holding it up. Used by both
 * flavours' detection in rcu.c through rcu_impl.h.
 */
#include <synch/rcu.h>
#include <synch/spinlock.h>
#include <smp/smp_call.h>
#include <proc/thread.h>
#include <console/console.h>
#include <print.h>
#include <cpu.h>
#include <lib/str.h>
#include <time/delay.h>
#include "rcu_impl.h"

/** Stall limit in ms; atomics (relaxed: an independent tunable). */
static uint64_t stall_limit_ms = RCU_STALL_DEFAULT_MS;
/** Stall warnings printed; atomics (incremented with release after stall_last
 * is written, read with acquire). */
static uint64_t stat_stalls;
/** What the last warning named; protected by stall_lock. */
static irq_spinlock_t stall_lock = IRQ_SPINLOCK_INITIALIZER("rcu.stall");
static rcu_stall_info_t stall_last;

uint64_t rcu_stall_limit_set(uint64_t ms)
{
	if (ms < RCU_STALL_MIN_MS)
		ms = RCU_STALL_MIN_MS;
	if (ms > RCU_STALL_MAX_MS)
		ms = RCU_STALL_MAX_MS;
	return __atomic_exchange_n(&stall_limit_ms, ms, __ATOMIC_RELAXED);
}

uint64_t rcu_stall_limit_get(void)
{
	return __atomic_load_n(&stall_limit_ms, __ATOMIC_RELAXED);
}

uint64_t rcu_stall_warnings(void)
{
	return __atomic_load_n(&stat_stalls, __ATOMIC_ACQUIRE);
}

void rcu_stall_last(rcu_stall_info_t *out)
{
	irq_spinlock_lock(&stall_lock, true);
	*out = stall_last;
	irq_spinlock_unlock(&stall_lock, true);
}

void rcu_gp_watch_start(gp_watch_t *w, uint64_t gp)
{
	w->gp = gp;
	w->start_us = uptime_us();
	w->warned = false;
}

/**
 * Microseconds until the stall warning of @a w is due: 0 if it is due now,
 * STALL_NEVER once it was printed.
 */
uint64_t rcu_stall_due_us(const gp_watch_t *w)
{
	if (w->warned)
		return STALL_NEVER;
	uint64_t limit_us = rcu_stall_limit_get() * 1000;
	uint64_t held = uptime_us() - w->start_us;
	return held >= limit_us ? 0 : limit_us - held;
}

/** Adds a holder to @a info (or counts it when the array is full). */
static void stall_add(rcu_stall_info_t *info, thread_t *t, int cpu, bool running)
{
	if (info->n == RCU_STALL_MAX_HOLDERS) {
		info->more++;
		return;
	}
	info->holder[info->n].tid = t ? t->tid : 0;
	str_cpy(info->holder[info->n].name, RCU_STALL_NAME_MAX,
	    t ? t->name : "?");
	info->holder[info->n].cpu = cpu;
	info->holder[info->n].running = running;
	info->n++;
}

#if defined(CONFIG_RCU_PODZIMEK)
typedef struct {
	rcu_stall_info_t *info;
	bool in_reader;
} stall_sample_t;

/**
 * smp_call target: names the thread inside a reader on this CPU (interrupts
 * off: CPU->thread is stable). Writes s->info; smp_call makes that visible to
 * the detector, which waits for it and touches info meanwhile no more.
 */
static void stall_sample_cpu(void *arg)
{
	stall_sample_t *s = arg;
	cpu_t *c = CPU;
	s->in_reader = arcu_nesting() >= RCU_CNT_INC;
	if (s->in_reader)
		stall_add(s->info, c->thread, (int) c->id, true);
}
#endif

/**
 * Prints the stall warning of @a w (once: marks it warned). Detector thread,
 * interrupts enabled, no locks held.
 */
void rcu_stall_report(gp_watch_t *w)
{
	w->warned = true;
	static rcu_stall_info_t info;  /* one detection at a time */
	memset(&info, 0, sizeof(info));
	info.gp = w->gp;
	info.held_ms = (uptime_us() - w->start_us) / 1000;
#if defined(CONFIG_RCU_PODZIMEK)
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i) ||
		    !__atomic_load_n(&cpus[i].rcu.is_delaying_gp, __ATOMIC_SEQ_CST))
			continue;
		stall_sample_t smp = { .info = &info, .in_reader = false };
		(void) smp_call(i, stall_sample_cpu, &smp);
	}
#endif
	irq_spinlock_lock(&rcu_preempt_lock, true);
	list_foreach(&rcu_cur_preempted, l) {
		thread_t *t = list_get_instance(l, thread_t, rcu_preempt_link);
		/* Display only: racy reads of a thread that stays alive (listed). */
		cpu_t *c = __atomic_load_n(&t->cpu, __ATOMIC_RELAXED);
		bool running = __atomic_load_n(&t->state, __ATOMIC_RELAXED) ==
		    THREAD_RUNNING;
		stall_add(&info, t, c ? (int) c->id : -1, running);
	}
	irq_spinlock_unlock(&rcu_preempt_lock, true);

	uint64_t limit = rcu_stall_limit_get();
	console_lock();
	printf("rcu: INFO: stall: grace period %lu held up for %lu ms (limit %lu "
	    "ms) by %u reader(s):\n", info.gp, info.held_ms, limit,
	    info.n + info.more);
	for (unsigned i = 0; i < info.n; i++) {
		if (info.holder[i].running)
			printf("rcu: INFO: stall: CPU %d in a reader section: thread "
			    "'%s' (tid %lu) holds grace period %lu for %lu ms\n",
			    info.holder[i].cpu, info.holder[i].name,
			    info.holder[i].tid, info.gp, info.held_ms);
		else
			printf("rcu: INFO: stall: preempted reader thread '%s' (tid "
			    "%lu, last on CPU %d) holds grace period %lu for %lu ms\n",
			    info.holder[i].name, info.holder[i].tid,
			    info.holder[i].cpu, info.gp, info.held_ms);
	}
	if (info.more)
		printf("rcu: INFO: stall: ... and %u more\n", info.more);
	if (info.n + info.more == 0)
		printf("rcu: INFO: stall: no reader found any more (it just left)\n");
	console_unlock();

	irq_spinlock_lock(&stall_lock, true);
	stall_last = info;
	irq_spinlock_unlock(&stall_lock, true);
	__atomic_fetch_add(&stat_stalls, 1, __ATOMIC_RELEASE);
}

/** Prints the stall warning of @a w if it is due. Detector thread. */
void rcu_stall_check(gp_watch_t *w)
{
	if (rcu_stall_due_us(w) == 0)
		rcu_stall_report(w);
}

