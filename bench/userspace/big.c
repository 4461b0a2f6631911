/** @file big.c
 * `bench_us big IMPL ...`: the Big-Memory workloads (every peer at 1e8 keys), one
 * table in one process, phases in order on the same table:
 *
 *   grow      insert keys 0..N-1 from an empty table (-P: a table created
 *             for N, the "presized" run), THREADS threads, every insert
 *             timed; the table's bucket count is polled to find its grow
 *             thresholds (for the crossing)
 *   lookup    uniform hits, uniform misses              (-d SECS each)
 *   ycsb      YCSB A, B, C, D, F, uniform and zipfian 0.99 (-d SECS each)
 *   resize    lookups at two fixed sizes and while a thread flips the table
 *             between them (Triplett et al.), once per round (-R); a table
 *             that only grows (grow(): the managed inline map) gets rounds
 *             of lookups at its size and lookups while a thread grows it;
 *             tables with neither print "unsupported"
 *   churn     each thread removes its oldest key and inserts a new one
 *             (-c SECS); memory sampled every second
 *   shrink    the keys deleted down to an eighth, every delete timed;
 *             memory before, after the deletes and after the table
 *             settled; every deleted key absent (phase_shrink())
 *   soak      -L SECS of lookups only, then -S SECS of lookups beside one
 *             writer rate-limited to -r WRITES/s (latency from each write's
 *             scheduled start: no coordinated omission)
 *   crossing  a new table filled to just below its last grow point at or
 *             below N: the library's own (impl->grow_at: its load limit
 *             times its buckets; each grow before it waited for), else
 *             the power-of-two crossing the grow phase saw last, else
 *             the largest power of two <= N; then inserts across it,
 *             timed, until the bucket count has crossed a power of two
 *             (a grow on a worker thread: until it published) and some
 *             more; buckets before and after (no crossing: exit 1); then
 *             the same window into a table created for it (the control:
 *             crossing-presized, and the ratios of p99.9 and largest);
 *             `-w crossing` alone skips the grow phase when the table
 *             says its grow point
 *   check     (always last) every key looked up (present, value one the
 *             harness wrote), then removed; the table destroyed; the heap
 *             compared with the start
 *
 * Latency: a log-linear histogram (HdrHistogram's idea: 2^HSUB linear
 * sub-buckets per power of two, relative error <= 2^-HSUB) per thread and
 * phase, in TSC ticks, reported in ns; per second a coarser one (2^TSUB)
 * for the timeline. Memory: RSS (statm), peak RSS (VmHWM) and the
 * allocator's figure (bench_heap_bytes(): mallinfo2's in use and mmapped,
 * plus what the libraries mapped themselves, mapcount.c). Transparent huge
 * pages: the system's mode (enabled, defrag) and the process's
 * AnonHugePages at the end of every phase (row anon_huge_mb); the driver runs
 * the THP variant with GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (malloc
 * madvises its memory MADV_HUGEPAGE), which is what a table that allocates
 * through malloc allows.
 *
 * Output (stdout): "big,IMPL,WORKLOAD,KEYS,THREADS,METRIC,VALUE" rows (as the
 * rest of bench_us), "tl,IMPL,WORKLOAD,THREADS,SEC,OPS,P50,P99,P999,MAX,RSS,
 * HEAP" (per second; ns and bytes), "cdf,IMPL,WORKLOAD,THREADS,NS,FRACTION"
 * and "info,IMPL,KEY,VALUE". A progress line goes to stderr every second.
 * Exit 0; 1 when a check failed (a key lost, a wrong value, a count), 3 when
 * the progress watchdog found a phase stalled (bench.h).
 */
#define _GNU_SOURCE
#include "bench.h"
#include "bench_keys.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static const bench_impl_t *impl;
static size_t N = 1000000;
static int T = 1;
static bool is_set;       /* ck_hs: a set, the "value" is the key */
static const char *suffix = "";

/**
 * Round @a rd of @a rounds (-R): the rows' workload suffix becomes
 * @a base#rd, written into @a buf (len bytes), so that each round's rows are
 * told apart; with one round it stays @a base.
 */
static void round_suffix(char *buf, size_t len, const char *base, int rd,
    int rounds)
{
	if (rounds > 1) {
		snprintf(buf, len, "%s#%d", base, rd);
		suffix = buf;
	}
}
static bool drop_one;     /* -X: the negative control (a key never inserted) */
static size_t scatter_n;  /* -F: free chunks left in scattered order */

/* --- time ---------------------------------------------------------------------------- */

static double tsc_per_ns, ns_per_tsc;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static inline uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

static void calibrate(void)
{
	tsc_per_ns = bench_tsc_per_ns(100000);
	ns_per_tsc = 1.0 / tsc_per_ns;
}

/* --- histograms ---------------------------------------------------------------------- */

/*
 * Log-linear: values below 2^S are their own bucket; a value v >= 2^S with
 * e = floor(log2 v) goes to bucket ((e - S + 1) << S) + the S bits below
 * v's top bit. Each power of two has 2^S buckets of equal width, so a
 * bucket's width is at most 2^-S of its values: that is the relative error.
 */
#define HSUB 6
#define TSUB 4
#define HBUCKETS(s) ((64 - (s) + 1) << (s))

static inline unsigned h_index(uint64_t v, unsigned s)
{
	if (v < ((uint64_t) 1 << s))
		return (unsigned) v;
	unsigned e = 63u - (unsigned) __builtin_clzll(v);
	return ((e - s + 1) << s) + (unsigned) ((v >> (e - s)) & ((1u << s) - 1));
}

/** The largest value of bucket @a i (an upper bound: percentiles err high). */
static uint64_t h_upper(unsigned i, unsigned s)
{
	if (i < (1u << s))
		return i;
	unsigned e = (i >> s) + s - 1, m = i & ((1u << s) - 1);
	uint64_t lo = ((uint64_t) (1u << s) + m) << (e - s);
	return lo + ((uint64_t) 1 << (e - s)) - 1;
}

typedef struct {
	uint64_t c[HBUCKETS(HSUB)];
	uint64_t n, max;
} hist_t;

/** The value (ticks) below which a fraction @a q of @a cnt's samples lie. */
static uint64_t h_quantile(const uint64_t *cnt, const uint32_t *cnt32,
    unsigned nb, unsigned s, uint64_t n, double q)
{
	uint64_t want = (uint64_t) (q * (double) n), acc = 0;
	if (want >= n)
		want = n - 1;
	for (unsigned i = 0; i < nb; i++) {
		acc += cnt ? cnt[i] : cnt32[i];
		if (acc > want)
			return h_upper(i, s);
	}
	return 0;
}

/* --- per-thread recording ---------------------------------------------------------------- */

#define TL_MAX_SECS 14400  /* 4 hours of timeline per phase */

typedef struct {
	uint32_t c[HBUCKETS(TSUB)];
	uint64_t max;
	uint64_t n;
} tl_sec_t;

typedef struct rec {
	hist_t h;
	tl_sec_t *tl;         /* TL_MAX_SECS seconds, mmap'ed, touched as used */
	uint64_t start;       /* the phase's start (ticks) */
	double sec_per_tick;
	int maxsec;
	uint64_t ops;         /* read by the sampler (relaxed) */
	uint64_t last;        /* when the last operation ended (ticks) */
	uint64_t errors;
} rec_t;

static void rec_init(rec_t *r, uint64_t start)
{
	if (!r->tl) {
		/* The harness's own: not in the allocator's figure. */
		r->tl = bench_map_own(TL_MAX_SECS * sizeof(tl_sec_t));
	} else {
		/* Give the pages back: the next phase starts from zero. */
		madvise(r->tl, TL_MAX_SECS * sizeof(tl_sec_t), MADV_DONTNEED);
	}
	tl_sec_t *keep = r->tl;
	memset(r, 0, sizeof(*r));
	r->tl = keep;
	r->start = start;
	r->sec_per_tick = ns_per_tsc * 1e-9;
	r->maxsec = -1;
}

/** One operation of @a lat ticks that completed at tick @a end. */
static inline void rec_add(rec_t *r, uint64_t lat, uint64_t end)
{
	r->h.c[h_index(lat, HSUB)]++;
	r->h.n++;
	if (lat > r->h.max)
		r->h.max = lat;
	int sec = (int) ((double) (end - r->start) * r->sec_per_tick);
	if (sec >= TL_MAX_SECS)
		sec = TL_MAX_SECS - 1;
	if (sec > r->maxsec)
		r->maxsec = sec;
	tl_sec_t *t = &r->tl[sec];
	t->c[h_index(lat, TSUB)]++;
	t->n++;
	if (lat > t->max)
		t->max = lat;
	r->last = end;
	__atomic_store_n(&r->ops, r->ops + 1, __ATOMIC_RELAXED);
}

/*
 * -A: where the crossing's tail goes. Each insert of the crossing window and
 * of its presized control is bracketed (outside its timed interval) by
 * getrusage(RUSAGE_THREAD) and filed by what the kernel did to the inserting
 * thread meanwhile: a page fault (ru_minflt/ru_majflt moved: malloc's heap
 * touching a new page), a context switch (ru_nvcsw/ru_nivcsw moved), or
 * neither ("clean"); a clean insert of the window is filed by whether the
 * new bucket count was already seen (cross_seen: the grow published) or not.
 * report_attrib() gives each class's count, p50 and p99.9 and how many of
 * the phase's slowest 0.1 % it holds. The two syscalls per insert slow the
 * loop (the resizer gets more done per insert): the shares, not the
 * percentiles of an -A run, are what it measures.
 */
enum { AT_CLEAN_BEFORE, AT_CLEAN_AFTER, AT_FAULT, AT_SWITCH, AT_N };
static const char *const at_name[AT_N] = {
	"clean_before_publish", "clean_after_publish", "fault", "switch",
};
static bool attrib;          /* -A */
/* Set around the crossing phases only, by the main thread before
 * run_phase() creates the workers and cleared after it joined them:
 * pthread_create() and pthread_join() order it with every worker's read. */
static bool attrib_active;
static hist_t *attrib_h;     /* [MAXT][AT_N], allocated by -A */

static inline void attrib_begin(struct rusage *ru)
{
	if (attrib_active)
		getrusage(RUSAGE_THREAD, ru);
}

static inline void attrib_end(int id, const struct rusage *ru0, uint64_t lat,
    bool published)
{
	if (!attrib_active)
		return;
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	int c = published ? AT_CLEAN_AFTER : AT_CLEAN_BEFORE;
	if (ru.ru_minflt != ru0->ru_minflt || ru.ru_majflt != ru0->ru_majflt)
		c = AT_FAULT;
	else if (ru.ru_nvcsw != ru0->ru_nvcsw || ru.ru_nivcsw != ru0->ru_nivcsw)
		c = AT_SWITCH;
	hist_t *h = &attrib_h[id * AT_N + c];
	h->c[h_index(lat, HSUB)]++;
	h->n++;
	if (lat > h->max)
		h->max = lat;
}

/* --- memory ------------------------------------------------------------------------------- */

/** A "Key:   N kB" line of @a path, in bytes (0 if absent). */
static size_t proc_kb(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t v = 0, kl = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0) {
			v = strtoull(line + kl, NULL, 10) * 1024;
			break;
		}
	if (f)
		fclose(f);
	return v;
}

/**
 * The host's steal time so far, all CPUs, in ms (/proc/stat's "cpu" line,
 * eighth field, in USER_HZ ticks): the time the host ran something else on
 * a vCPU that had work. A timed phase on a VM collects it in both of the
 * runs it compares; the longer one collects more. 0 where not reported.
 */
