/** @file harness.c
 * The one harness every table runs under (bench/userspace/README.md).
 *
 *   bench_us list
 *       name,library,layout,presized|auto,est_bytes_per_key,resize|-,flags
 *   bench_us big IMPL [options]
 *       the Big-Memory workloads (big.c; make -C uspace bench-big)
 *   bench_us suite IMPL [-s SECS] [-n SIZES] [-t THREADS] [-m MIXKEYS]
 *       lookups (all hits, all misses) at each size; at MIXKEYS also YCSB
 *       A/B/C (uniform, zipfian 0.99) and Herlihy-Shavit 90/9/1
 *   bench_us resize IMPL [-s SECS] [-t THREADS]
 *       2^16 keys; lookups at fixed 2^13 and 2^14 buckets and while a
 *       resizer thread flips 2^13 <-> 2^14 (Triplett et al.); misses counted
 *   bench_us growshrink IMPL [-t THREADS] [-k KEYS]
 *       insert KEYS keys from 1 bucket, then delete 99%: throughput,
 *       latency percentiles, peak and final heap, final bucket count
 *   bench_us icount IMPL [-k KEYS] [-o OPS]
 *       single thread, fixed operation counts between callgrind client
 *       requests (run under valgrind --tool=callgrind --collect-atstart=no)
 *   bench_us misses IMPL [-k KEYS] [-o OPS]
 *       single thread: prefill KEYS keys (auto impls grow from their
 *       default size, presized ones are sized for KEYS), then OPS lookups
 *       that hit, OPS that miss, OPS removes of present keys and OPS
 *       inserts of absent ones, each between callgrind client requests
 *       (run under valgrind --tool=callgrind --collect-atstart=no
 *       --cache-sim=yes: last-level misses per operation, run_misses.py)
 *   bench_us sharing IMPL [-k KEYS] [-t THREADS] [-u UPDATE%] [-o OPS]
 *       [-M MAPSFILE]
 *       THREADS threads, OPS operations each (lookups of present keys, or
 *       with UPDATE% probability an insert and remove of a key of the
 *       thread's own), inside the sharing counter's window (run under
 *       qemu-x86_64 -plugin build/plugins/sharing.so; docs/SHARING.md);
 *       MAPSFILE receives /proc/self/maps for naming the lines
 *
 * Output: CSV rows "kind,impl,workload,keys,threads,metric,value".
 * Keys are 8-byte integers: present key i is fmix64(2i + 2), absent key i is
 * fmix64(2i + 3) (a bijection: disjoint sets, never 0 or ~0; see key_gen()).
 */
#define _GNU_SOURCE
#include "bench.h"
#include "bench_keys.h"

#include <dirent.h>
#include <execinfo.h>
#include <signal.h>
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <valgrind/callgrind.h>
/* The sharing counter's markers (uspace/lib/c/include via -iquote). */
#include "sharing.h"

/* The built-in list; main() appends the BENCH_REGISTER()ed impls. */
static const bench_impl_t *const builtin_impls[] = {
	&impl_cht, &impl_cht_presized, &impl_cht_presized_a64,
	&impl_lfht_memb, &impl_lfht_memb_presized,
	&impl_lfht_qsbr, &impl_lfht_qsbr_presized,
	&impl_cuckoo, &impl_cuckoo_ptr,
	&impl_ckhs, &impl_ckhs_ptr,
	&impl_ckht, &impl_ckht_ptr,
	&impl_rwlock, &impl_rwlock_presized,
	&impl_chtmap_u64, &impl_chtmap_u64_presized, &impl_chtmap_u64_chained,
	&impl_chtmap_u64_chained_presized, &impl_chtmap,
	&impl_ideal,
	NULL,
};

/* Bracketed by the linker (weak: no impl registered, no section). */
extern const bench_impl_t *const __start_bench_impls[] __attribute__((weak));
extern const bench_impl_t *const __stop_bench_impls[] __attribute__((weak));

const bench_impl_t *const *bench_registered(size_t *n)
{
	*n = __start_bench_impls ?
	    (size_t) (__stop_bench_impls - __start_bench_impls) : 0;
	return __start_bench_impls;
}

static const bench_impl_t *impl_list[64];
const bench_impl_t *const *const bench_impls_all = impl_list;

/** impl_list: the built-in impls, then the registered ones. */
static void collect_impls(void)
{
	size_t k = 0, nreg;
	for (int i = 0; builtin_impls[i]; i++)
		impl_list[k++] = builtin_impls[i];
	const bench_impl_t *const *reg = bench_registered(&nreg);
	for (size_t i = 0; i < nreg && k < 63; i++)
		impl_list[k++] = reg[i];
	impl_list[k] = NULL;
}

enum { OP_LOOKUP, OP_INSERT, OP_REMOVE, OP_UPDATE, OP_INSERT_REMOVE };

typedef struct {
	uint64_t key;
	uint32_t op;
	uint32_t pad;
} op_t;

#define STREAM_LEN ((size_t) 1 << 20)

static const bench_impl_t *impl;

void bench_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static void out(const char *kind, const char *wl, size_t keys, int threads,
    const char *metric, double v)
{
	printf("%s,%s,%s,%zu,%d,%s,%.6g\n", kind, impl->name, wl, keys, threads,
	    metric, v);
	fflush(stdout);
}

/* --- workloads -------------------------------------------------------------------- */

typedef enum {
	WL_HIT, WL_MISS, WL_HS, WL_YCSB_A, WL_YCSB_B, WL_YCSB_C,
} wl_kind_t;

typedef struct {
	const char *name;
	wl_kind_t kind;
	bool zipf;
} workload_t;

static const workload_t lookups_wl[] = {
	{ "lookup-hit", WL_HIT, false },
	{ "lookup-miss", WL_MISS, false },
};

static const workload_t mix_wl[] = {
	{ "ycsb-c-uniform", WL_YCSB_C, false },
	{ "ycsb-c-zipf", WL_YCSB_C, true },
	{ "ycsb-b-uniform", WL_YCSB_B, false },
	{ "ycsb-b-zipf", WL_YCSB_B, true },
	{ "ycsb-a-uniform", WL_YCSB_A, false },
	{ "ycsb-a-zipf", WL_YCSB_A, true },
	/* Last: the only one that changes the key set. */
	{ "hs-90-9-1", WL_HS, false },
};

