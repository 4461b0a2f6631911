/** @file cht_rcu_plat.h
 * The few platform services under libcht's user RCU (rcu.c) and the table's
 * userspace environment (cht_env.c), for their two platforms: POSIX threads
 * on Linux, and the OS's uspace/lib/c (built with CHT_OS_BUILD defined, see
 * the top-level Makefile). Private to the library: not installed.
 *
 *   mutex, condition   pthread_mutex/cond        lib/c futex mutex_t/condvar_t
 *   thread exit hook   pthread key destructor    lib/c thread_key_create()
 *   helper thread      detached, signals masked  lib/c thread (never joined)
 *   yield, sleep       sched_yield, nanosleep    SYS_YIELD, futex timeout
 *   monotonic clock    CLOCK_MONOTONIC           SYS_CLOCK_NS
 *   CPU count          sysconf                   SYS_CPU_COUNT
 *   error message      stderr                    the console
 *   huge-page hint     madvise(MADV_HUGEPAGE)    none (a no-op)
 *
 * What is not here stays in rcu.c under #ifdef: the writer's barrier
 * (membarrier(2) on Linux, SYS_MEMBARRIER on the OS) and where the reader
 * record lives (a TLS variable on Linux, the thread control block on the
 * OS: cht_rcu.h).
 */
#ifndef CHT_RCU_PLAT_H_
#define CHT_RCU_PLAT_H_

#include <stdint.h>

#ifndef CHT_OS_BUILD

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

typedef pthread_mutex_t cht_plat_mutex_t;
typedef pthread_cond_t cht_plat_cond_t;
#define CHT_PLAT_MUTEX_INIT PTHREAD_MUTEX_INITIALIZER
#define CHT_PLAT_COND_INIT  PTHREAD_COND_INITIALIZER
#define cht_plat_mutex_init(m)    pthread_mutex_init((m), NULL)
#define cht_plat_mutex_destroy(m) pthread_mutex_destroy(m)
#define cht_plat_lock(m)          pthread_mutex_lock(m)
#define cht_plat_unlock(m)        pthread_mutex_unlock(m)
#define cht_plat_cond_init(c)     pthread_cond_init((c), NULL)
#define cht_plat_cond_destroy(c)  pthread_cond_destroy(c)
#define cht_plat_cond_wait(c, m)  pthread_cond_wait((c), (m))
#define cht_plat_cond_signal(c)   pthread_cond_signal(c)

typedef pthread_key_t cht_plat_key_t;
/** @return 0 on success. */
#define cht_plat_key_create(k, dtor) pthread_key_create((k), (dtor))
/** @return 0 on success. */
#define cht_plat_setspecific(k, v)   pthread_setspecific((k), (v))

/** Return type and value of a helper thread's function. */
typedef void *cht_plat_helper_ret_t;
#define CHT_PLAT_HELPER_RETURN NULL

#define cht_plat_yield()          ((void) sched_yield())
#define cht_plat_error(...)       fprintf(stderr, __VA_ARGS__)
#define cht_plat_abort()          abort()

static inline void cht_plat_sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/** Online CPUs (at least 1). */
static inline long cht_plat_ncpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? n : 1;
}

static inline uint64_t cht_plat_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/**
 * Asks for transparent huge pages on the whole pages inside the block
 * [@a p, @a p + @a n) (any address and length: the block is rounded inward to
 * the system's page size, sysconf(_SC_PAGESIZE), 4, 16 or 64 KiB on the
 * CPUs we build for): madvise(MADV_HUGEPAGE). A hint: a kernel without THP,
 * or THP set to "never", refuses or ignores it, and nothing else changes.
 * Any thread; does not sleep beyond the system call.
 */
static inline void cht_plat_advise_huge(void *p, size_t n)
{
	long ps = sysconf(_SC_PAGESIZE);
	uintptr_t pg = ps > 0 ? (uintptr_t) ps : 4096;
	uintptr_t a = ((uintptr_t) p + pg - 1) & ~(pg - 1);
	uintptr_t e = ((uintptr_t) p + n) & ~(pg - 1);
	if (e > a)
		(void) madvise((void *) a, (size_t) (e - a), MADV_HUGEPAGE);
}

#else /* CHT_OS_BUILD: the OS's uspace/lib/c */

#include <stdio.h>
#include <stdlib.h>
#include <sys.h>
#include <thread.h>

typedef mutex_t cht_plat_mutex_t;
typedef condvar_t cht_plat_cond_t;
#define CHT_PLAT_MUTEX_INIT MUTEX_INITIALIZER
#define CHT_PLAT_COND_INIT  CONDVAR_INITIALIZER
#define cht_plat_mutex_init(m)    ((m)->state = 0)
#define cht_plat_mutex_destroy(m) ((void) (m))
#define cht_plat_lock(m)          mutex_lock(m)
#define cht_plat_unlock(m)        mutex_unlock(m)
#define cht_plat_cond_init(c)     ((c)->seq = 0)
#define cht_plat_cond_destroy(c)  ((void) (c))
#define cht_plat_cond_wait(c, m)  condvar_wait((c), (m))
#define cht_plat_cond_signal(c)   condvar_signal(c)

typedef int cht_plat_key_t;
static inline int cht_plat_key_create(cht_plat_key_t *k, void (*dtor)(void *))
{
	*k = thread_key_create(dtor);
	return *k < 0 ? -1 : 0;
}
static inline int cht_plat_setspecific(cht_plat_key_t k, void *v)
{
	thread_setspecific(k, v);
	return 0;
}

typedef int cht_plat_helper_ret_t;
#define CHT_PLAT_HELPER_RETURN 0

#define cht_plat_yield()          ((void) sys_yield())
#define cht_plat_error(...)       printf(__VA_ARGS__)
/** No signals, no core dumps: the task ends with status 134 (as SIGABRT). */
#define cht_plat_abort()          exit(134)

static inline void cht_plat_sleep_us(long us)
{
	thread_sleep_ns((uint64_t) us * 1000);
}

static inline uint64_t cht_plat_now_ms(void)
{
	return (uint64_t) sys_clock_ns() / 1000000;
}

/** No transparent huge pages in the OS: a no-op. */
#define cht_plat_advise_huge(p, n) ((void) (p), (void) (n))

/** CPUs of the machine (SYS_CPU_COUNT; at least 1). */
static inline long cht_plat_ncpus(void)
{
	long n = sys_cpu_count();
	return n > 0 ? n : 1;
}

#endif

/**
 * Starts a helper thread of the library running @a fn(@a arg), never joined
 * (on Linux detached, with every signal blocked: signals belong to the
 * user's threads). rcu.c. @return 0 or -1.
 */
int cht_rcu_start_helper(cht_plat_helper_ret_t (*fn)(void *), void *arg);

#endif