static double steal_ms(void)
{
	FILE *f = fopen("/proc/stat", "r");
	unsigned long long v[8] = { 0 };
	if (f) {
		if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		    &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 8)
			v[7] = 0;
		fclose(f);
	}
	long hz = sysconf(_SC_CLK_TCK);
	return hz > 0 ? (double) v[7] * 1e3 / (double) hz : 0;
}

/** Resets VmHWM (peak RSS) to the current RSS (Linux >= 4.0). */
static void reset_peak_rss(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");
	if (f) {
		fputs("5", f);
		fclose(f);
	}
}

/* --- output ---------------------------------------------------------------------------------- */

static void out(const char *wl, int threads, const char *metric, double v)
{
	printf("big,%s,%s%s,%zu,%d,%s,%.12g\n", impl->name, wl, suffix, N,
	    threads, metric, v);
	fflush(stdout);
}

static void info(const char *key, const char *val)
{
	printf("info,%s,%s,%s\n", impl->name, key, val);
	fflush(stdout);
}

static void progress(const char *phase, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void progress(const char *phase, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "[big %s %s t=%d%s] ", impl->name, phase, T, suffix);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- running a phase ---------------------------------------------------------------------------- */

/** What one thread of a phase does until it is told to stop (or its work
 *  is done): returns after recording every operation into its rec_t. */
typedef struct worker worker_t;
typedef void (*body_fn)(worker_t *w);

struct worker {
	int id, threads;
	void *t;
	body_fn body;
	rec_t *rec;
	uint64_t seed;
	const int *stop;
	pthread_barrier_t *bar;
	/* Phase arguments. */
	size_t lo, hi;          /* key window [lo, hi) */
	unsigned kind, mix;     /* workload: kind, write percentage */
	char special;           /* 'D' (read latest + insert), 'F' (RMW) or 0 */
	bool zipf;
	const uint32_t *zs;     /* zipfian index stream */
	size_t zlen;
	size_t pairs;           /* churn: pairs done */
	double rate;            /* soak: writes per second */
	uint64_t hits, misses;
	/* What the kernel did to the thread during its body (getrusage(
	 * RUSAGE_THREAD)): page faults, context switches (all, and those
	 * where it was preempted rather than blocked). */
	long faults, switches, preempted;
};

#define MAXT 16
static rec_t recs[MAXT + 1];
static int phase_stop;
/** Bumped by run_phase() once its workers passed the start barrier (a
 *  helper thread that must act inside the phase waits for it). */
static uint64_t phase_gen;

/**
 * Waits until @a t's background resizes and reclamation are done
 * (impl->settle(), @a times times), offline for the table's RCU around the
 * wait (a QSBR thread that blocks must not hold grace periods up).
 */
static void settle_offline(void *t, int times)
{
	if (impl->offline)
		impl->offline();
	for (int i = 0; i < times; i++)
		impl->settle(t);
	if (impl->online)
		impl->online();
}

/*
 * The main thread's wait for the workers: each worker counts itself out
 * under ph_lock and signals ph_cond as its last step, so the main thread
 * sleeps until a worker finished or the next whole second (or the phase's
 * end) instead of polling. Polling every 10 ms preempted the window's
 * inserter 2,125 times in a 25-second crossing at 1e8 keys (19 us each,
 * sched_switch traced), when the resizer kept the other CPU busy.
 */
static pthread_mutex_t ph_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t ph_cond;
static int ph_finished;            /* under ph_lock */

static void ph_cond_init(void)
{
	pthread_condattr_t a;
	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&ph_cond, &a);
	pthread_condattr_destroy(&a);
}

/* Sleeps until ph_finished differs from @a seen or CLOCK_MONOTONIC reaches
 * @a until (seconds, as now_s()). */
