/** @file kasan.c
 * KASAN runtime (SANITIZE=kasan; see debug/kasan.h and docs/SANITIZERS.md).
 * Compiled without instrumentation. Parts:
 * - the shadow: setup (kasan_early_init(), kasan_init_shadow()), poisoning;
 * - the checks the compiler calls (__asan_{load,store}{1,2,4,8,16,N}_noabort)
 *   and the globals' registration (__asan_register_globals, from the
 *   constructors in .init_array, run by kasan_early_init());
 * - the allocator hooks: slab object metadata (allocation and free stacks
 *   in the stack depot), the quarantine (RCU-aware), frames, malloc blocks,
 *   thread stacks;
 * - the report, in the form of Linux's KASAN reports.
 *
 * Design after Linux's generic KASAN (mm/kasan/: shadow scale 8, the shadow
 * codes, the report's sections); the code is this kernel's own.
 */
#include <debug/kasan.h>
#include <debug/sanitize.h>
#include <debug/stackdepot.h>
#include <debug/symtab.h>
#include <debug/sections.h>
#include <mm/slab.h>
#include <mm/frame.h>
#include <synch/rcu.h>
#include <proc/thread.h>
#include <arch.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <cpu.h>
#include <print.h>
#include <panic.h>

#define SHADOW_SCALE 3
#define GRANULE      8UL

/** The shadow byte of @a a. */
#define SHADOW(a) ((int8_t *) (((uintptr_t) (a) >> SHADOW_SCALE) + KASAN_SHADOW_OFFSET))

/*
 * Covered ranges: the image [image_start, image_end) from kasan_early_init()
 * (image_start: ktext_start rounded down to 16 MiB, so that its shadow starts
 * on a 2 MiB boundary), the direct map's RAM [dm_start, dm_start + dm_bytes)
 * from kasan_init_shadow(). The two may overlap (arm64's image lies in the
 * direct map). Written once by the BSP before other CPUs start.
 */
static uintptr_t image_start, image_end;
static uintptr_t dm_start, dm_bytes;

/** The image's shadow: static, 2 MiB aligned (covers a 32 MiB image). */
#define IMAGE_SHADOW_SIZE (4UL << 20)
static uint8_t image_shadow[IMAGE_SHADOW_SIZE] ALIGNED(2UL << 20);

/** Covered ranges start and end on this boundary (their shadow on 2 MiB). */
#define SHADOW_ALIGN (GRANULE * LARGE_PAGE_SIZE)

typedef void (*ctor_t)(void);
extern ctor_t __init_array_start[], __init_array_end[];

static inline bool tracked(uintptr_t a)
{
	return a - dm_start < dm_bytes || a - image_start < image_end - image_start;
}

void kasan_early_init(void)
{
	uintptr_t start = ALIGN_DOWN((uintptr_t) ktext_start, SHADOW_ALIGN);
	uintptr_t end = ALIGN_UP((uintptr_t) kernel_end, GRANULE << 12);
	size_t shadow_bytes = ALIGN_UP((end - start) >> SHADOW_SCALE,
	    LARGE_PAGE_SIZE);
	if (shadow_bytes > IMAGE_SHADOW_SIZE)
		for (;;)
			cpu_relax();  /* no console yet: the image outgrew its shadow */
	kasan_arch_early_shadow();
	for (size_t i = 0; i < shadow_bytes; i++)
		image_shadow[i] = 0;
	kasan_arch_map_shadow((uintptr_t) SHADOW(start),
	    KA2PA(image_shadow), shadow_bytes);
	image_start = start;
	image_end = end;
	/* GCC's constructors register the globals (their redzones). */
	for (ctor_t *c = __init_array_start; c < __init_array_end; c++)
		(*c)();
}

