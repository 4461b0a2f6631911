/** @file sysfuzz.c
 * The system-call fuzzer, in the manner of trinity/syzkaller at
 * this kernel's scale:
 *
 *   sysfuzz [-s SEED] [-t SECONDS] [-n THREADS] [-g]
 *
 * Prints the seed first. THREADS workers (default: one per CPU, at most
 * MAX_WORKERS; worker i wired to CPU i % CPUs) issue random system calls for
 * SECONDS (default 10): every number of the table except SYS_EXIT (see
 * below), and unknown numbers, with arguments drawn from interesting values:
 * handles the program created (areas, thread ids, futex words), kernel and
 * non-canonical addresses, addresses and ranges straddling 0 and the top of
 * user space, page-unaligned values, huge and negative sizes, flags with
 * every bit, random 64-bit values. Calls race each other on the same areas
 * (shared slots: created, resized and destroyed by any worker while others
 * touch their first pages directly and fault them through the kernel's
 * copy_from_user/copy_to_user), on the same futex words (wait and wake from
 * every worker), and in thread create/exit/join storms. Then it stops the
 * workers, joins every thread it created, destroys its areas, prints a
 * summary (calls and errors per system call) and exits 0, or 1 when the
 * kernel accepted a call that must fail (an "anomaly", printed).
 *
 * Determinism: each worker draws its decisions from its own splitmix64
 * stream seeded from SEED and its index, a fixed number of draws per call,
 * so the sequence of calls and argument classes of a worker depends on SEED
 * only; values taken from shared state (an area slot's base, a thread id)
 * depend on what the other workers did.
 *
 * What it never does, because it would end the fuzz early rather than test
 * the kernel: SYS_EXIT (the task's final exit(0) is the only one); a thread
 * entry inside executable memory other than the exit stub (a random entry
 * in text would execute garbage and be killed); SYS_AREA_DESTROY or a
 * shrinking SYS_AREA_RESIZE of memory it runs on (program segments, the
 * main stack, lib/c's stacks and heap in the kernel's "anywhere" range, the
 * slot areas outside their protocol); a join of its own workers (a cycle
 * would never end); an unbounded futex wait that nobody wakes (every worker
 * publishes the word it waits on and the main thread wakes them). Thread
 * storms are joined, so the number of unjoined thread records stays
 * bounded.
 *
 * Areas the kernel placed (base 0) are never grown past the size they were
 * created with unless -g is given: mm/as.c unmaps a shrunk or destroyed
 * range after it released it, so an area grown over the kernel's next
 * placements and shrunk again wipes the pages of areas created there
 * meanwhile (lib/c's thread stacks: a new thread then calls a NULL
 * function, "killed: page fault ... address 0, pc 0"; reproducer: arearace).
 * With -g the fuzz can hit that defect and be killed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <thread.h>
#include <sys.h>

#define PAGE 4096UL
#define MAX_WORKERS 32
/** Area slots shared by every worker. */
#define NSLOTS 16
/** Pages of a slot area that touchers access directly (resizes keep them). */
#define SLOT_MIN_PAGES 4
/** Private scratch areas per worker. */
#define NSCRATCH 8
/** lib/c threads a worker's storm keeps at once. */
#define STORM_MAX 4
/** Shared ids of exit-stub threads not yet joined. */
#define NRAW 8
/** Static futex words. */
#define NWORDS 8
/** Syscall numbers counted one by one; the rest are "unknown". */
#define NR_COUNTED SYS_COUNT

#define KADDR KERNEL_IMAGE_ADDR
#define KHALF 0xffff800000000000UL
#define NONCANON 0x0000800000000000UL
/* Regions of the user half (see the file comment and slot_fixed_base()). */
#define TEXT_START 0x400000UL
/** The slots' fixed bases: slot i at SLOT_LO + i * 4 GiB (only slots). */
#define SLOT_LO 0x0000040000000000UL
#define SLOT_HI 0x0000080000000000UL
/** Scratch region: unprotected creates, resizes and destroys land here. */
#define SCRATCH_LO 0x0000080000000000UL
#define SCRATCH_HI 0x00000c0000000000UL
/** Where the kernel's base-0 ("anywhere") areas start (proc/task.c). */
#define ANYWHERE_LO 0x0000100000000000UL
/** Stop base-0 areas of the fuzz beyond this (keeps clear of the stack). */
#define ANYWHERE_LIMIT 0x0000600000000000UL

/** The program's segments lie in [TEXT_START, PROGRAM_END) (user.ld). */
#define PROGRAM_END 0x10000000UL

/* ---- PRNG: splitmix64 ---------------------------------------------- */

static uint64_t splitmix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15UL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
	return z ^ (z >> 31);
}

/* ---- shared state ---------------------------------------------------- */

static const char *const names[NR_COUNTED] = {
	"exit", "console_write", "area_create", "area_destroy", "area_resize",
	"thread_create", "thread_exit", "thread_join", "futex_wait",
	"futex_wake", "yield", "cpu_count", "cpu_current", "thread_wire",
	"clock_ns", "membarrier", "task_id",
};

/** Counters (index NR_COUNTED: unknown numbers). Atomics, relaxed. */
static uint64_t n_calls[NR_COUNTED + 1], n_errors[NR_COUNTED + 1];
/** Direct touches, storm threads, exit-stub threads. Atomics, relaxed. */
static uint64_t n_touches, n_storm, n_raw, n_anomalies;

/** Set by main at the end of the run. Atomic: release/acquire. */
static uint32_t stop;
/** Workers wait for it before they start (all created). Atomic. */
static uint32_t go;

/** Futex words every worker waits on and wakes. Atomics. */
static uint32_t words[NWORDS] __attribute__((aligned(64)));

