/** @file asid1.c
 * The TLB tags of address spaces (arm64 ASIDs,
 * arch/arm64/include/arch/asid.h) from the kernel's own counts (mm/tlb_stats.h), in a thread wired to one CPU:
 *   1. Reuse: an address space X is entered, one page written and read
 *      (the TLB caches its translation), X left and released; a new one B
 *      with a page at the same address must get X's ASID (the allocator
 *      hands out the number freed last) and its first read must fault and
 *      read zero. The release's `tlbi aside1is` is what makes it so: the
 *      CPU's TTBR0 keeps the ASID while it runs the kernel alone, and TCG
 *      drops its TLB only when the ASID changes, so without the
 *      invalidation (make BROKEN=asid) B reads X's word through X's
 *      translation: "stale translation".
 *   2. Switches: two live address spaces entered in turn 64 times each:
 *      no load flushes this CPU's TLB and none drops the kernel's global
 *      entries (unless a rollover came in between, which is counted).
 *   3. Unmaps: one page (one `tlbi vae1is`), then 40 pages as a range (one
 *      `tlbi aside1is`, no `tlbi vmalle1is`: no global drop).
 *   4. Rollover: with the numbers limited to [1, cpu_count + 2)
 *      (asid_set_limit()), cpu_count + 5 live address spaces entered in
 *      turn for three rounds, each checking the word it wrote the round
 *      before: at least one rollover per round, at least one flush of
 *      this CPU's TLB, every word right. The limit is restored.
 * amd64 (no tags without PCIDs): part 2 only, where every load must
 * flush (load-flush equals loads: what ASIDs remove on arm64).
 */
#include <test.h>
#include <mm/as.h>
#include <mm/tlb_stats.h>
#include <arch/mm.h>
#include <proc/thread.h>
#include <cpu.h>
#include <print.h>
#include <errno.h>
#ifdef __aarch64__
#include <arch/asid.h>
#endif

#define ASID1_BASE   0x40000000UL
#define ASID1_PAGES  64
#define ASID1_ROUNDS 3
#define ASID1_MAX    (CONFIG_MAX_CPUS + 5)

static const char *asid1_result;
static char asid1_buf[160];

static uint64_t word(unsigned i, unsigned round)
{
	return 0xa51d000000000000UL | ((uint64_t) i << 16) | (round + 1);
}

/** A new address space with one ASID1_PAGES-page area; NULL on ENOMEM. */
static as_t *make_as(void)
{
	as_t *as = as_create();
	if (as && as_area_create(as, ASID1_BASE, ASID1_PAGES * PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		as_release(as);
		return NULL;
	}
	return as;
}

static volatile uint64_t *slot(void)
{
	return (volatile uint64_t *) ASID1_BASE;
}

static uint64_t count(tlb_counter_t k)
{
	tlb_stats_t s;
	tlb_stats_get(CPU->id, &s);
	return s.c[k];
}

#define FAIL(...) do { \
	snprintf(asid1_buf, sizeof(asid1_buf), __VA_ARGS__); \
	return asid1_buf; \
} while (0)