static void ph_wait(int seen, double until)
{
	struct timespec ts;
	ts.tv_sec = (time_t) until;
	ts.tv_nsec = (long) ((until - (double) ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ph_lock);
	while (ph_finished == seen && now_s() < until)
		if (pthread_cond_timedwait(&ph_cond, &ph_lock, &ts) != 0)
			break;
	pthread_mutex_unlock(&ph_lock);
}

static void *worker_main(void *p)
{
	worker_t *w = p;
	impl->thread_init();
	bench_thread_go(impl, w->bar);
	struct rusage ru0, ru1;
	getrusage(RUSAGE_THREAD, &ru0);
	w->body(w);
	getrusage(RUSAGE_THREAD, &ru1);
	w->faults = (ru1.ru_minflt - ru0.ru_minflt) +
	    (ru1.ru_majflt - ru0.ru_majflt);
	w->switches = (ru1.ru_nvcsw - ru0.ru_nvcsw) +
	    (ru1.ru_nivcsw - ru0.ru_nivcsw);
	w->preempted = ru1.ru_nivcsw - ru0.ru_nivcsw;
	if (impl->offline)
		impl->offline();
	impl->thread_fini();
	pthread_mutex_lock(&ph_lock);
	ph_finished++;
	pthread_cond_signal(&ph_cond);
	pthread_mutex_unlock(&ph_lock);
	return NULL;
}

typedef struct {
	double secs;
	uint64_t ops, errors;
	size_t rss_min, rss_max, heap_min, heap_max, rss_first, heap_first;
	size_t rss_end, heap_end;
	/* Second half of the phase (flatness). */
	size_t heap_min2, heap_max2, rss_min2, rss_max2;
	/* The allocator's figure: seconds that reused the last sample (see
	 * heap_sampler_t), the longest sample, and the share of the phase's
	 * time spent inside mallinfo2(). */
	unsigned heap_stale;
	double heap_sample_max_s, heap_lock_share;
	/* Transparent huge pages at the phase's end (smaps_rollup's
	 * AnonHugePages), bytes. */
	size_t anon_huge;
	/* The workers' page faults and context switches (worker_t). */
	long faults, switches, preempted;
	/* The main thread's context switches during the phase (its wake-ups:
	 * on a host whose CPUs the workers and the libraries' threads fill,
	 * each may preempt one of them). */
	long monitor_switches;
	/* The host's steal time over the phase, ms summed over the CPUs
	 * (steal_ms()). */
	double steal_ms;
} phase_res_t;

/*
 * The allocator's figure during a phase, sampled with a bounded share of the
 * time. mallinfo2() walks every free chunk of every arena while it holds
 * that arena's lock; a thread that mallocs in the arena waits. With many
 * small chunks freed in scattered order (1e8 items after the churn and the
 * check's removals) one call took seconds, and run_phase() called it again
 * at once (the next whole second had passed): the intrusive table's crossing
 * fill, whose every insert mallocs in that arena, made 0-141 inserts per
 * progress line and the watchdog stopped it ("resizes lost?";
 * bench/RESULTS.md). So after a sample that took d seconds the next one
 * waits HEAP_DUTY * d: the sampler holds arena locks at most 1 / (HEAP_DUTY +
 * 1) of the time. In between, the seconds repeat the last figure (counted in
 * heap_stale; the heap's flatness uses only fresh figures). The first sample
 * is taken before the workers start.
 */
#ifndef HEAP_DUTY  /* -DHEAP_DUTY=0: every second, as before (the test's control) */
#define HEAP_DUTY 50
#endif

typedef struct {
	double next;            /* now_s() before which no sample is taken */
	double busy;            /* seconds inside mallinfo2() in the phase */
	double max;             /* the longest sample */
	size_t last;            /* the last figure */
	unsigned stale;         /* figures that repeated `last` */
} heap_sampler_t;

static size_t heap_sample(heap_sampler_t *hs)
{
	double t0 = now_s();
	if (t0 < hs->next) {
		hs->stale++;
		return hs->last;
	}
	hs->last = bench_heap_bytes();
	double d = now_s() - t0;
	hs->busy += d;
	hs->max = d > hs->max ? d : hs->max;
	hs->next = t0 + d + HEAP_DUTY * d;
	return hs->last;
}

static size_t mem_rss[TL_MAX_SECS], mem_heap[TL_MAX_SECS];

/**
 * Runs @a threads workers (worker i on w[i], recording into recs[i]) until
 * they return by themselves (secs 0) or for @a secs seconds, sampling memory
 * and printing progress once a second; @a target (ops) only for the progress
 * line. Returns the phase's figures.
 */
static phase_res_t run_phase(const char *name, worker_t *w, int threads,
    double secs, uint64_t target)
{
	pthread_t tid[MAXT + 1];
	pthread_barrier_t bar;
	bool joined[MAXT + 1] = { false };
	phase_res_t r;
	memset(&r, 0, sizeof(r));
	r.rss_min = r.heap_min = r.heap_min2 = r.rss_min2 = SIZE_MAX;
	__atomic_store_n(&phase_stop, 0, __ATOMIC_RELAXED);
	pthread_mutex_lock(&ph_lock);
	int finished0 = ph_finished;  /* the workers of earlier phases */
	pthread_mutex_unlock(&ph_lock);
	struct rusage mru0, mru1;
	getrusage(RUSAGE_THREAD, &mru0);
	double steal0 = steal_ms();
	pthread_barrier_init(&bar, NULL, (unsigned) threads + 1);
	for (int i = 0; i < threads; i++) {
		w[i].bar = &bar;
		w[i].stop = &phase_stop;
		w[i].rec = &recs[i];
		w[i].id = i;
		pthread_create(&tid[i], NULL, worker_main, &w[i]);
	}
	if (impl->offline)
		impl->offline();
	/* The first heap sample: the workers wait at the barrier. */
	heap_sampler_t hs = { 0, 0, 0, 0, 0 };
	(void) heap_sample(&hs);
	hs.busy = 0;  /* it delayed no worker */
	bench_progress_begin("big", name, N, threads);
	uint64_t start = tsc();
	for (int i = 0; i < threads; i++)
		rec_init(&recs[i], start);
	double t0 = now_s();
	pthread_barrier_wait(&bar);
	__atomic_add_fetch(&phase_gen, 1, __ATOMIC_RELEASE);
	uint64_t last_ops = 0;
	for (int sec = 0;; sec++) {
		/* Wait for the next whole second of the phase, its end or a
		 * worker's return (ph_wait(): no polling). */
		double next = t0 + sec + 1, end = secs > 0 ? t0 + secs : 0;
		int done = 0;
		for (;;) {
			pthread_mutex_lock(&ph_lock);
			int seen = ph_finished;
			pthread_mutex_unlock(&ph_lock);
			done = 0;
			for (int i = 0; i < threads; i++) {
				if (!joined[i] && pthread_tryjoin_np(tid[i], NULL) == 0)
					joined[i] = true;
				done += joined[i];
			}
			double now = now_s();
			if (done == threads || now >= next)
				break;
			if (end && now >= end)
				__atomic_store_n(&phase_stop, 1, __ATOMIC_RELAXED);
			if (seen - finished0 > done) {
				/* Counted out, not returned yet: a moment. */
				bench_sleep_us(100);
				continue;
			}
			double until = next;
			if (end && now < end && end < until)
				until = end;
			ph_wait(seen, until);
		}
		uint64_t ops = 0, err = 0;
		for (int i = 0; i < threads; i++) {
			ops += __atomic_load_n(&recs[i].ops, __ATOMIC_RELAXED);
			err += __atomic_load_n(&recs[i].errors, __ATOMIC_RELAXED);
		}
		bench_progress_add(ops - last_ops);
		unsigned stale0 = hs.stale;
		size_t rss = bench_rss_bytes(), heap = heap_sample(&hs);
		bool fresh = hs.stale == stale0;
		if (sec < TL_MAX_SECS) {
			mem_rss[sec] = rss;
			mem_heap[sec] = heap;
		}
		if (sec == 0) {
			r.rss_first = rss;
			r.heap_first = heap;
		}
		r.rss_min = rss < r.rss_min ? rss : r.rss_min;
		r.rss_max = rss > r.rss_max ? rss : r.rss_max;
		r.heap_min = heap < r.heap_min ? heap : r.heap_min;
		r.heap_max = heap > r.heap_max ? heap : r.heap_max;
		if (secs > 0 && sec + 1 >= secs / 2) {
			r.rss_min2 = rss < r.rss_min2 ? rss : r.rss_min2;
			r.rss_max2 = rss > r.rss_max2 ? rss : r.rss_max2;
			/* A repeated figure may be from the first half. */
			if (fresh) {
				r.heap_min2 = heap < r.heap_min2 ? heap :
				    r.heap_min2;
				r.heap_max2 = heap > r.heap_max2 ? heap :
				    r.heap_max2;
			}
		}
		if (done == threads && sec == 0)
			break;  /* shorter than a second: no progress line */
		char tgt[64] = "";
		if (target)
			snprintf(tgt, sizeof(tgt), "/%.3gM (%.0f%%)", target / 1e6,
			    100.0 * (double) ops / (double) target);
		progress(name, "%4ds %.3gM%s ops, %.3g Mops/s, rss %.2f GB, heap "
		    "%.2f GB%s", sec + 1, ops / 1e6, tgt,
		    (double) (ops - last_ops) / 1e6, rss / 1e9, heap / 1e9,
		    err ? ", ERRORS" : "");
		last_ops = ops;
		if (done == threads)
			break;
	}
	/* The phase's time: from the start to the last worker's last op. */
	uint64_t last = start;
	for (int i = 0; i < threads; i++)
		last = recs[i].last > last ? recs[i].last : last;
	r.secs = (double) (last - start) * ns_per_tsc * 1e-9;
	if (r.secs <= 0)
		r.secs = now_s() - t0;
	bench_progress_end();
	if (impl->online)
		impl->online();
	pthread_barrier_destroy(&bar);
	for (int i = 0; i < threads; i++) {
		r.ops += recs[i].h.n;
		r.errors += recs[i].errors;
		r.faults += w[i].faults;
		r.switches += w[i].switches;
		r.preempted += w[i].preempted;
	}
	getrusage(RUSAGE_THREAD, &mru1);
	r.monitor_switches = (mru1.ru_nvcsw - mru0.ru_nvcsw) +
	    (mru1.ru_nivcsw - mru0.ru_nivcsw);
	r.steal_ms = steal_ms() - steal0;
	r.rss_end = bench_rss_bytes();
	r.heap_stale = hs.stale;
	r.heap_sample_max_s = hs.max;
	r.heap_lock_share = hs.busy / (now_s() - t0);
	/* The workers are gone: a slow sample delays nobody's operation. */
	r.heap_end = bench_heap_bytes();
	r.anon_huge = proc_kb("/proc/self/smaps_rollup", "AnonHugePages:");
	return r;
}

/** The phase's rows: throughput, percentiles, errors, timeline, CDF. */
static uint64_t total_errors;
/** The last report()'s p99.9 (ns) and largest operation (us), 0 if empty. */
static double last_p999_ns, last_max_us;

static void report(const char *wl, int threads, int nrec, const phase_res_t *r)
{
	total_errors += r->errors;
	static hist_t all;
	memset(&all, 0, sizeof(all));
	int maxsec = -1;
	for (int i = 0; i < nrec; i++) {
		for (unsigned b = 0; b < HBUCKETS(HSUB); b++)
			all.c[b] += recs[i].h.c[b];
		all.n += recs[i].h.n;
		if (recs[i].h.max > all.max)
			all.max = recs[i].h.max;
		if (recs[i].maxsec > maxsec)
			maxsec = recs[i].maxsec;
	}
	out(wl, threads, "mops", (double) all.n / r->secs / 1e6);
	/* Each thread's share (an uneven split shows a thread that ran
	 * less: preempted, or on a CPU others use). */
	for (int i = 0; nrec > 1 && i < nrec && i < 8; i++) {
		char m[32];
		snprintf(m, sizeof(m), "mops_thread%d", i);
		out(wl, threads, m, (double) recs[i].h.n / r->secs / 1e6);
	}
	out(wl, threads, "ops", (double) all.n);
	out(wl, threads, "seconds", r->secs);
	out(wl, threads, "errors", (double) r->errors);
	out(wl, threads, "heap_stale_secs", (double) r->heap_stale);
	out(wl, threads, "heap_sample_max_ms", r->heap_sample_max_s * 1e3);
	out(wl, threads, "heap_lock_share", r->heap_lock_share);
	/* Huge pages per phase: the THP-on (hugetlb=1) and default runs of
	 * every table say how much of their memory they got. */
	out(wl, threads, "anon_huge_mb", (double) r->anon_huge / 1048576.0);
	/* A page fault costs an insert microseconds (a new heap page): the
	 * crossing and its control compare fairly only with like counts. */
	out(wl, threads, "faults", (double) r->faults);
	out(wl, threads, "switches", (double) r->switches);
	out(wl, threads, "switches_preempted", (double) r->preempted);
	out(wl, threads, "monitor_switches", (double) r->monitor_switches);
	out(wl, threads, "steal_ms", r->steal_ms);
	last_p999_ns = last_max_us = 0;
	if (all.n == 0)
		return;
	last_p999_ns = (double) h_quantile(all.c, NULL, HBUCKETS(HSUB), HSUB,
	    all.n, 0.999) * ns_per_tsc;
	last_max_us = (double) all.max * ns_per_tsc / 1000;
	static const struct { const char *m; double q; } pq[] = {
		{ "p50_ns", 0.5 }, { "p99_ns", 0.99 }, { "p999_ns", 0.999 },
	};
	for (int i = 0; i < 3; i++)
		out(wl, threads, pq[i].m, (double) h_quantile(all.c, NULL,
		    HBUCKETS(HSUB), HSUB, all.n, pq[i].q) * ns_per_tsc);
	out(wl, threads, "max_us", (double) all.max * ns_per_tsc / 1000);
	/* The CDF: one point per non-empty bucket (at most a few hundred). */
	uint64_t acc = 0;
	for (unsigned b = 0; b < HBUCKETS(HSUB); b++) {
		if (!all.c[b])
			continue;
		acc += all.c[b];
		printf("cdf,%s,%s%s,%d,%.1f,%.9f\n", impl->name, wl, suffix,
		    threads, (double) h_upper(b, HSUB) * ns_per_tsc,
		    (double) acc / (double) all.n);
	}
	/* The timeline: per second, merged over threads. */
	static uint32_t c[HBUCKETS(TSUB)];
	for (int s = 0; s <= maxsec && s < TL_MAX_SECS; s++) {
		memset(c, 0, sizeof(c));
		uint64_t n = 0, mx = 0;
		for (int i = 0; i < nrec; i++) {
			if (s > recs[i].maxsec)
				continue;
			tl_sec_t *t = &recs[i].tl[s];
			for (unsigned b = 0; b < HBUCKETS(TSUB); b++)
				c[b] += t->c[b];
			n += t->n;
			if (t->max > mx)
				mx = t->max;
		}
		double q[3] = { 0, 0, 0 };
		for (int i = 0; n && i < 3; i++)
			q[i] = (double) h_quantile(NULL, c, HBUCKETS(TSUB), TSUB, n,
			    pq[i].q) * ns_per_tsc;
		printf("tl,%s,%s%s,%d,%d,%llu,%.0f,%.0f,%.0f,%.0f,%zu,%zu\n",
		    impl->name, wl, suffix, threads, s, (unsigned long long) n,
		    q[0], q[1], q[2], (double) mx * ns_per_tsc,
		    mem_rss[s], mem_heap[s]);
	}
	fflush(stdout);
}

/*
 * -A: the classes' rows for the phase just run (attrib_h, T threads):
 * attrib_CLASS_ops, _p50_ns, _p999_ns, _max_us and _above_p999 (how many
 * of its inserts lie in histogram buckets above the phase's p99.9 bucket:
 * the slowest 0.1 %, as the histogram resolves them); then clears attrib_h.
 */
static void report_attrib(const char *wl)
{
	static hist_t all, cls;
	memset(&all, 0, sizeof(all));
	for (int i = 0; i < T * AT_N; i++) {
		for (unsigned b = 0; b < HBUCKETS(HSUB); b++)
			all.c[b] += attrib_h[i].c[b];
		all.n += attrib_h[i].n;
	}
	if (all.n == 0)
		return;
	/* The p99.9's bucket (h_quantile() returns its upper value). */
	uint64_t want = (uint64_t) (0.999 * (double) all.n), acc = 0;
	unsigned pb = 0;
	for (unsigned b = 0; b < HBUCKETS(HSUB); b++) {
		acc += all.c[b];
		if (acc > want) {
			pb = b;
			break;
		}
	}
	uint64_t above_all = 0;
	for (int c = 0; c < AT_N; c++) {
		memset(&cls, 0, sizeof(cls));
		for (int t = 0; t < T; t++) {
			const hist_t *h = &attrib_h[t * AT_N + c];
			for (unsigned b = 0; b < HBUCKETS(HSUB); b++)
				cls.c[b] += h->c[b];
			cls.n += h->n;
			if (h->max > cls.max)
				cls.max = h->max;
		}
		uint64_t above = 0;
		for (unsigned b = pb + 1; b < HBUCKETS(HSUB); b++)
			above += cls.c[b];
		above_all += above;
		char m[64];
		snprintf(m, sizeof(m), "attrib_%s_ops", at_name[c]);
		out(wl, T, m, (double) cls.n);
		snprintf(m, sizeof(m), "attrib_%s_above_p999", at_name[c]);
		out(wl, T, m, (double) above);
		if (!cls.n)
			continue;
		snprintf(m, sizeof(m), "attrib_%s_p50_ns", at_name[c]);
		out(wl, T, m, (double) h_quantile(cls.c, NULL, HBUCKETS(HSUB),
		    HSUB, cls.n, 0.5) * ns_per_tsc);
		snprintf(m, sizeof(m), "attrib_%s_p999_ns", at_name[c]);
		out(wl, T, m, (double) h_quantile(cls.c, NULL, HBUCKETS(HSUB),
		    HSUB, cls.n, 0.999) * ns_per_tsc);
		snprintf(m, sizeof(m), "attrib_%s_max_us", at_name[c]);
		out(wl, T, m, (double) cls.max * ns_per_tsc / 1000);
	}
	out(wl, T, "attrib_above_p999", (double) above_all);
	out(wl, T, "attrib_p999_ns", (double) h_upper(pb, HSUB) * ns_per_tsc);
	memset(attrib_h, 0, (size_t) MAXT * AT_N * sizeof(hist_t));
}

/* --- values ------------------------------------------------------------------------------------ */

#define V_INIT 0x5555u
#define V_UPD 0xaaaau

static inline bool value_ok(uint64_t key, uint64_t v)
{
	return v == (key ^ V_INIT) || v == (key ^ V_UPD) || (is_set && v == key);
}

static inline void quiesce(uint64_t k)
{
	if (impl->quiescent && (k & 63) == 0)
		impl->quiescent();
}

/* --- grow ------------------------------------------------------------------------------------------ */

#define MAX_EVENTS 128
static size_t ev_keys[MAX_EVENTS];
static long ev_buckets[MAX_EVENTS];
static int nev;
/* The bucket count of the last event of this fill (written under ev_lock;
 * atomics: read without it to skip tables that do not say their size). */
static long ev_b;
static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;

static void body_grow(worker_t *w)
{
	size_t k = 0;
	for (size_t i = w->lo + (size_t) w->id; i < w->hi; i += (size_t) w->threads) {
		uint64_t key = key_present(i);
		struct rusage ru0;
		attrib_begin(&ru0);
		uint64_t t0 = tsc();
		/* -X: key 7 is "inserted" without reaching the table: the
		 * check must find it missing (tests/test_bench_big.py). */
		int ok = drop_one && i == 7 ? 1 :
		    impl->insert(w->t, key, key ^ V_INIT);
		uint64_t t1 = tsc();
		attrib_end(w->id, &ru0, t1 - t0, false);
		rec_add(w->rec, t1 - t0, t1);
		if (!ok)
			w->rec->errors++;
		quiesce(++k);
		/*
		 * Every thread watches the size every 256 of its inserts (a
		 * thread that the host held back sees it late, the others do
		 * not): where the table grows past a power of two (every
		 * doubling of a power-of-two table; the start of a level of
		 * the managed map's linear hashing, which grows one bucket at
		 * a time), noted at the keys inserted so far.
		 */
		if ((k & 255) == 0 && __atomic_load_n(&ev_b, __ATOMIC_RELAXED) > 0) {
			long nb = impl->buckets(w->t);
			pthread_mutex_lock(&ev_lock);
			if (nb > 0 && __builtin_clzl((unsigned long) nb) !=
			    __builtin_clzl((unsigned long) ev_b) &&
			    nev < MAX_EVENTS) {
				size_t n = w->lo;
				for (int j = 0; j < w->threads; j++)
					n += __atomic_load_n(&recs[j].ops,
					    __ATOMIC_RELAXED);
				ev_keys[nev] = n;
				ev_buckets[nev++] = nb;
				__atomic_store_n(&ev_b, nb, __ATOMIC_RELAXED);
			}
			pthread_mutex_unlock(&ev_lock);
		}
	}
}

/* Fills [lo, hi) with T threads; records into recs; returns the figures. */
static phase_res_t fill(void *t, const char *name, size_t lo, size_t hi)
{
	worker_t w[MAXT];
	__atomic_store_n(&ev_b, impl->buckets(t), __ATOMIC_RELAXED);
	for (int i = 0; i < T; i++)
		w[i] = (worker_t) { .threads = T, .t = t, .body = body_grow,
		    .lo = lo, .hi = hi };
	return run_phase(name, w, T, 0, hi - lo);
}

/* --- lookups, YCSB -------------------------------------------------------------------------------- */

enum { K_HIT, K_MISS, K_YCSB };
static size_t win_lo, win_hi;   /* the present keys: [win_lo, win_hi) */
/*
 * YCSB D: thread j inserts the keys d_base + j + T m, m = 0, 1, ..., and
 * publishes m + 1 in d_pub[j] after each (release); a reader reads only keys
 * below d_base + T min_j d_pub[j] (acquire), which are all in the table.
 */
static size_t d_base;
static size_t d_pub[MAXT];

static void body_mix(worker_t *w)
{
	uint64_t s = w->seed * 0x9e3779b97f4a7c15ull + 7;
	size_t n = w->hi - w->lo, zi = (size_t) (rnd(&s) % (w->zlen ? w->zlen : 1));
	uint64_t v;
	for (uint64_t k = 1; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); k++) {
		uint64_t r = rnd(&s);
		size_t idx;
		if (w->zipf) {
			idx = w->zs[zi];
			zi = zi + 1 == w->zlen ? 0 : zi + 1;
		} else {
			idx = (size_t) (r % n);
		}
		unsigned pct = (unsigned) ((r >> 40) % 100);
		uint64_t t0 = tsc();
		if (w->kind == K_MISS) {
			if (impl->lookup(w->t, key_absent(w->lo + idx), &v))
				w->rec->errors++;
		} else if (w->kind == K_HIT || pct >= (unsigned) w->mix) {
			/* A read (YCSB D: of the latest keys). */
			size_t i = w->lo + idx;
			if (w->special == 'D') {
				size_t m = SIZE_MAX;
				for (int j = 0; j < w->threads; j++) {
					size_t p = __atomic_load_n(&d_pub[j],
					    __ATOMIC_ACQUIRE);
					m = p < m ? p : m;
				}
				size_t newest = d_base + (size_t) w->threads * m;
				/* Rank idx back from the newest key. */
				i = newest - 1 - (idx % (newest - w->lo));
			}
			uint64_t key = key_present(i);
			if (!impl->lookup(w->t, key, &v) || !value_ok(key, v))
				w->rec->errors++;
		} else if (w->special == 'D') {
			size_t m = d_pub[w->id];
			uint64_t key = key_present(d_base + (size_t) w->id +
			    (size_t) w->threads * m);
			if (!impl->insert(w->t, key, key ^ V_INIT))
				w->rec->errors++;
			__atomic_store_n(&d_pub[w->id], m + 1, __ATOMIC_RELEASE);
		} else if (w->special == 'F') {
			/* Read-modify-write: flip between the two values. */
			uint64_t key = key_present(w->lo + idx);
			if (!impl->lookup(w->t, key, &v) || !value_ok(key, v))
				w->rec->errors++;
			else if (!impl->update(w->t, key, v == (key ^ V_INIT) ?
			    key ^ V_UPD : key ^ V_INIT))
				w->rec->errors++;
		} else {
			uint64_t key = key_present(w->lo + idx);
			if (!impl->update(w->t, key, key ^ V_UPD))
				w->rec->errors++;
		}
		uint64_t t1 = tsc();
		rec_add(w->rec, t1 - t0, t1);
		quiesce(k);
	}
}