/*
 * Area slots. st: SLOT_EMPTY, SLOT_BUSY (being created or destroyed: no
 * toucher enters) or the number of direct touchers of a live area. Only the
 * thread that moved st from 0 (or EMPTY) to BUSY creates or destroys the
 * area; touchers enter by a CAS st -> st + 1 (acquire) and so never see the
 * area go away under them. Resizes take no part in the protocol: they never
 * go below SLOT_MIN_PAGES, the pages touchers access.
 */
#define SLOT_EMPTY 0x80000000u
#define SLOT_BUSY 0x40000000u
typedef struct {
	uint32_t st;     /**< atomic: acquire on entry, release on exit */
	uint64_t base;   /**< written under BUSY (relaxed atomics), published by
	                      st's release; peeked by resizes (relaxed) */
	uint64_t pages;  /**< last size the slot was given (hint, relaxed) */
	uint64_t cap;    /**< base-0 slot: its created pages (no -g); else 0 */
} slot_t;
static slot_t slots[NSLOTS];

/** Exit-stub thread ids not yet joined; 0: empty. Atomic exchange. */
static uint64_t raw_tids[NRAW];

/** The address each worker is (about to be) waiting on in SYS_FUTEX_WAIT;
 * 0: none. Atomic: the worker stores it (seq_cst) before the call, the main
 * thread loads it (seq_cst) and wakes it until the worker is done. */
static uint64_t waiting_on[MAX_WORKERS];
/** Set by a worker when it is done. Atomic release/acquire. */
static uint32_t worker_done[MAX_WORKERS];

/** Text printed by SYS_CONSOLE_WRITE with a valid buffer (harmless). */
static const char textbuf[64] = "................................"
    "...............................";
/** Targets of copy_to_user (join status) that nobody else reads. */
static int status_sink[16];
/** Writable memory for exit-stub thread "stacks" (never touched). */
static uint64_t stub_stack[64] __attribute__((aligned(16)));

static long ncpus;
/** -g: let base-0 areas grow past their created size (see above). */
static bool grow_anywhere;

/* The exit-stub thread: SYS_THREAD_EXIT(arg) without touching its stack. */
#define fuzz_exit_stub sys_thread_exit_stub

/* ---- per worker ------------------------------------------------------ */

/** A worker's own state: only the worker touches it until main joins it
 * (thread_join orders the worker's writes before main's reads). */
typedef struct {
	int id;
	uint64_t rng;
	uint64_t scratch[NSCRATCH];    /**< own unprotected areas (bases) */
	uint64_t scratch_cap[NSCRATCH]; /**< base-0 ones: created size (no -g) */
	uthread_t *storm[STORM_MAX];   /**< own lib/c threads not joined */
	uint64_t last_tid;             /**< a tid it joined (stale) */
	uthread_t *self;
} worker_t;

static worker_t workers[MAX_WORKERS];

static void count(long nr, long rc)
{
	unsigned i = (nr >= 0 && nr < NR_COUNTED) ? (unsigned) nr : NR_COUNTED;
	__atomic_fetch_add(&n_calls[i], 1, __ATOMIC_RELAXED);
	if (rc < 0)
		__atomic_fetch_add(&n_errors[i], 1, __ATOMIC_RELAXED);
}

static long call(long nr, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
    uint64_t a5)
{
	long rc = __syscall5(nr, (long) a1, (long) a2, (long) a3, (long) a4,
	    (long) a5);
	count(nr, rc);
	return rc;
}

static void anomaly(const char *what, long nr, uint64_t a1, uint64_t a2,
    long rc)
{
	__atomic_fetch_add(&n_anomalies, 1, __ATOMIC_RELAXED);
	printf("sysfuzz: ANOMALY %s: syscall %ld (%#lx, %#lx) returned %ld\n",
	    what, nr, a1, a2, rc);
}

/** True when @a a is not a user address any call may accept. */
static bool bad_user_addr(uint64_t a)
{
	return a >= USER_AREA_END;
}

static bool in_scratch(uint64_t b)
{
	return (b >= USER_AREA_START && b < TEXT_START) ||
	    (b >= SCRATCH_LO && b < SCRATCH_HI) ||
	    (b >= USER_STACK_TOP && b < USER_AREA_END);
}

/** A base in the scratch regions (few distinct values: workers collide). */
static uint64_t scratch_pick(uint64_t r)
{
	switch (r & 7) {
	case 0:
		return USER_AREA_END - PAGE * (1 + ((r >> 3) & 3));
	case 1:
		return USER_AREA_START + PAGE * ((r >> 3) & 15);
	case 2:
		return USER_STACK_TOP + PAGE * ((r >> 3) & 15);
	default:
		return SCRATCH_LO + ((r >> 3) & 63) * (2UL << 20);
	}
}

/**
 * Filters a base for an unprotected destroy or resize: a page-aligned user
 * address outside the scratch regions might be memory the fuzzer runs on,
 * so it becomes a scratch base; everything else (junk) passes unchanged.
 */
static uint64_t unprot_base(uint64_t b, uint64_t r)
{
	if ((b & (PAGE - 1)) == 0 && b >= USER_AREA_START && b < USER_AREA_END &&
	    !in_scratch(b))
		return scratch_pick(r);
	return b;
}

/** Junk addresses (pointer arguments); never inside the fuzzer's memory
 * except where noted by the caller. */
