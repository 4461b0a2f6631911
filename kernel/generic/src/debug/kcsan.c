/** @file kcsan.c
 * KCSAN runtime: the __tsan_* hooks GCC's -fsanitize=thread calls in every
 * instrumented file (`make SANITIZE=kcsan`), soft watchpoints, reports.
 *
 * The method is Linux's KCSAN (Elver and Vyukov, "Concurrency bugs should
 * fear the big bad data-race detector", LWN 2020; the watchpoint idea from
 * DataCollider, Erickson et al., OSDI 2010); this code is our own:
 *
 * - Every plain access first checks the armed watchpoints (a scan of
 *   KCSAN_SLOTS words, skipped when none is armed). A watchpoint set by
 *   another CPU on an overlapping range, one of the two accesses a write, is
 *   a data race: this CPU consumes the watchpoint and reports both accesses,
 *   the watcher's stack (recorded when it armed) and its own (now).
 * - One access in about kcsan_skip (per CPU, a pseudo-random count) is
 *   sampled: with the interrupts off it arms a watchpoint on the access's
 *   range (one atomic word: address, size, write flag), reads the value,
 *   waits kcsan_delay polls, disarms and reads the value again. A
 *   changed value with nobody hitting the watchpoint is a race with a writer
 *   KCSAN cannot see (an uninstrumented file, assembly, a device):
 *   "race at unknown origin".
 * - __atomic builtins arrive here as __tsan_atomic* calls: they are done
 *   (sequentially consistent, at least as strong as asked) and check the
 *   watchpoints as marked accesses, never set one: two marked accesses never
 *   race, a plain one against a marked one does.
 * - data_race() raises this CPU's nesting count; accesses made with a count
 *   are ignored, so are this runtime's own (it is not instrumented) and the
 *   printing of a report (the count is raised around it).
 *
 * Reports are printed in Linux's form and then the kernel goes on; a race
 * between the same two instructions is printed once (later ones counted as
 * suppressed), at most KCSAN_MAX_PRINTED are printed. `kcsan panic` makes
 * any race, a repeat too, print and end in a panic instead.
 *
 * Shared state: the slots (atomics, the protocol below); kcsan_cpu[i]
 * written by CPU i only (interrupts disabled where it matters), read by the
 * `kcsan` command racily (statistics); the report tables under report_lock.
 *
 * Slot protocol: 0 free -> RESERVED (a CAS by the watcher, which then fills
 * the slot's info) -> armed (store-release of the encoded word) -> either 0
 * again (the watcher's CAS: no race seen) or CONSUMED (a hitting CPU's CAS,
 * acquire: it copies the info). A watcher whose disarming CAS fails was hit:
 * it saves its stack in the depot, stores the handle in wstack and CASes
 * CONSUMED -> CONSUMED|STACKED (release); the consumer waits for STACKED
 * (acquire), takes the handle and frees the slot (store 0, release). A
 * consumer that gives up waiting CASes CONSUMED -> CONSUMED|ABANDONED and
 * prints without the watcher's stack; the watcher's CAS then fails and the
 * watcher frees the slot itself. Neither side waits for anything else
 * while the other waits for it (both run with the interrupts off, the depot's
 * lock is held for a bounded insert only), so the wait ends.
 *
 * Stacks go to the stack depot (debug/stackdepot.c, KASAN's) and are saved
 * only when a race is found: the consumer's at the access that hit the
 * watchpoint, the watcher's when it sees that it was hit (it is still inside
 * the hook of the watched access, so the frame chain is the access's), and
 * the watcher's at an unknown-origin change. A watchpoint by itself records
 * only the return address of its access (the report's title and the
 * de-duplication key): saving a stack at every watchpoint would fill the
 * depot's pool with stacks no report prints.
 */
#include <debug/kcsan.h>

#ifdef CONFIG_KCSAN

#include <cpu.h>
#include <print.h>
#include <panic.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <debug/stackdepot.h>
#include <debug/symtab.h>
#include <proc/thread.h>

