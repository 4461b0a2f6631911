/** @file rcutorture.c
 * RCU torture test (the idea of Linux rcutorture), `test rcutorture` and the
 * kconsole command `rcutorture [-t SECONDS]`.
 *
 * The oracle. A writer thread publishes objects from a static pool through one
 * RCU-protected pointer, again and again, each with the next version number.
 * The object it replaces is *retired* with age 1; from then on the age counts
 * grace periods (GPs) that started after the retirement and have ended:
 * - 20 % of the retired objects go to a writer-private list; after each
 *   rcu_synchronize() (or the expedited one) the writer adds 1 to the age of
 *   every object on the list;
 * - the others get a callback; each run adds 1 and, below the pipeline length,
 *   posts the callback again (the writer goes on after a short pause).
 * When the pool is empty the writer waits for a GP (rcu_synchronize).
 * At age RT_PIPE_LEN an object is freed: poisoned and returned to the pool, to
 * be reused by the writer.
 *
 * Readers: one thread wired to each CPU, RT_EXTRA_READERS unwired ones (more
 * threads than CPUs, so readers get preempted inside their sections; some also
 * yield inside), and a timer-interrupt reader on every CPU (a timeout re-armed
 * by the CPU's wired reader thread after each expiry). A reader enters a
 * section, loads the pointer, reads the version, checks the poison, stays a
 * while (a spin of random length, sometimes long, a nested section, or a
 * yield), then reads the age, the poison and the version again and records the
 * age in a histogram. The object was reachable when the reader loaded the
 * pointer, so its section began before the retirement and no GP that started
 * after the retirement can end before the section does: a correct RCU never
 * lets a reader see an age above 1. Any of the following fails the test:
 * - an age of 2 or more (a GP ended too early);
 * - a poisoned object (freed under a reader) or a changed version (reused);
 * - versions going backwards for one reader (publication order);
 * - no forward progress: the writer's version or the flood's callbacks stop
 *   advancing for RT_STALL_US (a liveness bound, not a timing assertion);
 * - callbacks lost or run twice (counts after rcu_barrier), pool objects that
 *   never come back.
 * During the second half a callback flood runs too: one thread per CPU posts
 * callbacks as fast as it can, at most RT_FLOOD_MAX in flight each (bounded
 * memory); they must keep completing, and all of them must have run once at the
 * end.
 *
 * The run lasts rcutorture_seconds (default 3 for `test *`; `rcutorture -t N`
 * sets it), and at least until the writer made RT_MIN_UPDATES updates, the
 * readers RT_MIN_READS sections and RT_MIN_FLOOD flood callbacks ran, and the
 * races the test exists for happened: RT_MIN_IRQ_READS reader sections in the
 * timer interrupt and RT_MIN_PREEMPTED thread reader sections switched out
 * inside (bounded by RT_STALL_US beyond the duration; a run that did not reach
 * them fails with that reason); it stops early at the first error. A
 * broken build (make RCU_BROKEN=1: GP detection does not wait for readers) must
 * fail here: long reader sections then see their object age past 1, poisoned
 * or reused.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <arch/asm.h>
#include <lib/str.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <synch/spinlock.h>
#include <time/delay.h>
#include <time/timeout.h>
#include <mm/malloc.h>

/** GPs an object lives through after its retirement before it is freed. */
#define RT_PIPE_LEN 10
/** Histogram slots: ages 0 .. RT_PIPE_LEN, then "freed" (poisoned). */
#define RT_HIST (RT_PIPE_LEN + 2)
#define RT_POOL 2048
#define RT_POISON 0xdeadbeefdeadbeefUL
#define RT_EXTRA_READERS 2
#define RT_MAX_READERS (CONFIG_MAX_CPUS + RT_EXTRA_READERS)
/** Most flood callbacks in flight per flooder. */
#define RT_FLOOD_MAX 2000
#define RT_FLOOD_BATCH 64
#define RT_FLOOD_MAGIC 0xf1006ed5u
/** Liveness bound: no progress for this long is a failure. */
#define RT_STALL_US 60000000ULL
#define RT_MIN_UPDATES 20
#define RT_MIN_READS 100
#define RT_MIN_FLOOD 1000
/**
 * The races the test exists for must have happened at least this often:
 * reader sections in the timer interrupt, and thread reader sections during
 * which the reader was switched out (the run goes on until both are reached,
 * bounded by RT_STALL_US beyond the duration, and fails otherwise).
 */