static void gen_stream(op_t *s, size_t len, const workload_t *w, size_t n,
    const zipf_t *z, uint64_t seed)
{
	uint64_t st = seed * 0x9e3779b97f4a7c15ull + 1;
	for (size_t i = 0; i < len; i++) {
		uint64_t r = rnd(&st);
		unsigned pct = (unsigned) ((r >> 40) % 100);
		size_t idx = w->zipf ? zipf_next(z, &st) : (size_t) (r % n);
		op_t *o = &s[i];
		o->pad = 0;
		switch (w->kind) {
		case WL_HIT:
			o->op = OP_LOOKUP;
			o->key = key_present(idx);
			break;
		case WL_MISS:
			o->op = OP_LOOKUP;
			o->key = key_absent(idx);
			break;
		case WL_HS:
			/* Herlihy-Shavit: 90% lookups, 9% inserts, 1% removes on
			 * a key range twice the initial size. */
			idx = (size_t) (r % (2 * n));
			o->op = pct < 90 ? OP_LOOKUP : pct < 99 ? OP_INSERT : OP_REMOVE;
			o->key = key_present(idx);
			break;
		case WL_YCSB_A:
		case WL_YCSB_B:
		case WL_YCSB_C: {
			unsigned reads = w->kind == WL_YCSB_A ? 50 :
			    w->kind == WL_YCSB_B ? 95 : 100;
			o->op = pct < reads ? OP_LOOKUP : OP_UPDATE;
			o->key = key_present(idx);
			break;
		}
		}
	}
}

/* --- running a point ----------------------------------------------------------------- */

typedef struct {
	void *t;
	const op_t *s;
	size_t len;
	uint64_t ops, hits, done_updates;
	uint64_t sum;
	double secs;
	pthread_barrier_t *bar;
	const int *stop;
} worker_t;

static inline uint64_t exec_op(void *t, const op_t *o, uint64_t *hits,
    uint64_t *upd)
{
	uint64_t v = 0;
	switch (o->op) {
	case OP_LOOKUP:
		*hits += (uint64_t) impl->lookup(t, o->key, &v);
		break;
	case OP_INSERT:
		impl->insert(t, o->key, o->key ^ 0x5555);
		break;
	case OP_REMOVE:
		impl->remove(t, o->key);
		break;
	case OP_UPDATE:
		*upd += (uint64_t) impl->update(t, o->key, o->key ^ 0xaaaa);
		break;
	case OP_INSERT_REMOVE: {
		/* chtbench's update: a pair on a key only this thread uses. */
		int ins = impl->insert(t, o->key, o->key ^ 0x5555);
		*upd += (uint64_t) (ins && impl->remove(t, o->key));
		break;
	}
	}
	return v;
}

static void *worker_main(void *p)
{
	worker_t *w = p;
	impl->thread_init();
	size_t i = 0, mask = w->len - 1;
	uint64_t hits = 0, upd = 0, sum = 0;
	/* Warm-up pass over a slice of the stream. */
	for (int k = 0; k < 4096; k++, i = (i + 1) & mask)
		sum += exec_op(w->t, &w->s[i], &hits, &upd);
	if (impl->quiescent)
		impl->quiescent();
	hits = upd = 0;
	bench_thread_go(impl, w->bar);
	double t0 = now_s();
	uint64_t ops = 0;
	while (!__atomic_load_n(w->stop, __ATOMIC_RELAXED)) {
		for (int k = 0; k < 64; k++, i = (i + 1) & mask)
			sum += exec_op(w->t, &w->s[i], &hits, &upd);
		ops += 64;
		if (impl->quiescent)
			impl->quiescent();
	}
	w->secs = now_s() - t0;
	w->ops = ops;
	w->hits = hits;
	w->done_updates = upd;
	w->sum = sum;
	impl->thread_fini();
	return NULL;
}

typedef struct {
	double mops;
	uint64_t ops, lookups_missed, lookups, updates_missed;
} point_t;

/** The main thread waits without holding up grace periods (QSBR). */
static void main_offline(void)
{
	if (impl->offline)
		impl->offline();
}

static void main_online(void)
{
	if (impl->online)
		impl->online();
}

static point_t run_point(void *t, op_t **streams, int threads, double secs,
    int *stop_extra)
{
	pthread_t tid[64];
	worker_t w[64];
	pthread_barrier_t bar;
	int stop = 0;
	pthread_barrier_init(&bar, NULL, (unsigned) threads + 1);
	for (int i = 0; i < threads; i++) {
		w[i] = (worker_t) { .t = t, .s = streams[i], .len = STREAM_LEN,
		    .bar = &bar, .stop = &stop };
		pthread_create(&tid[i], NULL, worker_main, &w[i]);
	}
	main_offline();
	pthread_barrier_wait(&bar);
	bench_sleep_us((long) (secs * 1e6));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	if (stop_extra)
		__atomic_store_n(stop_extra, 1, __ATOMIC_RELAXED);
	point_t p = { 0 };
	for (int i = 0; i < threads; i++) {
		pthread_join(tid[i], NULL);
		p.mops += (double) w[i].ops / w[i].secs / 1e6;
		p.ops += w[i].ops;
	}
	main_online();
	pthread_barrier_destroy(&bar);
	/* Expected outcomes, from the stream: count the lookups and updates. */
	for (int i = 0; i < threads; i++) {
		uint64_t lk = 0, up = 0;
		size_t n = (size_t) w[i].ops + 4096;
		for (size_t k = 0; k < n; k++) {
			const op_t *o = &streams[i][k & (STREAM_LEN - 1)];
			lk += o->op == OP_LOOKUP;
			up += o->op == OP_UPDATE;
		}
		/* The warm-up pass is not counted in hits: remove its share. */
		uint64_t lk_warm = 0, up_warm = 0;
		for (size_t k = 0; k < 4096; k++) {
			lk_warm += streams[i][k].op == OP_LOOKUP;
			up_warm += streams[i][k].op == OP_UPDATE;
		}
		p.lookups += lk - lk_warm;
		p.lookups_missed += (lk - lk_warm) - w[i].hits;
		p.updates_missed += (up - up_warm) - w[i].done_updates;
	}
	return p;
}