/*
 * The YCSB mixes (Cooper et al., SoCC 2010): 'mix' is the percentage of
 * writes, or 'D' (95 % reads of the latest keys, 5 % inserts) and 'F'
 * (50 % reads, 50 % read-modify-writes).
 */
typedef struct {
	const char *name;
	unsigned kind, mix;   /* mix: write percentage */
	char special;         /* 'D', 'F' or 0 */
} mix_t;

static const mix_t mixes[] = {
	{ "ycsb-c", K_YCSB, 0, 0 },
	{ "ycsb-b", K_YCSB, 5, 0 },
	{ "ycsb-a", K_YCSB, 50, 0 },
	{ "ycsb-f", K_YCSB, 50, 'F' },
	{ "ycsb-d", K_YCSB, 5, 'D' },    /* last: it adds keys */
};

static uint32_t *zstream[MAXT];
/* Zipfian draws per thread, cycled: 2^22, or 16 per key for small tables. */
static size_t ZLEN = (size_t) 1 << 22;

static void make_zipf(size_t n)
{
	static size_t zn;
	if (zn == n)
		return;
	progress("zipf", "scrambled zipfian 0.99 over %zu keys", n);
	zipf_t z;
	zipf_init(&z, n, 0.99);
	for (int i = 0; i < T; i++) {
		if (!zstream[i])
			zstream[i] = malloc(ZLEN * sizeof(uint32_t));
		uint64_t s = (uint64_t) (i + 1) * 1000003u + 17;
		for (size_t k = 0; k < ZLEN; k++)
			zstream[i][k] = (uint32_t) zipf_next(&z, &s);
	}
	zn = n;
}

static void run_mix(void *t, const char *name, unsigned kind, unsigned mix,
    char special, bool zipf, double secs)
{
	worker_t w[MAXT];
	char wl[64];
	snprintf(wl, sizeof(wl), "%s%s", name, kind == K_YCSB ?
	    (zipf ? "-zipf" : "-uniform") : "");
	if (zipf)
		make_zipf(win_hi - win_lo);
	d_base = win_hi;
	memset(d_pub, 0, sizeof(d_pub));
	for (int i = 0; i < T; i++)
		w[i] = (worker_t) { .threads = T, .t = t, .body = body_mix,
		    .lo = win_lo, .hi = win_hi, .kind = kind, .mix = mix,
		    .special = special, .zipf = zipf, .zs = zstream[i], .zlen = zipf ? ZLEN : 0,
		    .seed = (uint64_t) i * 31 + mix * 7 + zipf };
	phase_res_t r = run_phase(wl, w, T, secs, 0);
	if (special == 'D') {
		/* Even the threads' inserts: the window stays contiguous. */
		size_t mx = 0;
		for (int i = 0; i < T; i++)
			mx = d_pub[i] > mx ? d_pub[i] : mx;
		for (int i = 0; i < T; i++)
			for (size_t m = d_pub[i]; m < mx; m++) {
				uint64_t key = key_present(d_base + (size_t) i +
				    (size_t) T * m);
				if (!impl->insert(t, key, key ^ V_INIT))
					r.errors++;
				quiesce(m);
			}
		win_hi = d_base + (size_t) T * mx;
	}
	report(wl, T, T, &r);
}

/* --- resize (Triplett) ------------------------------------------------------------------------------- */

/*
 * The thread beside the readers of the resize phase: a flipper (resizes the
 * table between a and b buckets until stop or the phase's end) or a grower
 * (a table that only grows, grow(), the managed inline map: grows it to `to`
 * buckets once the phase after gen has started, then sets phase_stop, which
 * ends the readers). One thread entry for both; run() is the work.
 */
typedef struct resizer {
	void (*run)(struct resizer *r);
	void *t;
	size_t a, b;            /* flipper: the two sizes */
	uint64_t resizes;       /* flipper: resizes done */
	int stop;               /* flipper: set by the phase */
	size_t to;              /* grower: the target bucket count */
	uint64_t gen;           /* both: phase_gen before the phase */
	double secs;            /* grower: time of the growth */
	int ok;                 /* grower: grow() succeeded */
} resizer_t;

static void *resizer_main(void *p)
{
	resizer_t *r = p;
	impl->thread_init();
	r->run(r);
	impl->thread_fini();
	return NULL;
}

static bool flip_stopped(resizer_t *f)
{
	return __atomic_load_n(&f->stop, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&phase_stop, __ATOMIC_RELAXED);
}

/**
 * For tests: BENCH_RESIZER_LAG_MS (1..1000) delays the main thread this
 * long between starting the flipper and starting the phase's readers, as a
 * preemption of the main thread there would (the flipper must not act on
 * the previous phase's end).
 */
static void resizer_lag(void)
{
	const char *v = getenv("BENCH_RESIZER_LAG_MS");
	char *end;
	long ms = v ? strtol(v, &end, 10) : 0;
	if (v && *v && !*end && ms >= 1 && ms <= 1000)
		bench_sleep_us(ms * 1000);
}

static void flip_run(resizer_t *f)
{
	/*
	 * The phase starts after this thread does: until run_phase() bumps
	 * phase_gen past f->gen, phase_stop is still the previous phase's 1
	 * (it is reset to 0 before the bump, which is a release, so the
	 * acquire here then sees the reset or a later stop). Looking at it
	 * earlier ended the flipper before its first resize whenever it ran
	 * before the readers started (a round with 0 resizes).
	 */
	while (__atomic_load_n(&phase_gen, __ATOMIC_ACQUIRE) == f->gen &&
	    !__atomic_load_n(&f->stop, __ATOMIC_RELAXED))
		bench_sleep_us(200);
	/*
	 * Also stops when the phase's time is up, looked at before every
	 * resize: readers that a resize starves could not finish otherwise.
	 * libcuckoo's rehash holds every bucket lock and at 1e8 keys takes
	 * 10-20 s with the readers spinning beside it; back to back, no
	 * lookup completes in the whole phase. That is the measurement (a
	 * resizing/fixed ratio of 0), not a stall: each completed resize
	 * moved the table's keys and counts as that many operations of
	 * progress for the watchdog (bench.h), which the readers alone would
	 * not make (at 1e8 keys and 2 threads the watchdog said
	 * "resize-resizing stalled after 31.4 s: 0 ops per CPU second").
	 */
	size_t moved = win_hi - win_lo;
	for (int k = 0; !flip_stopped(f); k ^= 1) {
		impl->resize(f->t, (k ? f->a : f->b) >> impl->resize_shift);
		f->resizes++;
		bench_progress_add(moved);
	}
}