void kasan_init_shadow(phys_region_t *regions, size_t count)
{
	uintptr_t lo = UINTPTR_MAX, top = 0;
	for (size_t i = 0; i < count; i++) {
		lo = MIN(lo, regions[i].base);
		top = MAX(top, regions[i].base + regions[i].size);
	}
	lo = ALIGN_DOWN(lo, SHADOW_ALIGN);
	top = ALIGN_UP(top, SHADOW_ALIGN);
	size_t bytes = (top - lo) >> SHADOW_SCALE;

	/* The shadow from the end of the first region that holds it, 2 MiB aligned. */
	uintptr_t pa = 0;
	for (size_t i = 0; i < count && pa == 0; i++) {
		uintptr_t end = ALIGN_DOWN(regions[i].base + regions[i].size,
		    LARGE_PAGE_SIZE);
		if (end >= regions[i].base + bytes) {
			pa = end - bytes;
			regions[i].size = pa - regions[i].base;
		}
	}
	if (pa == 0)
		panic("KASAN: no region holds the %zu-byte shadow", bytes);
	uint64_t *s = PA2KA(pa);
	for (size_t i = 0; i < bytes / 8; i++)
		s[i] = 0;
	/*
	 * Where the image lies inside this range (arm64), its shadow (the
	 * globals' redzones, the boot stack's frames) is copied over before the
	 * new pages replace it; nothing writes the shadow in between (this file
	 * is not instrumented, the other CPUs are not up).
	 */
	uintptr_t va = (uintptr_t) PA2KA(lo), va_end = (uintptr_t) PA2KA(top);
	uintptr_t c0 = MAX(va, image_start), c1 = MIN(va_end, image_end);
	for (uintptr_t a = c0; a < c1; a += GRANULE)
		((int8_t *) s)[(a - va) >> SHADOW_SCALE] = *SHADOW(a);
	kasan_arch_map_shadow((uintptr_t) SHADOW(va), pa, bytes);
	dm_start = va;
	__atomic_store_n(&dm_bytes, top - lo, __ATOMIC_RELEASE);
	printf("KASAN: shadow of %zu MiB at %#lx for the direct map's [%#lx, %#lx)\n",
	    bytes >> 20, (unsigned long) pa, (unsigned long) lo,
	    (unsigned long) top);
}

/*
 * Poisoning.
 */

/** Sets @a n shadow bytes from @a s to @a code (8 at a time in the middle). */
static void shadow_fill(int8_t *s, size_t n, uint8_t code)
{
	while (n > 0 && ((uintptr_t) s & 7)) {
		*s++ = (int8_t) code;
		n--;
	}
	uint64_t w = code * 0x0101010101010101UL;
	for (; n >= 8; n -= 8, s += 8)
		*(uint64_t *) s = w;
	while (n > 0) {
		*s++ = (int8_t) code;
		n--;
	}
}

void kasan_poison(const void *addr, size_t size, uint8_t code)
{
	uintptr_t a = (uintptr_t) addr;
	if (!tracked(a) || size == 0)
		return;
	shadow_fill(SHADOW(a), (size + GRANULE - 1) >> SHADOW_SCALE, code);
}

void kasan_unpoison(const void *addr, size_t size)
{
	uintptr_t a = (uintptr_t) addr;
	if (!tracked(a) || size == 0)
		return;
	int8_t *s = SHADOW(a);
	size_t full = size >> SHADOW_SCALE;
	shadow_fill(s, full, 0);
	if (size & (GRANULE - 1))
		s[full] = (int8_t) (size & (GRANULE - 1));
}

/*
 * Reports.
 */

/** Slab object metadata, in the redzone right after the object. */
typedef struct kasan_meta {
	uint32_t magic;
	stack_handle_t alloc_stack;
	stack_handle_t free_stack;
	uint16_t alloc_cpu;
	uint16_t free_cpu;
	uint64_t alloc_tid;
	uint64_t free_tid;
	struct slab_cache *cache;
	uint32_t size;
	/** Freed by an RCU callback (KASAN_SLAB_FREE_RCU). */
	uint32_t rcu;
	/**
	 * While the object waits on the quarantine's overflow list: the next
	 * (newer) object's metadata and the GP to complete first (quar_lock).
	 */
	struct kasan_meta *quar_next;
	uint64_t quar_gp;
} kasan_meta_t;

#define META_MAGIC 0x4b61534eU  /* "KaSN" */
#define META_SIZE  ALIGN_UP(sizeof(kasan_meta_t), GRANULE)
/** The minimum redzone after the metadata. */
#define SLAB_RZ_MIN 16

/*
 * A slab slot: the object, SLAB_RZ_MIN bytes of redzone (an overflow by a
 * few bytes lands there, not on the metadata), the metadata (redzone too).
 */
static inline kasan_meta_t *obj_meta(void *obj, size_t size)
{
	return (kasan_meta_t *) ((uintptr_t) obj + ALIGN_UP(size, GRANULE) +
	    SLAB_RZ_MIN);
}

/** The return address @a depth frames up from the caller of this function's caller. */
static __attribute__((noinline)) uintptr_t caller_ip(unsigned depth)
{
	uintptr_t *fp = __builtin_frame_address(0);
	for (unsigned i = 0; i <= depth && fp != NULL; i++)
		fp = (uintptr_t *) fp[0];
	return fp != NULL ? fp[1] : 0;
}