/*
 * Progress watchdog. A table that loses its resizes (the Debian liburcu
 * 0.13.2 cds_lfht can lose one, then its chains grow without bound and
 * inserts go quadratic) slows down for good, and a broken one stops: both
 * must end the run instead of hanging it. A fixed time limit cannot tell
 * them from a big table (the old 20 s limit stopped cds_lfht and libcuckoo
 * prefills of 2^24 keys that were still going at full speed), so the
 * watchdog looks at progress: the phase's operations count into
 * bench_progress (bench_progress_add()); a thread samples it once a second
 * and declares the phase stalled when nothing completed for
 * BENCH_STALL_IDLE seconds, or when the last BENCH_STALL_WINDOW seconds ran
 * at less than 1/BENCH_STALL_SLOWDOWN of the phase's best rate or below
 * BENCH_STALL_FLOOR operations (a healthy table at 1e8 keys slows by cache
 * misses, a factor of a few; a lost resize by orders of magnitude, and a
 * table that lost its resizes early never ran fast).
 *
 * The best rate is the best of the phase's windows and of its single
 * seconds. Windows alone missed the decay of a table that loses its
 * resizes at its first grow: cds_lfht memb's crossing fill at 1e8 keys ran
 * 594,000 inserts in its first second, 86,000/s at 10 s and 6,000/s at
 * 860 s, so its first window (about 100,000/s) was its best and no later
 * one fell below 1/50 of it; it was stopped by hand. From its first second
 * it is stopped at 433 s. In the 1e8 runs of the healthy tables no
 * 10-second rate of a phase fell below 1/6 of its first second's. big.c's
 * monitor adds a phase's progress once a second, out of step with this
 * thread's seconds, so one of these seconds can hold two of its seconds:
 * a single second overstates the best by up to 2x, which leaves a healthy
 * table a margin of about 4 (50 / 2 / 6).
 *
 * Per second of the CPU the process received, not of the wall clock: on a
 * shared host a process at nice 19 beside a CPU-bound one at nice -15 runs
 * about 1/2000 of the time, and the check of `make test`'s small tables
 * (ckht, 146,000 of 150,000 keys done) made 1,759 operations per wall
 * second over 30 s and was declared stalled. So the rates are operations
 * over the CPU time of the process's threads in the window (the sum of
 * /proc/self/task/{*}/schedstat's run time), judged only once the window
 * holds BENCH_STALL_MIN_CPU seconds of it; a lost resize burns CPU without
 * progress and is still caught, a process that waits for a CPU is not. A
 * second without progress counts towards BENCH_STALL_IDLE unless the
 * process waited longer for a CPU than it ran in it (a thread blocked for
 * good neither runs nor waits: a deadlock is still caught).
 */
uint64_t bench_progress;
static const char *wd_kind, *wd_what;
static size_t wd_keys;
static int wd_threads, wd_active;
static pthread_mutex_t wd_lock = PTHREAD_MUTEX_INITIALIZER;
static double wd_t0;
/**
 * Set by mode_misses() before anything runs: no watchdog thread at all
 * (valgrind runs the table about 50x slower, and a thread waking each
 * second would add its own events to the counted windows).
 */
static bool wd_off;

static void stalled(const char *kind, const char *what, size_t keys,
    int threads, double secs, const char *why)
{
	printf("%s,%s,%s,%zu,%d,stalled,%.1f\n", kind, impl->name, what, keys,
	    threads, secs);
	fflush(stdout);
	fprintf(stderr, "%s: %s stalled after %.1f s: %s\n", impl->name, what,
	    secs, why);
	_exit(3);
}

/**
 * The CPU time the process's threads ran and waited runnable for a CPU
 * (seconds, summed over /proc/self/task/{*}/schedstat); both 0 when the
 * kernel does not say (then every second counts, as on the wall clock).
 */
static void proc_sched(double *run, double *wait)
{
	*run = *wait = 0;
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[64];
		snprintf(path, sizeof(path), "/proc/self/task/%.20s/schedstat",
		    e->d_name);
		FILE *f = fopen(path, "r");
		unsigned long long r = 0, w = 0;
		if (f && fscanf(f, "%llu %llu", &r, &w) == 2) {
			*run += (double) r * 1e-9;
			*wait += (double) w * 1e-9;
		}
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
}

void bench_stall_reset(bench_stall_t *s, uint64_t progress)
{
	memset(s, 0, sizeof(*s));
	s->last = progress;
	s->window = BENCH_STALL_WINDOW;
	const char *w = getenv(BENCH_STALL_WINDOW_ENV);
	if (w) {
		char *end;
		long v = strtol(w, &end, 10);
		if (*w && !*end && v >= 2 && v <= BENCH_STALL_WINDOW)
			s->window = (int) v;
	}
	for (int i = 0; i <= BENCH_STALL_WINDOW; i++)
		s->hist[i] = progress;
}

bool bench_stall_tick(bench_stall_t *s, uint64_t p, double run, double wait,
    char *why, size_t len)
{
	run = run > 0 ? run : 0;  /* a thread that exited took its figures */
	wait = wait > 0 ? wait : 0;
	s->tick++;
	/* Waited for a CPU longer than it ran: the host's second, not ours. */
	bool starved = wait > run;
	if (p != s->last)
		s->idle = 0;
	else if (!starved)
		s->idle++;
	/* This second's rate, if the process ran enough of it to tell. */
	if (run >= BENCH_STALL_SECOND_CPU) {
		double second = (double) (p - s->last) / run;
		if (second > s->best)
			s->best = second;
	}
	/*
	 * Rates count the CPU of the seconds that made progress: a second
	 * without any is a pause (a stop-the-world rehash burns the CPU and
	 * completes nothing for tens of seconds), which the idle rule judges.
	 */
	bool active = p != s->last;
	s->last = p;
	if (active) {
		s->cpu += run;
		s->active_n++;
	}
	int slot = (int) (s->tick % (s->window + 1));
	uint64_t old = s->hist[slot];
	double old_cpu = s->hist_cpu[slot];
	int old_active = s->hist_active[slot];
	s->hist[slot] = p;
	s->hist_cpu[slot] = s->cpu;
	s->hist_active[slot] = s->active_n;
	if (s->idle >= BENCH_STALL_IDLE) {
		snprintf(why, len, "no operation completed for %d s in which the "
		    "process did not wait for a CPU", BENCH_STALL_IDLE);
		return true;
	}
	double cpu = s->cpu - old_cpu;
	/* ... and only a window that made progress in at least half of its
	 * seconds (a table that lost its resizes still completes operations
	 * every second; one whose window holds a pause and the second it
	 * began in does not, and that second alone says nothing). */
	if (s->tick <= s->window || cpu < BENCH_STALL_MIN_CPU ||
	    2 * (s->active_n - old_active) < s->window)
		return false;
	double rate = (double) (p - old) / cpu;
	if (rate > s->best)
		s->best = rate;
	if (rate * BENCH_STALL_SLOWDOWN < s->best) {
		snprintf(why, len, "%.0f ops per CPU second over the last %d s "
		    "(%.1f CPU s), below 1/%d of the phase's best %.0f (resizes "
		    "lost?)", rate, s->window, cpu, BENCH_STALL_SLOWDOWN,
		    s->best);
		return true;
	}
	if (rate < BENCH_STALL_FLOOR) {
		snprintf(why, len, "%.0f ops per CPU second over the last %d s "
		    "(%.1f CPU s), below %d (resizes lost?)", rate,
		    s->window, cpu, BENCH_STALL_FLOOR);
		return true;
	}
	return false;
}

