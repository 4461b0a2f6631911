/** @file growprof.c
 * Where the slow inserts of a growing cht_map_u64_t go (its insert tail
 * against a presized map's): a diagnostic, not a benchmark. Built with the library's sources
 * and -DCHT_IM_PROF (per-phase cycle counts of the split, the overflow
 * line allocation, the slab carving and the retire batches; cht_map_int.h),
 * never with the production libcht.a:
 *
 *   growprof KEYS [presized] [-n] [-t NS] [-T THREADS]
 *
 * Inserts KEYS distinct keys (key_present(0..KEYS-1) of bench_keys.h, the
 * keys of `bench_us big`) into one map,
 * THREADS threads (default 1; thread j inserts keys j, j + THREADS, ...),
 * each insert timed with rdtsc. Around every insert it also reads
 * the thread's rusage (involuntary and voluntary context switches, minor
 * faults; -n: not read) and the RCU's batch count (the reclaimer ran).
 * With the rusage it reads the thread's CPU time (CLOCK_THREAD_CPUTIME_ID),
 * which leaves out the time the host did not run the vCPU (steal, where the
 * guest kernel accounts it: PARAVIRT_TIME_ACCOUNTING).
 * Every insert slower than NS ns (default 2000) is attributed to one cause,
 * in this order: it was switched out (a context switch of the inserting
 * thread inside it), it was stolen (its thread's CPU time is less than half
 * of it: the host ran something else on the vCPU), it faulted a page in, a
 * phase of the profile took more
 * than half of it (split, segment, alloc, refill, slab, rcu_call), else
 * "unexplained". Prints p50/p99/p99.9/max, the slow inserts per cause (count
 * and share of the inserts), and the totals of each phase.
 */
#define _GNU_SOURCE
#include <cht.h>
#include "cht_map_int.h"
#include "bench_keys.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <pthread.h>
#include <time.h>

static inline uint64_t tsc(void)
{
	return __builtin_ia32_rdtsc();
}

static double ns_per_tsc(void)
{
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t t0 = tsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec) < 2e8);
	uint64_t t1 = tsc();
	return ((b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec)) /
	    (double) (t1 - t0);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *) a, y = *(const uint32_t *) b;
	return x < y ? -1 : x > y;
}

static const char *phase_name[CHT_IMP_N] = {
	"split", "segment", "alloc64", "refill", "slab", "rcu_call", "lockwait",
};

enum { C_SWITCH, C_STOLEN, C_FAULT, C_PHASE0, C_UNEXPL = C_PHASE0 + CHT_IMP_N,
	C_N };


/** The slowest inserts of a thread. */
enum { TOP = 8 };

typedef struct {
	int id;
	uint64_t cnt[C_N], cyc[C_N];
	/* Of the switched-out slow inserts: which phases ran in them. */
	uint64_t sw_in[CHT_IMP_N], sw_rcu, sw_none, slow_rcu;
	struct { uint64_t d; int c; bool rcu, rec; size_t i; } top[TOP];
	cht_im_prof_t prof;
	struct rusage rs0, rs1;
	uint64_t t0, t1;
} thr_t;

static cht_map_u64_t *m;
static size_t n;
static int T = 1;
static bool ru = true;
static uint64_t thr;
static double nspt;  /* ns per tsc tick */
static uint32_t *lat;
static pthread_barrier_t start;

