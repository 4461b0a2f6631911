/** @file chtbench_parts.h
 * What the parts of `chtbench` share (kernel/test/bench/chtbench/):
 * runner.c (the benchmark table, the threads, the result line), list.c (ids
 * 1-8: empty readers and the seed's 5-element list), ht.c (ids 10-15: the
 * fixed chained table and the CHT with the same keys), resize.c (ids 16-20:
 * the relativistic paper's resize experiment) and bench_page_ht.c (ids 21,
 * 22: the page hash table's lookup and fault paths). The console command is
 * kernel/generic/src/console/cmd_bench.c; its entry points are in
 * <bench/chtbench.h>. Design: docs/CHTBENCH.md.
 */
#ifndef KERN_BENCH_CHTBENCH_PARTS_H_
#define KERN_BENCH_CHTBENCH_PARTS_H_

#include <bench/chtbench.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/spinlock.h>
#include <adt/cht.h>
#include <adt/list.h>
#include <mm/as.h>
#include <mm/slab.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <genarch/mm/page_ht.h>
#include <time/delay.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <lib/str.h>
#include <print.h>
#include <errno.h>
#include <cpu.h>

/* ---------------------------------------------------------------------- */
/* Shared state of one run. Written by the controller before the threads start
 * (ordered by thread_start) or with atomics (runner.c). */

typedef struct {
	unsigned id;
	unsigned cpus;
	unsigned update_pct;
	bool wired;
	unsigned seconds;
} bench_cfg_t;

/** The run's configuration; written by the controller before the threads
 * start. */
extern bench_cfg_t bench_cfg;
/** Raised (release) when the threads may start; read with acquire. */
extern bool start_flag;
/** Raised when the time is up; polled relaxed by the threads. */
extern bool stop_flag;
/** Threads that reached the start line (atomic). */
extern atomic_t threads_ready;

/**
 * One benchmark thread's state. Written by its own thread while it runs (the
 * random state on every operation), read by the controller after the join.
 * Each on its own cache line: the threads' entries are neighbours in one
 * array, and 40-byte entries let two CPUs write one line on every operation
 * wherever the loop calls out of line and so stores `rnd` back each time
 * (page-hash lookups through page_mapping_find(): false sharing that held
 * their scaling at -smp 2 to 1.5 while the inlined ht-lookup/cht loop, which
 * keeps `rnd` in a register, scaled 2.0).
 */
typedef struct {
	unsigned index;
	uint64_t ops;
	uint64_t rnd;
	uint64_t errors;
	unsigned cpu_seen;
} __attribute__((aligned(64))) bench_thread_t;

static inline uint64_t rnd_next(bench_thread_t *t)
{
	/* xorshift64 (Marsaglia 2003). */
	uint64_t x = t->rnd;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return t->rnd = x;
}

static inline bool stopped(void)
{
	return __atomic_load_n(&stop_flag, __ATOMIC_RELAXED);
}

static inline bool want_update(bench_thread_t *t)
{
	return bench_cfg.update_pct && rnd_next(t) % 100 < bench_cfg.update_pct;
}

/** Results of the traversals go here so that they are not optimized away. */
extern uint64_t sink;
#define SINK(v) __atomic_store_n(&sink, (v), __ATOMIC_RELAXED)

/**
 * A spinning reader-writer lock (Linux rwlock_t style), the reader-writer
 * baseline of the relativistic paper: bit 31 writer, low bits reader count.
 * Protected by: its atomic word.
 */
typedef struct {
	uint32_t word;
} rwspin_t;

#define RW_WRITER 0x80000000u

