/** @file tutil.h
 * Small helpers shared by the userspace tests: checks that report and count
 * failures, time, a per-thread PRNG, threads.
 */
#ifndef TUTIL_H_
#define TUTIL_H_

#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "prng.h"

static int tu_failures;

#define CHECK(cond, ...) do { \
		if (!(cond)) { \
			__atomic_fetch_add(&tu_failures, 1, __ATOMIC_RELAXED); \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr); \
		} \
	} while (0)

#define CHECK_EQ(a, b) do { \
		long long va_ = (long long) (a), vb_ = (long long) (b); \
		CHECK(va_ == vb_, "%s = %lld, expected %s = %lld", #a, va_, #b, vb_); \
	} while (0)

static inline uint64_t tu_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static inline void tu_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

/** xorshift64* */
static inline uint64_t tu_rand(uint64_t *s)
{
	return prng_xorshift64s(s);
}

static inline void tu_spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
	if (pthread_create(t, NULL, fn, arg) != 0) {
		perror("pthread_create");
		exit(2);
	}
}

/** Seconds from argv[1] (or the default), scaled by TEST_SCALE if set. */
static inline double tu_seconds(int argc, char **argv, double def)
{
	double s = argc > 1 ? atof(argv[1]) : def;
	const char *scale = getenv("TEST_SCALE");
	if (scale)
		s *= atof(scale);
	return s > 0 ? s : def;
}

/** Threads from argv[2]: 1 to 64, else (absent or out of range) @a def. */
static inline int tu_threads(int argc, char **argv, int def)
{
	int n = argc > 2 ? atoi(argv[2]) : def;
	return n >= 1 && n <= 64 ? n : def;
}

static inline int tu_finish(const char *name)
{
	int f = __atomic_load_n(&tu_failures, __ATOMIC_RELAXED);
	if (f)
		printf("%s: FAILED (%d checks)\n", name, f);
	else
		printf("%s: PASSED\n", name);
	fflush(stdout);
	return f ? 1 : 0;
}

#endif