/* Part 2, both architectures: switches between two live address spaces. */
static const char *part_switches(void)
{
	as_t *p = make_as(), *q = make_as();
	if (!p || !q)
		return "out of memory";
	/*
	 * First loads outside the count: their ASIDs are allocated, and a
	 * flush this CPU owes an earlier rollover (asid_set_limit() in part
	 * 4, another test's) is taken.
	 */
	as_enter(p);
	as_leave();
	as_enter(q);
	as_leave();
#ifdef __aarch64__
	uint64_t gen = asid_generation();
#endif
	uint64_t loads = count(TLB_AS_LOADS), fl = count(TLB_LOAD_FLUSHES);
	uint64_t gd = count(TLB_GLOBAL_DROPS), ro = count(TLB_ROLLOVERS);
	for (unsigned i = 0; i < 64; i++) {
		as_enter(p);
		*slot() = word(0, i);
		as_leave();
		as_enter(q);
		*slot() = word(1, i);
		as_leave();
	}
	loads = count(TLB_AS_LOADS) - loads;
	fl = count(TLB_LOAD_FLUSHES) - fl;
	gd = count(TLB_GLOBAL_DROPS) - gd;
	ro = count(TLB_ROLLOVERS) - ro;
#ifdef __aarch64__
	/* A rollover by another CPU meanwhile makes this one flush too. */
	ro = asid_generation() - gen;
#endif
	as_release(p);
	as_release(q);
	printf("asid1: 128 switches: %lu loads, %lu load flushes, %lu global "
	    "drops, %lu rollovers\n", loads, fl, gd, ro);
	if (loads < 256)
		FAIL("switches: %lu loads counted, at least 256 expected", loads);
#ifdef __aarch64__
	if (fl > ro || gd > ro)
		FAIL("switches between live ASIDs flushed: %lu load flushes, "
		    "%lu global drops, %lu rollovers", fl, gd, ro);
#else
	if (fl != loads)
		FAIL("without PCIDs every load flushes: %lu loads, %lu flushes",
		    loads, fl);
#endif
	return NULL;
}

#ifdef __aarch64__

/* Part 1: a released address space's ASID reused. */
static const char *part_reuse(void)
{
	as_t *x = make_as();
	if (!x)
		return "out of memory";
	as_enter(x);
	*slot() = word(7, 0);
	uint64_t back = *slot();
	as_leave();
	unsigned ax = __atomic_load_n(&x->tlb_ctx, __ATOMIC_RELAXED) & ASID_MASK;
	uint64_t asid_ops = count(TLB_ASID_OPS);
	as_release(x);
	asid_ops = count(TLB_ASID_OPS) - asid_ops;
	as_t *b = make_as();
	if (!b)
		return "out of memory";
	as_enter(b);
	uint64_t v = *slot();
	as_leave();
	unsigned ab = __atomic_load_n(&b->tlb_ctx, __ATOMIC_RELAXED) & ASID_MASK;
	uint64_t faults = as_stats(b).faults;
	as_release(b);
	printf("asid1: reuse: ASID %u released (%lu ASID invalidations), "
	    "next ASID %u read %#lx with %lu faults\n", ax, asid_ops, ab, v,
	    faults);
	if (back != word(7, 0))
		FAIL("reuse: the first address space read %#lx back", back);
	if (ab != ax)
		FAIL("reuse: ASID %u released, the next address space got %u",
		    ax, ab);
	if (v != 0 || faults != 1)
		FAIL("stale translation: ASID %u reused read %#lx (the released "
		    "address space's word %#lx) with %lu faults", ab, v,
		    word(7, 0), faults);
	return NULL;
}

