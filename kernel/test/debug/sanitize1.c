/** @file sanitize1.c
 * The sanitizers' negative controls (SANITIZE=kasan or ubsan builds only;
 * unsafe: never run by `test *`, each by its name). Each commits one bug on
 * purpose; the sanitizer must report it with its class and stacks
 * (tests/test_sanitizers.py reads the report). In panic mode the report
 * panics; after `sanitize report` the test continues and passes when the
 * sanitizer's report count went up by one (it fails when the bug went
 * unreported).
 *
 * KASAN: kasan_rcu1 (read after rcu_call freed the object), kasan_rcu2 (a
 * reader keeps a pointer past its section and reads it in a later section,
 * after the grace period and the callback), kasan_quar1 (the same read
 * after more RCU-callback frees than the quarantine's ring holds: none
 * released before its grace period), kasan_oob1 (slab out-of-bounds
 * write), kasan_df1 (double free), kasan_stack1 (a stack used after its
 * thread exited), kasan_global1 (a read past a global: the redzones GCC's
 * constructors register at boot, which on arm64 the direct map's shadow
 * must take over from the image's early shadow). UBSAN: ubsan_shift1 (shift past the width), ubsan_ovf1
 * (signed overflow of a counter).
 */
#include <test.h>
#include <debug/sanitize.h>
#include <debug/kasan.h>
#include <mm/malloc.h>
#include <mm/slab.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/semaphore.h>
#include <print.h>

#ifdef CONFIG_SANITIZE
/** The report count of @a kind went up by one since @a before. */
static const char *reported(san_kind_t kind, size_t before, const char *what)
{
	size_t now = san_report_count(kind);
	if (now == before + 1)
		return NULL;
	printf("%s: %zu reports (expected 1)\n", what, now - before);
	return now == before ? "the bug was not reported" :
	    "more than one report for one bug";
}
#endif

#ifdef CONFIG_KASAN
typedef struct {
	rcu_item_t rcu;
	uint64_t key;
	uint64_t value;
} san_node_t;

static void san_node_free(rcu_item_t *item)
{
	free(container_of(item, san_node_t, rcu));
}

/** Keeps the compiler from proving the access away. */
static uint64_t read_value(volatile uint64_t *p)
{
	return *p;
}

const char *test_kasan_rcu1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	san_node_t *n = malloc(sizeof(*n));
	if (n == NULL)
		return "out of memory";
	n->key = 1;
	n->value = 42;
	rcu_call(&n->rcu, san_node_free);
	rcu_barrier();
	/* The bug: the callback freed n. */
	uint64_t v = read_value(&n->value);
	printf("kasan_rcu1: read %lu after the callback\n", (unsigned long) v);
	return reported(SAN_KASAN, before, "kasan_rcu1");
}

/** More RCU-callback frees than the quarantine's 4096-entry ring holds. */
#define QUAR1_NODES 6144
/** Rounds kasan_quar1 may take to find a node no grace period let go. */
#define QUAR1_ROUNDS 3

/** Per node (its key): the completed GPs when its callback freed it. */
static uint64_t quar1_gp[QUAR1_NODES];
/** Callbacks of the round that have run (atomics). */
static unsigned quar1_run;

static void quar1_free(rcu_item_t *item)
{
	san_node_t *n = container_of(item, san_node_t, rcu);
	/* Read before free(): the quarantine's GP for n is at least this + 2. */
	quar1_gp[n->key] = rcu_completed_gps();
	free(n);
	__atomic_fetch_add(&quar1_run, 1, __ATOMIC_RELEASE);
}

/**
 * One round of kasan_quar1: the nodes freed through rcu_call; as soon as
 * every callback has run (polled, so that few grace periods pass), a read
 * of the oldest node whose own grace period (quar1_gp + 2) had not
 * completed, so no correct quarantine could have let it go. @return
 * whether it read one (false: every node's grace period had completed:
 * retry).
 */
static bool quar1_round(san_node_t **nodes)
{
	for (unsigned i = 0; i < QUAR1_NODES; i++) {
		nodes[i] = malloc(sizeof(san_node_t));
		if (nodes[i] == NULL)
			return false;
		nodes[i]->key = i;
		nodes[i]->value = i;
	}
	__atomic_store_n(&quar1_run, 0, __ATOMIC_RELAXED);
	for (unsigned i = 0; i < QUAR1_NODES; i++)
		rcu_call(&nodes[i]->rcu, quar1_free);
	/* Acquire: the callbacks' quar1_gp writes before the reads below. */
	while (__atomic_load_n(&quar1_run, __ATOMIC_ACQUIRE) < QUAR1_NODES)
		thread_usleep(1000);
	uint64_t g = rcu_completed_gps();
	unsigned i = 0;
	while (i < QUAR1_NODES && quar1_gp[i] + 2 <= g)
		i++;
	uint64_t v = 0;
	if (i < QUAR1_NODES) {
		/* The bug: the callback freed nodes[i]. */
		v = read_value(&nodes[i]->value);
	}
	printf("kasan_quar1: node %u (freed at %lu completed GPs) read %lu at "
	    "%lu completed GPs\n", i,
	    (unsigned long) quar1_gp[i < QUAR1_NODES ? i : QUAR1_NODES - 1],
	    (unsigned long) v, (unsigned long) g);
	return i < QUAR1_NODES;
}

/**
 * kasan_quar1: QUAR1_NODES nodes freed through rcu_call in one batch, more
 * than the quarantine's ring holds, then a read of the oldest node (the
 * first an overflowing ring would let go) whose grace period after the
 * callback has not completed. The quarantine must keep every node for that
 * grace period (kasan_quarantine_early() unchanged) and the read must be
 * reported.
 */