static void *watchdog_main(void *arg)
{
	(void) arg;
	static bench_stall_t st;
	int gen = -1;
	double run0 = 0, wait0 = 0;
	for (;;) {
		bench_sleep_us(1000000);
		double run, wait;
		proc_sched(&run, &wait);
		pthread_mutex_lock(&wd_lock);
		uint64_t p = __atomic_load_n(&bench_progress, __ATOMIC_RELAXED);
		double dr = run - run0, dw = wait - wait0;
		run0 = run;
		wait0 = wait;
		if (wd_active != gen) {
			/* A new phase (or none): start over. */
			gen = wd_active;
			bench_stall_reset(&st, p);
			pthread_mutex_unlock(&wd_lock);
			continue;
		}
		if (gen <= 0 || (gen & 1) == 0) {
			pthread_mutex_unlock(&wd_lock);
			continue;
		}
		char why[200];
		if (bench_stall_tick(&st, p, dr, dw, why, sizeof(why)))
			stalled(wd_kind, wd_what, wd_keys, wd_threads,
			    now_s() - wd_t0, why);
		pthread_mutex_unlock(&wd_lock);
	}
	return NULL;
}

/**
 * `bench_us stallcheck`: the watchdog's verdict on a made-up phase, for
 * tests/test_bench_big.py: one line per second on stdin, "PROGRESS RUN
 * WAIT" (operations completed so far; CPU seconds the process ran and
 * waited for a CPU in that second); prints "stalled TICK: why" at the first
 * second the watchdog would stop the phase, else "ok TICKS". Exit 0.
 */
static int mode_stallcheck(void)
{
	static bench_stall_t st;
	unsigned long long p;
	double run, wait;
	char why[200];
	bench_stall_reset(&st, 0);
	while (scanf("%llu %lf %lf", &p, &run, &wait) == 3)
		if (bench_stall_tick(&st, p, run, wait, why, sizeof(why))) {
			printf("stalled %ld: %s\n", st.tick, why);
			return 0;
		}
	printf("ok %ld\n", st.tick);
	return 0;
}

void bench_progress_begin(const char *kind, const char *what, size_t keys,
    int threads)
{
	static pthread_t wd;
	static bool started;
	pthread_mutex_lock(&wd_lock);
	if (!started && !wd_off) {
		started = true;
		pthread_create(&wd, NULL, watchdog_main, NULL);
		pthread_detach(wd);
	}
	wd_kind = kind;
	wd_what = what;
	wd_keys = keys;
	wd_threads = threads;
	wd_t0 = now_s();
	/* Odd: a phase runs; every begin/end a new generation. */
	wd_active = (wd_active | 1) + 2;
	pthread_mutex_unlock(&wd_lock);
}

void bench_progress_end(void)
{
	pthread_mutex_lock(&wd_lock);
	wd_active = (wd_active | 1) + 1;
	pthread_mutex_unlock(&wd_lock);
}

static void prefill(void *t, size_t n)
{
	bench_progress_begin("suite", "prefill", n, 1);
	for (size_t i = 0; i < n; i++) {
		if (!impl->insert(t, key_present(i), key_present(i) ^ 0x5555)) {
			fprintf(stderr, "%s: prefill insert %zu failed\n", impl->name, i);
			exit(1);
		}
		if ((i & 255) == 255)
			bench_progress_add(256);
		if (impl->quiescent && (i & 63) == 0)
			impl->quiescent();
	}
	bench_progress_end();
}

static void teardown(void *t, size_t universe_keys)
{
	for (size_t i = 0; i < universe_keys; i++) {
		impl->remove(t, key_present(i));
		if (impl->quiescent && (i & 63) == 0)
			impl->quiescent();
	}
	impl->destroy(t);
}

static op_t *streams_buf[64];

static op_t **make_streams(const workload_t *w, size_t n, int threads)
{
	static zipf_t z;
	static size_t zn;
	if (w->zipf && zn != n) {
		zipf_init(&z, n, 0.99);
		zn = n;
	}
	for (int i = 0; i < threads; i++) {
		if (!streams_buf[i])
			streams_buf[i] = malloc(STREAM_LEN * sizeof(op_t));
		gen_stream(streams_buf[i], STREAM_LEN, w, n, &z,
		    (uint64_t) (i + 1) * 1000003u + (uint64_t) w->kind * 7919u +
		    (w->zipf ? 17 : 0));
	}
	return streams_buf;
}

static int parse_list(const char *s, size_t *v, int max)
{
	int n = 0;
	while (s && *s && n < max) {
		v[n++] = strtoull(s, NULL, 0);
		s = strchr(s, ',');
		if (s)
			s++;
	}
	return n;
}

static void run_workloads(void *t, size_t n, const workload_t *wl, int nwl,
    const size_t *threads, int nthreads, double secs)
{
	for (int k = 0; k < nwl; k++) {
		int maxt = 1;
		for (int j = 0; j < nthreads; j++)
			if ((int) threads[j] > maxt)
				maxt = (int) threads[j];
		op_t **s = make_streams(&wl[k], n, maxt);
		for (int j = 0; j < nthreads; j++) {
			int th = (int) threads[j];
			point_t p = run_point(t, s, th, secs, NULL);
			out("suite", wl[k].name, n, th, "mops", p.mops);
			uint64_t errors = wl[k].kind == WL_HS ? 0 :
			    wl[k].kind == WL_MISS ? p.lookups - p.lookups_missed :
			    p.lookups_missed + p.updates_missed;
			out("suite", wl[k].name, n, th, "errors", (double) errors);
		}
	}
}

static void mode_suite(double secs, const size_t *sizes, int nsizes,
    const size_t *threads, int nthreads, size_t mixkeys)
{
	impl->thread_init();
	for (int i = 0; i < nsizes; i++) {
		size_t n = sizes[i];
		double t0 = now_s();
		void *t = impl->create(n, 0);
		prefill(t, n);
		impl->settle(t);
		out("suite", "prefill", n, 1, "seconds", now_s() - t0);
		out("suite", "prefill", n, 1, "buckets", (double) impl->buckets(t));
		run_workloads(t, n, lookups_wl, 2, threads, nthreads, secs);
		bool mixes = n == mixkeys;
		if (mixes)
			run_workloads(t, n, mix_wl, (int) (sizeof(mix_wl) /
			    sizeof(mix_wl[0])), threads, nthreads, secs);
		teardown(t, mixes ? 2 * n : n);
	}
	impl->thread_fini();
}