#define RT_MIN_IRQ_READS 50
#define RT_MIN_PREEMPTED 50
#define RT_DEFAULT_SECONDS RCUTORTURE_DEFAULT_SECONDS

/** Duration of the next run in seconds (`rcutorture -t N` sets it). */
unsigned rcutorture_seconds = RT_DEFAULT_SECONDS;

typedef struct rt_obj {
	rcu_item_t rcu;
	/** Written by the writer before publication; atomics. */
	uint64_t version;
	/** 0 published, 1 retired, +1 per GP; atomics. */
	size_t age;
	/** RT_POISON while free; atomics. */
	uint64_t poison;
	/** Free list (pool lock) or the writer's retired list (writer only). */
	struct rt_obj *next;
} rt_obj_t;

typedef struct {
	unsigned id;
	/** Wired CPU (which also gets the timer reader) or NULL. */
	cpu_t *cpu;
	unsigned seed;
	thread_t *thread;
	/* Written by the reader thread only; read after it was joined. */
	uint64_t hist[RT_HIST];
	uint64_t sections;      /**< Sections that found an object; atomics. */
	/** Sections during which it was switched out; atomics (monitor reads). */
	uint64_t preempted;
	uint64_t last_version;
	/* The timer reader of cpu: written only in that CPU's timer interrupt. */
	timeout_t irq_to;
	uint64_t irq_hist[RT_HIST];
	/** Written by that timer interrupt only; atomics (the monitor reads). */
	uint64_t irq_sections;
	uint64_t irq_last_version;
} rt_reader_t;

typedef struct {
	cpu_t *cpu;
	thread_t *thread;
	atomic_t posted;
	atomic_t run;
	bool oom;
} rt_flooder_t;

typedef struct {
	rcu_item_t rcu;
	uint32_t magic;
	rt_flooder_t *owner;
} rt_flood_item_t;

static struct {
	rt_obj_t pool[RT_POOL];
	spinlock_t pool_lock;
	rt_obj_t *free_list;       /**< Protected by pool_lock. */
	size_t free_count;         /**< Protected by pool_lock. */
	/**
	 * The published object: rcu_assign() / rcu_access(), the writer's
	 * own reads rcu_access_owned().
	 */
	rt_obj_t __rcu *cur;
	/** Retired objects aged by the writer's synchronize (writer only). */
	rt_obj_t *retired;
	bool stop;                 /**< Atomics. */
	bool flood_on;             /**< Atomics. */
	uint64_t version;          /**< Writer's last version; atomics. */
	/* Writer statistics (writer only, read after the join). */
	uint64_t syncs, expedited, cb_retired, pool_empty;
	atomic_t age_cbs;          /**< Age callbacks run. */
	/* Errors; atomics. */
	atomic_t err_age, err_poison, err_reuse, err_order, err_flood;
	size_t max_age;            /**< Largest bad age seen; atomics. */
	rt_reader_t readers[RT_MAX_READERS];
	unsigned nreaders;
	rt_flooder_t flooders[CONFIG_MAX_CPUS];
	unsigned nflooders;
	thread_t *writer;
} rt;

/** The pool was set up by an earlier run. */
static bool rt_initialized;

static unsigned rt_rand(unsigned *seed)
{
	*seed = *seed * 1103515245u + 12345u;
	return (*seed >> 16) & 0x7fff;
}

static size_t rt_errors(void)
{
	return atomic_get(&rt.err_age) + atomic_get(&rt.err_poison) +
	    atomic_get(&rt.err_reuse) + atomic_get(&rt.err_order) +
	    atomic_get(&rt.err_flood);
}

static bool rt_stopping(void)
{
	return __atomic_load_n(&rt.stop, __ATOMIC_ACQUIRE);
}