const char *test_kasan_quar1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	uint64_t early = kasan_quarantine_early();
	san_node_t **nodes = malloc(QUAR1_NODES * sizeof(*nodes));
	if (nodes == NULL)
		return "out of memory";
	bool read = false;
	unsigned r = 0;
	while (r < QUAR1_ROUNDS && !read) {
		read = quar1_round(nodes);
		r++;
	}
	free(nodes);
	early = kasan_quarantine_early() - early;
	printf("kasan_quar1: %u RCU-callback frees, %lu released before their "
	    "grace period, %zu reports\n", r * QUAR1_NODES,
	    (unsigned long) early, san_report_count(SAN_KASAN) - before);
	if (early != 0)
		return "RCU-freed objects released before their grace period";
	if (!read)
		return "grace periods outran every round: nothing read";
	return reported(SAN_KASAN, before, "kasan_quar1");
}

/** The structure the reader looks up (RCU-protected). */
static san_node_t __rcu *san_head;

const char *test_kasan_rcu2(void)
{
	size_t before = san_report_count(SAN_KASAN);
	san_node_t *n = malloc(sizeof(*n));
	if (n == NULL)
		return "out of memory";
	n->key = 2;
	n->value = 7;
	rcu_assign(san_head, n);

	rcu_read_lock();
	san_node_t *mine = rcu_access(san_head);
	rcu_read_unlock();
	/* The bug: mine is kept past the reader section that found it. */

	rcu_assign(san_head, (san_node_t *) NULL);
	rcu_call(&n->rcu, san_node_free);
	rcu_barrier();
	/* Allocations that would reuse the block if it had been released. */
	void *filler[64];
	for (unsigned i = 0; i < 64; i++)
		filler[i] = malloc(sizeof(san_node_t));

	rcu_read_lock();
	uint64_t v = read_value(&mine->value);
	rcu_read_unlock();
	for (unsigned i = 0; i < 64; i++)
		free(filler[i]);
	printf("kasan_rcu2: read %lu through a pointer kept past its section\n",
	    (unsigned long) v);
	return reported(SAN_KASAN, before, "kasan_rcu2");
}

const char *test_kasan_oob1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	slab_cache_t *c = slab_cache_create("kasan_oob1", 40, 0, NULL, NULL,
	    SLAB_CACHE_NONE);
	if (c == NULL)
		return "cannot create the cache";
	uint8_t *obj = slab_alloc(c, SLAB_KM_NONE);
	if (obj == NULL)
		return "out of memory";
	volatile uint8_t *p = obj;
	/* The bug: one byte past the 40-byte object. */
	p[40] = 0x5a;
	slab_free(c, obj);
	(void) slab_cache_destroy(c);
	return reported(SAN_KASAN, before, "kasan_oob1");
}

const char *test_kasan_df1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	slab_cache_t *c = slab_cache_create("kasan_df1", 48, 0, NULL, NULL,
	    SLAB_CACHE_NONE);
	if (c == NULL)
		return "cannot create the cache";
	void *obj = slab_alloc(c, SLAB_KM_NONE);
	if (obj == NULL)
		return "out of memory";
	slab_free(c, obj);
	/* The bug: the same object again. */
	slab_free(c, obj);
	(void) slab_cache_destroy(c);
	return reported(SAN_KASAN, before, "kasan_df1");
}

/** Where the exiting thread leaves the address of its local. */
static volatile uint64_t *stack_ptr;

static void stack_thread(void *arg)
{
	volatile uint64_t local = 0x1234;
	/* The bug (the reader's): the address of a local outlives the thread. */
	stack_ptr = &local;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	(void) local;
}

const char *test_kasan_stack1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	thread_t *t = thread_create(stack_thread, NULL, "kasan_stack1",
	    THREAD_FLAG_NONE);
	if (t == NULL)
		return "cannot create the thread";
	thread_start(t);
	if (thread_join(t) != EOK)
		return "thread_join failed";
	uint64_t v = read_value(stack_ptr);
	printf("kasan_stack1: read %#lx from an exited thread's stack\n",
	    (unsigned long) v);
	return reported(SAN_KASAN, before, "kasan_stack1");
}

/** A 13-byte global: GCC gives it a redzone (asan-globals), poisoned at boot. */
static char global_buf[13];
/** The index of the bad read, out of the compiler's sight (no bounds warning). */
static volatile size_t global_index = 13;

const char *test_kasan_global1(void)
{
	size_t before = san_report_count(SAN_KASAN);
	volatile char *p = global_buf;
	/* The bug: one byte past the 13-byte array. */
	char v = p[global_index];
	printf("kasan_global1: read %d past a 13-byte global\n", v);
	return reported(SAN_KASAN, before, "kasan_global1");
}
#endif

#ifdef CONFIG_UBSAN
const char *test_ubsan_shift1(void)
{
	size_t before = san_report_count(SAN_UBSAN);
	volatile int width = 40;
	volatile int one = 1;
	/* The bug: a shift by more than int's 32 bits. */
	int x = one << width;
	printf("ubsan_shift1: 1 << %d = %d\n", width, x);
	return reported(SAN_UBSAN, before, "ubsan_shift1");
}

const char *test_ubsan_ovf1(void)
{
	size_t before = san_report_count(SAN_UBSAN);
	volatile int counter = 2147483600;
	/* The bug: a signed counter that overflows. */
	for (int i = 0; i < 100; i++)
		counter = counter + 1;
	printf("ubsan_ovf1: counter %d\n", counter);
	return reported(SAN_UBSAN, before, "ubsan_ovf1");
}
#endif