static bool code_in_object(int8_t v)
{
	uint8_t u = (uint8_t) v;
	return v >= 0 || u == KASAN_SLAB_FREE || u == KASAN_SLAB_FREE_RCU ||
	    u == KASAN_MALLOC_REDZONE;
}

/**
 * The slab object around (or just left of) @a a: scans the shadow left over
 * the object's granules to the redzone before it. NULL when no metadata
 * confirms it.
 */
static kasan_meta_t *find_object(uintptr_t a, void **objp)
{
	uintptr_t g = ALIGN_DOWN(a, GRANULE);
	/* In a redzone: step left to the object it follows. */
	for (unsigned i = 0; i < 4096 && tracked(g) &&
	    (uint8_t) *SHADOW(g) == KASAN_SLAB_REDZONE; i++)
		g -= GRANULE;
	if (!tracked(g) || !code_in_object(*SHADOW(g)))
		return NULL;
	for (unsigned i = 0; i < (1U << 17) && tracked(g - GRANULE) &&
	    code_in_object(*SHADOW(g - GRANULE)); i++)
		g -= GRANULE;
	/* A malloc block: the slab object starts at its header. */
	kasan_meta_t *m;
	for (unsigned i = 0; i < (1U << 17); i++) {
		uintptr_t e = g + i * GRANULE;
		if (!tracked(e))
			return NULL;
		if ((uint8_t) *SHADOW(e) == KASAN_SLAB_REDZONE) {
			m = (kasan_meta_t *) (e + SLAB_RZ_MIN);
			if (m->magic != META_MAGIC)
				return NULL;
			*objp = (void *) g;
			return m;
		}
	}
	return NULL;
}

static const char *bug_class(uint8_t code, uint8_t next)
{
	if (code < GRANULE)
		code = next;  /* a partial granule: what follows it */
	switch (code) {
	case KASAN_PAGE_FREE:
		return "use-after-free";
	case KASAN_PAGE_REDZONE:
		return "page-out-of-bounds";
	case KASAN_SLAB_REDZONE:
	case KASAN_MALLOC_REDZONE:
		return "slab-out-of-bounds";
	case KASAN_SLAB_FREE:
		return "slab-use-after-free";
	case KASAN_SLAB_FREE_RCU:
		return "slab-use-after-rcu-free";
	case KASAN_GLOBAL_REDZONE:
		return "global-out-of-bounds";
	case KASAN_STACK_SCOPE:
		return "stack-use-after-scope";
	case KASAN_STACK_EXITED:
		return "stack-use-after-thread-exit";
	case KASAN_STACK_LEFT:
	case KASAN_STACK_MID:
	case KASAN_STACK_RIGHT:
		return "stack-out-of-bounds";
	default:
		return "wild-memory-access";
	}
}

static void print_shadow(uintptr_t a)
{
	printf("Memory state around the buggy address:\n");
	uintptr_t row = ALIGN_DOWN(a, 16 * GRANULE);
	for (int r = -2; r <= 2; r++) {
		uintptr_t ra = row + (uintptr_t) ((intptr_t) r * 16 * (intptr_t) GRANULE);
		if (!tracked(ra) || !tracked(ra + 16 * GRANULE - 1))
			continue;
		printf("%s%p:", r == 0 ? ">" : " ", (void *) ra);
		for (unsigned i = 0; i < 16; i++)
			printf(" %02x", (uint8_t) SHADOW(ra)[i]);
		printf("\n");
		if (r == 0)
			printf("%*s^\n", (int) (20 + 3 * ((a - ra) / GRANULE)), "");
	}
}

static void print_who(const char *what, uint64_t tid, unsigned cpu,
    stack_handle_t st)
{
	printf("\n%s by thread %lu on cpu %u:\n", what, (unsigned long) tid, cpu);
	stack_depot_print(st);
}

