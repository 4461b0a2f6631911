/** @file rcu.c
 * The userspace RCU of libcht: membarrier-based readers, one reclaimer thread.
 * See cht_rcu.h for the design; the ordering arguments are next to the code.
 *
 * Two platforms (cht_rcu_plat.h): Linux, and the OS's uspace/lib/c
 * (CHT_OS_BUILD). The design and this code are the same on both; they differ
 * in the writer's barrier (membarrier(2) vs SYS_MEMBARRIER, which the OS
 * always has, so its readers never fence), in where a thread's reader record
 * lives (TLS vs the thread control block, cht_rcu.h) and in start-up
 * (a constructor vs the first registration: lib/c runs no constructors).
 *
 * Negative controls: cht_rcu_fault(CHT_RCU_FI_NO_WAIT) (cht_rcu_fault.h),
 * constant false unless the build configures the point, makes
 * cht_rcu_synchronize() complete without waiting for readers.
 */
#define _GNU_SOURCE
#include <cht_rcu.h>
#include <cht_rcu_plat.h>
#include "cht_rcu_fault.h"

#include <string.h>
#ifndef CHT_OS_BUILD
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

__thread struct cht_rcu_reader cht_rcu_self
    __attribute__((tls_model("initial-exec")));

/* Readers use a fence until initialization has registered membarrier. */
struct cht_rcu_gp_state cht_rcu_gp = { .seq = 1, .reader_fence = 1 };

/** Writer side: 1 when membarrier(PRIVATE_EXPEDITED) is registered. */
static int use_membarrier;
#else
_Static_assert(sizeof(struct cht_rcu_reader) <=
    sizeof(((thread_tcb_t *) 0)->rcu), "the reader record fits the TCB");

/* SYS_MEMBARRIER is always there: readers never fence. */
struct cht_rcu_gp_state cht_rcu_gp = { .seq = 1, .reader_fence = 0 };
static const int use_membarrier = 1;
#endif

/* Registry of reader threads. */
static cht_plat_mutex_t registry_lock = CHT_PLAT_MUTEX_INIT;
static struct cht_rcu_reader *registry;
/** Registered threads; written under registry_lock, read atomically. */
static size_t registry_count;
static cht_plat_key_t exit_key;
/** The key exists. Linux: set by the constructor; OS: atomics, see init. */
static int exit_key_ok;

/* Grace periods: serialized by gp_lock. */
static cht_plat_mutex_t gp_lock = CHT_PLAT_MUTEX_INIT;
/** Target of the last completed GP. Atomics. */
static uint64_t gp_completed;
static uint64_t stat_gps, stat_gps_shared, stat_cbs_run, stat_batches;

/* Callbacks: a lock-free LIFO list taken whole by the reclaimer. */
static cht_rcu_head_t *cb_list;
static int reclaimer_sleeping;
static int barrier_waiters;
static cht_plat_mutex_t cb_lock = CHT_PLAT_MUTEX_INIT;
static cht_plat_cond_t cb_cond = CHT_PLAT_COND_INIT;
/*
 * The reclaimer is started by the first registration or callback; if it
 * cannot be started, the next registration or callback tries again.
 */
static cht_plat_mutex_t reclaimer_start_lock = CHT_PLAT_MUTEX_INIT;
/** 1 once the reclaimer runs. Written under reclaimer_start_lock; atomics. */
static int reclaimer_ok;
/** A failed start was reported. Under reclaimer_start_lock. */
static int reclaimer_warned;

const char *cht_strerror(int err)
{
	switch (err) {
	case CHT_OK: return "success";
	case CHT_EPERM: return "calling thread not registered with the RCU";
	case CHT_ENOMEM: return "out of memory";
	case CHT_EINVAL: return "invalid argument";
	case CHT_EBUSY: return "table not empty";
	case CHT_ENOENT: return "no such item";
	case CHT_EEXIST: return "an equal item exists";
	case CHT_EDEADLK: return "not allowed inside a reader section";
	case CHT_ENOSECT: return "needs the caller's reader section";
	case CHT_ERANGE: return "buffer too small";
	case CHT_ESTALE: return "value differs from the expected one";
	default: return "unknown error";
	}
}

/* Initialization */

static void thread_exit_hook(void *arg);

