/** @file stackdepot.c
 * Stack depot (see debug/stackdepot.h): a fixed pool of return addresses and
 * a hash table of records over it. Compiled without sanitizer
 * instrumentation (the sanitizers' runtimes call it).
 *
 * Layout: record i is a header word (length and hash, see REC_*) followed by
 * its return addresses in pool[]; a handle is the index of the header + 1.
 * Bucket heads and record links are indices + 1 (0: end of chain).
 */
#include <debug/stackdepot.h>
#include <debug/symtab.h>
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <print.h>

#define STACK_DEPOT_POOL    (128 * 1024)
#define STACK_DEPOT_BUCKETS 8192

/*
 * pool[h - 1]: header: bits 0-7 length, bits 32-63 hash; pool[h]: the link
 * (next record's handle, 0 at the end); pool[h + 1 ...]: the addresses.
 * Written by the inserter under depot_lock before the record is published.
 */
static uintptr_t pool[STACK_DEPOT_POOL];
/** Entries of pool[] used; depot_lock (read without it only in stats). */
static size_t pool_used;
static size_t stacks_stored;
/** Bucket heads (handles); written with release under depot_lock, read with acquire. */
static stack_handle_t buckets[STACK_DEPOT_BUCKETS];
/** Test-and-set lock over inserts; interrupts are off while held. */
static int depot_lock;

static uint32_t stack_hash(const uintptr_t *pcs, size_t n)
{
	/* One multiply-xorshift step per address (a few instructions each). */
	uint64_t h = 0x9e3779b97f4a7c15UL ^ n;
	for (size_t i = 0; i < n; i++) {
		h ^= pcs[i];
		h *= 0xff51afd7ed558ccdUL;
		h ^= h >> 33;
	}
	return (uint32_t) h;
}

static bool rec_equal(stack_handle_t r, uint32_t hash, const uintptr_t *pcs,
    size_t n)
{
	uintptr_t hdr = pool[r - 1];
	if ((hdr & 0xff) != n || (uint32_t) (hdr >> 32) != hash)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (pool[r + 1 + i] != pcs[i])
			return false;
	}
	return true;
}

static stack_handle_t bucket_find(unsigned b, uint32_t hash,
    const uintptr_t *pcs, size_t n)
{
	/* Acquire: a handle seen implies its record's contents are seen. */
	stack_handle_t r = __atomic_load_n(&buckets[b], __ATOMIC_ACQUIRE);
	while (r != 0) {
		if (rec_equal(r, hash, pcs, n))
			return r;
		r = (stack_handle_t) pool[r];
	}
	return 0;
}

stack_handle_t stack_depot_save(const uintptr_t *pcs, size_t n)
{
	if (n == 0)
		return 0;
	if (n > STACK_DEPOT_MAX_FRAMES)
		n = STACK_DEPOT_MAX_FRAMES;
	uint32_t hash = stack_hash(pcs, n);
	unsigned b = hash % STACK_DEPOT_BUCKETS;
	stack_handle_t r = bucket_find(b, hash, pcs, n);
	if (r != 0)
		return r;

	ipl_t ipl = interrupts_disable();
	while (__atomic_exchange_n(&depot_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
	r = bucket_find(b, hash, pcs, n);
	if (r == 0 && pool_used + n + 2 <= STACK_DEPOT_POOL) {
		size_t at = pool_used;
		pool[at] = (uintptr_t) n | ((uintptr_t) hash << 32);
		pool[at + 1] = buckets[b];
		for (size_t i = 0; i < n; i++)
			pool[at + 2 + i] = pcs[i];
		pool_used = at + n + 2;
		stacks_stored++;
		r = (stack_handle_t) (at + 1);
		/* Release: the record's words before its publication. */
		__atomic_store_n(&buckets[b], r, __ATOMIC_RELEASE);
	}
	/* Release: the inserts above before the next holder's reads. */
	__atomic_store_n(&depot_lock, 0, __ATOMIC_RELEASE);
	interrupts_restore(ipl);
	return r;
}

/** A frame pointer that can be followed: kernel stacks are in the image or the direct map. */
static bool fp_plausible(uintptr_t fp)
{
	if (fp == 0 || (fp & 7))
		return false;
	if (fp >= KERNEL_VMA && fp < 0xfffffffffffff000UL)
		return true;
	return fp >= PHYS_MAP_BASE && fp < PHYS_MAP_BASE + PHYS_MAP_MAX;
}

stack_handle_t stack_depot_capture(unsigned skip)
{
	uintptr_t pcs[STACK_DEPOT_MAX_FRAMES];
	size_t n = 0;
	uintptr_t fp = (uintptr_t) __builtin_frame_address(0);

	/* Frame 0 is this function's caller (the return address in our frame). */
	while (n < STACK_DEPOT_MAX_FRAMES && fp_plausible(fp)) {
		uintptr_t *frame = (uintptr_t *) fp;
		uintptr_t ret = frame[1];
		if (ret == 0)
			break;
		if (skip > 0)
			skip--;
		else
			pcs[n++] = ret;
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return stack_depot_save(pcs, n);
}

size_t stack_depot_fetch(stack_handle_t h, const uintptr_t **pcs)
{
	if (h == 0 || h >= STACK_DEPOT_POOL)
		return 0;
	*pcs = &pool[h + 1];
	return pool[h - 1] & 0xff;
}

void stack_depot_print(stack_handle_t h)
{
	const uintptr_t *pcs;
	size_t n = stack_depot_fetch(h, &pcs);
	if (n == 0) {
		printf("  (no stack)\n");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uintptr_t off;
		/* ret - 1: inside the call instruction (see backtrace_print_from). */
		const char *name = symtab_lookup(pcs[i] - 1, &off);
		if (name)
			printf("  %p <%s+%#lx>\n", (void *) pcs[i], name, off + 1);
		else
			printf("  %p <?>\n", (void *) pcs[i]);
	}
}

void stack_depot_stats(size_t *stacks, size_t *words)
{
	*stacks = __atomic_load_n(&stacks_stored, __ATOMIC_RELAXED);
	*words = __atomic_load_n(&pool_used, __ATOMIC_RELAXED);
}