/* ---- the pool ----------------------------------------------------------- */

static void rt_pool_init(void)
{
	spinlock_initialize(&rt.pool_lock, "rcutorture.pool");
	rt.free_list = NULL;
	rt.free_count = 0;
	for (unsigned i = 0; i < RT_POOL; i++) {
		rt_obj_t *o = &rt.pool[i];
		__atomic_store_n(&o->poison, RT_POISON, __ATOMIC_RELAXED);
		__atomic_store_n(&o->age, RT_PIPE_LEN + 1, __ATOMIC_RELAXED);
		__atomic_store_n(&o->version, 0, __ATOMIC_RELAXED);
		o->next = rt.free_list;
		rt.free_list = o;
		rt.free_count++;
	}
}

static rt_obj_t *rt_pool_get(void)
{
	spinlock_lock(&rt.pool_lock);
	rt_obj_t *o = rt.free_list;
	if (o) {
		rt.free_list = o->next;
		rt.free_count--;
	}
	spinlock_unlock(&rt.pool_lock);
	return o;
}

/** Frees @a o: poisons it and returns it to the pool. */
static void rt_pool_put(rt_obj_t *o)
{
	__atomic_store_n(&o->poison, RT_POISON, __ATOMIC_RELEASE);
	__atomic_store_n(&o->age, RT_PIPE_LEN + 1, __ATOMIC_RELEASE);
	spinlock_lock(&rt.pool_lock);
	o->next = rt.free_list;
	rt.free_list = o;
	rt.free_count++;
	spinlock_unlock(&rt.pool_lock);
}

static size_t rt_pool_free(void)
{
	spinlock_lock(&rt.pool_lock);
	size_t n = rt.free_count;
	spinlock_unlock(&rt.pool_lock);
	return n;
}

/* ---- the writer --------------------------------------------------------- */

static void rt_age_cb(rcu_item_t *item)
{
	rt_obj_t *o = container_of(item, rt_obj_t, rcu);
	size_t age = __atomic_load_n(&o->age, __ATOMIC_RELAXED) + 1;
	__atomic_store_n(&o->age, age, __ATOMIC_RELEASE);
	atomic_inc(&rt.age_cbs);
	if (age < RT_PIPE_LEN)
		rcu_call(&o->rcu, rt_age_cb);
	else
		rt_pool_put(o);
}

/** After a GP: ages every object on the retired list, frees the old ones. */
static void rt_age_retired(void)
{
	rt_obj_t **pp = &rt.retired;
	while (*pp) {
		rt_obj_t *o = *pp;
		size_t age = __atomic_load_n(&o->age, __ATOMIC_RELAXED) + 1;
		__atomic_store_n(&o->age, age, __ATOMIC_RELEASE);
		if (age >= RT_PIPE_LEN) {
			*pp = o->next;
			rt_pool_put(o);
		} else {
			pp = &o->next;
		}
	}
}

static void rt_sync(bool expedite)
{
	if (expedite) {
		rcu_synchronize_expedite();
		rt.expedited++;
	} else {
		rcu_synchronize();
		rt.syncs++;
	}
	rt_age_retired();
}

/** Retires @a old: age 1, then aged by the writer's GPs or by callbacks. */
static void rt_retire(rt_obj_t *old, bool by_callback)
{
	__atomic_store_n(&old->age, 1, __ATOMIC_RELEASE);
	if (by_callback) {
		rt.cb_retired++;
		rcu_call(&old->rcu, rt_age_cb);
	} else {
		old->next = rt.retired;
		rt.retired = old;
	}
}