static inline void rw_read_lock(rwspin_t *l)
{
	preemption_disable();
	for (;;) {
		uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (!(w & RW_WRITER) && __atomic_compare_exchange_n(&l->word, &w, w + 1,
		    true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			return;
		cpu_relax();
	}
}

static inline void rw_read_unlock(rwspin_t *l)
{
	__atomic_fetch_sub(&l->word, 1, __ATOMIC_RELEASE);
	preemption_enable();
}

static inline void rw_write_lock(rwspin_t *l)
{
	preemption_disable();
	for (;;) {
		uint32_t w = __atomic_load_n(&l->word, __ATOMIC_RELAXED);
		if (!(w & RW_WRITER) && __atomic_compare_exchange_n(&l->word, &w,
		    w | RW_WRITER, true, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		cpu_relax();
	}
	/* Wait for the readers inside to leave; new ones see the writer bit. */
	while (__atomic_load_n(&l->word, __ATOMIC_ACQUIRE) != RW_WRITER)
		cpu_relax();
}

static inline void rw_write_unlock(rwspin_t *l)
{
	__atomic_store_n(&l->word, 0, __ATOMIC_RELEASE);
	preemption_enable();
}

/* Items of the fixed tables, the CHT variants and the resize experiment (ht.c). */
typedef struct fitem {
	link_t link;
	uint64_t key;
	cht_link_t clink;   /* for the CHT variants */
} fitem_t;

/** Slab cache of fitem_t (ht.c; created on first use). */
extern slab_cache_t *fitem_cache;
/** The CHT of ids 12, 15 and 16-18 (ht.c). */
extern cht_t bench_cht;
/** Items of the resize experiments 16-20 (keys 0 .. CHTBENCH_RS_ITEMS - 1). */
#define CHTBENCH_RS_ITEMS (1u << 16)
/** Resizes the resizer thread completed in this run (atomic; resize.c). */
extern uint64_t resizes_done;

/* ---------------------------------------------------------------------- */
/* The benchmark table (runner.c). */

typedef int (*bench_setup_t)(void);
typedef void (*bench_body_t)(bench_thread_t *t);
typedef void (*bench_teardown_t)(void);

typedef struct {
	unsigned id;
	const char *name;
	const char *desc;
	bench_setup_t setup;
	bench_body_t body;
	bench_teardown_t teardown;
	/** The resize experiment runs an extra resizer thread. */
	int resizer;   /* 0 none, 1 cht, 2 rwlock table */
	/** Only meaningful with cpus == 1 (the seed's "ideal" update run). */
	bool single_cpu;
	/** The body draws updates with want_update() (the update percentage). */
	bool updates;
} bench_t;

/* Bodies, setups and teardowns of the table's entries, and the helpers the
 * parts share. */
void b_ht_bkt(bench_thread_t *t);
void b_ht_cht(bench_thread_t *t);
void b_ht_spin(bench_thread_t *t);
void b_htu_bkt(bench_thread_t *t);
void b_htu_cht(bench_thread_t *t);
void b_htu_spin(bench_thread_t *t);
void b_list_ideal(bench_thread_t *t);
void b_list_rcu(bench_thread_t *t);
void b_list_rw(bench_thread_t *t);
void b_list_spin(bench_thread_t *t);
void b_list_upd_ideal(bench_thread_t *t);
void b_list_upd_rcu(bench_thread_t *t);
void b_list_upd_spin(bench_thread_t *t);
void b_ph_fault(bench_thread_t *t);
void b_ph_lookup(bench_thread_t *t);
void b_rcu_empty(bench_thread_t *t);
void b_rs_cht(bench_thread_t *t);
void b_rs_rw(bench_thread_t *t);
int bench_cht_fill(const char *name, size_t buckets, size_t min_buckets,
    size_t max_load, uint64_t items);
void bench_cht_teardown(uint64_t key_lo, uint64_t key_hi);
void chain_free(list_t *c);
int ensure_fitem_cache(void);
fitem_t *fitem_new(uint64_t key);
void resizer_thread(void *arg);
int s_cht(void);
int s_fixed(void);
int s_list(void);
int s_ph(void);
int s_ph_lookup(void);
int s_rs_cht13(void);
int s_rs_cht14(void);
int s_rs_cht_cont(void);
int s_rs_rw(void);
void t_cht(void);
void t_fixed(void);
void t_list(void);
void t_ph(void);
void t_rs_cht(void);
void t_rs_rw(void);

#endif
