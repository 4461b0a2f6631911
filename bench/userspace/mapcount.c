/** @file mapcount.c
 * The memory a table's library maps itself, outside malloc: the part of
 * "the allocator's figure" that mallinfo2() cannot see.
 *
 * mallinfo2() counts what glibc's malloc handed out. Some tables take their
 * memory from the kernel directly: oneTBB's scalable allocator (tbbmalloc,
 * which TBB's tables use when it is installed), the managed inline map's
 * bucket segments (libcht's cht_imap.c), cds_lfht's mmap bucket backend.
 * Without this file those tables reported (almost) no heap: tbb-hm 0.03
 * bytes per key against 67 of RSS, chtmap-u64 9 against 35.
 *
 * bench_us defines mmap(), mmap64(), munmap() and mremap() itself (exported
 * with --export-dynamic-symbol, so that libraries loaded later, tbbmalloc by
 * dlopen, bind to them too). Each is the system call, and records the
 * writable anonymous mappings it made: their resident bytes (mincore()) are
 * bench_mapped_bytes(), their whole size bench_mapped_virtual_bytes(). The
 * resident part, because a library may reserve far more than it touches:
 * the managed inline map's segments are power-of-two reservations (4 GiB
 * mapped for 2.3 GB of buckets at 1e8 keys, 43 bytes per key counted whole).
 * A MAP_FIXED mapping first forgets what it replaced (cds_lfht populates and
 * discards its reserve that way); munmap() and mremap() forget the part of a
 * recorded range they remove, so a partial unmap (an aligned mapping trimmed)
 * is counted right, and an unmap of a range never recorded (a file mapping, a
 * PROT_NONE reserve) counts nothing. glibc's own malloc, thread stacks and the
 * dynamic loader call the kernel through internal entry points and never come
 * here: malloc's mappings stay in mallinfo2()'s hblkhd only.
 *
 * Protected by one mutex (mappings are rare: segments and MiB-sized pools,
 * never per item); the total is read with a relaxed load (a statistic).
 */
#define _GNU_SOURCE
#include "bench.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

typedef struct {
	uintptr_t lo, hi;
} range_t;

static pthread_mutex_t map_lock = PTHREAD_MUTEX_INITIALIZER;
static range_t *ranges;          /* the recorded mappings, unordered */
static size_t nranges, cap;      /* under map_lock */
static size_t mapped;            /* bytes of them; written under map_lock */

/* Room for two more ranges (map_lock held). */
static void room(void)
{
	if (nranges + 2 <= cap)
		return;
	size_t nc = cap ? 2 * cap : 256;
	/* glibc's realloc maps through its internal entry point, not through
	 * mmap() below: no recursion. */
	range_t *nr = realloc(ranges, nc * sizeof(*nr));
	if (!nr)
		abort();
	ranges = nr;
	cap = nc;
}

static uintptr_t page_up(uintptr_t x)
{
	uintptr_t pg = 4096;
	return (x + pg - 1) & ~(pg - 1);
}

/* Forgets [lo, hi) of every recorded range (map_lock held); returns the
 * bytes forgotten. */
static size_t forget(uintptr_t lo, uintptr_t hi)
{
	size_t gone = 0;
	for (size_t i = 0; i < nranges; i++) {
		range_t r = ranges[i];
		if (r.hi <= lo || r.lo >= hi)
			continue;
		uintptr_t a = r.lo > lo ? r.lo : lo, b = r.hi < hi ? r.hi : hi;
		gone += b - a;
		if (r.lo < a && r.hi > b) {
			/* A hole in the middle: two ranges. */
			room();
			ranges[i].hi = a;
			ranges[nranges++] = (range_t) { b, r.hi };
		} else if (r.lo < a) {
			ranges[i].hi = a;
		} else if (r.hi > b) {
			ranges[i].lo = b;
		} else {
			ranges[i--] = ranges[--nranges];
		}
	}
	__atomic_store_n(&mapped, mapped - gone, __ATOMIC_RELAXED);
	return gone;
}

