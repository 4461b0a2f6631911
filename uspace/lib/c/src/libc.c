/** @file libc.c
 * Start-up, exit, console output, strings and malloc of uspace/lib/c.
 *
 * malloc: blocks of 32 B to 2 KiB in power-of-two classes carved from 64 KiB
 * anonymous areas and kept on per-class free lists under one futex mutex;
 * larger blocks get an area of their own (freed with it). Each block has a
 * 16-byte header holding its class (or its area size).
 */
#include <sys.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>

/* The formatter the kernel uses too (common/print/printf_core.c). */
#include <printf_core.h>
#include "crt.h"

void __libc_start(int argc, char **argv)
{
	exit(main(argc, argv));
}

void sys_exit(int status)
{
	__syscall1(SYS_EXIT, status);
	__builtin_unreachable();
}

void sys_thread_exit(int status)
{
	__syscall1(SYS_THREAD_EXIT, status);
	__builtin_unreachable();
}

void exit(int status)
{
	sys_exit(status);
}

/* Strings */

void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char) c;
	return d;
}

void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *p = a, *q = b;
	for (; n; n--, p++, q++) {
		if (*p != *q)
			return *p - *q;
	}
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b) {
		a++;
		b++;
	}
	return (unsigned char) *a - (unsigned char) *b;
}

long strtol(const char *s, char **end, int base)
{
	long v = 0;
	int neg = 0;
	if (*s == '-') {
		neg = 1;
		s++;
	}
	if ((base == 0 || base == 16) && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	} else if (base == 0) {
		base = 10;
	}
	for (;; s++) {
		int d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (*s >= 'a' && *s <= 'z')
			d = *s - 'a' + 10;
		else if (*s >= 'A' && *s <= 'Z')
			d = *s - 'A' + 10;
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
	}
	if (end)
		*end = (char *) s;
	return neg ? -v : v;
}

int opts_parse(int argc, char **argv, const opt_t *opts, size_t n)
{
	for (int i = 1; i < argc; i++) {
		const opt_t *o = NULL;
		for (size_t k = 0; k < n && !o; k++) {
			if (strcmp(argv[i], opts[k].name) == 0)
				o = &opts[k];
		}
		if (!o)
			return -1;
		if (!o->value) {
			*o->flag = true;
			continue;
		}
		if (i + 1 >= argc)
			return -1;
		*o->value = strtol(argv[++i], NULL, 0);
	}
	return 0;
}

/* Console output: printf_core() writes into a line buffer */

typedef struct {
	char buf[256];
	size_t n;
} outbuf_t;

static void out_flush(outbuf_t *o)
{
	if (o->n)
		(void) sys_console_write(o->buf, o->n);
	o->n = 0;
}

static void out_char(char c, void *data)
{
	outbuf_t *o = data;
	o->buf[o->n++] = c;
	if (o->n == sizeof(o->buf))
		out_flush(o);
}

int vprintf(const char *fmt, va_list ap)
{
	outbuf_t o;
	o.n = 0;
	int n = printf_core(out_char, &o, fmt, ap);
	out_flush(&o);
	return n;
}

int printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintf(fmt, ap);
	va_end(ap);
	return n;
}

int puts(const char *s)
{
	return printf("%s\n", s);
}

/* malloc */

#define CHUNK_AREA (64 * 1024)
#define CLASS_MIN_SHIFT 5
#define CLASS_MAX_SHIFT 11
#define CLASSES (CLASS_MAX_SHIFT - CLASS_MIN_SHIFT + 1)
#define HDR 16

typedef struct free_block {
	struct free_block *next;
} free_block_t;

/** Protected by heap_lock. */
static mutex_t heap_lock = MUTEX_INITIALIZER;
static free_block_t *free_lists[CLASSES];
static char *chunk_next, *chunk_end;
/** Bytes of live blocks (malloc_in_use()). Atomics, relaxed. */
static size_t heap_in_use;

size_t malloc_in_use(void)
{
	return __atomic_load_n(&heap_in_use, __ATOMIC_RELAXED);
}

static void *big_alloc(size_t size)
{
	size_t total = (size + HDR + 4095) & ~(size_t) 4095;
	if (total < size)
		return NULL;
	long base = sys_area_create(0, total, AREA_READ | AREA_WRITE);
	if (base < 0)
		return NULL;
	uint64_t *h = (uint64_t *) base;
	h[0] = total;  /* > the largest class size: a big block */
	__atomic_fetch_add(&heap_in_use, total, __ATOMIC_RELAXED);
	return (char *) base + HDR;
}

void *malloc(size_t size)
{
	if (size == 0)
		size = 1;
	if (size > (1UL << CLASS_MAX_SHIFT) - HDR)
		return big_alloc(size);
	unsigned cls = 0;
	while (((size_t) 1 << (cls + CLASS_MIN_SHIFT)) - HDR < size)
		cls++;
	size_t bsize = (size_t) 1 << (cls + CLASS_MIN_SHIFT);
	mutex_lock(&heap_lock);
	char *b = (char *) free_lists[cls];
	if (b) {
		free_lists[cls] = ((free_block_t *) b)->next;
	} else {
		if (!chunk_next || (size_t) (chunk_end - chunk_next) < bsize) {
			long base = sys_area_create(0, CHUNK_AREA,
			    AREA_READ | AREA_WRITE);
			if (base < 0) {
				mutex_unlock(&heap_lock);
				return NULL;
			}
			chunk_next = (char *) base;
			chunk_end = chunk_next + CHUNK_AREA;
		}
		b = chunk_next;
		chunk_next += bsize;
	}
	mutex_unlock(&heap_lock);
	__atomic_fetch_add(&heap_in_use, bsize, __ATOMIC_RELAXED);
	*(uint64_t *) b = cls;
	return b + HDR;
}

void *calloc(size_t n, size_t size)
{
	if (size && n > (size_t) -1 / size)
		return NULL;
	void *p = malloc(n * size);
	if (p)
		memset(p, 0, n * size);
	return p;
}

void free(void *p)
{
	if (!p)
		return;
	char *b = (char *) p - HDR;
	uint64_t v = *(uint64_t *) b;
	if (v >= CLASSES) {
		__atomic_fetch_sub(&heap_in_use, v, __ATOMIC_RELAXED);
		(void) sys_area_destroy((uintptr_t) b);
		return;
	}
	__atomic_fetch_sub(&heap_in_use, (size_t) 1 << (v + CLASS_MIN_SHIFT),
	    __ATOMIC_RELAXED);
	mutex_lock(&heap_lock);
	((free_block_t *) b)->next = free_lists[v];
	free_lists[v] = (free_block_t *) b;
	mutex_unlock(&heap_lock);
}