/* Part 3: unmaps invalidate by VA+ASID or by ASID, never all. */
static const char *part_unmap(void)
{
	as_t *p = make_as();
	if (!p)
		return "out of memory";
	as_enter(p);
	for (unsigned i = 0; i < ASID1_PAGES; i++)
		((volatile uint64_t *) (ASID1_BASE + i * PAGE_SIZE))[0] = i + 1;
	uint64_t pg = count(TLB_PAGE_OPS), as_ops = count(TLB_ASID_OPS);
	uint64_t all = count(TLB_ALL_OPS), gd = count(TLB_GLOBAL_DROPS);
	int rc1 = as_unmap_page(p, ASID1_BASE);
	uint64_t pg1 = count(TLB_PAGE_OPS) - pg, as1 = count(TLB_ASID_OPS) - as_ops;
	size_t removed = 0;
	int rc2 = as_unmap_range(p, ASID1_BASE + PAGE_SIZE, 40, &removed);
	uint64_t pg2 = count(TLB_PAGE_OPS) - pg - pg1;
	uint64_t as2 = count(TLB_ASID_OPS) - as_ops - as1;
	all = count(TLB_ALL_OPS) - all;
	gd = count(TLB_GLOBAL_DROPS) - gd;
	uint64_t v = ((volatile uint64_t *) (ASID1_BASE + 41 * PAGE_SIZE))[0];
	uint64_t z = ((volatile uint64_t *) (ASID1_BASE + 40 * PAGE_SIZE))[0];
	as_leave();
	as_release(p);
	printf("asid1: unmap 1 page: %lu page, %lu ASID invalidations; 40 pages: "
	    "%lu page, %lu ASID; %lu all, %lu global drops\n", pg1, as1, pg2, as2,
	    all, gd);
	if (rc1 != EOK || rc2 != EOK || removed != 40)
		FAIL("unmap: %d, %d, %zu pages removed", rc1, rc2, removed);
	if (pg1 != 1 || as1 != 0 || pg2 != 0 || as2 != 1 || all || gd)
		FAIL("unmap: 1 page: %lu page and %lu ASID invalidations; 40 "
		    "pages: %lu and %lu; %lu all, %lu global drops", pg1, as1,
		    pg2, as2, all, gd);
	if (v != 42 || z != 0)
		FAIL("unmap: page 41 read %#lx, page 40 (unmapped) %#lx", v, z);
	return NULL;
}

/* Part 4: more live address spaces than ASIDs. */
static const char *part_rollover(void)
{
	as_t *a[ASID1_MAX];
	unsigned n = cpu_count + 5;
	for (unsigned i = 0; i < n; i++) {
		a[i] = make_as();
		if (!a[i]) {
			while (i--)
				as_release(a[i]);
			return "out of memory";
		}
	}
	unsigned old = asid_set_limit(cpu_count + 2);
	uint64_t ro = count(TLB_ROLLOVERS), fl = count(TLB_LOAD_FLUSHES);
	uint64_t gen = asid_generation();
	const char *fail = NULL;
	for (unsigned r = 0; r < ASID1_ROUNDS && !fail; r++) {
		for (unsigned i = 0; i < n && !fail; i++) {
			as_enter(a[i]);
			uint64_t v = *slot();
			uint64_t want = r ? word(i, r - 1) : 0;
			*slot() = word(i, r);
			as_leave();
			if (v != want) {
				snprintf(asid1_buf, sizeof(asid1_buf),
				    "rollover: address space %u round %u read "
				    "%#lx, %#lx expected", i, r, v, want);
				fail = asid1_buf;
			}
		}
	}
	gen = asid_generation() - gen;
	ro = count(TLB_ROLLOVERS) - ro;
	fl = count(TLB_LOAD_FLUSHES) - fl;
	(void) asid_set_limit(old);
	for (unsigned i = 0; i < n; i++)
		as_release(a[i]);
	printf("asid1: %u address spaces, %u ASIDs: %lu generations, %lu "
	    "rollovers and %lu load flushes on this CPU\n", n, cpu_count + 1,
	    gen, ro, fl);
	if (fail)
		return fail;
	if (gen < ASID1_ROUNDS || ro < ASID1_ROUNDS || fl < 1)
		FAIL("rollover: %lu generations, %lu rollovers, %lu flushes here "
		    "(at least %u, %u, 1)", gen, ro, fl, ASID1_ROUNDS,
		    ASID1_ROUNDS);
	return NULL;
}

#endif /* __aarch64__ */

static void asid1_thread(void *arg)
{
	(void) arg;
	const char *r = NULL;
#ifdef __aarch64__
	r = part_reuse();
	if (!r)
		r = part_unmap();
	if (!r)
		r = part_rollover();
#endif
	if (!r)
		r = part_switches();
	asid1_result = r;
}

const char *test_asid1(void)
{
	asid1_result = "did not run";
	thread_t *t = thread_create(asid1_thread, NULL, "asid1", THREAD_FLAG_NONE);
	if (!t)
		return "thread_create failed";
	thread_wire(t, &cpus[0]);
	thread_start(t);
	thread_join(t);
	return asid1_result;
}