/** Number of watchpoint slots (at most one per CPU is in use at a time). */
#define KCSAN_SLOTS 16
/** Frames kept per stack (the depot's maximum). */
#define KCSAN_STACK_DEPTH STACK_DEPOT_MAX_FRAMES
/** Polls a consumer waits for the watcher's stack before it prints without
 *  it (the watcher takes it as soon as it sees the slot consumed: a few
 *  hundred instructions unless the host deschedules its vCPU). */
#define KCSAN_STACK_WAIT_POLLS (1u << 28)
/** Default polls of the watched slot while a watchpoint is armed. */
#define KCSAN_DELAY_DEFAULT 1500
/** Default mean number of accesses between two sampled ones. */
#define KCSAN_SKIP_DEFAULT 1500
/** Distinct reports printed at most (later ones are counted only). */
#define KCSAN_MAX_PRINTED 64
/** Distinct (instruction, instruction) pairs remembered for de-duplication. */
#define KCSAN_SEEN 256
/** Largest access a watchpoint covers; larger ranges are only checked. */
#define KCSAN_WATCH_MAX 16

/* Slot word: bit 63 armed, 62 consumed, 61 reserved, 60 write, 48..55 size,
 * 0..47 the address's low 48 bits (every kernel address has the same top). */
#define W_ARMED     (1UL << 63)
#define W_CONSUMED  (1UL << 62)
#define W_RESERVED  (1UL << 61)
#define W_WRITE     (1UL << 60)
#define W_STACKED   (1UL << 59)
#define W_ABANDONED (1UL << 58)
#define W_SIZE_SHIFT 48
#define W_ADDR_MASK ((1UL << 48) - 1)

/** Access kinds. */
#define K_WRITE  1u
#define K_ATOMIC 2u

/** One access as printed in a report. */
typedef struct {
	uintptr_t addr;
	size_t size;
	unsigned kind;
	size_t cpu;
	uint64_t tid;
	/** The return address into the instrumented function (0: unknown). */
	uintptr_t pc;
	/** Its stack in the depot; 0 until saved (only for a report). */
	stack_handle_t stack;
} kcsan_access_t;

/** A watchpoint: the encoded word, the watcher's access and, once it was
 *  hit, the watcher's stack (written before its STACKED CAS, see above). */
typedef struct {
	uint64_t word;
	kcsan_access_t info;
	stack_handle_t wstack;
} __attribute__((aligned(64))) kcsan_slot_t;

/** Per-CPU state, written by its CPU only. */
typedef struct {
	uint32_t skip;          /**< accesses left until the next sampled one */
	uint32_t depth;         /**< data_race()/runtime nesting: >0 ignores */
	uint64_t rand;          /**< xorshift state of the skip counts */
	uint64_t sampled;       /**< statistics (racy reads by `kcsan`) */
} __attribute__((aligned(64))) kcsan_cpu_t;

static kcsan_slot_t slots[KCSAN_SLOTS];
static kcsan_cpu_t kcsan_cpu[CONFIG_MAX_CPUS];
/** Armed watchpoints (atomics): 0 lets every access skip the scan. */
static uint64_t armed_count;
/** Set by kcsan_init() (atomics). */
static bool kcsan_enabled;
/** `kcsan panic`: a report panics (atomics). */
static bool kcsan_panic_mode;
static uint32_t kcsan_skip = KCSAN_SKIP_DEFAULT;
static uint32_t kcsan_delay = KCSAN_DELAY_DEFAULT;

/** Counters (atomics). */
static uint64_t stat_races, stat_unknown, stat_printed, stat_suppressed;

/* Report serialisation: a test-and-set lock taken with the interrupts off
 * (not a kernel spinlock: lockdep and the lock code are instrumented). */
static bool report_lock;
/** (pc, pc) pairs reported so far; under report_lock. */
static uintptr_t seen[KCSAN_SEEN][2];
static size_t seen_count;

/** The range kcsan_test_track() follows, its hits, and those of its hits
 *  printed with both accesses (atomics). */
static uintptr_t track_addr, track_size;
static uint64_t track_hits, track_printed_both;

static inline kcsan_cpu_t *this_cpu(void)
{
	return &kcsan_cpu[cpu_current_id()];
}