static uint64_t junk_addr(uint64_t r, uint64_t r2)
{
	switch (r % 24) {
	case 0: return 0;
	case 1: return 1;
	case 2: return 7;
	case 3: return PAGE - 1;
	case 4: return PAGE;
	case 5: return USER_AREA_START - 1;
	case 6: return USER_AREA_END;
	case 7: return USER_AREA_END - 1;
	case 8: return USER_AREA_END - 2;
	case 9: return USER_AREA_END - 4;
	case 10: return 0x00007fffffffffffUL;
	case 11: return NONCANON;
	case 12: return NONCANON - 4;
	case 13: return KHALF;
	case 14: return KADDR;
	case 15: return 0xffffffff80000000UL;
	case 16: return (uint64_t) -1;
	case 17: return (uint64_t) -4096;
	case 18: return (uint64_t) -8;
	case 19: return 1UL << 63;
	case 20: return r2 | (1UL << 63);             /* kernel half / junk */
	case 21: return (r2 & 0x7fffffffffffUL) | NONCANON << 1; /* noncanonical */
	case 22: return USER_AREA_END + (r2 & 0xffff);
	default: return r2;
	}
}

/** Sizes: zero, unaligned, page multiples, the limit and beyond, negative. */
static uint64_t junk_size(uint64_t r, uint64_t r2)
{
	switch (r % 20) {
	case 0: return 0;
	case 1: return 1;
	case 2: return PAGE - 1;
	case 3: return PAGE + 1;
	case 4: return AREA_SIZE_MAX;
	case 5: return AREA_SIZE_MAX + PAGE;
	case 6: return 1UL << 40;
	case 7: return (uint64_t) -1;
	case 8: return (uint64_t) -PAGE;
	case 9: return 1UL << 63;
	case 10: return USER_AREA_END;
	case 11: return r2;
	case 12: return r2 & ~(PAGE - 1);
	default: return PAGE * (1 + (r2 % 64));
	}
}

static uint64_t junk_flags(uint64_t r, uint64_t r2)
{
	static const uint64_t f[] = { 0, AREA_READ, AREA_READ | AREA_WRITE,
	    AREA_READ | AREA_EXEC, AREA_READ | AREA_WRITE | AREA_EXEC, 2, 4, 8,
	    0xff, 0xffffffffUL, (uint64_t) -1, (1UL << 32) | AREA_READ };
	if (r % 16 == 15)
		return r2;
	return f[r % (sizeof(f) / sizeof(f[0]))];
}

/* ---- area slots ------------------------------------------------------ */

static uint64_t slot_fixed_base(unsigned i)
{
	return SLOT_LO + (uint64_t) i * (4UL << 30);
}

/** Pages of a new or resized slot: >= SLOT_MIN_PAGES, now and then 1 GiB. */
static uint64_t slot_pages(uint64_t r)
{
	if (r % 64 == 0)
		return AREA_SIZE_MAX / PAGE;
	return SLOT_MIN_PAGES + (r >> 8) % 256;
}

/** Highest base-0 area seen (a hint: racing stores may lose a larger
 * value). Atomic, relaxed. */
static uint64_t anywhere_high;