static void report(uintptr_t a, size_t size, bool write, uintptr_t ip,
    uintptr_t bad)
{
	if (!san_report_begin(SAN_KASAN))
		return;
	uint8_t code = (uint8_t) *SHADOW(bad);
	uint8_t next = tracked(bad + GRANULE) ? (uint8_t) *SHADOW(bad + GRANULE) : 0;
	const char *cls = bug_class(code, next);
	uintptr_t off;
	const char *fn = symtab_lookup(ip - 1, &off);
	printf("BUG: KASAN: %s in %s+%#lx\n", cls, fn ? fn : "?", fn ? off + 1 : 0);
	thread_t *t = THREAD;
	printf("%s of size %zu at addr %p by thread %s/%lu on cpu %u\n",
	    write ? "Write" : "Read", size, (void *) a, t ? t->name : "-",
	    t ? (unsigned long) t->tid : 0UL, CPU ? CPU->id : 0);
	printf("The instruction: %p <%s+%#lx>\n", (void *) ip, fn ? fn : "?",
	    fn ? off + 1 : 0);
	printf("\n");
	backtrace_print_from((uintptr_t) __builtin_frame_address(0));

	void *obj;
	kasan_meta_t *m = NULL;
	if (code == KASAN_SLAB_REDZONE || code == KASAN_SLAB_FREE ||
	    code == KASAN_SLAB_FREE_RCU || code == KASAN_MALLOC_REDZONE ||
	    (code < GRANULE && (next == KASAN_SLAB_REDZONE ||
	    next == KASAN_MALLOC_REDZONE)))
		m = find_object(bad, &obj);
	if (m != NULL) {
		print_who("Allocated", m->alloc_tid, m->alloc_cpu, m->alloc_stack);
		if (m->free_stack != 0)
			print_who(m->rcu ? "Freed (by an RCU callback)" : "Freed",
			    m->free_tid, m->free_cpu, m->free_stack);
		uintptr_t o = (uintptr_t) obj;
		printf("\nThe buggy address belongs to the object at %p\n"
		    " which belongs to the cache %s of size %u\n", obj,
		    slab_cache_name(m->cache), m->size);
		if (a >= o && a < o + m->size)
			printf("The buggy address is located %lu bytes inside of\n",
			    (unsigned long) (a - o));
		else
			printf("The buggy address is located %lu bytes to the right of\n",
			    (unsigned long) (a - (o + m->size)));
		printf(" %u-byte region [%p, %p)\n", m->size, obj,
		    (void *) (o + m->size));
	} else if (code == KASAN_STACK_EXITED) {
		printf("\nThe buggy address belongs to the stack of an exited thread\n");
	} else if (code == KASAN_PAGE_FREE) {
		printf("\nThe buggy address belongs to a free frame (pa %#lx)\n",
		    (unsigned long) (a >= PHYS_MAP_BASE ? a - PHYS_MAP_BASE : 0));
	}
	printf("\n");
	print_shadow(bad);
	san_report_end(SAN_KASAN, cls);
}

/** The first byte of [a, a + size) the shadow forbids, or 0. */
static uintptr_t first_bad(uintptr_t a, size_t size)
{
	for (uintptr_t p = a; p < a + size; p++) {
		int8_t v = *SHADOW(p);
		if (v != 0 && (v < 0 || (int8_t) (p & (GRANULE - 1)) >= v))
			return p;
	}
	return 0;
}

static inline __attribute__((always_inline)) void check(uintptr_t a,
    size_t size, bool write, uintptr_t ip)
{
	if (!tracked(a))
		return;
	/* Fast path: every granule the access touches is all accessible. */
	int8_t *s = SHADOW(a), *e = SHADOW(a + size - 1);
	bool ok = true;
	for (int8_t *p = s; p <= e; p++) {
		if (*p != 0) {
			ok = false;
			break;
		}
	}
	if (likely(ok))
		return;
	uintptr_t bad = first_bad(a, size);
	if (bad != 0)
		report(a, size, write, ip, bad);
}

void kasan_check_range(const void *addr, size_t size, bool write, uintptr_t ip)
{
	if (size == 0)
		return;
	uintptr_t a = (uintptr_t) addr;
	if (!tracked(a) && !tracked(a + size - 1))
		return;
	check(a, size, write, ip);
}

#define DEFINE_ASAN_CHECK(n)                                                   \
	void __asan_load##n##_noabort(uintptr_t a);                            \
	void __asan_load##n##_noabort(uintptr_t a)                             \
	{                                                                      \
		check(a, n, false, (uintptr_t) __builtin_return_address(0));   \
	}                                                                      \
	void __asan_store##n##_noabort(uintptr_t a);                           \
	void __asan_store##n##_noabort(uintptr_t a)                            \
	{                                                                      \
		check(a, n, true, (uintptr_t) __builtin_return_address(0));    \
	}                                                                      \
	void __asan_report_load##n##_noabort(uintptr_t a);                     \
	void __asan_report_load##n##_noabort(uintptr_t a)                      \
	{                                                                      \
		uintptr_t b = first_bad(a, n);                                 \
		report(a, n, false, (uintptr_t) __builtin_return_address(0),   \
		    b ? b : a);                                                \
	}                                                                      \
	void __asan_report_store##n##_noabort(uintptr_t a);                    \
	void __asan_report_store##n##_noabort(uintptr_t a)                     \
	{                                                                      \
		uintptr_t b = first_bad(a, n);                                 \
		report(a, n, true, (uintptr_t) __builtin_return_address(0),    \
		    b ? b : a);                                                \
	}