static void grow_run(resizer_t *g)
{
	while (__atomic_load_n(&phase_gen, __ATOMIC_ACQUIRE) == g->gen)
		bench_sleep_us(1000);
	double t0 = now_s();
	g->ok = impl->grow(g->t, g->to);
	g->secs = now_s() - t0;
	__atomic_store_n(&phase_stop, 1, __ATOMIC_RELAXED);
}

/*
 * Rounds of: lookups at the present size (resize-fixed-n), then lookups
 * while a thread grows the table by b0 / rounds buckets (resize-resizing),
 * so that after the last round it has twice the b0 it started with; then
 * lookups at that size (resize-fixed-m). Per round, resizing / fixed-n is
 * the Triplett ratio of a table that cannot shrink.
 */
static void phase_resize_grow(void *t, double secs, int rounds)
{
	size_t b0 = (size_t) impl->buckets(t);
	const char *base = suffix;
	char rs[96];
	for (int rd = 1; rd <= rounds; rd++) {
		round_suffix(rs, sizeof(rs), base, rd, rounds);
		size_t from = (size_t) impl->buckets(t);
		run_mix(t, "resize-fixed-n", K_HIT, 0, 0, false, secs);
		out("resize-fixed-n", T, "buckets", (double) from);
		resizer_t g = { .run = grow_run, .t = t, .to = b0 + b0 *
		    (size_t) rd / (size_t) rounds,
		    .gen = __atomic_load_n(&phase_gen, __ATOMIC_ACQUIRE) };
		pthread_t gt;
		pthread_create(&gt, NULL, resizer_main, &g);
		progress("resize", "lookups while growing %zu -> %zu buckets",
		    from, g.to);
		/* The grower ends the phase; 600 s only as a bound. */
		run_mix(t, "resize-resizing", K_HIT, 0, 0, false, 600);
		if (impl->offline)
			impl->offline();
		pthread_join(gt, NULL);
		if (impl->online)
			impl->online();
		size_t to = (size_t) impl->buckets(t);
		if (!g.ok || to < g.to)
			total_errors++;
		out("resize-resizing", T, "buckets_a", (double) from);
		out("resize-resizing", T, "buckets_b", (double) to);
		out("resize-resizing", T, "grow_seconds", g.secs);
		out("resize-resizing", T, "splits_per_s", (double) (to - from) /
		    g.secs);
	}
	suffix = base;
	run_mix(t, "resize-fixed-m", K_HIT, 0, 0, false, secs);
	out("resize-fixed-m", T, "buckets", (double) impl->buckets(t));
}

static void phase_resize(void *t, double secs, int rounds)
{
	long b = impl->buckets(t);
	if (!impl->resize && impl->grow && b > 0) {
		phase_resize_grow(t, secs, rounds);
		return;
	}
	if (!impl->resize) {
		out("resize", T, "unsupported", 1);
		progress("resize", "skipped: no resize on demand beside other "
		    "operations");
		return;
	}
	/* A table that does not say its size (cds_lfht) is resized to the
	 * power of two at or above its keys first, and flipped from there. */
	if (b <= 0)
		b = (long) bench_pow2(win_hi - win_lo);
	/* Chained tables flip to half their buckets (fuller chains), inline
	 * ones to twice (they cannot hold N keys in half). */
	size_t a = (size_t) b, c = strcmp(impl->layout, "inline") == 0 ?
	    2 * (size_t) b : (size_t) b / 2;
	size_t sizes[2] = { a, c };
	const char *base = suffix;
	char rs[96];
	/* Rounds (-R): fixed at both sizes and resizing, interleaved. */
	for (int rd = 1; rd <= rounds; rd++) {
		round_suffix(rs, sizeof(rs), base, rd, rounds);
		for (int k = 0; k < 2; k++) {
			impl->resize(t, sizes[k] >> impl->resize_shift);
			settle_offline(t, 1);
			char wl[48];
			snprintf(wl, sizeof(wl), "resize-fixed-%s", k == 0 ? "n" :
			    "m");
			run_mix(t, wl, K_HIT, 0, 0, false, secs);
			out(wl, T, "buckets", (double) sizes[k]);
		}
		resizer_t f = { .run = flip_run, .t = t, .a = c, .b = a,
		    .gen = __atomic_load_n(&phase_gen, __ATOMIC_ACQUIRE) };
		pthread_t ft;
		pthread_create(&ft, NULL, resizer_main, &f);
		resizer_lag();
		run_mix(t, "resize-resizing", K_HIT, 0, 0, false, secs);
		__atomic_store_n(&f.stop, 1, __ATOMIC_RELAXED);
		if (impl->offline)
			impl->offline();
		pthread_join(ft, NULL);
		impl->resize(t, a >> impl->resize_shift);
		impl->settle(t);
		if (impl->online)
			impl->online();
		out("resize-resizing", T, "resizes", (double) f.resizes);
		out("resize-resizing", T, "buckets_a", (double) a);
		out("resize-resizing", T, "buckets_b", (double) c);
	}
	suffix = base;
}

/* --- churn --------------------------------------------------------------------------------------- */

/*
 * Thread j owns the keys lo + j + T m of the window and its next ones
 * hi + j + T m: each pair removes its oldest and inserts its next, so the
 * table keeps N keys. Afterwards the main thread evens the threads' pair
 * counts, so the window is contiguous again.
 */
static void body_churn(worker_t *w)
{
	size_t m = 0, step = (size_t) w->threads;
	for (; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); m++) {
		uint64_t ko = key_present(w->lo + (size_t) w->id + step * m);
		uint64_t kn = key_present(w->hi + (size_t) w->id + step * m);
		uint64_t t0 = tsc();
		int ok = impl->remove(w->t, ko);
		uint64_t t1 = tsc();
		rec_add(w->rec, t1 - t0, t1);
		ok &= impl->insert(w->t, kn, kn ^ V_INIT);
		uint64_t t2 = tsc();
		rec_add(w->rec, t2 - t1, t2);
		if (!ok)
			w->rec->errors++;
		quiesce(m);
	}
	w->pairs = m;
}

static void report_flat(const char *wl, const phase_res_t *r)
{
	out(wl, T, "rss_start_mb", r->rss_first / 1048576.0);
	out(wl, T, "rss_end_mb", r->rss_end / 1048576.0);
	out(wl, T, "heap_start_mb", r->heap_first / 1048576.0);
	out(wl, T, "heap_end_mb", r->heap_end / 1048576.0);
	/* Flatness over the second half: (max - min) / min; the heap's from
	 * its fresh figures only (heap_sampler_t). */
	if (r->heap_max2 >= r->heap_min2 && r->heap_min2 != SIZE_MAX)
		out(wl, T, "heap_flat_pct", 100.0 * (double) (r->heap_max2 -
		    r->heap_min2) / (double) r->heap_min2);
	if (r->rss_max2 >= r->rss_min2 && r->rss_min2 != SIZE_MAX)
		out(wl, T, "rss_flat_pct", 100.0 * (double) (r->rss_max2 -
		    r->rss_min2) / (double) r->rss_min2);
	out(wl, T, "heap_growth_pct", 100.0 * ((double) r->heap_end -
	    (double) r->heap_first) / (double) r->heap_first);
}

static void phase_churn(void *t, double secs)
{
	if (impl->no_concurrent_remove && T > 1) {
		out("churn", T, "unsupported", 1);
		progress("churn", "skipped: remove is not safe beside other "
		    "operations");
		return;
	}
	worker_t w[MAXT];
	for (int i = 0; i < T; i++)
		w[i] = (worker_t) { .threads = T, .t = t, .body = body_churn,
		    .lo = win_lo, .hi = win_hi };
	phase_res_t r = run_phase("churn", w, T, secs, 0);
	size_t mx = 0, extra_err = 0;
	for (int i = 0; i < T; i++)
		mx = w[i].pairs > mx ? w[i].pairs : mx;
	for (int i = 0; i < T; i++)
		for (size_t m = w[i].pairs; m < mx; m++) {
			uint64_t ko = key_present(win_lo + (size_t) i + (size_t) T * m);
			uint64_t kn = key_present(win_hi + (size_t) i + (size_t) T * m);
			if (!impl->remove(t, ko) || !impl->insert(t, kn, kn ^ V_INIT))
				extra_err++;
			quiesce(m);
		}
	win_lo += mx * (size_t) T;
	win_hi += mx * (size_t) T;
	r.errors += extra_err;
	report("churn", T, T, &r);
	report_flat("churn", &r);
}

/* --- soak ---------------------------------------------------------------------------------------- */

#define RING ((size_t) 65536)   /* absent keys the writer keeps inserted */
static size_t ring_next;        /* absent keys inserted so far */

/*
 * The writer: write i is due at start + i / rate; its latency runs from
 * then, not from when it began (a stall delays the writes behind it, and
 * they count it). Of every four writes, two replace a value, one inserts
 * the next absent key, one removes the absent key inserted RING before
 * (a replace until the ring is full, and for tables whose remove is not
 * concurrency-safe).
 */
static void body_writer(worker_t *w)
{
	uint64_t s = 99;
	uint64_t start = w->rec->start;
	double ticks_per_op = tsc_per_ns * 1e9 / w->rate;
	size_t n = w->hi - w->lo;
	for (uint64_t i = 0; !__atomic_load_n(w->stop, __ATOMIC_RELAXED); i++) {
		uint64_t due = start + (uint64_t) ((double) i * ticks_per_op);
		uint64_t now = tsc();
		if (now < due) {
			double ahead_us = (double) (due - now) * ns_per_tsc / 1000;
			if (ahead_us > 200)
				bench_sleep_us((long) ahead_us - 100);
			while (tsc() < due)
				__builtin_ia32_pause();
		}
		int ok = 1;
		unsigned op = (unsigned) (i & 3);
		bool ring_ok = !impl->no_concurrent_remove;
		if (op == 1 && ring_ok) {
			uint64_t key = key_absent(ring_next);
			ok = impl->insert(w->t, key, key ^ V_INIT);
			ring_next++;
		} else if (op == 3 && ring_ok && ring_next > RING) {
			ok = impl->remove(w->t, key_absent(ring_next - 1 - RING));
			/* The ring keeps RING keys: this one is out. */
		} else {
			uint64_t key = key_present(w->lo + (size_t) (rnd(&s) % n));
			ok = impl->update(w->t, key, key ^ V_UPD);
		}
		uint64_t end = tsc();
		rec_add(w->rec, end - due, end);
		if (!ok)
			w->rec->errors++;
		quiesce(i);
	}
}

static void phase_soak(void *t, double lsecs, double secs, double rate)
{
	worker_t w[MAXT + 1];
	int readers = T > 1 ? T - 1 : 1;
	/* Lookups alone first: the outliers the host shows without writes. */
	for (int i = 0; i < readers; i++)
		w[i] = (worker_t) { .threads = readers, .t = t, .body = body_mix,
		    .lo = win_lo, .hi = win_hi, .kind = K_HIT, .seed = 1000u + i };
	phase_res_t r = run_phase("soak-lookups-alone", w, readers, lsecs, 0);
	report("soak-lookups-alone", readers, readers, &r);
	for (int i = 0; i < readers; i++)
		w[i] = (worker_t) { .threads = readers, .t = t, .body = body_mix,
		    .lo = win_lo, .hi = win_hi, .kind = K_HIT, .seed = 2000u + i };
	w[readers] = (worker_t) { .threads = 1, .t = t, .body = body_writer,
	    .lo = win_lo, .hi = win_hi, .rate = rate };
	r = run_phase("soak", w, readers + 1, secs, 0);
	/* Readers and the writer separately. */
	report("soak-lookups", readers, readers, &r);
	rec_t keep = recs[0];
	recs[0] = recs[readers];
	phase_res_t rw = r;
	rw.errors = 0;  /* counted with the lookups above */
	report("soak-writes", 1, 1, &rw);
	out("soak-writes", 1, "rate_target", rate);
	out("soak-writes", 1, "rate_done", (double) recs[0].h.n / r.secs);
	recs[readers] = recs[0];
	recs[0] = keep;
	report_flat("soak", &r);
}