#ifndef CHT_OS_BUILD
static void membarrier_setup(void)
{
	const char *f = getenv("CHT_RCU_FLAVOUR");
	if (f && strcmp(f, "fence") == 0)
		return;
	long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED))
		return;
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
	    0, 0) != 0)
		return;
	/*
	 * Writers switch first: a reader that still fences while writers use
	 * membarrier is merely slower; the reverse would be unsafe.
	 */
	__atomic_store_n(&use_membarrier, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&cht_rcu_gp.reader_fence, 0, __ATOMIC_SEQ_CST);
}

__attribute__((constructor)) static void cht_rcu_init(void)
{
	if (cht_plat_key_create(&exit_key, thread_exit_hook) == 0)
		exit_key_ok = 1;
	membarrier_setup();
}

/** The constructor did it all. */
static inline void cht_rcu_init_once(void)
{
}
#else
/** Protects the key's creation (lib/c runs no constructors). */
static cht_plat_mutex_t init_lock = CHT_PLAT_MUTEX_INIT;

/** Creates the exit key at the first registration. */
static void cht_rcu_init_once(void)
{
	if (__atomic_load_n(&exit_key_ok, __ATOMIC_ACQUIRE))
		return;
	cht_plat_lock(&init_lock);
	if (!exit_key_ok && cht_plat_key_create(&exit_key, thread_exit_hook) == 0)
		__atomic_store_n(&exit_key_ok, 1, __ATOMIC_RELEASE);
	cht_plat_unlock(&init_lock);
}
#endif

const char *cht_rcu_flavour(void)
{
	return __atomic_load_n(&use_membarrier, __ATOMIC_RELAXED) ?
	    "membarrier" : "fence";
}

/**
 * The writer's half of the reader's barrier: afterwards every reader that
 * was running has executed a full barrier (membarrier), or, in the fence
 * flavour, our fence pairs with the fence every reader executes after its
 * counter store (store buffering: at least one side sees the other's store).
 */
/* Model: verify/urcu.pml */
static void writer_barrier(void)
{
#ifndef CHT_OS_BUILD
	if (__atomic_load_n(&use_membarrier, __ATOMIC_RELAXED)) {
		if (syscall(__NR_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0,
		    0) == 0)
			return;
		/* Cannot happen after a successful registration. */
		cht_plat_error("cht_rcu: membarrier failed: %s\n",
		    strerror(errno));
		cht_plat_abort();
	}
	cht_rcu_full_fence();
#else
	/* Every CPU running a thread of this task executes a full barrier. */
	long rc = sys_membarrier(0);
	if (rc != 0) {
		cht_plat_error("cht_rcu: SYS_MEMBARRIER failed: %ld\n", rc);
		cht_plat_abort();
	}
#endif
}

/* Registration */

static void registry_insert(struct cht_rcu_reader *r)
{
	r->reg_prev = NULL;
	r->reg_next = registry;
	if (registry)
		registry->reg_prev = r;
	registry = r;
	__atomic_store_n(&registry_count, registry_count + 1, __ATOMIC_RELAXED);
}

static void registry_delete(struct cht_rcu_reader *r)
{
	if (r->reg_prev)
		r->reg_prev->reg_next = r->reg_next;
	else
		registry = r->reg_next;
	if (r->reg_next)
		r->reg_next->reg_prev = r->reg_prev;
	r->reg_next = r->reg_prev = NULL;
	__atomic_store_n(&registry_count, registry_count - 1, __ATOMIC_RELAXED);
}

static int reclaimer_ensure(void);

/** Next stripe to hand out (cht_rcu_reader.stripe); atomics. */
static unsigned stripe_next;

int cht_rcu_register_thread(void)
{
	struct cht_rcu_reader *r = &cht_rcu_self;
	if (r->registered)
		return CHT_OK;
	cht_rcu_init_once();
	if (!reclaimer_ensure() || !__atomic_load_n(&exit_key_ok, __ATOMIC_ACQUIRE))
		return CHT_ENOMEM;
	/* Unregister automatically at thread exit. */
	if (cht_plat_setspecific(exit_key, r) != 0)
		return CHT_ENOMEM;
	__atomic_store_n(&r->ctr, 0, __ATOMIC_RELEASE);
	r->nest = 0;
	r->stripe = __atomic_fetch_add(&stripe_next, 1, __ATOMIC_RELAXED);
	cht_plat_lock(&registry_lock);
	registry_insert(r);
	cht_plat_unlock(&registry_lock);
	r->registered = 1;
	return CHT_OK;
}