ipl_t kcsan_nest_begin(void)
{
	ipl_t ipl = interrupts_disable();
	if (__atomic_load_n(&kcsan_enabled, __ATOMIC_RELAXED))
		this_cpu()->depth++;
	return ipl;
}

void kcsan_nest_end(ipl_t ipl)
{
	if (__atomic_load_n(&kcsan_enabled, __ATOMIC_RELAXED)) {
		kcsan_cpu_t *c = this_cpu();
		/* Enabled between begin and end: no count was taken. */
		if (c->depth > 0)
			c->depth--;
	}
	interrupts_restore(ipl);
}

static bool kernel_addr(uintptr_t a)
{
	return (a >= KERNEL_VMA && a < 0xfffffffffffff000UL) ||
	    (a >= PHYS_MAP_BASE && a < PHYS_MAP_BASE + PHYS_MAP_MAX);
}

/** Whether @a fp can be followed as a frame pointer. */
static bool fp_ok(uintptr_t fp)
{
	return fp && !(fp & 7) && kernel_addr(fp);
}

/** The return address in the frame @a fp (a __tsan_* hook's frame: an
 *  address in the instrumented function), 0 if it cannot be read. */
static uintptr_t frame_pc(uintptr_t fp)
{
	return fp_ok(fp) ? ((uintptr_t *) fp)[1] : 0;
}

/**
 * Saves in the stack depot the return addresses of the frame-pointer chain
 * from @a fp (a __tsan_* hook's frame, so the first is the instrumented
 * function), innermost first. Called only for a report (see the file's
 * comment). @return the depot handle, 0 if none (the pool is full).
 */