/* --- check ---------------------------------------------------------------------------------------- */

static void body_check(worker_t *w)
{
	uint64_t v;
	size_t k = 0;
	for (size_t i = w->lo + (size_t) w->id; i < w->hi; i += (size_t) w->threads) {
		uint64_t key = key_present(i);
		uint64_t t0 = tsc();
		/* kind 2 (the shrink): the remove alone, timed. */
		int ok = w->kind == 2 ? impl->remove(w->t, key) :
		    impl->lookup(w->t, key, &v) && value_ok(key, v);
		if (ok && w->kind == 1)
			ok = impl->remove(w->t, key);
		uint64_t t1 = tsc();
		rec_add(w->rec, t1 - t0, t1);
		if (!ok)
			w->rec->errors++;
		/* An absent key must be absent. */
		if ((k & 15) == 0 && impl->lookup(w->t, key_absent(ring_next + i), &v))
			w->rec->errors++;
		quiesce(++k);
	}
}

/** Every key of [lo, hi) present with a value the harness wrote; with
 *  @a remove each is then removed (single-threaded when remove is not
 *  concurrency-safe). Returns the errors. */
static uint64_t check_keys(void *t, const char *name, size_t lo, size_t hi,
    bool remove)
{
	worker_t w[MAXT];
	int th = remove && impl->no_concurrent_remove ? 1 : T;
	for (int i = 0; i < th; i++)
		w[i] = (worker_t) { .threads = th, .t = t, .body = body_check,
		    .lo = lo, .hi = hi, .kind = remove };
	phase_res_t r = run_phase(name, w, th, 0, hi - lo);
	out(name, th, "keys", (double) (hi - lo));
	out(name, th, "errors", (double) r.errors);
	out(name, th, "seconds", r.secs);
	return r.errors;
}

/* --- shrink ------------------------------------------------------------------------------------ */

/** The allocator's figure and RSS at the process's start (main()). */
static size_t heap_start, rss_start;

/** The allocator's figure and RSS above the process's start, rows
 *  heap_WHEN_mb and rss_WHEN_mb of the shrink; returns the allocator's
 *  figure above the start, the RSS above it in @a rss (bytes). */
static double shrink_mem(const char *when, double *rss)
{
	char m[48];
	double heap = (double) bench_heap_bytes() - (double) heap_start;
	*rss = (double) bench_rss_bytes() - (double) rss_start;
	snprintf(m, sizeof(m), "heap_%s_mb", when);
	out("shrink", T, m, heap / 1048576.0);
	snprintf(m, sizeof(m), "rss_%s_mb", when);
	out("shrink", T, m, *rss / 1048576.0);
	return heap;
}

/*
 * The shrink: the table's present keys [win_lo, win_hi) deleted down to the
 * first eighth, every delete timed (one thread when remove is not safe
 * beside others); then every deleted key looked up (must be absent), and the
 * memory before, right after the deletes, and after the table settled (its
 * shrinking resize and deferred frees done) and malloc_trim(0) (glibc
 * returns what it can). Rows: the deletes' throughput and percentiles,
 * keys_before, keys_after, buckets_before, buckets_after (-1: the table does
 * not say), heap_*_mb and rss_*_mb above the process's start (before,
 * deleted, settled), heap_ and rss_settled_over_before, absent_errors. The
 * window ends at the kept keys. It runs before the soak, whose ring of
 * other keys would stay in the table.
 */
static void phase_shrink(void *t)
{
	size_t n = win_hi - win_lo, keep = win_lo + n / 8;
	double rss0, rss1, rss2;
	int th = impl->no_concurrent_remove ? 1 : T;
	settle_offline(t, 1);
	long b0 = impl->buckets(t);
	double h0 = shrink_mem("before", &rss0);
	worker_t w[MAXT];
	for (int i = 0; i < th; i++)
		w[i] = (worker_t) { .threads = th, .t = t, .body = body_check,
		    .lo = keep, .hi = win_hi, .kind = 2 };
	phase_res_t r = run_phase("shrink", w, th, 0, win_hi - keep);
	report("shrink", th, th, &r);
	(void) shrink_mem("deleted", &rss1);
	settle_offline(t, 2);
	malloc_trim(0);
	double h2 = shrink_mem("settled", &rss2);
	long b1 = impl->buckets(t);
	uint64_t v, absent = 0;
	for (size_t i = keep; i < win_hi; i++) {
		if (impl->lookup(t, key_present(i), &v))
			absent++;
		quiesce(i);
	}
	out("shrink", T, "keys_before", (double) n);
	out("shrink", T, "keys_after", (double) (keep - win_lo));
	out("shrink", T, "buckets_before", (double) b0);
	out("shrink", T, "buckets_after", (double) b1);
	out("shrink", T, "heap_settled_over_before", h2 / h0);
	out("shrink", T, "rss_settled_over_before", rss2 / rss0);
	out("shrink", T, "absent_errors", (double) absent);
	progress("shrink", "%zu -> %zu keys, %ld -> %ld buckets, heap %.3g -> "
	    "%.3g GB, rss %.3g -> %.3g GB", n, keep - win_lo, b0, b1, h0 / 1e9,
	    h2 / 1e9, rss0 / 1e9, rss2 / 1e9);
	total_errors += absent;
	win_hi = keep;
}

/** The absent-key ring of the soak: the last RING inserted present, the
 *  ones before removed (or all present when removes were skipped). */
static uint64_t check_ring(void *t, bool remove)
{
	uint64_t err = 0, v;
	size_t first = impl->no_concurrent_remove || ring_next <= RING ? 0 :
	    ring_next - RING;
	/* Removes lag inserts by up to one group: allow a present key below. */
	for (size_t i = 0; i < ring_next; i++) {
		uint64_t key = key_absent(i);
		int hit = impl->lookup(t, key, &v);
		if (i >= first + 1 && (!hit || !value_ok(key, v)))
			err++;
		if (i + 1 < first && hit)
			err++;
		if (hit && remove && !impl->remove(t, key))
			err++;
		quiesce(i);
	}
	return err;
}

/* --- crossing -------------------------------------------------------------------------------------- */

/*
 * The crossing window: the workers insert keys from w->lo upward (thread j
 * the keys lo + j + T m) until they reach cross_end. Each polls the bucket
 * count every 256 of its inserts; the first to see it crossed a power of two
 * since the window began (a doubling, or the start of a level of the managed
 * map's linear hashing) notes the keys inserted so far (cross_seen, a CAS
 * from 0; atomics, relaxed: only the harness's bookkeeping) and, for a table
 * whose grow runs on a worker
 * (cross_follow), ends the window cross_tail keys later (never before
 * cross_min). A worker that read cross_end late may have inserted a few keys
 * beyond where the others stopped: phase_crossing() inserts the gaps below
 * the highest key, untimed, so that the window's keys are [lo, hi) exactly.
 */
static size_t cross_end, cross_min, cross_tail, cross_seen;
static bool cross_follow;
static long cross_b0;
static size_t cross_next[MAXT];  /* per thread: the first key not inserted */

static bool crossed(long b0, long b1)
{
	return b0 > 0 && b1 > 0 && __builtin_clzl((unsigned long) b0) !=
	    __builtin_clzl((unsigned long) b1);
}