static void unregister(struct cht_rcu_reader *r)
{
	/*
	 * Leave any section first: cht_rcu_synchronize() may be waiting for
	 * this thread while holding registry_lock.
	 */
	__atomic_store_n(&r->ctr, 0, __ATOMIC_RELEASE);
	r->nest = 0;
	cht_plat_lock(&registry_lock);
	registry_delete(r);
	cht_plat_unlock(&registry_lock);
	r->registered = 0;
}

int cht_rcu_unregister_thread(void)
{
	struct cht_rcu_reader *r = &cht_rcu_self;
	if (!r->registered)
		return CHT_EPERM;
	if (r->nest != 0)
		return CHT_EDEADLK;
	unregister(r);
	(void) cht_plat_setspecific(exit_key, NULL);
	return CHT_OK;
}

/** Thread-specific-data destructor: the thread exits while registered. */
static void thread_exit_hook(void *arg)
{
	struct cht_rcu_reader *r = arg;
	if (r != &cht_rcu_self || !r->registered)
		return;
	if (r->nest != 0)
		cht_plat_error("cht_rcu: thread exited inside a reader section "
		    "(section abandoned)\n");
	unregister(r);
}

int cht_rcu_read_lock_unregistered(void)
{
	return CHT_EPERM;
}

void cht_rcu_read_unlock_unbalanced(void)
{
	static int warned;
	if (!__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
		cht_plat_error("cht_rcu: cht_rcu_read_unlock() outside a reader "
		    "section (ignored)\n");
}

/* Grace periods */

static void relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
#endif
}

static void sleep_us(long us)
{
	cht_plat_sleep_us(us);
}

/** Waits until @a r is outside a section or in one that began at @a target. */
/* Model: verify/urcu.pml */
static void wait_for_reader(struct cht_rcu_reader *r, uint64_t target)
{
	unsigned attempts = 0;
	long sleep = 20;
	for (;;) {
		/*
		 * Acquire pairs with the reader's release stores of its
		 * counter: everything the reader did in the sections that
		 * ended before that store happens before our return (and so
		 * before the caller frees anything).
		 */
		uint64_t c = __atomic_load_n(&r->ctr, __ATOMIC_ACQUIRE);
		if (c == 0 || c >= target)
			return;
		if (attempts < 200) {
			relax();
		} else if (attempts < 220) {
			cht_plat_yield();
		} else {
			sleep_us(sleep);
			if (sleep < 1000)
				sleep *= 2;
		}
		attempts++;
	}
}

/* Model: verify/urcu.pml */
int cht_rcu_synchronize(void)
{
	if (cht_rcu_self.nest != 0)
		return CHT_EDEADLK;
	/*
	 * The caller's removals (before this call) are ordered before the
	 * snapshot: a GP that advances the sequence past the snapshot starts
	 * (and issues its barrier) after them, so it may serve this call.
	 */
	cht_rcu_full_fence();
	uint64_t snap = __atomic_load_n(&cht_rcu_gp.seq, __ATOMIC_RELAXED);
	cht_plat_lock(&gp_lock);
	if (__atomic_load_n(&gp_completed, __ATOMIC_ACQUIRE) > snap) {
		/* A whole GP ran after our snapshot: it covers us. */
		__atomic_fetch_add(&stat_gps_shared, 1, __ATOMIC_RELAXED);
		cht_plat_unlock(&gp_lock);
		return CHT_OK;
	}
	/*
	 * 1. Advance the sequence (release: our removals are before it). A
	 *    reader whose outermost lock reads the new value began after the
	 *    removals of every caller this GP serves and cannot find what
	 *    they removed; we never wait for it.
	 */
	uint64_t target = cht_rcu_gp.seq + 1;
	__atomic_store_n(&cht_rcu_gp.seq, target, __ATOMIC_RELEASE);
	/*
	 * 2. Barrier on every running thread (or our fence, paired with the
	 *    readers' fences). A reader that read an older sequence has then
	 *    either made its counter store visible to the scan below, or had
	 *    not yet reached its barrier after the counter store: its
	 *    protected loads come after ours and see every removal.
	 */
	writer_barrier();
	/* 3. Wait for readers whose sections began before the advance. */
	if (cht_rcu_fault(CHT_RCU_FI_NO_WAIT))
		goto done;
	cht_plat_lock(&registry_lock);
	for (struct cht_rcu_reader *r = registry; r; r = r->reg_next) {
		if (r != &cht_rcu_self)
			wait_for_reader(r, target);
	}
	cht_plat_unlock(&registry_lock);
done:
	__atomic_store_n(&gp_completed, target, __ATOMIC_RELEASE);
	__atomic_fetch_add(&stat_gps, 1, __ATOMIC_RELAXED);
	cht_plat_unlock(&gp_lock);
	return CHT_OK;
}