/* --- Triplett: lookups during continuous resizing ----------------------------------- */

typedef struct {
	void *t;
	const int *stop;
	uint64_t resizes;
} resizer_t;

static void *resizer_main(void *p)
{
	resizer_t *r = p;
	impl->thread_init();
	while (!__atomic_load_n(r->stop, __ATOMIC_RELAXED)) {
		impl->resize(r->t, 1 << 14);
		impl->resize(r->t, 1 << 13);
		r->resizes += 2;
	}
	impl->thread_fini();
	return NULL;
}

static void mode_resize(double secs, const size_t *threads, int nthreads)
{
	const size_t n = 1 << 16;
	const workload_t hit = { "lookup-hit", WL_HIT, false };
	if (!impl->resize) {
		fprintf(stderr, "%s cannot be resized on demand\n", impl->name);
		exit(2);
	}
	impl->thread_init();
	void *t = impl->create(n, 1 << 13);
	prefill(t, n);
	int maxt = 1;
	for (int j = 0; j < nthreads; j++)
		if ((int) threads[j] > maxt)
			maxt = (int) threads[j];
	op_t **s = make_streams(&hit, n, maxt);
	for (int j = 0; j < nthreads; j++) {
		int th = (int) threads[j];
		static const size_t fixed[] = { 1 << 13, 1 << 14 };
		for (int f = 0; f < 2; f++) {
			impl->resize(t, fixed[f]);
			impl->settle(t);
			point_t p = run_point(t, s, th, secs, NULL);
			const char *wl = f == 0 ? "fixed-8192" : "fixed-16384";
			out("resize", wl, n, th, "mops", p.mops);
			out("resize", wl, n, th, "errors", (double) p.lookups_missed);
		}
		int rstop = 0;
		resizer_t r = { .t = t, .stop = &rstop };
		pthread_t rt;
		pthread_create(&rt, NULL, resizer_main, &r);
		point_t p = run_point(t, s, th, secs, &rstop);
		main_offline();
		pthread_join(rt, NULL);
		main_online();
		out("resize", "resizing", n, th, "mops", p.mops);
		out("resize", "resizing", n, th, "errors", (double) p.lookups_missed);
		out("resize", "resizing", n, th, "resizes_per_s",
		    (double) r.resizes / secs);
	}
	teardown(t, n);
	impl->thread_fini();
}

/* --- grow from 1 bucket, then delete to 1% ---------------------------------------------- */

static double tsc_per_ns;

double bench_tsc_per_ns(long us)
{
	double t0 = now_s();
	uint64_t c0 = __builtin_ia32_rdtsc();
	bench_sleep_us(us);
	uint64_t c1 = __builtin_ia32_rdtsc();
	double t1 = now_s();
	return (double) (c1 - c0) / ((t1 - t0) * 1e9);
}

static void calibrate_tsc(void)
{
	tsc_per_ns = bench_tsc_per_ns(50000);
}

/* bench_line_alloc(): see bench.h. */
#define LINE_SLAB ((size_t) 2 << 20)

typedef struct line_free {
	struct line_free *next;
} line_free_t;

static __thread line_free_t *line_own;
static __thread char *line_bump, *line_end;
/*
 * Freed lines, taken whole. Written under line_lock (relaxed atomic stores:
 * bench_line_alloc() peeks at it without the lock, a hint only; the lock
 * orders the list's contents).
 */
static line_free_t *line_shared;
static pthread_mutex_t line_lock = PTHREAD_MUTEX_INITIALIZER;

void *bench_line_alloc(void)
{
	line_free_t *f = line_own;
	if (f) {
		line_own = f->next;
		return f;
	}
	if (__atomic_load_n(&line_shared, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&line_lock);
		f = line_shared;
		__atomic_store_n(&line_shared, NULL, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&line_lock);
		if (f) {
			line_own = f->next;
			return f;
		}
	}
	if (line_bump == line_end) {
		line_bump = aligned_alloc(LINE_SLAB, LINE_SLAB);
		if (!line_bump)
			abort();
		line_end = line_bump + LINE_SLAB;
	}
	void *p = line_bump;
	line_bump += 64;
	return p;
}

void bench_line_free(void *p)
{
	line_free_t *f = p;
	pthread_mutex_lock(&line_lock);
	f->next = line_shared;
	__atomic_store_n(&line_shared, f, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&line_lock);
}

size_t bench_heap_bytes(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd + bench_mapped_bytes();
}