static void rt_writer(void *arg)
{
	unsigned seed = 0x2545f491u;
	uint64_t version = 0;
	while (!rt_stopping()) {
		rt_obj_t *o = rt_pool_get();
		if (!o) {
			/* Everything waits for GPs: let one pass. */
			rt.pool_empty++;
			rt_sync(false);
			continue;
		}
		__atomic_store_n(&o->age, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&o->version, ++version, __ATOMIC_RELAXED);
		__atomic_store_n(&o->poison, 0, __ATOMIC_RELAXED);
		o->next = NULL;
		rt_obj_t *old = rcu_access_owned(rt.cur);
		rcu_assign(rt.cur, o);
		__atomic_store_n(&rt.version, version, __ATOMIC_RELEASE);
		/*
		 * 80 %: retire through a callback chain and go on after a short
		 * pause; 15 %: rcu_synchronize; 5 %: the expedited one.
		 */
		unsigned r = rt_rand(&seed), mode = r % 20;
		if (old)
			rt_retire(old, mode < 16);
		if (mode >= 16)
			rt_sync(mode == 19);
		else if (mode == 0)
			thread_usleep(1000);  /* sleeping keeps the priority up */
		else
			udelay(r % 300);
	}
}

/* ---- readers ------------------------------------------------------------ */

static void rt_note_age(size_t age)
{
	atomic_inc(&rt.err_age);
	size_t m = __atomic_load_n(&rt.max_age, __ATOMIC_RELAXED);
	while (age > m && !__atomic_compare_exchange_n(&rt.max_age, &m, age, false,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
}

/** Checks an object after the delay of a section: age, poison, version. */
static void rt_check_after(rt_obj_t *p, uint64_t v1, uint64_t *hist)
{
	size_t age = __atomic_load_n(&p->age, __ATOMIC_ACQUIRE);
	uint64_t poison = __atomic_load_n(&p->poison, __ATOMIC_ACQUIRE);
	uint64_t v2 = __atomic_load_n(&p->version, __ATOMIC_ACQUIRE);
	if (poison != 0)
		atomic_inc(&rt.err_poison);
	if (v2 != v1)
		atomic_inc(&rt.err_reuse);
	if (age > RT_PIPE_LEN + 1)
		age = RT_PIPE_LEN + 1;
	hist[age]++;
	if (age > 1 && age <= RT_PIPE_LEN)
		rt_note_age(age);
}

/** Reads the object at the start of a section; @return its version. */
static uint64_t rt_check_before(rt_obj_t *p, uint64_t *last_version)
{
	uint64_t v1 = __atomic_load_n(&p->version, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&p->poison, __ATOMIC_ACQUIRE) != 0)
		atomic_inc(&rt.err_poison);
	if (v1 < *last_version)
		atomic_inc(&rt.err_order);
	*last_version = v1;
	return v1;
}

/** The timer-interrupt reader (a timeout handler, interrupts disabled). */
static void rt_irq_reader(void *arg)
{
	rt_reader_t *r = arg;
	rcu_read_lock();
	rt_obj_t *p = rcu_access(rt.cur);
	if (p) {
		uint64_t v1 = rt_check_before(p, &r->irq_last_version);
		for (int i = 0; i < 50; i++)
			cpu_relax();
		rt_check_after(p, v1, r->irq_hist);
		__atomic_store_n(&r->irq_sections, r->irq_sections + 1,
		    __ATOMIC_RELAXED);
	}
	rcu_read_unlock();
}

/**
 * A delay of the given kind (0..999); runs inside or outside a section. About
 * 1 ms on average; a fifth of the time goes to the rare long ones, which give a
 * GP that ends too early (RCU_BROKEN) its chance to show.
 */
static void rt_delay(unsigned kind, unsigned r)
{
	if (kind < 600) {
		for (unsigned i = r % 64; i > 0; i--)
			cpu_relax();
	} else if (kind < 850) {
		udelay(50 + r % 1000);
	} else if (kind < 920) {
		/* Preempted inside when another thread is ready here. */
		thread_yield();
		udelay(r % 100);
	} else if (kind < 980) {
		udelay(2000 + (r % 8) * 1000);
	} else if (kind < 997) {
		udelay(10000 + (r % 20) * 1000);
	} else {
		udelay(40000 + (r % 60) * 1000);
	}
}

static void rt_read_one(rt_reader_t *r)
{
	unsigned kind = rt_rand(&r->seed) % 1000;
	unsigned rnd = rt_rand(&r->seed);
	cpu_t *c0 = CPU;
	uint64_t cs0 = __atomic_load_n(&c0->context_switches, __ATOMIC_RELAXED);

	rcu_read_lock();
	rt_obj_t *p = rcu_access(rt.cur);
	if (p) {
		uint64_t v1 = rt_check_before(p, &r->last_version);
		if (rnd & 1) {
			/* A nested section around the delay. */
			rcu_read_lock();
			rt_delay(kind, rnd >> 1);
			rcu_read_unlock();
		} else {
			rt_delay(kind, rnd >> 1);
		}
		rt_check_after(p, v1, r->hist);
		__atomic_store_n(&r->sections, r->sections + 1, __ATOMIC_RELAXED);
	}
	rcu_read_unlock();

	if (CPU != c0 ||
	    __atomic_load_n(&c0->context_switches, __ATOMIC_RELAXED) != cs0)
		__atomic_store_n(&r->preempted, r->preempted + 1, __ATOMIC_RELAXED);
	/* About as long outside as inside, so that CPUs pass quiescent states. */
	rt_delay(kind, rnd >> 4);
}

static void rt_reader_thread(void *arg)
{
	rt_reader_t *r = arg;
	unsigned n = 0;
	while (!rt_stopping()) {
		if (r->cpu && __atomic_load_n(&r->irq_to.cpu, __ATOMIC_ACQUIRE) == NULL)
			timeout_register(&r->irq_to, 0, rt_irq_reader, r);
		rt_read_one(r);
		if (++n % 32 == 0)
			thread_usleep(1000);
	}
	if (r->cpu)
		timeout_unregister(&r->irq_to);
}

/* ---- the callback flood ------------------------------------------------- */

static void rt_flood_cb(rcu_item_t *item)
{
	rt_flood_item_t *f = container_of(item, rt_flood_item_t, rcu);
	rt_flooder_t *owner = f->owner;
	if (f->magic != RT_FLOOD_MAGIC)
		atomic_inc(&rt.err_flood);
	f->magic = 0;
	free(f);
	atomic_inc(&owner->run);
}

static void rt_flooder_thread(void *arg)
{
	rt_flooder_t *fl = arg;
	while (!rt_stopping()) {
		if (!__atomic_load_n(&rt.flood_on, __ATOMIC_ACQUIRE) ||
		    atomic_get(&fl->posted) - atomic_get(&fl->run) + RT_FLOOD_BATCH >
		    RT_FLOOD_MAX) {
			thread_usleep(1000);
			continue;
		}
		for (unsigned i = 0; i < RT_FLOOD_BATCH; i++) {
			rt_flood_item_t *f = malloc(sizeof(*f));
			if (!f) {
				fl->oom = true;
				return;
			}
			f->magic = RT_FLOOD_MAGIC;
			f->owner = fl;
			atomic_inc(&fl->posted);
			rcu_call(&f->rcu, rt_flood_cb);
		}
		thread_yield();
	}
}

static size_t rt_flood_posted(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < rt.nflooders; i++)
		n += atomic_get(&rt.flooders[i].posted);
	return n;
}