static void slot_create(uint64_t r)
{
	slot_t *s = &slots[r % NSLOTS];
	uint32_t e = SLOT_EMPTY;
	if (!__atomic_compare_exchange_n(&s->st, &e, SLOT_BUSY, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	uint64_t pages = slot_pages(r >> 8);
	uint64_t flags = (r >> 4) & 1 ? AREA_READ | AREA_WRITE :
	    AREA_READ | AREA_WRITE | AREA_EXEC;
	bool anywhere = (r >> 5) & 1 &&
	    __atomic_load_n(&anywhere_high, __ATOMIC_RELAXED) < ANYWHERE_LIMIT;
	uint64_t base = anywhere ? 0 : slot_fixed_base((unsigned) (r % NSLOTS));
	long rc = call(SYS_AREA_CREATE, base, pages * PAGE, flags, r, r);
	if (rc >= 0) {
		if (anywhere && (uint64_t) rc > __atomic_load_n(&anywhere_high,
		    __ATOMIC_RELAXED))
			__atomic_store_n(&anywhere_high, (uint64_t) rc,
			    __ATOMIC_RELAXED);
		__atomic_store_n(&s->base, (uint64_t) rc, __ATOMIC_RELAXED);
		__atomic_store_n(&s->cap, anywhere && !grow_anywhere ? pages : 0,
		    __ATOMIC_RELAXED);
		__atomic_store_n(&s->pages, pages, __ATOMIC_RELAXED);
		/* Publishes base: a toucher's acquiring CAS sees it. */
		__atomic_store_n(&s->st, 0, __ATOMIC_RELEASE);
	} else {
		__atomic_store_n(&s->st, SLOT_EMPTY, __ATOMIC_RELEASE);
	}
}

static void slot_destroy(uint64_t r)
{
	slot_t *s = &slots[r % NSLOTS];
	uint32_t z = 0;
	/* Only with no toucher inside; none can enter while BUSY. */
	if (!__atomic_compare_exchange_n(&s->st, &z, SLOT_BUSY, false,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	uint64_t base = __atomic_load_n(&s->base, __ATOMIC_RELAXED);
	long rc = call(SYS_AREA_DESTROY, base, r, r, r, r);
	if (rc < 0)
		anomaly("destroy of a live slot area failed", SYS_AREA_DESTROY,
		    base, 0, rc);
	__atomic_store_n(&s->base, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&s->st, SLOT_EMPTY, __ATOMIC_RELEASE);
}

/** A live slot's base (0: none), racing with its destruction on purpose. */
static uint64_t slot_base_peek(uint64_t r)
{
	slot_t *s = &slots[r % NSLOTS];
	uint32_t st = __atomic_load_n(&s->st, __ATOMIC_ACQUIRE);
	if (st & (SLOT_EMPTY | SLOT_BUSY))
		return slot_fixed_base((unsigned) (r % NSLOTS));
	return __atomic_load_n(&s->base, __ATOMIC_RELAXED);
}

static void slot_resize(uint64_t r, uint64_t r2)
{
	uint64_t base = slot_base_peek(r);
	uint64_t size;
	if ((r >> 8) % 4 == 0) {
		size = junk_size(r >> 12, r2);
		/* A valid size below the touched pages would kill a toucher. */
		if (size && size % PAGE == 0 && size <= AREA_SIZE_MAX &&
		    size < SLOT_MIN_PAGES * PAGE)
			size = SLOT_MIN_PAGES * PAGE;
	} else {
		size = slot_pages(r2) * PAGE;
	}
	/* A base-0 slot never grows past its creation (see the file comment);
	 * cap and base may be of different lives of the slot: no harm, a
	 * base-0 base is never handed out again. */
	uint64_t cap = __atomic_load_n(&slots[r % NSLOTS].cap, __ATOMIC_RELAXED);
	if (cap && base >= ANYWHERE_LO && size % PAGE == 0 &&
	    size <= AREA_SIZE_MAX && size > cap * PAGE)
		size = cap * PAGE;
	long rc = call(SYS_AREA_RESIZE, base, size, r2, r, r2);
	if (rc == 0)
		__atomic_store_n(&slots[r % NSLOTS].pages, size / PAGE,
		    __ATOMIC_RELAXED);
}

/** Direct accesses to the first pages of a live slot (faults racing
 * resizes of the rest and other CPUs' faults of the same pages). */
static void slot_touch(uint64_t r)
{
	slot_t *s = &slots[r % NSLOTS];
	uint32_t st = __atomic_load_n(&s->st, __ATOMIC_RELAXED);
	do {
		if (st & (SLOT_EMPTY | SLOT_BUSY))
			return;
	} while (!__atomic_compare_exchange_n(&s->st, &st, st + 1, true,
	    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED));
	uint64_t base = __atomic_load_n(&s->base, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < 1 + (r >> 8) % 4; i++) {
		uint64_t p = (r >> (12 + 2 * i)) % SLOT_MIN_PAGES;
		uint64_t *w = (uint64_t *) (base + p * PAGE + ((r >> 20) & 0x1f8));
		__atomic_fetch_add(w, 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&n_touches, 1, __ATOMIC_RELAXED);
	}
	/* Our accesses happen before a destroyer's CAS from 0 succeeds. */
	__atomic_fetch_sub(&s->st, 1, __ATOMIC_RELEASE);
}

/** Junk that is a user address outside the scratch regions becomes a
 * kernel address (a random value could hit the fuzzer's own memory). */
static uint64_t safe_junk(uint64_t a)
{
	if (a >= USER_AREA_START && a < USER_AREA_END && !in_scratch(a))
		return KADDR;
	return a;
}

/**
 * An address the kernel may read or write through uaccess: inside a slot
 * (first pages or the last known page), a scratch base, a futex word, or
 * junk. Never memory the fuzzer relies on.
 */
static uint64_t kernel_touch_addr(uint64_t r, uint64_t r2)
{
	switch (r % 8) {
	case 0:
	case 1: {
		uint64_t base = slot_base_peek(r >> 3);
		uint64_t pages = __atomic_load_n(&slots[(r >> 3) % NSLOTS].pages,
		    __ATOMIC_RELAXED);
		uint64_t p = (r2 % 4 == 0 && pages) ? pages - 1 : r2 % 64;
		return base + p * PAGE + ((r2 >> 8) & 0xffc);
	}
	case 2:
		return scratch_pick(r >> 3) + ((r2 >> 8) & 0xffc);
	case 3:
		return (uint64_t) &words[(r >> 3) % NWORDS];
	default:
		return safe_junk(junk_addr(r >> 3, r2));
	}
}

/* ---- scratch areas (own, unprotected) -------------------------------- */

static void scratch_forget(worker_t *w, uint64_t base)
{
	for (int i = 0; i < NSCRATCH; i++)
		if (w->scratch[i] == base)
			w->scratch[i] = w->scratch_cap[i] = 0;
}

static void scratch_create(worker_t *w, uint64_t r, uint64_t r2)
{
	uint64_t base;
	switch (r % 4) {
	case 0:
		base = __atomic_load_n(&anywhere_high, __ATOMIC_RELAXED) <
		    ANYWHERE_LIMIT ? 0 : scratch_pick(r2);
		break;
	case 1:
		base = scratch_pick(r2);
		break;
	default:
		base = junk_addr(r >> 2, r2);
		break;
	}
	/* Creates cannot hurt existing areas, but keep the fuzz's own areas
	 * out of the regions of the slots and the program. */
	if (base && (base & (PAGE - 1)) == 0 && base >= USER_AREA_START &&
	    base < USER_AREA_END && !in_scratch(base) &&
	    !(base >= TEXT_START && base < PROGRAM_END))
		base = scratch_pick(r2);
	uint64_t size = (r >> 8) % 2 ? junk_size(r >> 9, r2) :
	    PAGE * (1 + (r2 >> 32) % 16);
	uint64_t flags = junk_flags(r >> 16, r2 >> 7);
	long rc = call(SYS_AREA_CREATE, base, size, flags, r2, r);
	if (rc < 0)
		return;
	if (base == 0 && (uint64_t) rc > __atomic_load_n(&anywhere_high,
	    __ATOMIC_RELAXED))
		__atomic_store_n(&anywhere_high, (uint64_t) rc, __ATOMIC_RELAXED);
	if (bad_user_addr((uint64_t) rc) || (flags & AREA_READ) == 0 ||
	    (base && (base % PAGE || base < USER_AREA_START)) ||
	    (flags & ~(uint64_t) 7) || size == 0 || size % PAGE ||
	    size > AREA_SIZE_MAX)
		anomaly("area_create accepted junk", SYS_AREA_CREATE, base, size,
		    rc);
	int slot = (int) ((r >> 24) % NSCRATCH);
	if (w->scratch[slot])
		(void) call(SYS_AREA_DESTROY, w->scratch[slot], 0, 0, 0, 0);
	w->scratch[slot] = (uint64_t) rc;
	w->scratch_cap[slot] = base == 0 && !grow_anywhere ? size : 0;
}

static void scratch_destroy_or_resize(worker_t *w, bool resize, uint64_t r,
    uint64_t r2)
{
	uint64_t base, cap = 0;
	int slot = (int) (r % NSCRATCH);
	if ((r >> 3) % 2 && w->scratch[slot]) {
		base = w->scratch[slot];
		cap = w->scratch_cap[slot];
	} else {
		base = unprot_base(junk_addr(r >> 4, r2), r2);
	}
	if (resize) {
		uint64_t size = junk_size(r >> 9, r2 >> 3);
		/* A base-0 area never grows past its creation (no -g). */
		if (cap && size % PAGE == 0 && size <= AREA_SIZE_MAX && size > cap)
			size = cap;
		long rc = call(SYS_AREA_RESIZE, base, size, r2, r, r2);
		if (rc >= 0 && (size == 0 || size % PAGE || size > AREA_SIZE_MAX))
			anomaly("area_resize accepted junk", SYS_AREA_RESIZE, base,
			    size, rc);
	} else {
		long rc = call(SYS_AREA_DESTROY, base, r2, r, r2, r);
		if (rc >= 0 && (base % PAGE || bad_user_addr(base)))
			anomaly("area_destroy accepted junk", SYS_AREA_DESTROY, base,
			    0, rc);
		if (rc >= 0)
			scratch_forget(w, base);
	}
}

/* ---- threads ----------------------------------------------------------- */

/** A storm thread: a few harmless calls, then return or exit directly. */
static int storm_main(void *arg)
{
	uint64_t rng = (uint64_t) arg;
	int n = 1 + (int) (splitmix(&rng) % 8);
	for (int i = 0; i < n; i++) {
		uint64_t r = splitmix(&rng);
		switch (r % 8) {
		case 0:
			(void) call(SYS_YIELD, r, r, r, r, r);
			break;
		case 1:
			(void) call(SYS_CPU_CURRENT, r, r, r, r, r);
			break;
		case 2:
			(void) call(SYS_FUTEX_WAKE, (uint64_t) &words[(r >> 8) %
			    NWORDS], 1 + (r >> 16) % 4, r, r, r);
			break;
		case 3:
			(void) call(SYS_FUTEX_WAIT, (uint64_t) &words[(r >> 8) %
			    NWORDS], (r >> 16) % 2, 1 + (r >> 20) % 2000000, r, r);
			break;
		case 4:
			(void) call(SYS_THREAD_WIRE, (r >> 8) % (uint64_t) (ncpus + 1),
			    r, r, r, r);
			break;
		case 5: {
			long a = call(SYS_AREA_CREATE, 0, PAGE * (1 + (r >> 8) % 4),
			    AREA_READ | AREA_WRITE, r, r);
			if (a >= 0) {
				__atomic_fetch_add((uint64_t *) a, 1, __ATOMIC_RELAXED);
				(void) call(SYS_AREA_DESTROY, (uint64_t) a, r, r, r, r);
			}
			break;
		}
		case 6:
			(void) call(SYS_MEMBARRIER, 0, r, r, r, r);
			break;
		default:
			(void) call(SYS_CLOCK_NS, r, r, r, r, r);
			break;
		}
	}
	uint64_t r = splitmix(&rng);
	if (r % 4 == 0) {
		count(SYS_THREAD_EXIT, 0);
		sys_thread_exit((int) (r >> 8));
	}
	return (int) (r >> 8);
}

static void storm(worker_t *w, uint64_t r)
{
	/* Join some, create some: at most STORM_MAX alive per worker. */
	for (int i = 0; i < STORM_MAX; i++) {
		if (w->storm[i] && ((r >> i) & 1)) {
			(void) thread_join(w->storm[i]);
			count(SYS_THREAD_JOIN, 0);
			w->storm[i] = NULL;
		}
	}
	for (int i = 0; i < STORM_MAX; i++) {
		if (!w->storm[i] && ((r >> (8 + i)) & 1)) {
			w->storm[i] = thread_create(storm_main,
			    (void *) (r * (uint64_t) (i + 1) + (uint64_t) w->id));
			count(SYS_THREAD_CREATE, w->storm[i] ? 0 : -1);
			if (w->storm[i])
				__atomic_fetch_add(&n_storm, 1, __ATOMIC_RELAXED);
		}
	}
}

static void storm_join_all(worker_t *w)
{
	for (int i = 0; i < STORM_MAX; i++) {
		if (w->storm[i]) {
			(void) thread_join(w->storm[i]);
			count(SYS_THREAD_JOIN, 0);
			w->storm[i] = NULL;
		}
	}
}

/** A status pointer for SYS_THREAD_JOIN (kernel writes through it). */
static uint64_t status_ptr(uint64_t r, uint64_t r2)
{
	switch (r % 6) {
	case 0:
		return 0;
	case 1:
		return (uint64_t) &status_sink[(r >> 3) % 16];
	case 2:
		return (uint64_t) ((char *) &status_sink[(r >> 3) % 15] + 1);
	case 3:
		return TEXT_START + 64;  /* read-only text */
	case 4:
		return kernel_touch_addr(r >> 3, r2);
	default:
		return safe_junk(junk_addr(r >> 3, r2));
	}
}

static void raw_thread(uint64_t r, uint64_t r2)
{
	uint64_t stack;
	switch (r % 4) {
	case 0:
		stack = (uint64_t) &stub_stack[64];
		break;
	case 1:
		stack = kernel_touch_addr(r >> 2, r2) & ~15UL;
		break;
	default:
		stack = junk_addr(r >> 2, r2);
		break;
	}
	long tid = call(SYS_THREAD_CREATE, (uint64_t) fuzz_exit_stub, stack,
	    r2 & 0xff, r, r2);
	if (tid < 0) {
		return;
	}
	if (stack % 16 || stack <= USER_AREA_START || stack > USER_AREA_END)
		anomaly("thread_create accepted a junk stack", SYS_THREAD_CREATE,
		    (uint64_t) fuzz_exit_stub, stack, tid);
	__atomic_fetch_add(&n_raw, 1, __ATOMIC_RELAXED);
	uint64_t old = __atomic_exchange_n(&raw_tids[(r >> 8) % NRAW],
	    (uint64_t) tid, __ATOMIC_ACQ_REL);
	if (old)
		(void) call(SYS_THREAD_JOIN, old, status_ptr(r >> 12, r2), r, r,
		    r);
}

/** Junk entry: never executable memory (text, or areas of the fuzz). */
static uint64_t junk_entry(uint64_t r, uint64_t r2)
{
	uint64_t e = junk_addr(r, r2);
	if (e >= USER_AREA_START && e < USER_AREA_END)
		e = (r & 1) ? (uint64_t) &status_sink[0] : KADDR;
	return e;
}

static void thread_ops(worker_t *w, uint64_t r, uint64_t r2)
{
	switch (r % 8) {
	case 0:
	case 1:
		storm(w, r >> 3);
		break;
	case 2:
	case 3:
		raw_thread(r >> 3, r2);
		break;
	case 4: {
		/* Junk entry with any stack: must fail. */
		uint64_t e = junk_entry(r >> 3, r2);
		uint64_t s = (r >> 9) % 2 ? (uint64_t) &stub_stack[64] :
		    junk_addr(r >> 10, r2 >> 5);
		long rc = call(SYS_THREAD_CREATE, e, s, r2, r, r2);
		if (rc >= 0)
			anomaly("thread_create accepted a junk entry",
			    SYS_THREAD_CREATE, e, s, rc);
		break;
	}
	case 5: {
		/* Claim an exit-stub thread and join it. */
		uint64_t t = __atomic_exchange_n(&raw_tids[(r >> 3) % NRAW], 0,
		    __ATOMIC_ACQ_REL);
		if (t) {
			(void) call(SYS_THREAD_JOIN, t, status_ptr(r >> 8, r2), r, r, r);
			w->last_tid = t;
		}
		break;
	}
	case 6: {
		/* Peek without claiming: races the claimer's join. */
		uint64_t t = __atomic_load_n(&raw_tids[(r >> 3) % NRAW],
		    __ATOMIC_ACQUIRE);
		if (t)
			(void) call(SYS_THREAD_JOIN, t, status_ptr(r >> 8, r2), r, r, r);
		break;
	}
	default: {
		/* Junk ids: never a small positive id (could be a worker). */
		static const uint64_t ids[] = { 0, (uint64_t) -1, (uint64_t) -5,
		    1UL << 32, 1UL << 40, 1UL << 63 };
		uint64_t t = (r >> 3) % 8 < 6 ? ids[(r >> 3) % 8] :
		    (r >> 3) % 8 == 6 ? w->last_tid : (r2 | (1UL << 62));
		long rc = call(SYS_THREAD_JOIN, t, status_ptr(r >> 8, r2), r, r, r);
		if (rc >= 0 && t != w->last_tid)
			anomaly("thread_join of a junk id succeeded",
			    SYS_THREAD_JOIN, t, 0, rc);
		break;
	}
	}
}

/* ---- futexes ------------------------------------------------------------ */

static void futex_ops(worker_t *w, uint64_t r, uint64_t r2)
{
	uint64_t addr;
	bool word = false;
	switch (r % 4) {
	case 0:
	case 1:
		addr = (uint64_t) &words[(r >> 2) % NWORDS];
		word = true;
		break;
	case 2:
		addr = kernel_touch_addr(r >> 2, r2);
		break;
	default:
		addr = junk_addr(r >> 2, r2);
		break;
	}
	if ((r >> 5) % 16 == 0) {
		addr += 1 + (r >> 9) % 3;  /* unaligned */
		word = false;
	}
	switch ((r >> 12) % 4) {
	case 0:
		/* Change the word, then wake. */
		if (word)
			__atomic_fetch_add((uint32_t *) addr, 1, __ATOMIC_RELEASE);
		__attribute__((fallthrough));
	case 1: {
		static const uint64_t counts[] = { 1, 1, 2, 0, 64,
		    (uint64_t) -1, 1UL << 32 };
		uint64_t c = (r >> 16) % 8 < 7 ? counts[(r >> 16) % 8] : r2;
		long rc = call(SYS_FUTEX_WAKE, addr, c, r2, r, r2);
		if (rc >= 0 && (bad_user_addr(addr) || addr % 4 || c == 0 ||
		    addr < USER_AREA_START))
			anomaly("futex_wake accepted junk", SYS_FUTEX_WAKE, addr, c,
			    rc);
		break;
	}
	default: {
		uint64_t expected;
		switch ((r >> 16) % 4) {
		case 0:
		case 1:
			expected = word ? __atomic_load_n((uint32_t *) addr,
			    __ATOMIC_ACQUIRE) : 0;
			break;
		case 2:
			expected = r2 & 0xffffffffUL;
			break;
		default:
			expected = r2 | (1UL << 32);   /* > UINT32_MAX: EINVAL */
			break;
		}
		uint64_t timeout;
		switch ((r >> 20) % 8) {
		case 0:
			timeout = 0;                   /* none */
			break;
		case 1:
			timeout = (uint64_t) -1;       /* the kernel caps it */
			break;
		case 2:
			timeout = 1;
			break;
		default:
			timeout = 1 + (r2 >> 20) % 5000000;  /* up to 5 ms */
			break;
		}
		/*
		 * Unbounded waits only on the shared words, which the main
		 * thread wakes every 5 ms; a valid address elsewhere (a zero
		 * page matches expected 0) would park the worker until the end.
		 */
		if (!word && timeout > 5000000 && addr >= USER_AREA_START &&
		    addr < USER_AREA_END && addr % 4 == 0)
			timeout = 5000000;
		if (!word && timeout == 0 && addr >= USER_AREA_START &&
		    addr < USER_AREA_END && addr % 4 == 0)
			timeout = 5000000;
		/* The main thread wakes what we wait on at the end. */
		__atomic_store_n(&waiting_on[w->id], addr, __ATOMIC_SEQ_CST);
		long rc = call(SYS_FUTEX_WAIT, addr, expected, timeout, r, r2);
		__atomic_store_n(&waiting_on[w->id], 0, __ATOMIC_RELAXED);
		if (rc >= 0 && (bad_user_addr(addr) || addr % 4 ||
		    addr < USER_AREA_START || expected > UINT32_MAX))
			anomaly("futex_wait accepted junk", SYS_FUTEX_WAIT, addr,
			    expected, rc);
		break;
	}
	}
}

/* ---- the rest ------------------------------------------------------------ */

static void console_op(uint64_t r, uint64_t r2)
{
	uint64_t buf, len;
	if (r % 8 == 0) {
		/* Valid: a few harmless bytes (0 to 2 dots). */
		buf = (uint64_t) textbuf + (r >> 3) % 32;
		len = (r >> 8) % 3;
	} else {
		buf = junk_addr(r >> 2, r2);
		/* Junk user addresses print nothing readable: keep them out. */
		if (buf >= USER_AREA_START && buf < USER_AREA_END - 16)
			buf = KADDR;
		len = (r >> 8) % 2 ? junk_size(r >> 9, r2) : 1 + (r2 % 200);
	}
	long rc = call(SYS_CONSOLE_WRITE, buf, len, r2, r, r2);
	if (rc > 0 && (bad_user_addr(buf) || buf < USER_AREA_START))
		anomaly("console_write read junk", SYS_CONSOLE_WRITE, buf, len, rc);
}

static void misc_op(uint64_t r, uint64_t r2)
{
	switch (r % 8) {
	case 0: {
		static const uint64_t cpus_junk[] = { 1UL << 32, (uint64_t) -1,
		    1UL << 40, 64, 4096 };
		uint64_t c = (r >> 3) % 4 ? (r >> 5) % (uint64_t) (ncpus + 1) :
		    cpus_junk[(r >> 5) % 5];
		long rc = call(SYS_THREAD_WIRE, c, r2, r, r2, r);
		if (rc >= 0 && c >= (uint64_t) ncpus)
			anomaly("thread_wire accepted a junk CPU", SYS_THREAD_WIRE, c,
			    0, rc);
		break;
	}
	case 1: {
		uint64_t f = (r >> 3) % 2 ? 0 : junk_flags(r >> 4, r2);
		long rc = call(SYS_MEMBARRIER, f, r2, r, r2, r);
		if (rc >= 0 && f != 0)
			anomaly("membarrier accepted flags", SYS_MEMBARRIER, f, 0, rc);
		break;
	}
	case 2: {
		/* Unknown numbers. */
		static const uint64_t nrs[] = { SYS_COUNT, SYS_COUNT + 1, 100, 1000,
		    (uint64_t) -1, 1UL << 31, 1UL << 32, 1UL << 63, 0xffffffffUL };
		uint64_t nr = (r >> 3) % 10 < 9 ? nrs[(r >> 3) % 10] :
		    (r2 | (1UL << 40));
		long rc = call((long) nr, r2, r, r2, r, r2);
		if (rc != ENOTSUP)
			anomaly("unknown syscall not ENOTSUP", (long) nr, r2, r, rc);
		break;
	}
	default: {
		static const long nrs[] = { SYS_YIELD, SYS_CPU_COUNT,
		    SYS_CPU_CURRENT, SYS_CLOCK_NS, SYS_TASK_ID };
		long nr = nrs[(r >> 3) % 5];
		long rc = call(nr, r2, r, r2, r, r2);
		if (rc < 0)
			anomaly("a call without arguments failed", nr, r2, r, rc);
		break;
	}
	}
}

/* ---- workers and main ------------------------------------------------------ */

static void one_call(worker_t *w)
{
	/* A fixed number of draws per call: the sequence depends on the seed. */
	uint64_t r0 = splitmix(&w->rng), r = splitmix(&w->rng),
	    r2 = splitmix(&w->rng);
	switch (r0 % 32) {
	case 0: case 1:
		slot_create(r);
		break;
	case 2:
		slot_destroy(r);
		break;
	case 3: case 4:
		slot_resize(r, r2);
		break;
	case 5: case 6: case 7: case 8:
		slot_touch(r);
		break;
	case 9: case 10:
		scratch_create(w, r, r2);
		break;
	case 11:
		scratch_destroy_or_resize(w, false, r, r2);
		break;
	case 12:
		scratch_destroy_or_resize(w, true, r, r2);
		break;
	case 13: case 14: case 15: case 16:
		thread_ops(w, r, r2);
		break;
	case 17: case 18: case 19: case 20: case 21: case 22:
		futex_ops(w, r, r2);
		break;
	case 23: case 24:
		console_op(r, r2);
		break;
	default:
		misc_op(r, r2);
		break;
	}
}

static int worker_main(void *arg)
{
	worker_t *w = arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		(void) sys_futex_wait(&go, 0, 0);
	(void) sys_thread_wire((unsigned) (w->id % ncpus));
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE))
		one_call(w);
	storm_join_all(w);
	for (int i = 0; i < NSCRATCH; i++)
		if (w->scratch[i])
			(void) call(SYS_AREA_DESTROY, w->scratch[i], 0, 0, 0, 0);
	__atomic_store_n(&worker_done[w->id], 1, __ATOMIC_RELEASE);
	return 0;
}

static void usage(void)
{
	printf("usage: sysfuzz [-s SEED] [-t SECONDS] [-n THREADS (1..%d)] "
	    "[-g]\n",
	    MAX_WORKERS);
}

int main(int argc, char **argv)
{
	ncpus = sys_cpu_count();
	if (ncpus < 1)
		ncpus = 1;
	long seed = -1, seconds = 10, n = ncpus;
	const opt_t opts[] = { { "-s", &seed, NULL }, { "-t", &seconds, NULL },
		{ "-n", &n, NULL }, { "-g", NULL, &grow_anywhere } };
	if (opts_parse(argc, argv, opts, sizeof(opts) / sizeof(opts[0])) != 0) {
		usage();
		return 2;
	}
	if (seed < 0)
		seed = sys_clock_ns() & 0x7fffffff;
	if (n > MAX_WORKERS)
		n = MAX_WORKERS;
	if (n < 1 || seconds < 0 || seconds > 86400) {
		usage();
		return 2;
	}
	printf("sysfuzz: seed %ld threads %ld seconds %ld cpus %ld%s\n", seed, n,
	    seconds, ncpus, grow_anywhere ? " grow" : "");
	for (long i = 0; i < n; i++) {
		workers[i].id = (int) i;
		workers[i].rng = (uint64_t) seed ^
		    (0x9e3779b97f4a7c15UL * (uint64_t) (i + 1));
		for (int k = 0; k < 4; k++)
			(void) splitmix(&workers[i].rng);
	}
	for (int i = 0; i < NSLOTS; i++)
		__atomic_store_n(&slots[i].st, SLOT_EMPTY, __ATOMIC_RELAXED);
	long started = 0;
	for (long i = 0; i < n; i++) {
		workers[i].self = thread_create(worker_main, &workers[i]);
		if (!workers[i].self) {
			printf("sysfuzz: cannot create worker %ld\n", i);
			break;
		}
		started++;
	}
	long t0 = sys_clock_ns();
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	(void) sys_futex_wake(&go, (uint64_t) -1);

	/* Heartbeat: wake the shared words now and then until the end. */
	long end = t0 + seconds * 1000000000L;
	while (started > 0 && sys_clock_ns() < end) {
		/* Not counted: the summary counts the workers' calls. */
		for (int i = 0; i < NWORDS; i++)
			(void) sys_futex_wake(&words[i], 2);
		thread_sleep_ns(5000000);
	}
	__atomic_store_n(&stop, 1, __ATOMIC_RELEASE);
	/* Wake whatever the workers wait on until each is done. */
	for (;;) {
		long pending = 0;
		for (long i = 0; i < started; i++) {
			if (__atomic_load_n(&worker_done[i], __ATOMIC_ACQUIRE))
				continue;
			pending++;
			uint64_t a = __atomic_load_n(&waiting_on[i], __ATOMIC_SEQ_CST);
			if (a)
				(void) sys_futex_wake((const uint32_t *) a, (uint64_t) -1);
		}
		for (int i = 0; i < NWORDS; i++)
			(void) sys_futex_wake(&words[i], (uint64_t) -1);
		if (!pending)
			break;
		thread_sleep_ns(1000000);
	}
	for (long i = 0; i < started; i++)
		(void) thread_join(workers[i].self);
	/*
	 * Every worker is gone (the joins order their accesses before ours):
	 * join the exit-stub threads, destroy the slots.
	 */
	for (int i = 0; i < NRAW; i++) {
		uint64_t t = __atomic_exchange_n(&raw_tids[i], 0, __ATOMIC_ACQ_REL);
		if (t)
			(void) call(SYS_THREAD_JOIN, t, 0, 0, 0, 0);
	}
	for (int i = 0; i < NSLOTS; i++) {
		uint32_t st = __atomic_load_n(&slots[i].st, __ATOMIC_ACQUIRE);
		uint64_t base = __atomic_load_n(&slots[i].base, __ATOMIC_RELAXED);
		if (!(st & (SLOT_EMPTY | SLOT_BUSY)) && base)
			(void) call(SYS_AREA_DESTROY, base, 0, 0, 0, 0);
	}
	long ms = (sys_clock_ns() - t0) / 1000000;

	printf("\n");  /* after the dots of SYS_CONSOLE_WRITE */
	uint64_t total = 0, errors = 0;
	for (int i = 0; i <= NR_COUNTED; i++) {
		uint64_t c = __atomic_load_n(&n_calls[i], __ATOMIC_RELAXED);
		uint64_t e = __atomic_load_n(&n_errors[i], __ATOMIC_RELAXED);
		total += c;
		errors += e;
		if (i == SYS_EXIT)
			continue;
		printf("sysfuzz: %2d %-14s calls %8lu errors %8lu\n", i,
		    i < NR_COUNTED ? names[i] : "unknown", c, e);
	}
	printf("sysfuzz: touches %lu storm threads %lu exit-stub threads %lu\n",
	    __atomic_load_n(&n_touches, __ATOMIC_RELAXED),
	    __atomic_load_n(&n_storm, __ATOMIC_RELAXED),
	    __atomic_load_n(&n_raw, __ATOMIC_RELAXED));
	uint64_t anomalies = __atomic_load_n(&n_anomalies, __ATOMIC_RELAXED);
	printf("sysfuzz: seed %ld: %lu calls, %lu errors, %lu anomalies in %ld ms\n",
	    seed, total, errors, anomalies, ms);
	return anomalies ? 1 : 0;
}