static void *run(void *arg)
{
	thr_t *w = arg;
	uint64_t v;
	(void) cht_map_u64_get(m, 0, &v);  /* registers the thread */
	pthread_barrier_wait(&start);
	getrusage(RUSAGE_THREAD, &w->rs0);
	w->t0 = tsc();
	struct rusage r0, r1;
	for (size_t i = (size_t) w->id; i < n; i += (size_t) T) {
		cht_im_prof_t p0 = cht__im_prof;
		uint64_t rec0 = __atomic_load_n(&cht__im_prof_reclaims,
		    __ATOMIC_RELAXED);
		cht_rcu_stats_t q0, q1;
		cht_rcu_get_stats(&q0);
		struct timespec c0, c1;
		if (ru) {
			getrusage(RUSAGE_THREAD, &r0);
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
		}
		uint64_t t0 = tsc();
		if (cht_map_u64_insert(m, key_present(i), i) != CHT_OK) {
			fprintf(stderr, "growprof: insert %zu failed\n", i);
			exit(1);
		}
		uint64_t d = tsc() - t0;
		lat[i] = d > UINT32_MAX ? UINT32_MAX : (uint32_t) d;
		if (d < thr)
			continue;
		if (ru) {
			clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
			getrusage(RUSAGE_THREAD, &r1);
		}
		cht_rcu_get_stats(&q1);
		/* The thread's CPU time in the insert: with the kernel's steal
		 * accounting (PARAVIRT_TIME_ACCOUNTING) it leaves out the time
		 * the host did not run the vCPU. */
		double cpu_ns = ru ? (c1.tv_sec - c0.tv_sec) * 1e9 +
		    (c1.tv_nsec - c0.tv_nsec) : 0;
		bool rcu_ran = q1.batches != q0.batches;
		w->slow_rcu += rcu_ran;
		int c;
		uint64_t best = 0;
		int bk = -1;
		int64_t dts[CHT_IMP_N];
		for (int k = 0; k < CHT_IMP_N; k++)
			dts[k] = (int64_t) (cht__im_prof.tsc[k] - p0.tsc[k]);
		/* Exclusive times: alloc64 contains refill and slab, the split
		 * its segment and (approximately) the allocations. */
		dts[CHT_IMP_ALLOC] -= dts[CHT_IMP_REFILL] + dts[CHT_IMP_SLAB];
		if (dts[CHT_IMP_SPLIT])
			dts[CHT_IMP_SPLIT] -= dts[CHT_IMP_SEG] +
			    dts[CHT_IMP_ALLOC] + dts[CHT_IMP_REFILL] +
			    dts[CHT_IMP_SLAB];
		for (int k = 0; k < CHT_IMP_N; k++) {
			if (dts[k] > (int64_t) best) {
				best = (uint64_t) dts[k];
				bk = k;
			}
		}
		long sw = ru ? (r1.ru_nivcsw - r0.ru_nivcsw) +
		    (r1.ru_nvcsw - r0.ru_nvcsw) : 0;
		long flt = ru ? (r1.ru_minflt - r0.ru_minflt) +
		    (r1.ru_majflt - r0.ru_majflt) : 0;
		if (sw > 0) {
			c = C_SWITCH;
			bool any = false;
			for (int k = 0; k < CHT_IMP_N; k++)
				if (cht__im_prof.n[k] != p0.n[k]) {
					w->sw_in[k]++;
					any = true;
				}
			w->sw_rcu += rcu_ran;
			w->sw_none += !any;
		} else if (ru && (double) d * nspt - cpu_ns >= (double) d * nspt / 2) {
			c = C_STOLEN;
		} else if (flt > 0) {
			c = C_FAULT;
		} else if (bk >= 0 && best * 2 >= d) {
			c = C_PHASE0 + bk;
		} else {
			c = C_UNEXPL;
		}
		w->cnt[c]++;
		w->cyc[c] += d;
		if (d > w->top[TOP - 1].d) {
			int j = TOP - 1;
			for (; j > 0 && w->top[j - 1].d < d; j--)
				w->top[j] = w->top[j - 1];
			w->top[j].d = d;
			w->top[j].c = c;
			w->top[j].rcu = rcu_ran;
			w->top[j].rec = __atomic_load_n(&cht__im_prof_reclaims,
			    __ATOMIC_RELAXED) != rec0;
			w->top[j].i = i;
		}
	}
	w->t1 = tsc();
	getrusage(RUSAGE_THREAD, &w->rs1);
	w->prof = cht__im_prof;
	return NULL;
}