/* Callbacks */

static cht_plat_helper_ret_t reclaimer_main(void *arg);

#ifndef CHT_OS_BUILD
/*
 * The helper threads (the reclaimer, a table's worker) run SCHED_BATCH:
 * a wake-up of theirs does not preempt the thread running on the CPU, it
 * waits for that thread's slice (sched(7)). Their work (callbacks, a
 * populate ahead of the splits, spare slabs) is ahead of need, and where
 * the user's threads fill every CPU each wake-up of an ordinary helper
 * preempted one of them: at 1e8 keys and 2 inserting threads on 2 CPUs,
 * 15,390-16,405 preemptions of the inserters per growth against
 * 9,432-10,316 with SCHED_BATCH (5 runs each; uspace/lib/cht/README.md,
 * "The helpers' scheduling"). A system that refuses the policy leaves the
 * inherited one.
 */
static int start_helper(void *(*fn)(void *), void *arg)
{
	pthread_attr_t attr;
	pthread_t tid;
	sigset_t all, old;
	if (pthread_attr_init(&attr) != 0)
		return -1;
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* Helper threads take no signals: they belong to the user's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&tid, &attr, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (rc != 0)
		return -1;
	/*
	 * glibc's attributes take no SCHED_BATCH, so set it on the new thread
	 * (a helper never exits, so its handle stays valid); refused, the
	 * thread keeps the inherited policy.
	 */
	struct sched_param sp = { .sched_priority = 0 };
	(void) pthread_setschedparam(tid, SCHED_BATCH, &sp);
	return 0;
}
#else
static int start_helper(int (*fn)(void *), void *arg)
{
	/* Never joined: the thread ends with the task. */
	return thread_create(fn, arg) ? 0 : -1;
}
#endif

/* Exported for the environment of the table (its worker thread). */
int cht_rcu_start_helper(cht_plat_helper_ret_t (*fn)(void *), void *arg)
{
	return start_helper(fn, arg);
}

/**
 * Starts the reclaimer unless it runs; a failed start is retried by the next
 * call. @return 1 if the reclaimer runs.
 */
static int reclaimer_ensure(void)
{
	if (__atomic_load_n(&reclaimer_ok, __ATOMIC_ACQUIRE))
		return 1;
	cht_plat_lock(&reclaimer_start_lock);
	if (!__atomic_load_n(&reclaimer_ok, __ATOMIC_RELAXED)) {
		if (start_helper(reclaimer_main, NULL) == 0) {
			__atomic_store_n(&reclaimer_ok, 1, __ATOMIC_RELEASE);
		} else if (!reclaimer_warned) {
			reclaimer_warned = 1;
			cht_plat_error("cht_rcu: cannot start the reclaimer thread "
			    "(retried at the next registration or callback)\n");
		}
	}
	int ok = __atomic_load_n(&reclaimer_ok, __ATOMIC_RELAXED);
	cht_plat_unlock(&reclaimer_start_lock);
	return ok;
}