/* Records [lo, hi) (map_lock held). */
static void record(uintptr_t lo, uintptr_t hi)
{
	room();
	ranges[nranges++] = (range_t) { lo, hi };
	__atomic_store_n(&mapped, mapped + (hi - lo), __ATOMIC_RELAXED);
}

static void *map_common(void *addr, size_t len, int prot, int flags, int fd,
    off_t off)
{
	void *p = (void *) syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	if (p == MAP_FAILED)
		return p;
	uintptr_t lo = (uintptr_t) p, hi = lo + page_up(len);
	pthread_mutex_lock(&map_lock);
	if (flags & MAP_FIXED)
		(void) forget(lo, hi);
	if ((flags & MAP_ANONYMOUS) && (prot & PROT_WRITE))
		record(lo, hi);
	pthread_mutex_unlock(&map_lock);
	return p;
}

/** mmap(2) as the system call; a writable anonymous mapping is recorded
 *  (a MAP_FIXED one first forgets what it replaced). Any thread. */
void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_common(addr, len, prot, flags, fd, off);
}

/** mmap64(), the same as mmap() (a library built with 64-bit offsets on a
 *  32-bit ABI's headers calls it). */
void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return map_common(addr, len, prot, flags, fd, off);
}

/** munmap(2); forgets the recorded part of the range. Any thread. */
int munmap(void *addr, size_t len)
{
	int r = (int) syscall(SYS_munmap, addr, len);
	if (r == 0) {
		pthread_mutex_lock(&map_lock);
		(void) forget((uintptr_t) addr, (uintptr_t) addr + page_up(len));
		pthread_mutex_unlock(&map_lock);
	}
	return r;
}

/** mremap(2) (MREMAP_FIXED's new address from the variadic argument); a
 *  recorded mapping stays recorded at its new place and size. Any thread. */
void *mremap(void *old, size_t old_len, size_t new_len, int flags, ...)
{
	void *want = NULL;
	if (flags & MREMAP_FIXED) {
		va_list ap;
		va_start(ap, flags);
		want = va_arg(ap, void *);
		va_end(ap);
	}
	void *p = (void *) syscall(SYS_mremap, old, old_len, new_len, flags,
	    want);
	if (p == MAP_FAILED)
		return p;
	uintptr_t lo = (uintptr_t) p;
	pthread_mutex_lock(&map_lock);
	if (flags & MREMAP_FIXED)
		(void) forget(lo, lo + page_up(new_len));
	/* Counted before: counted at its new place and size. */
	if (forget((uintptr_t) old, (uintptr_t) old + page_up(old_len)))
		record(lo, lo + page_up(new_len));
	pthread_mutex_unlock(&map_lock);
	return p;
}

/** Bytes of the recorded mappings now, touched or not (bench.h). */
size_t bench_mapped_virtual_bytes(void)
{
	return __atomic_load_n(&mapped, __ATOMIC_RELAXED);
}

/** Bytes of the recorded mappings that are resident now (bench.h): mincore()
 *  over each range, MINCORE_CHUNK pages at a time (a 4 GiB reserve costs a
 *  few milliseconds, under map_lock). */
#define MINCORE_CHUNK 65536
size_t bench_mapped_bytes(void)
{
	static unsigned char vec[MINCORE_CHUNK];  /* under map_lock */
	const uintptr_t pg = 4096;
	size_t res = 0;
	pthread_mutex_lock(&map_lock);
	for (size_t i = 0; i < nranges; i++)
		for (uintptr_t a = ranges[i].lo; a < ranges[i].hi;
		    a += MINCORE_CHUNK * pg) {
			uintptr_t len = ranges[i].hi - a;
			if (len > MINCORE_CHUNK * pg)
				len = MINCORE_CHUNK * pg;
			if (mincore((void *) a, len, vec) != 0) {
				res += len;  /* unknown: counted whole */
				continue;
			}
			for (uintptr_t k = 0; k < len / pg; k++)
				res += (vec[k] & 1) ? pg : 0;
		}
	pthread_mutex_unlock(&map_lock);
	return res;
}

/** The harness's own memory, not recorded (bench.h). */
void *bench_map_own(size_t len)
{
	void *p = (void *) syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		abort();
	return p;
}