static size_t rt_flood_run(void)
{
	size_t n = 0;
	for (unsigned i = 0; i < rt.nflooders; i++)
		n += atomic_get(&rt.flooders[i].run);
	return n;
}

static uint64_t rt_reads(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < rt.nreaders; i++)
		n += __atomic_load_n(&rt.readers[i].sections, __ATOMIC_RELAXED);
	return n;
}

/** Timer-interrupt reader sections that found an object so far. */
static uint64_t rt_irq_reads(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < rt.nreaders; i++)
		n += __atomic_load_n(&rt.readers[i].irq_sections, __ATOMIC_RELAXED);
	return n;
}

/** Thread reader sections switched out inside so far. */
static uint64_t rt_preempted(void)
{
	uint64_t n = 0;
	for (unsigned i = 0; i < rt.nreaders; i++)
		n += __atomic_load_n(&rt.readers[i].preempted, __ATOMIC_RELAXED);
	return n;
}

/* ---- the test ----------------------------------------------------------- */

static bool rt_join(thread_t *t)
{
	return testlib_join(t, RT_STALL_US);
}

static void rt_reset(void)
{
	rt_pool_init();
	rcu_init_ptr(rt.cur, NULL);
	rt.retired = NULL;
	__atomic_store_n(&rt.stop, false, __ATOMIC_RELEASE);
	__atomic_store_n(&rt.flood_on, false, __ATOMIC_RELEASE);
	__atomic_store_n(&rt.version, 0, __ATOMIC_RELEASE);
	rt.syncs = rt.expedited = rt.cb_retired = rt.pool_empty = 0;
	atomic_set(&rt.age_cbs, 0);
	atomic_set(&rt.err_age, 0);
	atomic_set(&rt.err_poison, 0);
	atomic_set(&rt.err_reuse, 0);
	atomic_set(&rt.err_order, 0);
	atomic_set(&rt.err_flood, 0);
	__atomic_store_n(&rt.max_age, 0, __ATOMIC_RELAXED);
	rt.nreaders = 0;
	rt.nflooders = 0;
	rt.writer = NULL;
}