/* Model: verify/urcu_cb.pml */
void cht_rcu_call(cht_rcu_head_t *head, void (*func)(cht_rcu_head_t *head))
{
	/*
	 * If the reclaimer cannot start now, the callback waits on the list
	 * until a later call or registration starts it.
	 */
	(void) reclaimer_ensure();
	head->func = func;
	cht_rcu_head_t *old = __atomic_load_n(&cb_list, __ATOMIC_RELAXED);
	do {
		head->next = old;
	} while (!__atomic_compare_exchange_n(&cb_list, &old, head, true,
	    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
	/*
	 * Wake the reclaimer if it may be going to sleep. Store buffering with
	 * the reclaimer's store to reclaimer_sleeping and its load of cb_list
	 * (both seq_cst): either it sees our item or we see it sleeping. Only
	 * a push onto an empty list needs to look: a non-empty list was pushed
	 * by someone who looked.
	 */
	if (!old && __atomic_load_n(&reclaimer_sleeping, __ATOMIC_SEQ_CST)) {
		cht_plat_lock(&cb_lock);
		cht_plat_cond_signal(&cb_cond);
		cht_plat_unlock(&cb_lock);
	}
}

/* Model: verify/urcu_cb.pml */
static cht_plat_helper_ret_t reclaimer_main(void *arg)
{
	(void) arg;
	cht_rcu_self.reclaimer = 1;
	(void) cht_rcu_register_thread();
	for (;;) {
		cht_rcu_head_t *list = __atomic_exchange_n(&cb_list, NULL,
		    __ATOMIC_ACQUIRE);
		if (!list) {
			__atomic_store_n(&reclaimer_sleeping, 1, __ATOMIC_SEQ_CST);
			if (!__atomic_load_n(&cb_list, __ATOMIC_SEQ_CST)) {
				cht_plat_lock(&cb_lock);
				while (!__atomic_load_n(&cb_list, __ATOMIC_ACQUIRE))
					cht_plat_cond_wait(&cb_cond, &cb_lock);
				cht_plat_unlock(&cb_lock);
			}
			__atomic_store_n(&reclaimer_sleeping, 0, __ATOMIC_RELAXED);
			continue;
		}
		/* Oldest first. */
		cht_rcu_head_t *fifo = NULL;
		size_t n = 0;
		while (list) {
			cht_rcu_head_t *next = list->next;
			list->next = fifo;
			fifo = list;
			list = next;
			n++;
		}
		(void) cht_rcu_synchronize();
		while (fifo) {
			cht_rcu_head_t *next = fifo->next;
			fifo->func(fifo);  /* may free fifo */
			fifo = next;
		}
		__atomic_fetch_add(&stat_cbs_run, n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&stat_batches, 1, __ATOMIC_RELAXED);
		/*
		 * Let small batches grow (one GP and at most one wake-up per
		 * millisecond under a steady trickle), unless someone waits in
		 * cht_rcu_barrier().
		 */
		if (n < 1024 && !__atomic_load_n(&barrier_waiters,
		    __ATOMIC_RELAXED))
			sleep_us(1000);
	}
	return CHT_PLAT_HELPER_RETURN;
}

typedef struct {
	cht_rcu_head_t head;
	cht_plat_mutex_t lock;
	cht_plat_cond_t cond;
	int done;
} barrier_t;

/* Model: verify/urcu_cb.pml */
static void barrier_cb(cht_rcu_head_t *head)
{
	barrier_t *b = (barrier_t *) head;
	cht_plat_lock(&b->lock);
	b->done = 1;
	cht_plat_cond_signal(&b->cond);
	cht_plat_unlock(&b->lock);
}

/* Model: verify/urcu_cb.pml */
int cht_rcu_barrier(void)
{
	if (cht_rcu_self.nest != 0 || cht_rcu_self.reclaimer)
		return CHT_EDEADLK;
	barrier_t b;
	cht_plat_mutex_init(&b.lock);
	cht_plat_cond_init(&b.cond);
	b.done = 0;
	__atomic_fetch_add(&barrier_waiters, 1, __ATOMIC_RELAXED);
	/*
	 * The list is one LIFO taken whole and run oldest first: every
	 * callback posted before ours runs in our batch before us, or in an
	 * earlier batch.
	 */
	cht_rcu_call(&b.head, barrier_cb);
	cht_plat_lock(&b.lock);
	while (!b.done)
		cht_plat_cond_wait(&b.cond, &b.lock);
	cht_plat_unlock(&b.lock);
	__atomic_fetch_sub(&barrier_waiters, 1, __ATOMIC_RELAXED);
	cht_plat_cond_destroy(&b.cond);
	cht_plat_mutex_destroy(&b.lock);
	return CHT_OK;
}

void cht_rcu_get_stats(cht_rcu_stats_t *st)
{
	st->gp_seq = __atomic_load_n(&cht_rcu_gp.seq, __ATOMIC_RELAXED);
	st->gps = __atomic_load_n(&stat_gps, __ATOMIC_RELAXED);
	st->gps_shared = __atomic_load_n(&stat_gps_shared, __ATOMIC_RELAXED);
	st->callbacks_run = __atomic_load_n(&stat_cbs_run, __ATOMIC_RELAXED);
	st->batches = __atomic_load_n(&stat_batches, __ATOMIC_RELAXED);
	/*
	 * Not under registry_lock: a caller inside a reader section would wait
	 * for a cht_rcu_synchronize() that waits for it.
	 */
	st->readers = __atomic_load_n(&registry_count, __ATOMIC_RELAXED);
}