static const char *cause(int c)
{
	return c == C_SWITCH ? "switched out" : c == C_STOLEN ? "stolen" :
	    c == C_FAULT ? "page fault" :
	    c == C_UNEXPL ? "unexplained" : phase_name[c - C_PHASE0];
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: growprof KEYS [presized] [-n] [-t NS] "
		    "[-T THREADS]\n");
		return 2;
	}
	n = (size_t) strtod(argv[1], NULL);
	bool pre = false;
	double thr_ns = 2000;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "presized"))
			pre = true;
		else if (!strcmp(argv[i], "-n"))
			ru = false;
		else if (!strcmp(argv[i], "-t") && i + 1 < argc)
			thr_ns = atof(argv[++i]);
		else if (!strcmp(argv[i], "-T") && i + 1 < argc)
			T = atoi(argv[++i]);
	}
	if (T < 1 || T > 64 || n < 1)
		return 2;
	nspt = ns_per_tsc();
	thr = (uint64_t) (thr_ns / nspt);
	if (cht_map_u64_create_opts(&m, pre ? n : 0, CHT_MAP_U64_INLINE) !=
	    CHT_OK)
		return 1;
	cht_map_stats_t st;
	cht_map_u64_stats(m, &st);  /* registers the thread, starts helpers */
	lat = malloc(n * sizeof(*lat));
	thr_t *w = calloc((size_t) T, sizeof(*w));
	pthread_t *th = calloc((size_t) T, sizeof(*th));
	if (!lat || !w || !th)
		return 1;
	pthread_barrier_init(&start, NULL, (unsigned) T);
	for (int j = 0; j < T; j++) {
		w[j].id = j;
		if (pthread_create(&th[j], NULL, run, &w[j]) != 0)
			return 1;
	}
	for (int j = 0; j < T; j++)
		pthread_join(th[j], NULL);
	uint64_t t0 = w[0].t0, t1 = w[0].t1;
	thr_t a = { 0 };
	for (int j = 0; j < T; j++) {
		t0 = w[j].t0 < t0 ? w[j].t0 : t0;
		t1 = w[j].t1 > t1 ? w[j].t1 : t1;
		for (int c = 0; c < C_N; c++) {
			a.cnt[c] += w[j].cnt[c];
			a.cyc[c] += w[j].cyc[c];
		}
		for (int k = 0; k < CHT_IMP_N; k++) {
			a.sw_in[k] += w[j].sw_in[k];
			a.prof.n[k] += w[j].prof.n[k];
			a.prof.tsc[k] += w[j].prof.tsc[k];
		}
		a.sw_rcu += w[j].sw_rcu;
		a.sw_none += w[j].sw_none;
		a.slow_rcu += w[j].slow_rcu;
	}
	double secs = (double) (t1 - t0) * nspt / 1e9;
	qsort(lat, n, sizeof(*lat), cmp_u32);
	printf("growprof %s keys %zu threads %d rusage %s: %.3f s, %.3f Mops/s\n",
	    pre ? "presized" : "growing", n, T, ru ? "on" : "off", secs,
	    (double) n / secs / 1e6);
	printf("  p50 %.0f ns p99 %.0f ns p99.9 %.0f ns p99.99 %.0f ns max %.1f us\n",
	    lat[n / 2] * nspt, lat[(size_t) (n * 0.99)] * nspt,
	    lat[(size_t) (n * 0.999)] * nspt, lat[(size_t) (n * 0.9999)] * nspt,
	    lat[n - 1] * nspt / 1e3);
	uint64_t slow = 0;
	for (int c = 0; c < C_N; c++)
		slow += a.cnt[c];
	printf("  inserts over %.0f ns: %llu (%.3f %% of inserts); the RCU "
	    "reclaimer ran a batch during %llu of them\n", thr_ns,
	    (unsigned long long) slow, 100.0 * slow / n,
	    (unsigned long long) a.slow_rcu);
	for (int c = 0; c < C_N; c++)
		if (a.cnt[c])
			printf("    %-14s %9llu (%.4f %% of inserts), mean %.1f us\n",
			    cause(c), (unsigned long long) a.cnt[c],
			    100.0 * a.cnt[c] / n,
			    (double) a.cyc[c] * nspt / 1e3 / a.cnt[c]);
	if (a.cnt[C_SWITCH]) {
		printf("  switched-out ones ran:");
		for (int k = 0; k < CHT_IMP_N; k++)
			printf(" %s %llu", phase_name[k],
			    (unsigned long long) a.sw_in[k]);
		printf(", none of these %llu, reclaimer batch %llu\n",
		    (unsigned long long) a.sw_none,
		    (unsigned long long) a.sw_rcu);
	}
	for (int j = 0; j < T; j++) {
		printf("  thread %d: %ld involuntary, %ld voluntary switches, "
		    "%ld minor faults; slowest:", j,
		    w[j].rs1.ru_nivcsw - w[j].rs0.ru_nivcsw,
		    w[j].rs1.ru_nvcsw - w[j].rs0.ru_nvcsw,
		    w[j].rs1.ru_minflt - w[j].rs0.ru_minflt);
		for (int k = 0; k < TOP && w[j].top[k].d; k++)
			printf(" [%.0f us %s%s%s @%zu]",
			    w[j].top[k].d * nspt / 1e3, cause(w[j].top[k].c),
			    w[j].top[k].rcu ? " +rcu" : "",
			    w[j].top[k].rec ? " +reclaim" : "", w[j].top[k].i);
		printf("\n");
	}
	printf("  phases (count, total ms):");
	for (int k = 0; k < CHT_IMP_N; k++)
		printf(" %s %llu %.1f", phase_name[k],
		    (unsigned long long) a.prof.n[k],
		    (double) a.prof.tsc[k] * nspt / 1e6);
	cht_rcu_stats_t q;
	cht_rcu_get_stats(&q);
	printf("\n  background reclaims %llu, %.1f ms; rcu: %llu grace periods, "
	    "%llu batches, %llu callbacks\n",
	    (unsigned long long) cht__im_prof_reclaims,
	    cht__im_prof_reclaim_tsc * nspt / 1e6,
	    (unsigned long long) q.gps, (unsigned long long) q.batches,
	    (unsigned long long) q.callbacks_run);
	uint64_t sp_taken, sp_missed;
	size_t sp_held;
	cht__ma_spare_stats(&sp_taken, &sp_missed, &sp_held);
	printf("  slab reserve: %llu slabs from a spare, %llu without one, "
	    "%zu spares held\n", (unsigned long long) sp_taken,
	    (unsigned long long) sp_missed, sp_held);
	return 0;
}