/** Starts every thread. @return false when a thread cannot be created. */
static bool rt_start_threads(void)
{
	unsigned online = 0;
	for (unsigned i = 0; i < cpu_count; i++) {
		if (!cpu_is_online(i))
			continue;
		online++;
		rt_reader_t *r = &rt.readers[rt.nreaders];
		*r = (rt_reader_t) { .id = rt.nreaders, .cpu = &cpus[i],
		    .seed = 7919u * (rt.nreaders + 1) };
		timeout_initialize(&r->irq_to);
		r->thread = testlib_spawn(rt_reader_thread, r, "rcutorture-r", &cpus[i]);
		if (!r->thread)
			return false;
		rt.nreaders++;

		rt_flooder_t *fl = &rt.flooders[rt.nflooders];
		fl->cpu = &cpus[i];
		fl->oom = false;
		atomic_set(&fl->posted, 0);
		atomic_set(&fl->run, 0);
		fl->thread = testlib_spawn(rt_flooder_thread, fl, "rcutorture-f", &cpus[i]);
		if (!fl->thread)
			return false;
		rt.nflooders++;
	}
	for (unsigned k = 0; k < RT_EXTRA_READERS; k++) {
		rt_reader_t *r = &rt.readers[rt.nreaders];
		*r = (rt_reader_t) { .id = rt.nreaders, .cpu = NULL,
		    .seed = 7919u * (rt.nreaders + 1) };
		timeout_initialize(&r->irq_to);
		r->thread = testlib_spawn(rt_reader_thread, r, "rcutorture-r", NULL);
		if (!r->thread)
			return false;
		rt.nreaders++;
	}
	rt.writer = testlib_spawn(rt_writer, NULL, "rcutorture-w", NULL);
	return rt.writer != NULL && online > 0;
}

/** Stops and joins every thread. @return false if one did not finish. */
static bool rt_stop_threads(void)
{
	bool ok = true;
	__atomic_store_n(&rt.stop, true, __ATOMIC_RELEASE);
	ok &= rt_join(rt.writer);
	for (unsigned i = 0; i < rt.nreaders; i++)
		ok &= rt_join(rt.readers[i].thread);
	for (unsigned i = 0; i < rt.nflooders; i++)
		ok &= rt_join(rt.flooders[i].thread);
	return ok;
}

