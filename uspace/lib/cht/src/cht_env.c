/** @file cht_env.c
 * Userspace side of the CHT environment (lib/cht/env/adt/cht_env_posix.h):
 * the resize worker thread, the table registry, the table's allocations,
 * sleeping and assertion failures. One source for both userspace
 * environments, Linux (uspace/lib/cht/env) and the OS's
 * uspace/lib/c (uspace/lib/cht/osenv, CHT_OS_BUILD), over the platform
 * layer of the RCU (cht_rcu_plat.h).
 */
#define _GNU_SOURCE
#include <adt/cht.h>           /* and the environment, CHT_ENV_HEADER */
#include <cht_rcu_plat.h>

void cht_env_fail(const char *what, const char *file, int line)
{
	cht_plat_error("libcht: %s (%s:%d)\n", what, file, line);
#ifndef CHT_OS_BUILD
	fflush(stderr);
#endif
	cht_plat_abort();
}

uint64_t cht_env_now_ms(void)
{
	return cht_plat_now_ms();
}

size_t cht_env_cnt_nslots(void)
{
	long cpus = cht_plat_ncpus();
	size_t n = 1;
	while ((long) n < cpus && n < 1024)
		n <<= 1;
	return n;
}

void *cht_env_malloc(size_t size)
{
	void *p = malloc(size);
	if (p && size >= CHT_ENV_HUGE_MIN)
		cht_plat_advise_huge(p, size);
	return p;
}

void cht_env_sleep_ms(unsigned ms)
{
	cht_plat_sleep_us((long) ms * 1000);
}

/*
 * The worker thread: runs queued work items one at a time, in order.
 *
 * It is started by the first enqueue. If it cannot be started (no memory
 * for its stack, thread limit), the enqueue fails and the next enqueue tries
 * again: a failed start is never final (cht.c then drops its pending request
 * count to 0, so its next resize request enqueues again).
 */

/** Protects wq_head, wq_tail, wq_delayed and wq_started. */
static cht_plat_mutex_t wq_lock = CHT_PLAT_MUTEX_INIT;
static cht_plat_cond_t wq_cond = CHT_PLAT_COND_INIT;
static cht_env_work_t *wq_head, *wq_tail;
#ifndef CHT_OS_BUILD
/** Delayed items (cht_env_work_enqueue_after()), the first due first. */
static cht_env_work_t *wq_delayed;
#endif
/** The worker thread runs. Under wq_lock. */
static bool wq_started;
/** A start failed and was reported; cleared by a successful start. Under wq_lock. */
static bool wq_start_warned;

#ifndef CHT_OS_BUILD
/**
 * The worker has nothing to run and wq_delayed is not empty (wq_lock held):
 * moves the first delayed item to the queue if it is due, else waits until
 * it is or until a signal (an item queued, or a spurious wake-up); the
 * caller looks again.
 */
static void wq_wait_delayed(void)
{
	uint64_t now = cht_plat_now_ms();
	cht_env_work_t *w = wq_delayed;
	if (w->due_ms <= now) {
		wq_delayed = w->next;
		w->next = NULL;
		wq_head = wq_tail = w;
		return;
	}
	/* PTHREAD_COND_INITIALIZER's clock is CLOCK_REALTIME. */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t) ts.tv_nsec + (w->due_ms - now) * 1000000;
	ts.tv_sec += (time_t) (ns / 1000000000);
	ts.tv_nsec = (long) (ns % 1000000000);
	(void) pthread_cond_timedwait(&wq_cond, &wq_lock, &ts);
}
#endif