static void body_cross(worker_t *w)
{
	size_t k = 0, i;
	for (i = w->lo + (size_t) w->id;
	    i < __atomic_load_n(&cross_end, __ATOMIC_RELAXED);
	    i += (size_t) w->threads) {
		uint64_t key = key_present(i);
		struct rusage ru0;
		attrib_begin(&ru0);
		uint64_t t0 = tsc();
		int ok = impl->insert(w->t, key, key ^ V_INIT);
		uint64_t t1 = tsc();
		attrib_end(w->id, &ru0, t1 - t0,
		    __atomic_load_n(&cross_seen, __ATOMIC_RELAXED) != 0);
		rec_add(w->rec, t1 - t0, t1);
		if (!ok)
			w->rec->errors++;
		quiesce(++k);
		if ((k & 255) != 0 || __atomic_load_n(&cross_seen,
		    __ATOMIC_RELAXED) || !crossed(cross_b0, impl->buckets(w->t)))
			continue;
		/* The keys in the table now: lo and every window insert. */
		size_t none = 0, n = w->lo;
		for (int j = 0; j < w->threads; j++)
			n += __atomic_load_n(&recs[j].ops, __ATOMIC_RELAXED);
		if (__atomic_compare_exchange_n(&cross_seen, &none, n, false,
		    __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
			if (cross_follow) {
				size_t e = n + cross_tail;
				e = e < cross_min ? cross_min : e;
				if (e < __atomic_load_n(&cross_end,
				    __ATOMIC_RELAXED))
					__atomic_store_n(&cross_end, e,
					    __ATOMIC_RELAXED);
			}
		}
	}
	cross_next[w->id] = i;
}

/*
 * Fills @a t until its next grow point is the last one an insert of the N
 * keys reaches (the table doubles: the grow point g with 2g + 1 > N), asking
 * the library for each grow point (impl->grow_at) and waiting after each
 * grow (settle), so that each grow is the one step the limit asks for.
 * Returns that grow point (the insert that makes the count g + 1 requests the
 * grow) and sets *@a filled to the keys inserted; 0 when the table's first
 * grow point is already beyond N (a presized table).
 */
static size_t fill_to_last_grow(void *t, size_t *filled)
{
	size_t done = 0;
	for (;;) {
		long g = impl->grow_at(t);
		if (g < 0 || (size_t) g + 1 > N) {
			*filled = done;
			return 0;
		}
		if (2 * (size_t) g + 1 > N) {
			*filled = done;
			return (size_t) g;
		}
		if ((size_t) g + 1 > done) {
			phase_res_t r = fill(t, "crossing-fill", done,
			    (size_t) g + 1);
			total_errors += r.errors;
			done = (size_t) g + 1;
		}
		settle_offline(t, 1);
		if (impl->grow_at(t) == g) {
			fprintf(stderr, "%s: crossing: the table did not grow past "
			    "its grow point %ld\n", impl->name, g);
			exit(1);
		}
	}
}

/* Inserts, untimed, the keys of [lo, hi) a worker of the window left out. */
static uint64_t cross_gaps(void *t, size_t hi, size_t *gaps)
{
	uint64_t err = 0;
	for (int j = 0; j < T; j++)
		for (size_t i = cross_next[j]; i < hi; i += (size_t) T) {
			uint64_t key = key_present(i);
			err += !impl->insert(t, key, key ^ V_INIT);
			(*gaps)++;
			quiesce(i);
		}
	return err;
}

static void phase_crossing(void)
{
	/* The grow phase's poll sees a change up to 256 x T inserts late. */
	size_t margin = 256 * (size_t) T * 2;
	size_t w = N / 64 > margin ? N / 64 : margin;
	size_t at = 0, lo, hi_max, filled = 0;
	long before = -1, after = -1;
	const char *how;
	/*
	 * The memory the phases before freed (the full run's table of N
	 * keys) goes back first, so that the window's items take new pages
	 * as its control's do (below); glibc keeps at most the top of each
	 * thread arena's last heap (64 MiB).
	 */
	malloc_trim(0);
	size_t rss_before = bench_rss_bytes();
	void *t = impl->create(N, 0);
	if (impl->grow_at && (at = fill_to_last_grow(t, &filled)) > 0) {
		/*
		 * The library says where it asks for the grow: the window
		 * starts w / 2 keys before and runs until the bucket count has
		 * crossed (the grow runs on a worker, for seconds at 1e8 keys)
		 * and w / 2 keys beyond; at most up to 2 at (where the table
		 * holds twice its load limit) and 2^17 more keys, so that a
		 * small table's resizer that the host held back for a few ms
		 * still publishes inside the window.
		 */
		how = "the library's grow point";
		w = N / 64 > 2048 * (size_t) T ? N / 64 : 2048 * (size_t) T;
		lo = at + 1 > w / 2 ? at + 1 - w / 2 : 0;
		lo = lo < filled ? filled : lo;
		cross_follow = true;
		cross_min = at + 1 + w / 2;
		hi_max = 2 * at + ((size_t) 1 << 17);
		cross_tail = w / 2;
	} else {
		/* The last power-of-two crossing at or below N the grow
		 * phase saw, else the largest power of two <= N. */
		for (int i = 0; i < nev; i++)
			if (ev_keys[i] <= N) {
				at = ev_keys[i];
				after = ev_buckets[i];
				before = i ? ev_buckets[i - 1] : -1;
			}
		how = at ? "observed in the grow phase" : "power-of-two";
		bool seen = at > 0;
		if (!at) {
			at = 1;
			while (at * 2 <= N)
				at *= 2;
		}
		/*
		 * Where the grow phase saw the crossing, a table that says its
		 * size is followed as above, from at/8 keys earlier: the same
		 * table does not cross at the same key every time (the managed
		 * map's splits, paid one per insert by whichever thread holds
		 * the split lock, fell 10 % behind its load in one 2-thread
		 * grow phase on a loaded host and not in the next table).
		 */
		size_t slack = seen && impl->buckets(t) > 0 ? at / 8 : 0;
		lo = at > w + margin + slack ? at - margin - w / 2 - slack : 0;
		lo = lo < filled ? filled : lo;
		cross_follow = slack > 0;
		cross_tail = slack ? w / 2 : 0;
		/* Up to w / 2 + margin keys beyond it: the poll below sees
		 * the change up to 256 x T inserts late, as the grow phase's. */
		cross_min = hi_max = at + w / 2 + 2 * margin;
		if (slack)
			hi_max = at + at / 4 + w + 2 * margin;
	}
	info("crossing_threshold", how);
	progress("crossing", "fill to %zu, then inserts across %zu (%s), at most "
	    "to %zu", lo, at, how, hi_max);
	/*
	 * A table whose bucket count grows a little with every insert (the
	 * managed map's linear hashing) may reach the power of two the grow
	 * phase saw crossed earlier in this table than there (that table's
	 * splits may have fallen behind): fill in steps and stop once its
	 * count is within 1/16 of that power, so that the window still holds
	 * the crossing. A doubling table stays at half the power until it
	 * crosses and is filled to lo as before.
	 */
	long pow2 = 0;
	if (cross_follow && !impl->grow_at && after > 0) {
		pow2 = 1;
		while (pow2 * 2 <= after)
			pow2 *= 2;
	}
	while (lo > filled) {
		size_t step = pow2 > 0 ? (w / 4 > 1024 ? w / 4 : 1024) : lo - filled;
		size_t to = filled + step < lo ? filled + step : lo;
		phase_res_t r = fill(t, "crossing-fill", filled, to);
		total_errors += r.errors;
		filled = to;
		if (pow2 > 0 && impl->buckets(t) >= pow2 - pow2 / 16) {
			progress("crossing", "stopped the fill at %zu keys: %ld "
			    "buckets, within 1/16 of %ld", filled,
			    impl->buckets(t), pow2);
			lo = filled;
		}
	}
	cross_b0 = impl->buckets(t);
	cross_seen = 0;
	__atomic_store_n(&cross_end, hi_max, __ATOMIC_RELAXED);
	worker_t wk[MAXT];
	for (int i = 0; i < T; i++)
		wk[i] = (worker_t) { .threads = T, .t = t, .body = body_cross,
		    .lo = lo, .hi = hi_max };
	attrib_active = attrib;
	phase_res_t r = run_phase("crossing", wk, T, 0, cross_min - lo);
	attrib_active = false;
	long b1 = impl->buckets(t);
	/* The window's keys: [lo, hi), hi one past the highest inserted. */
	size_t hi = lo, gaps = 0;
	for (int j = 0; j < T; j++)
		if (cross_next[j] >= lo + (size_t) T && cross_next[j] -
		    (size_t) T + 1 > hi)
			hi = cross_next[j] - (size_t) T + 1;
	uint64_t err = cross_gaps(t, hi, &gaps);
	report("crossing", T, T, &r);
	double p999 = last_p999_ns, mx = last_max_us;
	if (attrib)
		report_attrib("crossing");
	/*
	 * A table that says its size but did not cross a power of two in the
	 * whole grow phase (libcuckoo's first table holds 2^18 keys) has no
	 * grow point at or below N: nothing to verify.
	 */
	bool no_point = !cross_follow && nev == 0 && cross_b0 > 0 &&
	    strcmp(how, "power-of-two") == 0;
	bool known = cross_b0 > 0 && b1 > 0 && !no_point;
	bool ok = crossed(cross_b0, b1);
	out("crossing", T, "no_grow_point", (double) no_point);
	out("crossing", T, "at_keys", (double) at);
	out("crossing", T, "from_keys", (double) lo);
	out("crossing", T, "to_keys", (double) hi);
	out("crossing", T, "gap_keys", (double) gaps);
	out("crossing", T, "buckets_before", (double) cross_b0);
	out("crossing", T, "buckets_after", (double) b1);
	out("crossing", T, "crossed_at_keys", (double) cross_seen);
	out("crossing", T, "crossed", known ? (double) ok : -1);
	out("crossing", T, "grow_seen_before", (double) before);
	out("crossing", T, "grow_seen_after", (double) after);
	if (known && !ok) {
		fprintf(stderr, "%s: crossing: no resize inside the window "
		    "(%ld buckets before and %ld after [%zu, %zu))\n", impl->name,
		    cross_b0, b1, lo, hi);
		err++;
	}
	if (!known)
		progress("crossing", "%s: the window [%zu, %zu) is not verified "
		    "to cross", no_point ? "no grow point at or below N" :
		    "the table does not say its size", lo, hi);
	/*
	 * The control: the same window into a table created for max(N, 5/4 hi)
	 * keys (as the presized run creates it for N; libcuckoo's table for
	 * exactly hi keys grew inside the window, at 95 % of its slots), so
	 * that the crossing's tail is compared with inserts that no resize can
	 * have slowed; its buckets before and after are in the rows.
	 *
	 * Its inserts must take their memory from new pages, as the window's
	 * did. When it ran after the crossing's table was destroyed they
	 * reused that table's resident chunks and took no page fault, while
	 * 1.6 % of the window's inserts faulted in a new heap page: -A at 1e7
	 * keys filed 37-74 % of the window's slowest 0.1 % under page faults
	 * and 1 insert of the control's 1.1-1.6 M, which made the p99.9 ratio
	 * 6-12x (bench/RESULTS.md, "Where the crossing's tail goes").
	 * malloc_trim(0) after the destroy did not fix it: glibc keeps the top
	 * of a thread arena's last heap, which is the whole heap of a small
	 * table (2^16 and 2^20 keys: the control 1 fault per 300-700 inserts
	 * against the window's 1 per 64) and 8-64 MiB of a large one. So the
	 * crossing's table stays while the control runs, where the memory
	 * allows it (MemAvailable at least 5/4 of what the crossing's table
	 * holds; row control_beside_window 1), and the control cannot reuse
	 * its pages; else it is destroyed and the heap trimmed first (row 0).
	 */
	void *crossed_t = t;
	size_t held = bench_rss_bytes() > rss_before ? bench_rss_bytes() -
	    rss_before : 0;
	bool beside = !impl->presized && proc_kb("/proc/meminfo",
	    "MemAvailable:") >= held + held / 4;
	/* Every key checked; removed (and its item freed) only after the
	 * control when the table stays beside it. */
	err += check_keys(t, "crossing-check", 0, hi, !beside);
	settle_offline(t, 1);
	if (!beside) {
		impl->destroy(crossed_t);
		crossed_t = NULL;
		malloc_trim(0);
	}
	out("crossing", T, "control_beside_window", (double) beside);
	if (!impl->presized) {
		size_t pn = hi + hi / 4 > N ? hi + hi / 4 : N;
		t = impl->create(pn, pn);
		phase_res_t rf = fill(t, "crossing-presized-fill", 0, lo);
		total_errors += rf.errors;
		long pb0 = impl->buckets(t);
		attrib_active = attrib;
		phase_res_t rp = fill(t, "crossing-presized", lo, hi);
		attrib_active = false;
		long pb1 = impl->buckets(t);
		report("crossing-presized", T, T, &rp);
		if (attrib)
			report_attrib("crossing-presized");
		out("crossing-presized", T, "buckets_before", (double) pb0);
		out("crossing-presized", T, "buckets_after", (double) pb1);
		if (last_p999_ns > 0 && last_max_us > 0) {
			out("crossing", T, "p999_over_presized", p999 / last_p999_ns);
			out("crossing", T, "max_over_presized", mx / last_max_us);
		}
		err += check_keys(t, "crossing-presized-check", 0, hi, true);
		settle_offline(t, 1);
		impl->destroy(t);
	}
	if (crossed_t) {
		err += check_keys(crossed_t, "crossing-remove", 0, hi, true);
		settle_offline(crossed_t, 1);
		impl->destroy(crossed_t);
	}
	if (err) {
		fprintf(stderr, "%s: crossing check failed (%llu errors)\n",
		    impl->name, (unsigned long long) err);
		exit(1);
	}
}

/* --- main ----------------------------------------------------------------------------------------- */

static void usage(void)
{
	fprintf(stderr,
	    "usage: bench_us big IMPL [-k KEYS] [-t THREADS] [-P] [-d SECS] "
	    "[-c CHURN_SECS]\n"
	    "       [-L LOOKUP_ALONE_SECS] [-S SOAK_SECS] [-r WRITES_PER_S] "
	    "[-w PHASES] [-x SUFFIX] [-Q]\n"
	    "       [-R ROUNDS] [-1] [-X] [-A] [-F N]\n"
	    "  -Q: no check and no teardown at the end (not with crossing)\n"
	    "  -R: the lookup, ycsb and resize phases ROUNDS times, interleaved; "
	    "each round's rows\n"
	    "      carry the workload suffix #ROUND (repetitions for medians)\n"
	    "  -1: the lookup phase at 1 thread too (after THREADS) in every "
	    "round\n"
	    "  -X: negative control: key 7 is never inserted (the check must "
	    "fail)\n"
	    "  -A: the crossing's inserts filed by what the kernel did to the "
	    "thread (page fault,\n      context switch, neither): each class's "
	    "percentiles and share of the p99.9\n"
	    "  -F N: before the phases, N small chunks freed in scattered "
	    "order into the arena\n      the first phase's worker takes (a "
	    "slow mallinfo2(), as after 1e8 items)\n"
	    "  PHASES: comma list of grow,lookup,ycsb,resize,churn,shrink,soak,"
	    "crossing\n  (check always runs)\n");
	exit(2);
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/**
 * The value of option -@a opt: a count (decimal, 0x hex, or an integral
 * decimal such as 1e8 below 2^53); anything else (a sign, trailing text, a
 * fraction, an overflow) is refused with the usage.
 */
static uint64_t arg_count(const char *s, int opt)
{
	char *end;
	errno = 0;
	if (*s == '-' || *s == '+' || *s == 0)
		goto bad;
	uint64_t v = strtoull(s, &end, 0);
	if (*end == 0 && errno == 0)
		return v;
	double d = strtod(s, &end);
	if (*end == 0 && errno == 0 && d >= 0 && d < 9007199254740992.0 &&
	    d == (double) (uint64_t) d)
		return (uint64_t) d;
bad:
	fprintf(stderr, "bench_us big: -%c %s: not a count\n", opt, s);
	usage();
	return 0;
}

/** The value of option -@a opt: a finite number >= 0 (seconds, a rate). */
static double arg_secs(const char *s, int opt)
{
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (*s == 0 || *end != 0 || errno != 0 || !(d >= 0) || d > 1e9) {
		fprintf(stderr, "bench_us big: -%c %s: not a number of 0 or "
		    "more\n", opt, s);
		usage();
	}
	return d;
}

/** Every name of the comma list -w @a list is a phase, or the usage. */
static void check_phases(const char *list)
{
	static const char *const known[] = { "grow", "lookup", "ycsb",
	    "resize", "churn", "shrink", "soak", "crossing" };
	const char *p = list;
	for (;;) {
		size_t l = strcspn(p, ",");
		bool ok = false;
		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i]) == l && strncmp(p, known[i], l) == 0)
				ok = true;
		if (!ok) {
			fprintf(stderr, "bench_us big: -w: no phase '%.*s'\n",
			    (int) l, p);
			usage();
		}
		if (p[l] == 0)
			return;
		p += l + 1;
	}
}