static stack_handle_t kcsan_stack_save(uintptr_t fp)
{
	uintptr_t pc[KCSAN_STACK_DEPTH];
	size_t n = 0;
	while (n < KCSAN_STACK_DEPTH && fp_ok(fp)) {
		uintptr_t *frame = (uintptr_t *) fp;
		uintptr_t ret = frame[1];
		if (ret == 0)
			break;
		pc[n++] = ret;
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return stack_depot_save(pc, n);
}

static uint64_t next_rand(kcsan_cpu_t *c)
{
	uint64_t x = c->rand ? c->rand : 0x9e3779b97f4a7c15UL ^ (uintptr_t) c;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	c->rand = x;
	return x;
}

static uint32_t next_skip(kcsan_cpu_t *c)
{
	uint32_t s = __atomic_load_n(&kcsan_skip, __ATOMIC_RELAXED);
	return s / 2 + (uint32_t) (next_rand(c) % (s + 1));
}

/** Polls of report_lock before a report is given up (counted, not printed). */
#define KCSAN_REPORT_LOCK_POLLS 1000000

/**
 * Takes report_lock, or gives up after KCSAN_REPORT_LOCK_POLLS polls: the
 * holder prints, and printing may wait for a console lock that this CPU
 * holds (an instrumented access inside the console's own locking hit a
 * watchpoint), so waiting without bound could deadlock.
 * @return whether the lock was taken.
 */
static bool report_lock_take(void)
{
	for (uint32_t n = 0; n < KCSAN_REPORT_LOCK_POLLS; n++) {
		if (!__atomic_exchange_n(&report_lock, true, __ATOMIC_ACQUIRE))
			return true;
		cpu_relax();
	}
	return false;
}

static void report_lock_drop(void)
{
	__atomic_store_n(&report_lock, false, __ATOMIC_RELEASE);
}

/** Function containing @a pc (a return address), for the title. */
static void print_func(uintptr_t pc)
{
	uintptr_t off;
	const char *name = pc ? symtab_lookup(pc - 1, &off) : NULL;
	printf("%s", name ? name : "<unknown>");
}

static void print_access(const char *lead, const kcsan_access_t *a)
{
	printf("%s%s%s to 0x%lx of %lu bytes by thread %lu on cpu %lu:\n", lead,
	    (a->kind & K_ATOMIC) ? "(marked) " : "",
	    (a->kind & K_WRITE) ? "write" : "read", (unsigned long) a->addr,
	    (unsigned long) a->size, (unsigned long) a->tid,
	    (unsigned long) a->cpu);
	const uintptr_t *pc;
	size_t n = stack_depot_fetch(a->stack, &pc);
	if (n == 0)
		printf(" (no stack)\n");
	for (size_t i = 0; i < n; i++) {
		uintptr_t off;
		const char *name = symtab_lookup(pc[i] - 1, &off);
		if (name)
			printf(" %s+0x%lx\n", name, (unsigned long) off + 1);
		else
			printf(" %p\n", (void *) pc[i]);
	}
}

static bool overlaps(uintptr_t a, size_t as, uintptr_t b, size_t bs)
{
	return a < b + bs && b < a + as;
}

/**
 * Counts one race (@a other is NULL for an unknown origin) and prints it
 * unless its instruction pair was reported before. Interrupts disabled, this
 * CPU's nesting count raised.
 */
static void report(const kcsan_access_t *watcher, const kcsan_access_t *other,
    uint64_t old_val, uint64_t new_val)
{
	if (other)
		__atomic_fetch_add(&stat_races, 1, __ATOMIC_RELAXED);
	else
		__atomic_fetch_add(&stat_unknown, 1, __ATOMIC_RELAXED);

	uintptr_t ta = __atomic_load_n(&track_addr, __ATOMIC_RELAXED);
	uintptr_t ts = __atomic_load_n(&track_size, __ATOMIC_RELAXED);
	bool tracked = ts && (overlaps(watcher->addr, watcher->size, ta, ts) ||
	    (other && overlaps(other->addr, other->size, ta, ts)));
	if (tracked)
		__atomic_fetch_add(&track_hits, 1, __ATOMIC_RELAXED);

	uintptr_t p0 = watcher->pc;
	uintptr_t p1 = other ? other->pc : 0;
	if (p1 < p0) {
		uintptr_t t = p0;
		p0 = p1;
		p1 = t;
	}

	if (!report_lock_take()) {
		__atomic_fetch_add(&stat_suppressed, 1, __ATOMIC_RELAXED);
		return;
	}
	bool dup = false;
	for (size_t i = 0; i < seen_count && !dup; i++)
		dup = seen[i][0] == p0 && seen[i][1] == p1;
	if (!dup && seen_count < KCSAN_SEEN) {
		seen[seen_count][0] = p0;
		seen[seen_count][1] = p1;
		seen_count++;
	}
	/* Panic mode prints and panics on any race, a repeat too. */
	bool panic_mode = __atomic_load_n(&kcsan_panic_mode, __ATOMIC_RELAXED);
	bool print = panic_mode || (!dup &&
	    __atomic_load_n(&stat_printed, __ATOMIC_RELAXED) < KCSAN_MAX_PRINTED);
	if (!print) {
		__atomic_fetch_add(&stat_suppressed, 1, __ATOMIC_RELAXED);
		report_lock_drop();
		return;
	}
	__atomic_fetch_add(&stat_printed, 1, __ATOMIC_RELAXED);
	if (tracked && other)
		__atomic_fetch_add(&track_printed_both, 1, __ATOMIC_RELAXED);

	printf("==================================================================\n");
	printf("BUG: KCSAN: data-race in ");
	if (other) {
		/* Linux orders the two names; so do we (by address). */
		uintptr_t a = other->pc;
		uintptr_t b = watcher->pc;
		print_func(a < b ? a : b);
		printf(" / ");
		print_func(a < b ? b : a);
		printf("\n\n");
		print_access("", other);
		printf("\n");
		print_access("", watcher);
	} else {
		print_func(p1);
		printf("\n\n");
		print_access("race at unknown origin, with ", watcher);
		printf("\nvalue changed: 0x%lx -> 0x%lx\n", (unsigned long) old_val,
		    (unsigned long) new_val);
	}
	printf("==================================================================\n");
	report_lock_drop();
	if (panic_mode)
		panic("KCSAN: data race (kcsan panic mode)");
}

/** A digest of the watched bytes (they are about to be accessed anyway). */
static uint64_t read_value(uintptr_t a, size_t size)
{
	if (size == 1)
		return __atomic_load_n((uint8_t *) a, __ATOMIC_RELAXED);
	if (size == 2 && !(a & 1))
		return __atomic_load_n((uint16_t *) a, __ATOMIC_RELAXED);
	if (size == 4 && !(a & 3))
		return __atomic_load_n((uint32_t *) a, __ATOMIC_RELAXED);
	if (size == 8 && !(a & 7))
		return __atomic_load_n((uint64_t *) a, __ATOMIC_RELAXED);
	uint64_t v = 0;
	for (size_t i = 0; i < size; i++) {
		uint8_t b = __atomic_load_n((uint8_t *) (a + i), __ATOMIC_RELAXED);
		v = (v << 8 | v >> 56) ^ b;
	}
	return v;
}

static void fill_access(kcsan_access_t *a, uintptr_t addr, size_t size,
    unsigned kind, uintptr_t fp)
{
	a->addr = addr;
	a->size = size;
	a->kind = kind;
	a->cpu = cpu_current_id();
	thread_t *t = THREAD;
	a->tid = t ? t->tid : 0;
	a->pc = frame_pc(fp);
	a->stack = 0;
}

/**
 * The consumer's side after its CAS consumed slot @a s (word @a consumed):
 * waits for the watcher's stack handle, then frees the slot. @return the
 * handle, 0 if the watcher did not give it in time (the slot is then left to
 * the watcher). Interrupts disabled.
 */
static stack_handle_t take_watcher_stack(kcsan_slot_t *s, uint64_t consumed)
{
	for (uint32_t n = 0; n < KCSAN_STACK_WAIT_POLLS; n++) {
		/* Acquire: pairs with the watcher's release CAS, so that
		 * wstack written before it is seen. */
		uint64_t w = __atomic_load_n(&s->word, __ATOMIC_ACQUIRE);
		if (w & W_STACKED) {
			stack_handle_t h = s->wstack;
			/* Release: our reads of the slot before its reuse. */
			__atomic_store_n(&s->word, 0, __ATOMIC_RELEASE);
			return h;
		}
		cpu_relax();
	}
	uint64_t expect = consumed;
	/* Acquire (GCC wants the success order at least as strong as the
	 * failure's): on failure STACKED came at the last moment, as above. */
	if (__atomic_compare_exchange_n(&s->word, &expect,
	    consumed | W_ABANDONED, false, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
		return 0;
	stack_handle_t h = s->wstack;
	__atomic_store_n(&s->word, 0, __ATOMIC_RELEASE);
	return h;
}

/**
 * The watcher's side when its disarming CAS failed (a consumer hit slot @a s,
 * armed with @a word): saves its own stack (frame @a fp, still the watched
 * access's) and hands the handle to the consumer, or frees the slot if the
 * consumer gave up. Interrupts disabled.
 */
static void give_watcher_stack(kcsan_slot_t *s, uint64_t word, uintptr_t fp)
{
	uint64_t consumed = (word & ~W_ARMED) | W_CONSUMED;
	s->wstack = kcsan_stack_save(fp);
	uint64_t expect = consumed;
	/* Release: wstack before STACKED (the consumer's acquire). */
	if (!__atomic_compare_exchange_n(&s->word, &expect,
	    consumed | W_STACKED, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		/* ABANDONED: the consumer printed without it; the slot is ours. */
		__atomic_store_n(&s->word, 0, __ATOMIC_RELEASE);
	}
}

/**
 * Looks for an armed watchpoint of another CPU that this access conflicts
 * with; on one, consumes it and reports. Any context.
 */
static void check_watchpoints(uintptr_t addr, size_t size, unsigned kind,
    uintptr_t fp)
{
	uintptr_t low = addr & W_ADDR_MASK;
	for (size_t i = 0; i < KCSAN_SLOTS; i++) {
		uint64_t w = __atomic_load_n(&slots[i].word, __ATOMIC_RELAXED);
		if (!(w & W_ARMED))
			continue;
		uintptr_t wa = w & W_ADDR_MASK;
		size_t ws = (w >> W_SIZE_SHIFT) & 0xff;
		if (!overlaps(low, size, wa, ws))
			continue;
		if (!(w & W_WRITE) && !(kind & K_WRITE))
			continue;
		/* Consume it: the info is ours to copy, then the slot is free. */
		ipl_t ipl = interrupts_disable();
		kcsan_cpu_t *c = this_cpu();
		c->depth++;
		uint64_t expect = w;
		uint64_t consumed = (w & ~W_ARMED) | W_CONSUMED;
		if (__atomic_compare_exchange_n(&slots[i].word, &expect,
		    consumed, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			kcsan_access_t watcher = slots[i].info;
			/* A watcher never hits itself (interrupts were off). */
			kcsan_access_t me;
			fill_access(&me, addr, size, kind, fp);
			/* Our stack at the access that hit the watchpoint. */
			me.stack = kcsan_stack_save(fp);
			watcher.stack = take_watcher_stack(&slots[i], consumed);
			report(&watcher, &me, 0, 0);
		}
		c->depth--;
		interrupts_restore(ipl);
		return;
	}
}

/** The sampled path: arm, wait, disarm, compare. */
static void watch(uintptr_t addr, size_t size, unsigned kind, uintptr_t fp)
{
	if (size > KCSAN_WATCH_MAX || !kernel_addr(addr))
		return;
	ipl_t ipl = interrupts_disable();
	kcsan_cpu_t *c = this_cpu();
	c->depth++;
	c->sampled++;
	size_t i;
	for (i = 0; i < KCSAN_SLOTS; i++) {
		uint64_t expect = 0;
		if (__atomic_compare_exchange_n(&slots[i].word, &expect, W_RESERVED,
		    false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	if (i == KCSAN_SLOTS)
		goto out;
	kcsan_slot_t *s = &slots[i];
	fill_access(&s->info, addr, size, kind, fp);
	uint64_t word = W_ARMED | ((kind & K_WRITE) ? W_WRITE : 0) |
	    ((uint64_t) size << W_SIZE_SHIFT) | (addr & W_ADDR_MASK);
	uint64_t before = read_value(addr, size);
	/* Release: a consumer that sees the armed word sees the info. */
	__atomic_store_n(&s->word, word, __ATOMIC_RELEASE);
	__atomic_fetch_add(&armed_count, 1, __ATOMIC_RELAXED);

	uint32_t polls = __atomic_load_n(&kcsan_delay, __ATOMIC_RELAXED);
	for (uint32_t n = 0; n < polls; n++) {
		if (__atomic_load_n(&s->word, __ATOMIC_RELAXED) != word)
			break;
		cpu_relax();
	}

	uint64_t expect = word;
	bool mine = __atomic_compare_exchange_n(&s->word, &expect, 0, false,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
	__atomic_fetch_sub(&armed_count, 1, __ATOMIC_RELAXED);
	if (mine) {
		uint64_t after = read_value(addr, size);
		if (after != before) {
			kcsan_access_t me;
			fill_access(&me, addr, size, kind, fp);
			me.stack = kcsan_stack_save(fp);
			report(&me, NULL, before, after);
		}
	} else {
		give_watcher_stack(s, word, fp);
	}
out:
	c->depth--;
	interrupts_restore(ipl);
}

/** Every hook ends here. */
static inline __attribute__((always_inline)) void access(uintptr_t addr,
    size_t size, unsigned kind, uintptr_t fp)
{
	if (!__atomic_load_n(&kcsan_enabled, __ATOMIC_RELAXED))
		return;
	size_t id = cpu_current_id();
	/* A per-CPU base that is not ours (a fault on a user GS base): off. */
	if (id >= CONFIG_MAX_CPUS)
		return;
	kcsan_cpu_t *c = &kcsan_cpu[id];
	if (c->depth)
		return;
	if (__atomic_load_n(&armed_count, __ATOMIC_RELAXED))
		check_watchpoints(addr, size, kind, fp);
	if (kind & K_ATOMIC)
		return;
	/* Racy against an interrupt on this CPU or a migration: only the
	 * sampling rhythm can suffer. */
	uint32_t s = c->skip;
	if (s > 1) {
		c->skip = s - 1;
		return;
	}
	c->skip = next_skip(c);
	watch(addr, size, kind, fp);
}

#define FP() ((uintptr_t) __builtin_frame_address(0))

/* The hooks GCC 12 calls (gcc/sanitizer.def). Declared here: nobody else
 * calls them. */
#define KCSAN_RW(n) \
	void __tsan_read##n(void *p); \
	void __tsan_write##n(void *p); \
	void __tsan_unaligned_read##n(void *p); \
	void __tsan_unaligned_write##n(void *p); \
	void __tsan_volatile_read##n(void *p); \
	void __tsan_volatile_write##n(void *p); \
	void __tsan_read##n(void *p) { access((uintptr_t) p, n, 0, FP()); } \
	void __tsan_write##n(void *p) { access((uintptr_t) p, n, K_WRITE, FP()); } \
	void __tsan_unaligned_read##n(void *p) { access((uintptr_t) p, n, 0, FP()); } \
	void __tsan_unaligned_write##n(void *p) \
	{ access((uintptr_t) p, n, K_WRITE, FP()); } \
	/* volatile is not synchronisation in this kernel: plain accesses */ \
	void __tsan_volatile_read##n(void *p) { access((uintptr_t) p, n, 0, FP()); } \
	void __tsan_volatile_write##n(void *p) \
	{ access((uintptr_t) p, n, K_WRITE, FP()); }
KCSAN_RW(1)
KCSAN_RW(2)
KCSAN_RW(4)
KCSAN_RW(8)
KCSAN_RW(16)

void __tsan_read_range(void *p, size_t n);
void __tsan_write_range(void *p, size_t n);
void __tsan_init(void);
void __tsan_func_entry(void *pc);
void __tsan_func_exit(void);

void __tsan_read_range(void *p, size_t n)
{
	access((uintptr_t) p, n, 0, FP());
}

void __tsan_write_range(void *p, size_t n)
{
	access((uintptr_t) p, n, K_WRITE, FP());
}

void kcsan_check_range(const void *p, size_t n, bool write)
{
	if (n)
		access((uintptr_t) p, n, write ? K_WRITE : 0, FP());
}

/* The constructor GCC adds to every instrumented file calls this; the
 * kernel runs no constructors and needs no set-up from it. */
void __tsan_init(void)
{
}

/* Not emitted (tsan-instrument-func-entry-exit=0); defined for safety. */
void __tsan_func_entry(void *pc)
{
}

void __tsan_func_exit(void)
{
}

/*
 * The atomics: done sequentially consistent (at least as strong as the
 * order GCC passes), after the watchpoint check as a marked access.
 */
#define KCSAN_ATOMIC(n, T) \
	T __tsan_atomic##n##_load(const T *p, int mo); \
	void __tsan_atomic##n##_store(T *p, T v, int mo); \
	T __tsan_atomic##n##_exchange(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_add(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_sub(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_and(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_or(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_xor(T *p, T v, int mo); \
	T __tsan_atomic##n##_fetch_nand(T *p, T v, int mo); \
	int __tsan_atomic##n##_compare_exchange_strong(T *p, T *e, T v, int mo, \
	    int fmo); \
	int __tsan_atomic##n##_compare_exchange_weak(T *p, T *e, T v, int mo, \
	    int fmo); \
	T __tsan_atomic##n##_compare_exchange_val(T *p, T e, T v, int mo, \
	    int fmo); \
	T __tsan_atomic##n##_load(const T *p, int mo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC, FP()); \
		return __atomic_load_n(p, __ATOMIC_SEQ_CST); \
	} \
	void __tsan_atomic##n##_store(T *p, T v, int mo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		__atomic_store_n(p, v, __ATOMIC_SEQ_CST); \
	} \
	T __tsan_atomic##n##_exchange(T *p, T v, int mo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); \
	} \
	KCSAN_ATOMIC_RMW(n, T, add) \
	KCSAN_ATOMIC_RMW(n, T, sub) \
	KCSAN_ATOMIC_RMW(n, T, and) \
	KCSAN_ATOMIC_RMW(n, T, or) \
	KCSAN_ATOMIC_RMW(n, T, xor) \
	KCSAN_ATOMIC_RMW(n, T, nand) \
	int __tsan_atomic##n##_compare_exchange_strong(T *p, T *e, T v, int mo, \
	    int fmo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		return __atomic_compare_exchange_n(p, e, v, false, \
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	} \
	int __tsan_atomic##n##_compare_exchange_weak(T *p, T *e, T v, int mo, \
	    int fmo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		return __atomic_compare_exchange_n(p, e, v, true, \
		    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
	} \
	T __tsan_atomic##n##_compare_exchange_val(T *p, T e, T v, int mo, \
	    int fmo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		__atomic_compare_exchange_n(p, &e, v, false, __ATOMIC_SEQ_CST, \
		    __ATOMIC_SEQ_CST); \
		return e; \
	}
#define KCSAN_ATOMIC_RMW(n, T, op) \
	T __tsan_atomic##n##_fetch_##op(T *p, T v, int mo) \
	{ \
		access((uintptr_t) p, n / 8, K_ATOMIC | K_WRITE, FP()); \
		return __atomic_fetch_##op(p, v, __ATOMIC_SEQ_CST); \
	}
KCSAN_ATOMIC(8, uint8_t)
KCSAN_ATOMIC(16, uint16_t)
KCSAN_ATOMIC(32, uint32_t)
KCSAN_ATOMIC(64, uint64_t)

void __tsan_atomic_thread_fence(int mo);
void __tsan_atomic_signal_fence(int mo);

void __tsan_atomic_thread_fence(int mo)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void __tsan_atomic_signal_fence(int mo)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

void kcsan_test_track(const void *addr, size_t size)
{
	__atomic_store_n(&track_size, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&track_hits, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&track_printed_both, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&track_addr, (uintptr_t) addr, __ATOMIC_SEQ_CST);
	__atomic_store_n(&track_size, size, __ATOMIC_SEQ_CST);
}

size_t kcsan_test_hits(void)
{
	return __atomic_load_n(&track_hits, __ATOMIC_SEQ_CST);
}

size_t kcsan_test_printed_both(void)
{
	return __atomic_load_n(&track_printed_both, __ATOMIC_SEQ_CST);
}

void kcsan_set_panic(bool on)
{
	__atomic_store_n(&kcsan_panic_mode, on, __ATOMIC_RELAXED);
}

void kcsan_set_skip(uint32_t n)
{
	__atomic_store_n(&kcsan_skip, n, __ATOMIC_RELAXED);
}

void kcsan_set_delay(uint32_t n)
{
	__atomic_store_n(&kcsan_delay, n, __ATOMIC_RELAXED);
}

void kcsan_stats_print(void)
{
	uint64_t sampled = 0;
	for (size_t i = 0; i < CONFIG_MAX_CPUS; i++)
		sampled += __atomic_load_n(&kcsan_cpu[i].sampled, __ATOMIC_RELAXED);
	printf("kcsan: mode %s, skip %u, delay %u, watchpoints set %lu, races %lu, "
	    "unknown-origin %lu, printed %lu, suppressed %lu\n",
	    __atomic_load_n(&kcsan_panic_mode, __ATOMIC_RELAXED) ? "panic" :
	    "continue", __atomic_load_n(&kcsan_skip, __ATOMIC_RELAXED),
	    __atomic_load_n(&kcsan_delay, __ATOMIC_RELAXED),
	    (unsigned long) sampled,
	    (unsigned long) __atomic_load_n(&stat_races, __ATOMIC_RELAXED),
	    (unsigned long) __atomic_load_n(&stat_unknown, __ATOMIC_RELAXED),
	    (unsigned long) __atomic_load_n(&stat_printed, __ATOMIC_RELAXED),
	    (unsigned long) __atomic_load_n(&stat_suppressed, __ATOMIC_RELAXED));
	size_t stacks, words;
	stack_depot_stats(&stacks, &words);
	printf("kcsan: stack depot: %lu stacks, %lu words\n",
	    (unsigned long) stacks, (unsigned long) words);
}

void kcsan_init(void)
{
	for (size_t i = 0; i < CONFIG_MAX_CPUS; i++)
		kcsan_cpu[i].skip = KCSAN_SKIP_DEFAULT + 97 * i;
	__atomic_store_n(&kcsan_enabled, true, __ATOMIC_RELEASE);
	printf("KCSAN: enabled (%d watchpoint slots, skip %u, delay %u polls)\n",
	    KCSAN_SLOTS, kcsan_skip, kcsan_delay);
}

#endif