static cht_plat_helper_ret_t worker_main(void *arg)
{
	(void) arg;
	/* Resizes enter reader sections (shrink) and wait for GPs. */
	if (cht_rcu_register_thread() != CHT_OK)
		cht_env_fail("worker thread cannot register with the RCU",
		    __FILE__, __LINE__);
	for (;;) {
		cht_plat_lock(&wq_lock);
		while (!wq_head) {
#ifndef CHT_OS_BUILD
			if (wq_delayed) {
				wq_wait_delayed();
				continue;
			}
#endif
			cht_plat_cond_wait(&wq_cond, &wq_lock);
		}
		cht_env_work_t *w = wq_head;
		wq_head = w->next;
		if (!wq_head)
			wq_tail = NULL;
		cht_plat_unlock(&wq_lock);
		/* Copy func first: the item may be re-queued or freed by it. */
		void (*func)(cht_env_work_t *) = w->func;
		func(w);
	}
	return CHT_PLAT_HELPER_RETURN;
}

/** Starts the worker unless it runs. Called with wq_lock held. */
static bool wq_start_locked(void)
{
	if (wq_started)
		return true;
	/* The new thread waits for wq_lock before it looks at the queue. */
	if (cht_rcu_start_helper(worker_main, NULL) != 0) {
		if (!wq_start_warned)
			cht_plat_error("libcht: cannot start the worker thread "
			    "(tables do not resize; retried at the next "
			    "request)\n");
		wq_start_warned = true;
		return false;
	}
	wq_started = true;
	wq_start_warned = false;
	return true;
}

bool cht_env_work_enqueue(cht_env_work_t *w,
    void (*func)(cht_env_work_t *work), bool block)
{
	(void) block;
	cht_plat_lock(&wq_lock);
	if (!wq_start_locked()) {
		cht_plat_unlock(&wq_lock);
		return false;
	}
	w->func = func;
	w->next = NULL;
	if (wq_tail)
		wq_tail->next = w;
	else
		wq_head = w;
	wq_tail = w;
	cht_plat_cond_signal(&wq_cond);
	cht_plat_unlock(&wq_lock);
	return true;
}

#ifndef CHT_OS_BUILD
bool cht_env_work_enqueue_after(cht_env_work_t *w,
    void (*func)(cht_env_work_t *work), unsigned delay_ms)
{
	uint64_t due = cht_plat_now_ms() + delay_ms;
	cht_plat_lock(&wq_lock);
	if (!wq_start_locked()) {
		cht_plat_unlock(&wq_lock);
		return false;
	}
	w->func = func;
	w->due_ms = due;
	cht_env_work_t **p = &wq_delayed;
	while (*p && (*p)->due_ms <= due)
		p = &(*p)->next;
	w->next = *p;
	*p = w;
	/* The worker may be waiting for a later item, or for none. */
	cht_plat_cond_signal(&wq_cond);
	cht_plat_unlock(&wq_lock);
	return true;
}
#endif

/* Registry of live tables. */

static cht_plat_mutex_t registry_lock = CHT_PLAT_MUTEX_INIT;
static cht_env_link_t registry = { &registry, &registry };

void cht_env_registry_add(cht_env_link_t *link)
{
	cht_plat_lock(&registry_lock);
	link->next = &registry;
	link->prev = registry.prev;
	registry.prev->next = link;
	registry.prev = link;
	cht_plat_unlock(&registry_lock);
}

void cht_env_registry_remove(cht_env_link_t *link)
{
	cht_plat_lock(&registry_lock);
	link->prev->next = link->next;
	link->next->prev = link->prev;
	link->next = link->prev = NULL;
	cht_plat_unlock(&registry_lock);
}

void cht_env_registry_foreach(void (*fn)(cht_env_link_t *link))
{
	/*
	 * fn reads each table's bucket array, which a resize frees after a
	 * grace period: hold a reader section (registering for the call if
	 * the thread is not registered).
	 */
	bool temp = !cht_rcu_registered();
	if (temp && cht_rcu_register_thread() != CHT_OK)
		return;
	cht_env_rcu_read_lock();
	cht_plat_lock(&registry_lock);
	for (cht_env_link_t *l = registry.next; l != &registry; l = l->next)
		fn(l);
	cht_plat_unlock(&registry_lock);
	cht_env_rcu_read_unlock();
	if (temp)
		(void) cht_rcu_unregister_thread();
}