DEFINE_ASAN_CHECK(1)
DEFINE_ASAN_CHECK(2)
DEFINE_ASAN_CHECK(4)
DEFINE_ASAN_CHECK(8)
DEFINE_ASAN_CHECK(16)

void __asan_loadN_noabort(uintptr_t a, size_t size);
void __asan_loadN_noabort(uintptr_t a, size_t size)
{
	if (size != 0)
		check(a, size, false, (uintptr_t) __builtin_return_address(0));
}

void __asan_storeN_noabort(uintptr_t a, size_t size);
void __asan_storeN_noabort(uintptr_t a, size_t size)
{
	if (size != 0)
		check(a, size, true, (uintptr_t) __builtin_return_address(0));
}

void __asan_report_load_n_noabort(uintptr_t a, size_t size);
void __asan_report_load_n_noabort(uintptr_t a, size_t size)
{
	uintptr_t b = first_bad(a, size);
	report(a, size, false, (uintptr_t) __builtin_return_address(0), b ? b : a);
}

void __asan_report_store_n_noabort(uintptr_t a, size_t size);
void __asan_report_store_n_noabort(uintptr_t a, size_t size)
{
	uintptr_t b = first_bad(a, size);
	report(a, size, true, (uintptr_t) __builtin_return_address(0), b ? b : a);
}

/** Before a noreturn call: nothing to do (stacks are unpoisoned when freed). */
void __asan_handle_no_return(void);
void __asan_handle_no_return(void)
{
}

/* Variable-length arrays and alloca (GCC with asan-stack). */
void __asan_alloca_poison(uintptr_t a, size_t size);
void __asan_alloca_poison(uintptr_t a, size_t size)
{
	/* 32-byte redzones left and right of a, as GCC lays them out. */
	kasan_poison((void *) (a - 32), 32, KASAN_STACK_LEFT);
	kasan_unpoison((void *) a, size);
	uintptr_t r = ALIGN_UP(a + size, 32);
	if (ALIGN_UP(a + size, GRANULE) < r)
		kasan_poison((void *) ALIGN_UP(a + size, GRANULE),
		    r - ALIGN_UP(a + size, GRANULE), KASAN_STACK_MID);
	kasan_poison((void *) r, 32, KASAN_STACK_RIGHT);
}

void __asan_allocas_unpoison(uintptr_t top, uintptr_t bottom);
void __asan_allocas_unpoison(uintptr_t top, uintptr_t bottom)
{
	if (bottom > top)
		kasan_unpoison((void *) top, bottom - top);
}

/* Globals (GCC's struct __asan_global, version 8). */
typedef struct {
	uintptr_t beg;
	size_t size;
	size_t size_with_redzone;
	const char *name;
	const char *module_name;
	size_t has_dynamic_init;
	void *location;
	uintptr_t odr_indicator;
} asan_global_t;

void __asan_register_globals(asan_global_t *g, size_t n);
void __asan_register_globals(asan_global_t *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		kasan_unpoison((void *) g[i].beg, g[i].size);
		uintptr_t rz = ALIGN_UP(g[i].beg + g[i].size, GRANULE);
		kasan_poison((void *) rz, g[i].beg + g[i].size_with_redzone - rz,
		    KASAN_GLOBAL_REDZONE);
	}
}

void __asan_unregister_globals(asan_global_t *g, size_t n);
void __asan_unregister_globals(asan_global_t *g, size_t n)
{
}

/*
 * The quarantine: a ring of freed objects and thread stacks, released
 * oldest first when it holds more than QUAR_BYTES bytes or QUAR_MAX
 * entries. An entry freed by an RCU callback carries the grace period that
 * must complete before its release: rcu_completed_gps() + 2 at the free (the
 * GP after the one possibly in progress, so one that starts after the free).
 *
 * The overflow list: a full ring whose oldest entry is such an object with
 * its GP pending moves it to this FIFO, threaded through the objects' own
 * metadata (quar_next, quar_gp: the slot's redzone, untouched until
 * slab_free_now()), so it allocates nothing. Only slab objects join it. Its
 * GPs never decrease from head to tail (rcu_completed_gps() only grows, read
 * under quar_lock; entries leave the ring in order), so releasing from the
 * head while its GP has completed releases all that may go. Only
 * kasan_quarantine_flush() releases entries before their GP (counted apart).
 *
 * Memory ordering: the ring, the list (with its objects' quar_next and
 * quar_gp) and the counters are protected by quar_lock (acquire on taking,
 * release on dropping it). rcu_completed_gps() is a seq_cst load: seeing
 * the GP completed orders the release, and the object's reuse, after the
 * accesses of every reader section that GP waited for.
 */
