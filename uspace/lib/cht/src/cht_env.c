/** @file cht_env.c
 * Userspace side of the CHT environment (adt/cht_env.h): the resize worker
 * thread, the table registry, sleeping and assertion failures.
 */
#define _GNU_SOURCE
#include <adt/cht.h>
#include <adt/cht_env.h>

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Provided by the RCU (rcu.c): starts a detached helper thread, no signals. */
int cht_rcu_start_helper(void *(*fn)(void *), void *arg);

void cht_env_fail(const char *what, const char *file, int line)
{
	fprintf(stderr, "libcht: %s (%s:%d)\n", what, file, line);
	fflush(stderr);
	abort();
}

uint64_t cht_env_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

size_t cht_env_cnt_nslots(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	size_t n = 1;
	while ((long) n < cpus && n < 1024)
		n <<= 1;
	return n;
}

void cht_env_sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/*
 * The worker thread: runs queued work items one at a time, in order.
 *
 * It is started by the first enqueue. If it cannot be started (no memory
 * for its stack, thread limit), the enqueue fails and the next enqueue tries
 * again: a failed start is never final (cht.c then drops its pending request
 * count to 0, so its next resize request enqueues again).
 */

/** Protects wq_head, wq_tail and wq_started. */
static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wq_cond = PTHREAD_COND_INITIALIZER;
static cht_env_work_t *wq_head, *wq_tail;
/** The worker thread runs. Under wq_lock. */
static bool wq_started;
/** A start failed and was reported; cleared by a successful start. Under wq_lock. */
static bool wq_start_warned;

static void *worker_main(void *arg)
{
	(void) arg;
	/* Resizes enter reader sections (shrink) and wait for GPs. */
	if (cht_rcu_register_thread() != CHT_OK)
		cht_env_fail("worker thread cannot register with the RCU",
		    __FILE__, __LINE__);
	for (;;) {
		pthread_mutex_lock(&wq_lock);
		while (!wq_head)
			pthread_cond_wait(&wq_cond, &wq_lock);
		cht_env_work_t *w = wq_head;
		wq_head = w->next;
		if (!wq_head)
			wq_tail = NULL;
		pthread_mutex_unlock(&wq_lock);
		/* Copy func first: the item may be re-queued or freed by it. */
		void (*func)(cht_env_work_t *) = w->func;
		func(w);
	}
	return NULL;
}

/** Starts the worker unless it runs. Called with wq_lock held. */
static bool wq_start_locked(void)
{
	if (wq_started)
		return true;
	/* The new thread waits for wq_lock before it looks at the queue. */
	if (cht_rcu_start_helper(worker_main, NULL) != 0) {
		if (!wq_start_warned)
			fprintf(stderr, "libcht: cannot start the worker thread "
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
	pthread_mutex_lock(&wq_lock);
	if (!wq_start_locked()) {
		pthread_mutex_unlock(&wq_lock);
		return false;
	}
	w->func = func;
	w->next = NULL;
	if (wq_tail)
		wq_tail->next = w;
	else
		wq_head = w;
	wq_tail = w;
	pthread_cond_signal(&wq_cond);
	pthread_mutex_unlock(&wq_lock);
	return true;
}

/* Registry of live tables. */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static cht_env_link_t registry = { &registry, &registry };

void cht_env_registry_add(cht_env_link_t *link)
{
	pthread_mutex_lock(&registry_lock);
	link->next = &registry;
	link->prev = registry.prev;
	registry.prev->next = link;
	registry.prev = link;
	pthread_mutex_unlock(&registry_lock);
}

void cht_env_registry_remove(cht_env_link_t *link)
{
	pthread_mutex_lock(&registry_lock);
	link->prev->next = link->next;
	link->next->prev = link->prev;
	link->next = link->prev = NULL;
	pthread_mutex_unlock(&registry_lock);
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
	pthread_mutex_lock(&registry_lock);
	for (cht_env_link_t *l = registry.next; l != &registry; l = l->next)
		fn(l);
	pthread_mutex_unlock(&registry_lock);
	cht_env_rcu_read_unlock();
	if (temp)
		(void) cht_rcu_unregister_thread();
}
