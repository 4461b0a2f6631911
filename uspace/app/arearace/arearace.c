/** @file arearace.c
 * Reproducer of a defect sysfuzz found: an area shrink (or
 * destroy) removes the pages of the freed range after it has released the
 * range, so another area created there meanwhile loses the pages it wrote.
 *
 *   arearace [-r ROUNDS] [-d]
 *
 * Two threads wired to CPUs 0 and 1 (needs 2 CPUs). Per round (default 20):
 * A creates a 1 GiB area at BIG_BASE, touches a page in each of its 512 2 MiB
 * regions and shrinks it to one page, which makes the kernel look up every
 * page of those regions to unmap them; meanwhile B
 * creates a one-page area at VICTIM (768 MiB into the released range) as
 * soon as the kernel allows it (with -d, A destroys the area instead of
 * shrinking it: the same race on the whole range), writes a value to it, waits until A's
 * resize has returned and reads the value back. A kernel that finishes the
 * unmap before the range can be reused (or unmaps only what belongs to the
 * shrunk area) lets B read its value in every round. Prints
 * `arearace: shrink|destroy: rounds R, raced K, lost L` (raced: rounds in which B
 * issued its successful create before A's resize returned; lost: rounds in which B read something else
 * than it wrote) and exits 1 if L > 0, 2 if no round raced (inconclusive),
 * 0 otherwise.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sys.h>

#define PAGE 4096UL
#define BIG_BASE 0x0000200000000000UL
#define BIG_SIZE AREA_SIZE_MAX
#define VICTIM (BIG_BASE + 768UL * 1024 * 1024)
#define MAGIC 0x5a5a5a5a12345678UL

/** Round number A has started (B may create); A's resize returned in
 * round shrunk; B finished round b_done. Atomics: release/acquire. */
static uint32_t started, shrunk, b_done;
static long rounds = 20, raced, lost, errors;
static bool destroy_mode;

static void wait_for(uint32_t *word, uint32_t value)
{
	while (__atomic_load_n(word, __ATOMIC_ACQUIRE) < value)
		(void) sys_yield();
}

static int thread_b(void *arg)
{
	(void) sys_thread_wire(1);
	for (uint32_t r = 1; r <= (uint32_t) rounds; r++) {
		wait_for(&started, r);
		long rc;
		bool in_window;
		do {
			/*
			 * Whether this create is issued before A's resize has
			 * returned: the old kernel let such a create succeed at
			 * once inside the released range while the unmap was still
			 * running; a fixed one makes it wait for the unmap.
			 */
			in_window = __atomic_load_n(&shrunk, __ATOMIC_ACQUIRE) < r;
			rc = sys_area_create(VICTIM, PAGE, AREA_READ | AREA_WRITE);
		} while (rc == EEXIST);
		if (rc != (long) VICTIM) {
			printf("arearace: create of the victim failed: %ld\n", rc);
			errors++;
			__atomic_store_n(&b_done, r, __ATOMIC_RELEASE);
			continue;
		}
		volatile uint64_t *v = (uint64_t *) VICTIM;
		*v = MAGIC;
		wait_for(&shrunk, r);
		uint64_t got = *v;
		if (in_window)
			raced++;
		if (got != MAGIC) {
			lost++;
			printf("arearace: round %u: wrote %#lx, read %#lx\n", r,
			    MAGIC, got);
		}
		(void) sys_area_destroy(VICTIM);
		__atomic_store_n(&b_done, r, __ATOMIC_RELEASE);
	}
	return 0;
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
			rounds = strtol(argv[++i], NULL, 0);
		} else if (strcmp(argv[i], "-d") == 0) {
			destroy_mode = true;
		} else {
			printf("usage: arearace [-r ROUNDS] [-d]\n");
			return 3;
		}
	}
	if (sys_cpu_count() < 2) {
		printf("arearace: needs 2 CPUs\n");
		return 3;
	}
	(void) sys_thread_wire(0);
	uthread_t *b = thread_create(thread_b, NULL);
	if (!b) {
		printf("arearace: cannot create a thread\n");
		return 3;
	}
	for (uint32_t r = 1; r <= (uint32_t) rounds; r++) {
		long rc = sys_area_create(BIG_BASE, BIG_SIZE, AREA_READ | AREA_WRITE);
		if (rc != (long) BIG_BASE) {
			printf("arearace: create of the big area failed: %ld\n", rc);
			errors++;
		}
		/*
		 * One page in every 2 MiB region: the shrink or destroy then has
		 * 512 regions with page tables to unmap (a long window).
		 */
		if (rc == (long) BIG_BASE) {
			for (uintptr_t va = BIG_BASE; va < BIG_BASE + BIG_SIZE;
			    va += 2UL * 1024 * 1024)
				*(volatile uint8_t *) va = 1;
		}
		__atomic_store_n(&started, r, __ATOMIC_RELEASE);
		rc = destroy_mode ? sys_area_destroy(BIG_BASE) :
		    sys_area_resize(BIG_BASE, PAGE);
		__atomic_store_n(&shrunk, r, __ATOMIC_RELEASE);
		if (rc != 0) {
			printf("arearace: %s failed: %ld\n",
			    destroy_mode ? "destroy" : "shrink", rc);
			errors++;
		}
		wait_for(&b_done, r);
		if (!destroy_mode)
			(void) sys_area_destroy(BIG_BASE);
	}
	thread_join(b);
	printf("arearace: %s: rounds %ld, raced %ld, lost %ld\n",
	    destroy_mode ? "destroy" : "shrink", rounds, raced, lost);
	if (errors)
		return 3;
	if (lost)
		return 1;
	return raced ? 0 : 2;
}