size_t bench_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size = 0, res = 0;
	if (f) {
		if (fscanf(f, "%lu %lu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return (size_t) res * (size_t) sysconf(_SC_PAGESIZE);
}

void bench_thread_go(const bench_impl_t *impl, pthread_barrier_t *bar)
{
	if (impl->offline)
		impl->offline();
	pthread_barrier_wait(bar);
	if (impl->online)
		impl->online();
}

static int count_tasks(void)
{
	DIR *d = opendir("/proc/self/task");
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

typedef struct {
	void *t;
	size_t n;
	int id, threads;
	bool del;
	uint32_t *lat;
	size_t nlat;
	double secs;
	pthread_barrier_t *bar;
} gs_worker_t;

static int gs_done;

static void *gs_main(void *p)
{
	gs_worker_t *w = p;
	impl->thread_init();
	bench_thread_go(impl, w->bar);
	double t0 = now_s();
	size_t k = 0;
	for (size_t i = (size_t) w->id; i < w->n; i += (size_t) w->threads) {
		if (w->del && i % 100 == 0)
			continue;  /* keep 1% */
		bench_progress_add(1);
		uint64_t key = key_present(i);
		uint64_t c0 = __builtin_ia32_rdtsc();
		int ok = w->del ? impl->remove(w->t, key) :
		    impl->insert(w->t, key, key ^ 0x5555);
		uint64_t c1 = __builtin_ia32_rdtsc();
		if (!ok) {
			fprintf(stderr, "%s: %s of key %zu failed\n", impl->name,
			    w->del ? "remove" : "insert", i);
			exit(1);
		}
		uint64_t d = c1 - c0;
		w->lat[k++] = d > UINT32_MAX ? UINT32_MAX : (uint32_t) d;
		if (impl->quiescent && (k & 63) == 0)
			impl->quiescent();
	}
	w->nlat = k;
	w->secs = now_s() - t0;
	impl->thread_fini();
	__atomic_fetch_add(&gs_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
	return x < y ? -1 : x > y;
}

static void gs_phase(void *t, size_t n, int threads, bool del, uint32_t *lat,
    size_t *peak, const char *name)
{
	pthread_t tid[64];
	gs_worker_t w[64];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned) threads + 1);
	__atomic_store_n(&gs_done, 0, __ATOMIC_RELAXED);
	size_t per = n / (size_t) threads + 1;
	for (int i = 0; i < threads; i++) {
		w[i] = (gs_worker_t) { .t = t, .n = n, .id = i, .threads = threads,
		    .del = del, .lat = lat + (size_t) i * per, .bar = &bar };
		pthread_create(&tid[i], NULL, gs_main, &w[i]);
	}
	main_offline();
	bench_progress_begin("growshrink", name, n, threads);
	pthread_barrier_wait(&bar);
	double t0 = now_s();
	/* Sample the heap while the phase runs (peak includes resizes). */
	while (__atomic_load_n(&gs_done, __ATOMIC_ACQUIRE) < threads) {
		size_t h = bench_heap_bytes();
		if (h > *peak)
			*peak = h;
		bench_sleep_us(1000);
	}
	bench_progress_end();
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	double secs = now_s() - t0;
	main_online();
	pthread_barrier_destroy(&bar);
	size_t total = 0;
	for (int i = 0; i < threads; i++) {
		memmove(lat + total, w[i].lat, w[i].nlat * sizeof(uint32_t));
		total += w[i].nlat;
	}
	qsort(lat, total, sizeof(uint32_t), cmp_u32);
	char m[64];
	out("growshrink", name, n, threads, "mops", (double) total / secs / 1e6);
	static const struct { const char *nm; double q; } pq[] = {
		{ "p50", 0.50 }, { "p99", 0.99 }, { "p999", 0.999 },
	};
	for (int i = 0; i < 3; i++) {
		size_t idx = (size_t) (pq[i].q * (double) (total - 1));
		snprintf(m, sizeof(m), "%s_ns", pq[i].nm);
		out("growshrink", name, n, threads, m, (double) lat[idx] / tsc_per_ns);
	}
	out("growshrink", name, n, threads, "max_us",
	    (double) lat[total - 1] / tsc_per_ns / 1000);
}

static void mode_growshrink(const size_t *threads_list, size_t n)
{
	int threads = (int) threads_list[0];
	calibrate_tsc();
	uint32_t *lat = malloc((n + 64 * (size_t) threads) * sizeof(uint32_t));
	memset(lat, 0, (n + 64 * (size_t) threads) * sizeof(uint32_t));
	impl->thread_init();
	malloc_trim(0);
	size_t base = bench_heap_bytes(), rss0 = bench_rss_bytes();
	void *t = impl->create(n, 1);
	size_t peak = bench_heap_bytes();
	gs_phase(t, n, threads, false, lat, &peak, "grow");
	size_t full = bench_heap_bytes();
	if (full > peak)
		peak = full;
	out("growshrink", "grow", n, threads, "buckets", (double) impl->buckets(t));
	gs_phase(t, n, threads, true, lat, &peak, "shrink");
	main_offline();
	impl->settle(t);
	/* A second settle: callbacks may have posted more (e.g. dummies). */
	impl->settle(t);
	main_online();
	size_t fin = bench_heap_bytes();
	size_t rss1 = bench_rss_bytes();
	out("growshrink", "shrink", n, threads, "buckets", (double) impl->buckets(t));
	out("growshrink", "memory", n, threads, "peak_mb",
	    (double) (peak - base) / 1048576.0);
	out("growshrink", "memory", n, threads, "final_mb",
	    (double) (fin > base ? fin - base : 0) / 1048576.0);
	out("growshrink", "memory", n, threads, "full_bytes_per_key",
	    (double) (full - base) / (double) n);
	out("growshrink", "memory", n, threads, "rss_growth_mb",
	    (double) (rss1 > rss0 ? rss1 - rss0 : 0) / 1048576.0);
	/* Only the main thread of the harness is left: the rest are helpers. */
	out("growshrink", "memory", n, threads, "helper_threads",
	    (double) (count_tasks() - 1));
	for (size_t i = 0; i < n; i += 100)
		impl->remove(t, key_present(i));
	impl->destroy(t);
	impl->thread_fini();
	free(lat);
}

/* --- instruction counts (under callgrind) --------------------------------------------- */

static void icount_phase(void *t, const char *name, const op_t *s, size_t m)
{
	uint64_t hits = 0, upd = 0, sum = 0;
	CALLGRIND_ZERO_STATS;
	CALLGRIND_TOGGLE_COLLECT;
	for (size_t i = 0; i < m; i++) {
		sum += exec_op(t, &s[i], &hits, &upd);
		if (impl->quiescent && (i & 63) == 63)
			impl->quiescent();
	}
	/* Reclamation and resizes caused by the phase belong to it. */
	main_offline();
	impl->settle(t);
	main_online();
	CALLGRIND_TOGGLE_COLLECT;
	CALLGRIND_DUMP_STATS_AT(name);
	out("icount", name, 0, 1, "ops", (double) m);
	out("icount", name, 0, 1, "hits", (double) hits);
	(void) sum;
}

static void mode_icount(size_t n, size_t m)
{
	impl->thread_init();
	/* Resizing off: presized impls, or a capacity the phases never fill. */
	void *t = impl->create(n, impl->presized ? 0 : 4 * n);
	prefill(t, n);
	impl->settle(t);
	op_t *s = malloc(m * sizeof(op_t));
	static const workload_t hit = { "lookup-hit", WL_HIT, false };
	static const workload_t miss = { "lookup-miss", WL_MISS, false };
	static const workload_t hs = { "hs-90-9-1", WL_HS, false };
	static const workload_t ya = { "ycsb-a-zipf", WL_YCSB_A, true };
	static zipf_t z;
	zipf_init(&z, n, 0.99);
	gen_stream(s, m, &hit, n, &z, 11);
	icount_phase(t, "lookup-hit", s, m);
	gen_stream(s, m, &miss, n, &z, 12);
	icount_phase(t, "lookup-miss", s, m);
	for (size_t i = 0; i < m; i++)
		s[i] = (op_t) { .key = key_absent(i), .op = OP_INSERT };
	icount_phase(t, "insert", s, m);
	for (size_t i = 0; i < m; i++)
		s[i].op = OP_REMOVE;
	icount_phase(t, "remove", s, m);
	gen_stream(s, m, &ya, n, &z, 13);
	icount_phase(t, "ycsb-a-zipf", s, m);
	gen_stream(s, m, &hs, n, &z, 14);
	icount_phase(t, "hs-90-9-1", s, m);
	free(s);
	teardown(t, 2 * n);
	impl->thread_fini();
}

/* --- cache misses (under callgrind's cache simulator) ------------------------------ */

/*
 * Like mode_icount(), but the table is built the way its users build it
 * (auto impls grow from their default size during the prefill), and the
 * removes come before the inserts, so the key count never exceeds KEYS and
 * no resize lands in a measured phase of a table that was presized or has
 * just grown to fit. Every phase's lookups are independent random keys
 * (gen_stream(), fixed seeds), so every table sees the same stream.
 * Simulation runs all the time (--cache-sim=yes), collection only inside a
 * phase: the prefill warms the simulated caches as it would the real ones.
 */
static void mode_misses(size_t n, size_t m)
{
	impl->thread_init();
	wd_off = true;
	void *t = impl->create(n, 0);
	prefill(t, n);
	impl->settle(t);
	op_t *s = malloc(m * sizeof(op_t));
	static const workload_t hit = { "lookup-hit", WL_HIT, false };
	static const workload_t miss = { "lookup-miss", WL_MISS, false };
	gen_stream(s, m, &hit, n, NULL, 21);
	icount_phase(t, "lookup-hit", s, m);
	gen_stream(s, m, &miss, n, NULL, 22);
	icount_phase(t, "lookup-miss", s, m);
	/* m distinct present keys, spread over the table. */
	size_t stride = n / m ? n / m : 1;
	for (size_t i = 0; i < m; i++)
		s[i] = (op_t) { .key = key_present((i * stride) % n),
		    .op = OP_REMOVE };
	icount_phase(t, "remove", s, m);
	for (size_t i = 0; i < m; i++)
		s[i] = (op_t) { .key = key_absent(i), .op = OP_INSERT };
	icount_phase(t, "insert", s, m);
	/* Exact (out() prints 6 significant digits). */
	printf("icount,%s,buckets,%zu,1,buckets,%ld\n", impl->name, n,
	    impl->buckets(t));
	free(s);
	for (size_t i = 0; i < m; i++)
		impl->remove(t, key_absent(i));
	teardown(t, n);
	impl->thread_fini();
}

/* --- cache lines shared per operation (under the sharing plugin) ------------------ */

/*
 * The window (docs/SHARING.md, "User space"): the main thread opens it once
 * every worker has set up, warmed up and passed the barrier, then raises
 * sh_go; the last worker to finish its operations closes it and raises
 * sh_closed, for which the others wait spinning, so that thread exits, joins
 * and the teardown stay out. Each flag has a line of its own (each costs one
 * transfer per thread in the count).
 */
static int sh_go __attribute__((aligned(64)));
static unsigned sh_done __attribute__((aligned(64)));
static int sh_closed __attribute__((aligned(64)));
static unsigned sh_threads;

typedef struct {
	void *t;
	const op_t *s;
	size_t len;
	uint64_t hits, pairs, sum;
	pthread_barrier_t *bar;
} sh_worker_t;

static void *sh_main(void *p)
{
	sh_worker_t *w = p;
	uint64_t hits = 0, pairs = 0, sum = 0;
	impl->thread_init();
	/* Warm-up outside the window: the same kinds of operation. */
	for (size_t i = 0; i < w->len && i < 1024; i++)
		sum += exec_op(w->t, &w->s[i], &hits, &pairs);
	if (impl->quiescent)
		impl->quiescent();
	hits = pairs = 0;
	bench_thread_go(impl, w->bar);
	/*
	 * Acquire (pairs with the main thread's release after the open): none
	 * of this thread's operations is performed before it sees sh_go.
	 */
	while (!__atomic_load_n(&sh_go, __ATOMIC_ACQUIRE))
		__builtin_ia32_pause();
	for (size_t i = 0; i < w->len; i++) {
		sum += exec_op(w->t, &w->s[i], &hits, &pairs);
		if (impl->quiescent && (i & 63) == 63)
			impl->quiescent();
	}
	/*
	 * ACQ_REL: the release keeps this thread's operations before its
	 * increment, the acquire keeps the last thread's close after every
	 * other thread's increment, so no operation falls after the close.
	 */
	if (__atomic_add_fetch(&sh_done, 1, __ATOMIC_ACQ_REL) == sh_threads) {
		sharing_window_close();
		/* Release: pairs with the waiters' acquire. */
		__atomic_store_n(&sh_closed, 1, __ATOMIC_RELEASE);
	} else {
		/* Offline: a QSBR grace period must not wait for the spin.
		 * Acquire (pairs with the release after the close): the exit
		 * path's accesses are not performed before the close. */
		if (impl->offline)
			impl->offline();
		while (!__atomic_load_n(&sh_closed, __ATOMIC_ACQUIRE))
			__builtin_ia32_pause();
		if (impl->online)
			impl->online();
	}
	w->hits = hits;
	w->pairs = pairs;
	w->sum = sum;
	impl->thread_fini();
	return NULL;
}

/** Copies /proc/self/maps (the emulator's view of the guest) to @a path. */
static void dump_maps(const char *path)
{
	FILE *in = fopen("/proc/self/maps", "r"), *o = fopen(path, "w");
	char buf[4096];
	size_t n;
	while (in && o && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		fwrite(buf, 1, n, o);
	if (in)
		fclose(in);
	if (o)
		fclose(o);
	else
		perror(path);
}

/**
 * The sharing mode: @a threads threads do @a ops operations each on a table
 * of @a n keys (@a upd_pct % insert/remove pairs) inside the sharing
 * counter's window; reports threads x ops operations to the plugin, prints
 * the CSV rows, copies /proc/self/maps to @a maps (if not NULL) and exits 1
 * if a lookup missed or an insert or remove failed.
 */
static void mode_sharing(size_t n, int threads, unsigned upd_pct, size_t ops,
    const char *maps)
{
	pthread_t tid[64];
	sh_worker_t w[64];
	op_t *s[64];
	pthread_barrier_t bar;
	impl->thread_init();
	void *t = impl->create(n, 0);
	prefill(t, n);
	impl->settle(t);
	for (int i = 0; i < threads; i++) {
		/* Lookups of present keys (all must hit); updates: an insert and
		 * remove of one of 1024 absent keys of this thread's own. */
		uint64_t st = (uint64_t) (i + 1) * 0x9e3779b97f4a7c15ull + upd_pct;
		s[i] = malloc(ops * sizeof(op_t));
		for (size_t k = 0; k < ops; k++) {
			uint64_t r = rnd(&st);
			bool upd = (unsigned) ((r >> 40) % 100) < upd_pct;
			s[i][k] = (op_t) {
				.key = upd ? key_absent((size_t) i * 1024 + r % 1024) :
				    key_present((size_t) (r % n)),
				.op = upd ? OP_INSERT_REMOVE : OP_LOOKUP,
			};
		}
	}
	sh_threads = (unsigned) threads;
	pthread_barrier_init(&bar, NULL, (unsigned) threads + 1);
	for (int i = 0; i < threads; i++) {
		w[i] = (sh_worker_t) { .t = t, .s = s[i], .len = ops, .bar = &bar };
		pthread_create(&tid[i], NULL, sh_main, &w[i]);
	}
	main_offline();
	pthread_barrier_wait(&bar);
	sharing_window_open();
	/*
	 * Release: the table's set-up is not reordered after the flag (the
	 * open marker itself is ordered by program order on this vCPU and by
	 * its "memory" clobber in the compiler).
	 */
	__atomic_store_n(&sh_go, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	main_online();
	pthread_barrier_destroy(&bar);
	uint64_t total = (uint64_t) threads * ops, lookups = 0, hits = 0;
	uint64_t updates = 0, pairs = 0;
	/* Under qemu-user every thread is a vCPU of its own: the main thread
	 * sends all bits of the count on one vCPU. */
	sharing_window_report(total);
	for (int i = 0; i < threads; i++) {
		for (size_t k = 0; k < ops; k++) {
			lookups += s[i][k].op == OP_LOOKUP;
			updates += s[i][k].op == OP_INSERT_REMOVE;
		}
		hits += w[i].hits;
		pairs += w[i].pairs;
		free(s[i]);
	}
	char wl[32];
	snprintf(wl, sizeof(wl), "u%u", upd_pct);
	out("sharing", wl, n, threads, "ops", (double) total);
	out("sharing", wl, n, threads, "lookups", (double) lookups);
	out("sharing", wl, n, threads, "updates", (double) updates);
	/* Every lookup must hit, every insert and remove must succeed. */
	out("sharing", wl, n, threads, "errors",
	    (double) ((lookups - hits) + (updates - pairs)));
	if (maps)
		dump_maps(maps);
	teardown(t, n);
	impl->thread_fini();
	if (lookups != hits || updates != pairs)
		exit(1);
}

/** A crash prints its backtrace (addr2line-able) before dying. */
static void crash_handler(int sig)
{
	void *bt[64];
	int n = backtrace(bt, 64);
	char msg[] = "bench_us: fatal signal, backtrace:\n";
	if (write(2, msg, sizeof(msg) - 1) < 0)
		_exit(128 + sig);
	backtrace_symbols_fd(bt, n, 2);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_us list | stallcheck | big IMPL [options: bench_us big "
	    "IMPL -h] | suite|resize|growshrink|icount|misses|sharing IMPL [-s SECS] [-n SIZES] [-t THREADS] [-m MIXKEYS] "
	    "[-k KEYS] [-o OPS] [-u UPDATE%%] [-M MAPSFILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	signal(SIGSEGV, crash_handler);
	signal(SIGBUS, crash_handler);
	signal(SIGABRT, crash_handler);
	collect_impls();
	/* name,library,layout,presized|auto,est_bytes_per_key,resize|-,flags */
	if (argc >= 2 && strcmp(argv[1], "list") == 0) {
		for (int i = 0; impl_list[i]; i++)
			printf("%s,%s,%s,%s,%g,%s,%s\n", impl_list[i]->name,
			    impl_list[i]->library, impl_list[i]->layout,
			    impl_list[i]->presized ? "presized" : "auto",
			    impl_list[i]->est_bytes_per_key,
			    impl_list[i]->resize ? "resize" : "-",
			    impl_list[i]->no_concurrent_remove ?
			    "no-concurrent-remove" : "-");
		return 0;
	}
	if (argc >= 2 && strcmp(argv[1], "stallcheck") == 0)
		return mode_stallcheck();
	if (argc < 3)
		usage();
	for (int i = 0; impl_list[i]; i++)
		if (strcmp(impl_list[i]->name, argv[2]) == 0)
			impl = impl_list[i];
	if (!impl) {
		fprintf(stderr, "unknown impl %s\n", argv[2]);
		return 2;
	}
	if (strcmp(argv[1], "big") == 0)
		return bench_big_main(argc, argv, impl);
	double secs = 0.3;
	size_t sizes[8] = { 1024, 65536, 1048576 }, threads[8] = { 1, 2 };
	int nsizes = 3, nthreads = 2;
	size_t mixkeys = 65536, keys = 1048576, ops = 20000;
	unsigned upd_pct = 0;
	const char *maps = NULL;
	bool keys_set = false;
	int opt;
	optind = 3;
	while ((opt = getopt(argc, argv, "s:n:t:m:k:o:u:M:")) != -1) {
		switch (opt) {
		case 's': secs = atof(optarg); break;
		case 'n': nsizes = parse_list(optarg, sizes, 8); break;
		case 't': nthreads = parse_list(optarg, threads, 8); break;
		case 'm': mixkeys = strtoull(optarg, NULL, 0); break;
		case 'k': keys = strtoull(optarg, NULL, 0); keys_set = true; break;
		case 'o': ops = strtoull(optarg, NULL, 0); break;
		case 'u': upd_pct = (unsigned) strtoul(optarg, NULL, 0); break;
		case 'M': maps = optarg; break;
		default: usage();
		}
	}
	for (int j = 0; j < nthreads; j++)
		if (threads[j] < 1 || threads[j] > 64)
			usage();
	if (strcmp(argv[1], "suite") == 0)
		mode_suite(secs, sizes, nsizes, threads, nthreads, mixkeys);
	else if (strcmp(argv[1], "resize") == 0)
		mode_resize(secs, threads, nthreads);
	else if (strcmp(argv[1], "growshrink") == 0)
		mode_growshrink(threads, keys);
	else if (strcmp(argv[1], "icount") == 0)
		mode_icount(keys, ops);
	else if (strcmp(argv[1], "misses") == 0)
		mode_misses(keys, ops);
	else if (strcmp(argv[1], "sharing") == 0) {
		if (upd_pct > 100 || ops < 1)
			usage();
		mode_sharing(keys_set ? keys : 65536, (int) threads[0], upd_pct,
		    ops, maps);
	}
	else
		usage();
	return 0;
}
