/** @file rcu_inline.h
 * Inline reader sections of the RCU flavour built in (included by synch/rcu.h).
 */
#ifndef KERN_RCU_INLINE_H_
#define KERN_RCU_INLINE_H_

#include <proc/thread.h>
#include <synch/spinlock.h>
#include <cpu.h>
#include <atomic.h>
#include <arch/asm.h>
#include <mm/slab.h>

/*
 * The running thread's reader count, one instruction per update (both
 * flavours; A-RCU also marks it preempted): arch/rcu_arch.h.
 */
#include <arch/rcu_arch.h>

/* rcu_for_each_pair(): documented in synch/rcu.h. */
/** Compile-time check of its fields (an expression: the loop stays one statement). */
#define RCU_PAIR_CHECK(n, pf, wf) \
	((void) sizeof(struct { \
		_Static_assert(__builtin_offsetof(__typeof__(*(n)), wf) == \
		    __builtin_offsetof(__typeof__(*(n)), pf) + sizeof(void *) && \
		    sizeof((n)->wf) == 8 && sizeof((n)->pf) == 8, \
		    "rcu_for_each_pair: an 8-byte word right after the link"); \
		int rcu_pair_check; \
	}))
#ifdef ARCH_RCU_LOAD_PAIR
#define rcu_for_each_pair(n, head, pf, wf, w) \
	for (__typeof__(n) __rfp_next = (RCU_PAIR_CHECK(n, pf, wf), \
	    (n) = rcu_access(head), NULL); \
	    (n) && (__rfp_next = (__typeof__(n) __force) \
	    arch_rcu_load_pair(&(n)->pf, (uint64_t *) &(w)), true); \
	    (n) = __rfp_next)
#else
#define rcu_for_each_pair(n, head, pf, wf, w) \
	for (RCU_PAIR_CHECK(n, pf, wf), (n) = rcu_access(head); \
	    (n) && ((w) = (n)->wf, true); (n) = rcu_access((n)->pf))
#endif

/* One flavour's reader section, one file each (as rcu_arcu.c, rcu_podzimek.c). */
#if defined(CONFIG_RCU_A_RCU)
#include <synch/rcu_arcu_inline.h>
#elif defined(CONFIG_RCU_PODZIMEK)
#include <synch/rcu_podzimek_inline.h>
#else
#error "Define CONFIG_RCU_A_RCU or CONFIG_RCU_PODZIMEK (make RCU=...)"
#endif

/* Callbacks (both flavours) */

/** Arriving callbacks on one CPU past which a grace period is expedited. */
#define RCU_EXPEDITE_THRESHOLD 1000
/** ...past which the reclaimer is also woken at once (once per batch). */
#define RCU_CRITICAL_THRESHOLD 10000

/**
 * The request for an expedited grace period: set by rcu_synchronize_expedite()
 * and by callback floods (rcu_call()), taken (exchanged with false) by each
 * grace-period detection. Atomics. Alone on its cache line, and rcu_call()
 * loads it before it stores: a CPU posting thousands of callbacks per grace
 * period then writes the line once per grace period, not on every call (each
 * store takes the line away from every other CPU's cache).
 */
typedef struct {
	bool req;
} __attribute__((aligned(64))) rcu_expedite_flag_t;

extern rcu_expedite_flag_t rcu_expedite;

/**
 * Out-of-line part of rcu_call(): wakes CPU @a c's reclaimer. Called with
 * interrupts disabled on CPU @a c.
 */
void rcu_call_wake(cpu_t *c);

static inline void rcu_call(rcu_item_t *item, rcu_func_t func)
{
	item->func = func;
	item->next = NULL;
	/* The arriving list is CPU-local, and interrupt handlers post too. */
	ipl_t ipl = interrupts_disable();
	cpu_t *c = CPU;
	*c->rcu.arriving_tail = item;
	c->rcu.arriving_tail = &item->next;
	size_t n = ++c->rcu.arriving_cnt;
	c->rcu.stat_posted++;
	if (unlikely(n > RCU_EXPEDITE_THRESHOLD) &&
	    !__atomic_load_n(&rcu_expedite.req, __ATOMIC_RELAXED)) {
		__atomic_store_n(&rcu_expedite.req, true, __ATOMIC_RELAXED);
		c->rcu.stat_expedite_reqs++;
	}
	/*
	 * An idle reclaimer is woken by the first callback. A busy one is woken
	 * once more per batch, when the critical threshold is crossed (it is then
	 * awake already or about to run, and every further wake-up would only be
	 * recorded as a missed one on its wait queue, each making a later idle
	 * sleep return at once: with 24000 callbacks per grace period, chtbench 7
	 * at 100 % updates spent 200 instructions per callback on those wake-ups
	 * and the reclaimer's empty rounds).
	 */
	if (unlikely(__atomic_load_n(&c->rcu.reclaimer_idle, __ATOMIC_RELAXED) ||
	    n == RCU_CRITICAL_THRESHOLD + 1))
		rcu_call_wake(c);
	interrupts_restore(ipl);
}

/**
 * Out-of-line part of rcu_call_batched(): @a item was pushed on CPU @a c's
 * empty stack; wakes that CPU's reclaimer if it sleeps. Any CPU, any context.
 */
void rcu_call_batched_first(cpu_t *c);

static inline void rcu_call_batched(rcu_item_t *item, rcu_func_t func)
{
	item->func = func;
	/*
	 * Any CPU's stack will do: the thread may migrate after reading CPU,
	 * and the push is one CAS, atomic against other CPUs and against an
	 * interrupt handler pushing on this one. Release: the reclaimer's
	 * acquire exchange sees func and next of every item it takes (the
	 * CASes after ours continue the release sequence).
	 */
	cpu_t *c = CPU;
	rcu_item_t *old = __atomic_load_n(&c->rcu.batched, __ATOMIC_RELAXED);
	do {
		item->next = old;
	} while (!__atomic_compare_exchange_n(&c->rcu.batched, &old, item, true,
	    __ATOMIC_RELEASE, __ATOMIC_RELAXED));
	if (unlikely(old == NULL))
		rcu_call_batched_first(c);
}

static inline void rcu_slab_free(struct slab_cache *cache, void *obj)
{
	/* Set only while this thread runs callbacks (exec_batch()). */
	rcu_free_batch_t *b = THREAD->rcu_free_batch;
	size_t n;
	/* Callbacks run with interrupts enabled; a handler would find b. */
	assert(b == NULL || !interrupts_disabled());
	/*
	 * The rest out of line: inlined, its call made the callback save three
	 * registers on every free (12 instructions, chtbench 15, icount).
	 */
	if (likely(b != NULL && b->cache == cache &&
	    (n = b->n) < RCU_FREE_BATCH)) {
		b->objs[n] = obj;
		b->n = n + 1;
		return;
	}
	rcu_slab_free_slow(cache, obj);
}

#endif