#define QUAR_MAX   4096
#define QUAR_BYTES (4UL << 20)
#define QUAR_BATCH 16

typedef struct {
	void *ptr;
	struct slab_cache *cache;  /**< NULL: thread stack frames */
	size_t size;               /**< bytes (slab object or stack) */
	uint64_t gp;               /**< 0 or the GP to complete first */
} quar_entry_t;

/** The ring; quar_lock (test-and-set, interrupts off). */
static quar_entry_t quar[QUAR_MAX];
static size_t quar_head, quar_count, quar_bytes;
/** The overflow list (oldest first) and its size; quar_lock. */
static kasan_meta_t *ovf_head, *ovf_tail;
static size_t ovf_count, ovf_bytes;
static int quar_lock;
/** Counters (quar_lock); RCU frees released before their GP, not by a flush / by one. */
static uint64_t quar_released, quar_rcu_held, quar_early, quar_flushed_early;

/** The CPU whose reclaimer thread is running RCU callbacks (its thread); per CPU. */
static thread_t *rcu_cb_thread[CONFIG_MAX_CPUS];

void kasan_rcu_cb_enter(void)
{
	rcu_cb_thread[CPU->id] = THREAD;
}

void kasan_rcu_cb_exit(void)
{
	rcu_cb_thread[CPU->id] = NULL;
}

static bool in_rcu_callback(void)
{
	return CPU != NULL && THREAD != NULL && rcu_cb_thread[CPU->id] == THREAD;
}