/** Runs the threads for the configured time; @return a stall reason or NULL. */
static const char *rt_monitor(unsigned seconds)
{
	uint64_t start = uptime_us(), duration = (uint64_t) seconds * 1000000;
	uint64_t last_v = 0, v_change = start, f_change = start;
	uint64_t next_report = start;
	size_t last_frun = 0;

	for (;;) {
		thread_usleep(20000);
		uint64_t now = uptime_us();
		uint64_t v = __atomic_load_n(&rt.version, __ATOMIC_ACQUIRE);
		if (v != last_v) {
			last_v = v;
			v_change = now;
		} else if (now - v_change > RT_STALL_US) {
			return "no forward progress: the writer's version stopped rising";
		}
		size_t frun = rt_flood_run();
		if (frun != last_frun || rt_flood_posted() == frun) {
			last_frun = frun;
			f_change = now;
		} else if (now - f_change > RT_STALL_US) {
			return "no forward progress: flood callbacks stopped completing";
		}
		if (rt_errors() != 0)
			return NULL;
		if (now - start >= duration / 2)
			__atomic_store_n(&rt.flood_on, true, __ATOMIC_RELEASE);
		if (seconds >= 10 && now >= next_report) {
			if (next_report != start) {
				printf("rcutorture: %lu s: version %lu, %lu reads, %lu GPs, "
				    "flood %zu/%zu\n", (now - start) / 1000000, v, rt_reads(),
				    rcu_completed_gps(), frun, rt_flood_posted());
			}
			next_report += 5000000;
		}
		bool enough = v >= RT_MIN_UPDATES && rt_reads() >= RT_MIN_READS &&
		    frun >= RT_MIN_FLOOD && rt_irq_reads() >= RT_MIN_IRQ_READS &&
		    rt_preempted() >= RT_MIN_PREEMPTED;
		if (now - start >= duration && enough)
			return NULL;
		if (now - start >= duration + RT_STALL_US) {
			/* The verdict names a race that did not happen often enough. */
			if (v >= RT_MIN_UPDATES && rt_reads() >= RT_MIN_READS &&
			    frun >= RT_MIN_FLOOD)
				return NULL;
			return "no forward progress: too few updates, reads or flood "
			    "callbacks";
		}
	}
}

/** Retires the last object and waits until every object is back in the pool. */
static const char *rt_drain(void)
{
	rt_obj_t *old = rcu_access_owned(rt.cur);
	rcu_assign(rt.cur, NULL);
	if (old)
		rt_retire(old, false);
	for (unsigned i = 0; i < RT_PIPE_LEN; i++)
		rt_sync(false);
	for (unsigned i = 0; i < RT_PIPE_LEN + 2 && rt_pool_free() != RT_POOL; i++)
		rcu_barrier();
	rcu_barrier();
	if (rt.retired)
		return "retired objects left after the final grace periods";
	if (rt_pool_free() != RT_POOL)
		return "pool objects never came back (age callbacks lost)";
	return NULL;
}

static void rt_print_hist(const char *what, uint64_t *hist)
{
	char line[256];
	size_t n = 0;
	n += snprintf(line + n, sizeof(line) - n, "rcutorture: %s:", what);
	for (unsigned a = 0; a < RT_HIST && n < sizeof(line); a++) {
		if (a == RT_HIST - 1)
			n += snprintf(line + n, sizeof(line) - n, " freed:%lu", hist[a]);
		else
			n += snprintf(line + n, sizeof(line) - n, " %u:%lu", a, hist[a]);
	}
	printf("%s\n", line);
}