static bool has(const char *list, const char *w)
{
	size_t l = strlen(w);
	for (const char *p = list; (p = strstr(p, w)); p += l)
		if ((p == list || p[-1] == ',') && (p[l] == ',' || p[l] == 0))
			return true;
	return false;
}

/*
 * -F N: the heap that 1e8 items leave after the churn and the check, small:
 * a thread mallocs N 64-byte chunks (the intrusive table's nodes' size) and
 * frees them in a scattered order, then exits. Its arena, whose fastbins now
 * hold N chunks that mallinfo2() walks one miss each, goes to glibc's list
 * of free arenas, from which the next thread that mallocs (the first phase's
 * worker) takes it. tests/test_bench_big.py runs it to check the heap
 * sampler's share of the time (heap_sampler_t).
 */
static void *scatter_main(void *p)
{
	(void) p;
	void **v = malloc(scatter_n * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < scatter_n; i++)
		v[i] = malloc(56);
	/* i -> i * step mod n, step odd and n a power of two: a permutation
	 * whose neighbours are far apart. */
	size_t n = 1;
	while (n < scatter_n)
		n <<= 1;
	for (size_t i = 0; i < n; i++) {
		size_t j = (i * 0x9E3779B1u) & (n - 1);
		if (j < scatter_n)
			free(v[j]);
	}
	free(v);
	return NULL;
}

static void scatter_free_chunks(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, scatter_main, NULL) == 0)
		pthread_join(t, NULL);
}

/** The first line of @a path into @a buf (@a len bytes), "unknown" if
 *  unreadable. */
static void first_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	buf[0] = 0;
	if (f) {
		if (!fgets(buf, (int) len, f))
			buf[0] = 0;
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = 0;
	if (!buf[0])
		snprintf(buf, len, "unknown");
}

/* The system's THP mode (enabled, defrag) and the tunables of this run. */
static void thp_info(void)
{
	char buf[128];
	first_line("/sys/kernel/mm/transparent_hugepage/enabled", buf,
	    sizeof(buf));
	info("thp_enabled", buf);
	first_line("/sys/kernel/mm/transparent_hugepage/defrag", buf,
	    sizeof(buf));
	info("thp_defrag", buf);
	const char *tun = getenv("GLIBC_TUNABLES");
	info("glibc_tunables", tun ? tun : "");
}

int bench_big_main(int argc, char **argv, const bench_impl_t *im)
{
	impl = im;
	is_set = strcmp(impl->name, "ckhs") == 0;
	double secs = 5, churn = 10, soak = 10, alone = 3, rate = 200000;
	bool pre = false, quit = false, also1 = false;
	int rounds = 1;
	const char *phases =
	    "grow,lookup,ycsb,resize,churn,shrink,soak,crossing";
	int opt;
	optind = 3;
	while ((opt = getopt(argc, argv, "k:t:PQXAF:d:c:L:S:r:w:x:R:1h")) != -1) {
		switch (opt) {
		case 'k': N = arg_count(optarg, opt); break;
		case 't': T = (int) min_u64(arg_count(optarg, opt), MAXT + 1); break;
		case 'P': pre = true; break;
		case 'Q': quit = true; break;
		case 'X': drop_one = true; break;
		case 'A': attrib = true; break;
		case 'F': scatter_n = arg_count(optarg, opt); break;
		case 'd': secs = arg_secs(optarg, opt); break;
		case 'c': churn = arg_secs(optarg, opt); break;
		case 'L': alone = arg_secs(optarg, opt); break;
		case 'S': soak = arg_secs(optarg, opt); break;
		case 'r': rate = arg_secs(optarg, opt); break;
		case 'w': phases = optarg; check_phases(phases); break;
		case 'x': suffix = optarg; break;
		case 'R': rounds = (int) min_u64(arg_count(optarg, opt), 100); break;
		case '1': also1 = true; break;
		default: usage();
		}
	}
	if (T < 1 || T > MAXT || N < 1024 || secs <= 0 || rate <= 0 ||
	    rounds < 1 || rounds > 99)
		usage();
	if (16 * N < ZLEN)
		ZLEN = 16 * N;
	if (attrib) {
		/* The harness's own: not in the allocator's figure. */
		attrib_h = bench_map_own((size_t) MAXT * AT_N * sizeof(hist_t));
	}
	ph_cond_init();
	calibrate();
	thp_info();
	impl->thread_init();
	malloc_trim(0);
	size_t heap0 = bench_heap_bytes(), rss0 = bench_rss_bytes();
	heap_start = heap0;
	rss_start = rss0;
	size_t mapped0 = bench_mapped_bytes();
	reset_peak_rss();
	if (scatter_n)
		scatter_free_chunks();
	uint64_t errors = 0;
	/*
	 * -w crossing alone, for a table that says its grow point: the
	 * crossing needs no grow phase to place its window (phase_crossing()).
	 */
	if (strcmp(phases, "crossing") == 0 && impl->grow_at) {
		phase_crossing();
		goto teardown;
	}
	/* grow (always: the other phases need the full table) */
	const char *gname = pre || impl->presized ? "grow-presized" : "grow";
	void *t = impl->create(N, pre ? N : 0);
	phase_res_t r = fill(t, gname, 0, N);
	report(gname, T, T, &r);
	size_t hwm = proc_kb("/proc/self/status", "VmHWM:");
	size_t heap1 = bench_heap_bytes(), rss1 = bench_rss_bytes();
	out(gname, T, "peak_rss_mb", (double) (hwm - rss0) / 1048576.0);
	out(gname, T, "final_rss_mb", (double) (rss1 - rss0) / 1048576.0);
	out(gname, T, "peak_heap_mb", (double) (r.heap_max > heap1 ? r.heap_max :
	    heap1) / 1048576.0 - (double) heap0 / 1048576.0);
	out(gname, T, "final_heap_mb", (double) (heap1 - heap0) / 1048576.0);
	out(gname, T, "bytes_per_key_rss", (double) (rss1 - rss0) / (double) N);
	out(gname, T, "bytes_per_key_heap", (double) (heap1 - heap0) / (double) N);
	/* The part of it mapped outside malloc (mapcount.c: tbbmalloc, the
	 * managed map's segments; resident), 0 for a table that only mallocs;
	 * and those mappings' whole size (reserved, touched or not). */
	out(gname, T, "bytes_per_key_mapped", (double) (bench_mapped_bytes() -
	    mapped0) / (double) N);
	out(gname, T, "bytes_per_key_mapped_virtual", (double)
	    bench_mapped_virtual_bytes() / (double) N);
	out(gname, T, "peak_over_final_rss", (double) (hwm - rss0) /
	    (double) (rss1 - rss0));
	settle_offline(t, 1);  /* a resize the last inserts asked for */
	out(gname, T, "buckets", (double) impl->buckets(t));
	out(gname, T, "grow_events", (double) nev);
	for (int i = 0; i < nev; i++)
		printf("ev,%s,%s%s,%d,%zu,%ld\n", impl->name, gname, suffix, T,
		    ev_keys[i], ev_buckets[i]);
	win_lo = 0;
	win_hi = N;
	/*
	 * Rounds: every point of the lookup and YCSB phases once per round,
	 * so that R samples of each point are spread over the same stretch of
	 * host time (a median and a spread per point, not one sample).
	 */
	const char *base_suffix = suffix;
	char rsuf[96];
	for (int rd = 1; rd <= rounds; rd++) {
		round_suffix(rsuf, sizeof(rsuf), base_suffix, rd, rounds);
		if (has(phases, "lookup")) {
			int full = T;
			for (int pass = 0; pass < (also1 && full > 1 ? 2 : 1);
			    pass++) {
				/* T = 1 on the second pass: hits and misses use
				 * no zipfian stream, so none is missing. */
				T = pass ? 1 : full;
				run_mix(t, "lookup-hit", K_HIT, 0, 0, false, secs);
				run_mix(t, "lookup-miss", K_MISS, 0, 0, false,
				    secs);
			}
			T = full;
		}
		if (has(phases, "ycsb"))
			for (size_t m = 0; m < sizeof(mixes) / sizeof(mixes[0]);
			    m++)
				for (int z = 0; z < 2; z++)
					run_mix(t, mixes[m].name, mixes[m].kind,
					    mixes[m].mix, mixes[m].special, z,
					    secs);
	}
	suffix = base_suffix;
	if (has(phases, "resize"))
		phase_resize(t, secs, rounds);
	if (has(phases, "churn"))
		phase_churn(t, churn);
	if (has(phases, "shrink"))
		phase_shrink(t);
	if (has(phases, "soak"))
		phase_soak(t, alone, soak, rate);
	if (quit) {
		/* -Q: no check, no teardown (a big table's removal takes as
		 * long as its growth): the process exit frees it. */
		out("memory", T, "quit_without_check", 1);
		return total_errors ? 1 : 0;
	}
	/* check: every key, then empty the table and free it */
	errors = check_keys(t, "check", win_lo, win_hi, true);
	uint64_t rerr = check_ring(t, true);
	out("check", T, "ring_errors", (double) rerr);
	errors += rerr;
	settle_offline(t, 2);
	impl->destroy(t);
	if (has(phases, "crossing"))
		phase_crossing();
teardown:
	for (int i = 0; i < MAXT; i++) {
		free(zstream[i]);
		zstream[i] = NULL;
	}
	malloc_trim(0);
	size_t heap2 = bench_heap_bytes();
	out("memory", T, "heap_left_bytes", (double) heap2 - (double) heap0);
	out("memory", T, "rss_left_mb", ((double) bench_rss_bytes() - (double) rss0) /
	    1048576.0);
	impl->thread_fini();
	errors += total_errors;
	if (errors) {
		fprintf(stderr, "%s: %llu errors (lost keys, wrong values, failed "
		    "operations)\n", impl->name, (unsigned long long) errors);
		return 1;
	}
	return 0;
}