static ipl_t quar_acquire(void)
{
	ipl_t ipl = interrupts_disable();
	while (__atomic_exchange_n(&quar_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
	return ipl;
}

static void quar_release_lock(ipl_t ipl)
{
	/* Release: the ring's updates before the next holder's reads. */
	__atomic_store_n(&quar_lock, 0, __ATOMIC_RELEASE);
	interrupts_restore(ipl);
}

static void entry_free(const quar_entry_t *e)
{
	if (e->cache != NULL)
		slab_free_now(e->cache, e->ptr);
	else
		frame_free(KA2PA(e->ptr), e->size / PAGE_SIZE);
}

/** The GP of @a gp (0: none) has not completed yet. */
static bool gp_pending(uint64_t gp)
{
	return gp != 0 && rcu_completed_gps() < gp;
}

/** Counts @a e's release (lock held); @a all: by a flush. */
static void count_release(const quar_entry_t *e, bool all)
{
	if (gp_pending(e->gp)) {
		if (all)
			quar_flushed_early++;
		else
			quar_early++;
	}
	quar_released++;
}

/** Moves the ring's oldest entry (a slab object) to the overflow list. */
static void ovf_push(const quar_entry_t *e)
{
	kasan_meta_t *m = obj_meta(e->ptr, e->size);
	m->quar_next = NULL;
	m->quar_gp = e->gp;
	if (ovf_tail != NULL)
		ovf_tail->quar_next = m;
	else
		ovf_head = m;
	ovf_tail = m;
	ovf_count++;
	ovf_bytes += e->size;
}

/** Unlinks the overflow list's oldest entry into @a out. */
static void ovf_pop(quar_entry_t *out)
{
	kasan_meta_t *m = ovf_head;
	ovf_head = m->quar_next;
	if (ovf_head == NULL)
		ovf_tail = NULL;
	out->ptr = (void *) ((uintptr_t) m - SLAB_RZ_MIN -
	    ALIGN_UP(m->size, GRANULE));
	out->cache = m->cache;
	out->size = m->size;
	out->gp = m->quar_gp;
	ovf_count--;
	ovf_bytes -= m->size;
}

/**
 * Takes up to QUAR_BATCH entries to release into @a out (lock held): the ring
 * first (a full one always gives up its oldest entry, so quar_put() never
 * writes over it), then the overflow list.
 */
static size_t quar_take(quar_entry_t *out, bool all)
{
	size_t n = 0;
	while (quar_count > 0 && n < QUAR_BATCH &&
	    (all || quar_count > QUAR_MAX - QUAR_BATCH || quar_bytes > QUAR_BYTES)) {
		quar_entry_t *e = &quar[quar_head];
		if (!all && gp_pending(e->gp)) {
			if (quar_count < QUAR_MAX - 1)
				break;  /* wait for the grace period while there is room */
			ovf_push(e);  /* the ring is full: wait on the list */
		} else {
			count_release(e, all);
			out[n++] = *e;
		}
		quar_bytes -= e->size;
		quar_head = (quar_head + 1) % QUAR_MAX;
		quar_count--;
	}
	/* The overflow list's oldest entries whose GP has completed. */
	while (ovf_head != NULL && n < QUAR_BATCH &&
	    (all || !gp_pending(ovf_head->quar_gp))) {
		ovf_pop(&out[n]);
		count_release(&out[n++], all);
	}
	return n;
}

static void quar_put(void *ptr, struct slab_cache *c, size_t size, bool rcu)
{
	quar_entry_t batch[QUAR_BATCH];
	ipl_t ipl = quar_acquire();
	/* quar_take() left a free slot (a full ring gives up its oldest). */
	assert(quar_count < QUAR_MAX);
	if (rcu)
		quar_rcu_held++;
	quar_entry_t *e = &quar[(quar_head + quar_count) % QUAR_MAX];
	e->ptr = ptr;
	e->cache = c;
	e->size = size;
	e->gp = rcu ? rcu_completed_gps() + 2 : 0;
	quar_count++;
	quar_bytes += size;
	size_t n = quar_take(batch, false);
	quar_release_lock(ipl);
	for (size_t i = 0; i < n; i++)
		entry_free(&batch[i]);
}

uint64_t kasan_quarantine_early(void)
{
	ipl_t ipl = quar_acquire();
	uint64_t early = quar_early;
	quar_release_lock(ipl);
	return early;
}

size_t kasan_quarantine_flush(void)
{
	quar_entry_t batch[QUAR_BATCH];
	size_t total = 0, n;
	do {
		ipl_t ipl = quar_acquire();
		n = quar_take(batch, true);
		quar_release_lock(ipl);
		for (size_t i = 0; i < n; i++)
			entry_free(&batch[i]);
		total += n;
	} while (n > 0);
	return total;
}

void kasan_quarantine_flush_stats(void)
{
	if (!interrupts_disabled())
		(void) kasan_quarantine_flush();
}

void kasan_quarantine_drain_cache(struct slab_cache *c)
{
	/* Simple and rare (cache destruction): flush everything. */
	(void) c;
	(void) kasan_quarantine_flush();
}

/*
 * Allocator hooks.
 */

size_t kasan_slab_slot_size(size_t size)
{
	return ALIGN_UP(size, GRANULE) + META_SIZE + SLAB_RZ_MIN;
}

void kasan_slab_new(void *start, size_t bytes)
{
	kasan_poison(start, bytes, KASAN_SLAB_REDZONE);
}

void kasan_slab_alloc(struct slab_cache *c, void *obj, size_t size)
{
	kasan_unpoison(obj, size);
	uintptr_t rz = (uintptr_t) obj + ALIGN_UP(size, GRANULE);
	kasan_poison((void *) rz, META_SIZE + SLAB_RZ_MIN, KASAN_SLAB_REDZONE);
	kasan_meta_t *m = obj_meta(obj, size);
	m->magic = META_MAGIC;
	m->cache = c;
	m->size = (uint32_t) size;
	m->alloc_stack = stack_depot_capture(2);
	m->alloc_tid = THREAD ? THREAD->tid : 0;
	m->alloc_cpu = CPU ? (uint16_t) CPU->id : 0;
	m->free_stack = 0;
	m->free_tid = 0;
	m->free_cpu = 0;
	m->rcu = 0;
}

/** A bad free: the report (the free's stack is the current one). */
static void report_free(const char *cls, void *obj, kasan_meta_t *m,
    uintptr_t ip)
{
	if (!san_report_begin(SAN_KASAN))
		return;
	printf("BUG: KASAN: %s in ", cls);
	symtab_print_addr(ip);
	printf("\nFree of %p by thread %s/%lu on cpu %u\n\n", obj,
	    THREAD ? THREAD->name : "-", THREAD ? (unsigned long) THREAD->tid : 0UL,
	    CPU ? CPU->id : 0);
	backtrace_print_from((uintptr_t) __builtin_frame_address(0));
	if (m != NULL) {
		print_who("Allocated", m->alloc_tid, m->alloc_cpu, m->alloc_stack);
		if (m->free_stack != 0)
			print_who(m->rcu ? "Freed (by an RCU callback)" : "Freed",
			    m->free_tid, m->free_cpu, m->free_stack);
		printf("\nThe buggy address belongs to the object at %p\n"
		    " which belongs to the cache %s of size %u\n", obj,
		    slab_cache_name(m->cache), m->size);
	}
	printf("\n");
	print_shadow((uintptr_t) obj);
	san_report_end(SAN_KASAN, cls);
}

bool kasan_slab_free(struct slab_cache *c, void *obj, size_t size)
{
	kasan_meta_t *m = obj_meta(obj, size);
	if (!tracked((uintptr_t) obj))
		return false;
	uint8_t code = (uint8_t) *SHADOW(obj);
	if (code == KASAN_SLAB_FREE || code == KASAN_SLAB_FREE_RCU) {
		report_free("double-free", obj, m->magic == META_MAGIC ? m : NULL,
		    caller_ip(1));
		return true;
	}
	if (m->magic != META_MAGIC || m->cache != c || code == KASAN_SLAB_REDZONE) {
		report_free("invalid-free", obj, NULL, caller_ip(1));
		return true;
	}
	bool rcu = in_rcu_callback();
	kasan_poison(obj, ALIGN_UP(size, GRANULE),
	    rcu ? KASAN_SLAB_FREE_RCU : KASAN_SLAB_FREE);
	m->free_stack = stack_depot_capture(2);
	m->free_tid = THREAD ? THREAD->tid : 0;
	m->free_cpu = CPU ? (uint16_t) CPU->id : 0;
	m->rcu = rcu;
	quar_put(obj, c, size, rcu);
	return true;
}

void kasan_frames_alloc(uintptr_t pa, size_t count)
{
	kasan_unpoison(PA2KA(pa), count * PAGE_SIZE);
}

void kasan_frames_free(uintptr_t pa, size_t count)
{
	kasan_poison(PA2KA(pa), count * PAGE_SIZE, KASAN_PAGE_FREE);
}

bool kasan_stack_free(uintptr_t pa, size_t count)
{
	kasan_poison(PA2KA(pa), count * PAGE_SIZE, KASAN_STACK_EXITED);
	quar_put(PA2KA(pa), NULL, count * PAGE_SIZE, false);
	return true;
}

void kasan_malloc_mark(void *obj, void *ptr, size_t size, size_t span)
{
	uintptr_t o = (uintptr_t) obj, p = (uintptr_t) ptr;
	uint8_t code = span >= PAGE_SIZE && (o & (PAGE_SIZE - 1)) == 0 ?
	    KASAN_PAGE_REDZONE : KASAN_MALLOC_REDZONE;
	kasan_poison(obj, p - o, code);
	kasan_unpoison(ptr, size);
	uintptr_t tail = ALIGN_UP(p + size, GRANULE);
	if (tail < o + span)
		kasan_poison((void *) tail, o + span - tail, code);
}

bool kasan_malloc_free_check(void *ptr)
{
	if (!tracked((uintptr_t) ptr))
		return false;
	uint8_t code = (uint8_t) *SHADOW(ptr);
	if (code != KASAN_SLAB_FREE && code != KASAN_SLAB_FREE_RCU &&
	    code != KASAN_PAGE_FREE)
		return false;
	void *obj = NULL;
	kasan_meta_t *m = code == KASAN_PAGE_FREE ? NULL :
	    find_object((uintptr_t) ptr, &obj);
	report_free("double-free", ptr, m, caller_ip(1));
	return true;
}

void kasan_print_stats(void)
{
	size_t stacks, words;
	stack_depot_stats(&stacks, &words);
	ipl_t ipl = quar_acquire();
	size_t count = quar_count, bytes = quar_bytes;
	size_t ocount = ovf_count, obytes = ovf_bytes;
	uint64_t rel = quar_released, early = quar_early, rcu = quar_rcu_held;
	uint64_t flushed = quar_flushed_early;
	quar_release_lock(ipl);
	printf("KASAN: shadow: image [%p, %p), direct map [%p, +%zu MiB)\n",
	    (void *) image_start, (void *) image_end, (void *) dm_start,
	    (size_t) (dm_bytes >> 20));
	printf("KASAN: quarantine: %zu entries, %zu bytes, overflow list %zu "
	    "entries, %zu bytes; released %lu, RCU-callback frees %lu, released "
	    "before their grace period %lu, flushed before it %lu\n",
	    count, bytes, ocount, obytes, (unsigned long) rel,
	    (unsigned long) rcu, (unsigned long) early,
	    (unsigned long) flushed);
	printf("KASAN: stack depot: %zu stacks, %zu words\n", stacks, words);
	printf("KASAN: reports: %zu\n", san_report_count(SAN_KASAN));
}