const char *test_rcutorture(void)
{
	static char reason[256];
	unsigned seconds = rcutorture_seconds ? rcutorture_seconds : 1;
	const char *stall = NULL, *fail = NULL;

	/*
	 * Callbacks of an earlier run that failed may still be in flight; they
	 * point into the pool and the flooders: let them finish first.
	 */
	for (unsigned i = 0; rt_initialized && i < RT_PIPE_LEN + 2 &&
	    rt_pool_free() != RT_POOL; i++)
		rcu_barrier();
	rcu_barrier();
	if (rt_initialized && rt_pool_free() != RT_POOL)
		return "objects of an earlier run are still waiting for callbacks";
	rt_initialized = true;
	rt_reset();
	uint64_t g0 = rcu_completed_gps(), t0 = uptime_us();
	TPRINTF("rcutorture: flavour %s, %u s, pipeline %d, pool %d; readers: a "
	    "thread and a timer reader per CPU + %d; a writer; a callback flood in "
	    "the second half\n", rcu_flavour_name, seconds, RT_PIPE_LEN, RT_POOL,
	    RT_EXTRA_READERS);

	bool started = rt_start_threads();
	if (started)
		stall = rt_monitor(seconds);
	bool stopped = rt_stop_threads();
	if (!started)
		return "cannot create the threads";
	if (!stopped)
		return "a test thread did not finish";
	uint64_t t_run = uptime_us() - t0;
	const char *drain = rt_drain();

	/* Totals. */
	uint64_t hist[RT_HIST] = { 0 }, irq_hist[RT_HIST] = { 0 };
	uint64_t reads = 0, irq_reads = 0, preempted = 0;
	for (unsigned i = 0; i < rt.nreaders; i++) {
		rt_reader_t *r = &rt.readers[i];
		for (unsigned a = 0; a < RT_HIST; a++) {
			hist[a] += r->hist[a];
			irq_hist[a] += r->irq_hist[a];
		}
		reads += r->sections;
		irq_reads += r->irq_sections;
		preempted += r->preempted;
	}
	uint64_t all[RT_HIST];
	for (unsigned a = 0; a < RT_HIST; a++)
		all[a] = hist[a] + irq_hist[a];
	size_t fposted = rt_flood_posted(), frun = rt_flood_run();
	bool oom = false;
	for (unsigned i = 0; i < rt.nflooders; i++)
		oom |= rt.flooders[i].oom;
	uint64_t version = __atomic_load_n(&rt.version, __ATOMIC_ACQUIRE);

	printf("rcutorture: %lu ms, writer version %lu (%lu synchronize, %lu "
	    "expedited, %lu by callback, %zu age callbacks, pool empty %lu times), "
	    "%lu GPs\n", t_run / 1000, version, rt.syncs, rt.expedited,
	    rt.cb_retired, atomic_get(&rt.age_cbs), rt.pool_empty,
	    rcu_completed_gps() - g0);
	printf("rcutorture: %lu thread reader sections (%lu preempted), %lu "
	    "timer-interrupt reader sections; flood %zu callbacks posted, %zu "
	    "run\n",
	    reads, preempted, irq_reads, fposted, frun);
	rt_print_hist("thread readers", hist);
	rt_print_hist("timer readers", irq_hist);
	rt_print_hist("age histogram", all);

	if (atomic_get(&rt.err_age)) {
		snprintf(reason, sizeof(reason), "%zu reader sections saw their object "
		    "aged past 1 (up to %zu grace periods): a grace period ended while "
		    "a reader that predates it was still inside",
		    atomic_get(&rt.err_age), __atomic_load_n(&rt.max_age,
		    __ATOMIC_RELAXED));
		fail = reason;
	} else if (atomic_get(&rt.err_poison)) {
		snprintf(reason, sizeof(reason), "%zu reader sections saw a freed "
		    "(poisoned) object", atomic_get(&rt.err_poison));
		fail = reason;
	} else if (atomic_get(&rt.err_reuse)) {
		snprintf(reason, sizeof(reason), "%zu reader sections saw their object "
		    "reused under them", atomic_get(&rt.err_reuse));
		fail = reason;
	} else if (atomic_get(&rt.err_order)) {
		snprintf(reason, sizeof(reason), "%zu times a reader saw the version "
		    "go backwards", atomic_get(&rt.err_order));
		fail = reason;
	} else if (atomic_get(&rt.err_flood)) {
		fail = "a flood callback found its item corrupted (run twice?)";
	} else if (stall) {
		fail = stall;
	} else if (drain) {
		fail = drain;
	} else if (oom) {
		fail = "out of memory in the callback flood";
	} else if (frun != fposted) {
		snprintf(reason, sizeof(reason), "flood: %zu callbacks posted, %zu run "
		    "after rcu_barrier", fposted, frun);
		fail = reason;
	} else if (version < RT_MIN_UPDATES || reads < RT_MIN_READS) {
		fail = "no progress: too few updates or reads";
	} else if (irq_reads < RT_MIN_IRQ_READS) {
		snprintf(reason, sizeof(reason), "only %lu reader sections in the "
		    "timer interrupt (at least %d required)", irq_reads,
		    RT_MIN_IRQ_READS);
		fail = reason;
	} else if (preempted < RT_MIN_PREEMPTED) {
		snprintf(reason, sizeof(reason), "only %lu thread reader sections "
		    "were preempted inside (at least %d required)", preempted,
		    RT_MIN_PREEMPTED);
		fail = reason;
	}
	return fail;
}
