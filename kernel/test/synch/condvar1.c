/** @file condvar1.c
 * Condition variables: timeouts, unremembered signals, signal wakes one,
 * broadcast wakes all, and no lost wake-up in a cross-CPU ping-pong.
 *
 * Part 1 (one thread): condvar_wait_timeout with nobody signalling returns
 * ETIMEOUT with the mutex held again; a signal and a broadcast with no waiter
 * are not remembered (a later wait still times out).
 * Part 2: W waiters (one per online CPU, wired, plus two unwired) wait for a
 * flag under a mutex. Once all W are asleep on the condvar (waitq_count), the
 * test hands out one token at a time with condvar_signal: each signal wakes
 * exactly one waiter (the others stay asleep: the queue holds W-1, W-2, ...
 * after each token is taken). Then W waiters again, all asleep, one broadcast:
 * all W wake.
 * Part 3: two threads on different CPUs (when there are two) pass a turn back
 * and forth ROUNDS times, each sleeping on its own condvar with
 * condvar_wait_timeout (very long timeout): a lost wake-up shows up as ETIMEOUT
 * (or a hang). The same with the spinlock-protected variant
 * condvar_wait_spin_timeout.
 * Waiting for "all asleep" is bounded (WAIT_LIMIT_US) only to turn a hang into
 * a failure; no verdict depends on timing.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <cpu.h>
#include <atomic.h>
#include <errno.h>
#include <proc/thread.h>
#include <synch/mutex.h>
#include <synch/condvar.h>
#include <synch/spinlock.h>
#include <synch/waitq.h>

#define ROUNDS 3000


static struct {
	mutex_t mtx;
	condvar_t cv;
	/** Protected by mtx. */
	bool flag;
	/** Tokens handed out and not taken yet; protected by mtx. */
	unsigned tokens;
	/** Waiters that took a token / saw the flag (atomic). */
	atomic_t woken;
	bool abort;   /**< Set before start: threads do nothing. */

	/* Part 3. */
	condvar_t turn_cv[2];
	spinlock_t spin;
	/** Whose turn it is (0 or 1); protected by mtx, or by spin (spin run). */
	unsigned turn;
	/** Wait timeouts seen in the ping-pong (atomic). */
	atomic_t timeouts;
} c1;

static thread_t *threads[CONFIG_MAX_CPUS + 2];

static void token_waiter(void *arg)
{
	(void) arg;
	if (c1.abort)
		return;
	mutex_lock(&c1.mtx);
	while (c1.tokens == 0)
		condvar_wait(&c1.cv, &c1.mtx);
	c1.tokens--;
	atomic_inc(&c1.woken);
	mutex_unlock(&c1.mtx);
}

static void flag_waiter(void *arg)
{
	(void) arg;
	if (c1.abort)
		return;
	mutex_lock(&c1.mtx);
	while (!c1.flag)
		condvar_wait(&c1.cv, &c1.mtx);
	atomic_inc(&c1.woken);
	mutex_unlock(&c1.mtx);
}

static void pingpong(void *arg)
{
	unsigned me = (unsigned) (uintptr_t) arg;
	if (c1.abort)
		return;
	for (unsigned i = 0; i < ROUNDS; i++) {
		mutex_lock(&c1.mtx);
		while (c1.turn != me) {
			if (condvar_wait_timeout(&c1.turn_cv[me], &c1.mtx,
			    WAIT_LIMIT_US) == ETIMEOUT) {
				atomic_inc(&c1.timeouts);
				c1.turn = me;   /* Keep going to end the test. */
			}
		}
		c1.turn = 1 - me;
		condvar_signal(&c1.turn_cv[1 - me]);
		mutex_unlock(&c1.mtx);
	}
}

static void pingpong_spin(void *arg)
{
	unsigned me = (unsigned) (uintptr_t) arg;
	if (c1.abort)
		return;
	for (unsigned i = 0; i < ROUNDS; i++) {
		spinlock_lock(&c1.spin);
		while (c1.turn != me) {
			if (condvar_wait_spin_timeout(&c1.turn_cv[me], &c1.spin,
			    WAIT_LIMIT_US) == ETIMEOUT) {
				atomic_inc(&c1.timeouts);
				c1.turn = me;
			}
		}
		c1.turn = 1 - me;
		condvar_signal(&c1.turn_cv[1 - me]);
		spinlock_unlock(&c1.spin);
	}
}

/**
 * Creates @a n threads running @a fn, wiring the first ones to the online CPUs
 * in turn (@a wire_all: all of them). Starts and returns how many were created;
 * on a creation failure the created ones run with c1.abort set.
 */
static unsigned spawn(thread_func_t fn, unsigned n, bool wire_all,
    const char *name)
{
	unsigned ids[CONFIG_MAX_CPUS], online = test_online_cpus(ids);
	unsigned created = 0;

	for (unsigned k = 0; k < n; k++) {
		thread_t *t = testlib_create(fn, (void *) (uintptr_t) k, name,
		    wire_all || k < online ? &cpus[ids[k % online]] : NULL);
		if (!t)
			break;
		threads[created++] = t;
	}
	c1.abort = created < n;
	for (unsigned k = 0; k < created; k++)
		thread_start(threads[k]);
	return created;
}

static void join_all(unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		thread_join(threads[k]);
	c1.abort = false;
}

/** Waits until @a n threads sleep on c1.cv; false after WAIT_LIMIT_US. */
static bool wait_sleepers(size_t n)
{
	for (uint64_t w = 0; w < WAIT_LIMIT_US; w += 1000) {
		if (waitq_count(&c1.cv.wq) == n)
			return true;
		thread_usleep(1000);
	}
	return false;
}

static const char *part_single(void)
{
	mutex_initialize_named(&c1.mtx, MUTEX_PASSIVE, "condvar1.mtx");
	condvar_initialize(&c1.cv);

	mutex_lock(&c1.mtx);
	errno_t rc = condvar_wait_timeout(&c1.cv, &c1.mtx, 10000);
	bool mine = mutex_locked_by_me(&c1.mtx);
	condvar_signal(&c1.cv);
	errno_t rc_sig = condvar_wait_timeout(&c1.cv, &c1.mtx, 10000);
	condvar_broadcast(&c1.cv);
	errno_t rc_bc = condvar_wait_timeout(&c1.cv, &c1.mtx, 10000);
	mutex_unlock(&c1.mtx);

	CHECK(rc == ETIMEOUT, "wait_timeout with nobody signalling did not "
	    "time out");
	CHECK(mine, "mutex not held again after a timed-out wait");
	CHECK(rc_sig == ETIMEOUT, "a signal with no waiter was remembered");
	CHECK(rc_bc == ETIMEOUT, "a broadcast with no waiter was remembered");
	CHECK(waitq_count(&c1.cv.wq) == 0, "timed-out waiters left on the queue");

	spinlock_initialize(&c1.spin, "condvar1");
	spinlock_lock(&c1.spin);
	rc = condvar_wait_spin_timeout(&c1.cv, &c1.spin, 10000);
	bool held = spinlock_locked(&c1.spin);
	spinlock_unlock(&c1.spin);
	CHECK(rc == ETIMEOUT, "wait_spin_timeout did not time out");
	CHECK(held, "spinlock not held again after wait_spin_timeout");
	return NULL;
}

static const char *part_signal_broadcast(void)
{
	unsigned online = 0;
	for (unsigned i = 0; i < cpu_count; i++)
		online += cpu_is_online(i);
	unsigned w = online + 2;

	/* Signal: one token, one waiter woken, the others stay asleep. */
	c1.tokens = 0;
	atomic_set(&c1.woken, 0);
	unsigned n = spawn(token_waiter, w, false, "condvar1-sig");
	if (n < w) {
		join_all(n);
		return "cannot create threads";
	}
	const char *reason = NULL;
	if (!wait_sleepers(w))
		reason = "waiters never all slept on the condvar";
	for (unsigned k = 1; k <= w && !reason; k++) {
		mutex_lock(&c1.mtx);
		c1.tokens++;
		condvar_signal(&c1.cv);
		mutex_unlock(&c1.mtx);
		uint64_t t;
		for (t = 0; t < WAIT_LIMIT_US && atomic_get(&c1.woken) < k;
		    t += 1000)
			thread_usleep(1000);
		if (atomic_get(&c1.woken) != k)
			reason = "a signal did not wake a waiter";
		else if (waitq_count(&c1.cv.wq) != w - k)
			reason = "a signal woke more than one waiter";
	}
	if (reason) {
		/* Release everybody so that they can be joined. */
		mutex_lock(&c1.mtx);
		c1.tokens += w;
		condvar_broadcast(&c1.cv);
		mutex_unlock(&c1.mtx);
	}
	join_all(n);
	if (reason)
		return reason;
	TPRINTF("condvar1: %u signals woke %zu waiters one by one\n", w,
	    atomic_get(&c1.woken));
	CHECK(c1.tokens == 0, "tokens left over");

	/* Broadcast: all asleep, one broadcast wakes all. */
	c1.flag = false;
	atomic_set(&c1.woken, 0);
	n = spawn(flag_waiter, w, false, "condvar1-bc");
	if (n < w) {
		join_all(n);
		return "cannot create threads";
	}
	bool asleep = wait_sleepers(w);
	mutex_lock(&c1.mtx);
	c1.flag = true;
	condvar_broadcast(&c1.cv);
	mutex_unlock(&c1.mtx);
	uint64_t t;
	for (t = 0; t < WAIT_LIMIT_US && atomic_get(&c1.woken) < w; t += 1000)
		thread_usleep(1000);
	size_t woken = atomic_get(&c1.woken);
	if (woken != w) {
		/* Rescue the ones the broadcast missed, then report. */
		condvar_broadcast(&c1.cv);
	}
	join_all(n);
	TPRINTF("condvar1: one broadcast woke %zu of %u waiters\n", woken, w);
	CHECK(asleep, "waiters never all slept on the condvar");
	CHECK(woken == w, "broadcast did not wake every waiter");
	CHECK(waitq_count(&c1.cv.wq) == 0, "waiters left on the queue");
	return NULL;
}

static const char *part_pingpong(bool spin)
{
	condvar_initialize(&c1.turn_cv[0]);
	condvar_initialize(&c1.turn_cv[1]);
	c1.turn = 0;
	atomic_set(&c1.timeouts, 0);

	unsigned n = spawn(spin ? pingpong_spin : pingpong, 2, true,
	    spin ? "condvar1-spin" : "condvar1-pp");
	join_all(n);
	CHECK(n == 2, "cannot create threads");
	TPRINTF("condvar1: ping-pong (%s) %u rounds, lost wake-ups %zu\n",
	    spin ? "spinlock" : "mutex", ROUNDS, atomic_get(&c1.timeouts));
	CHECK(atomic_get(&c1.timeouts) == 0, "lost wake-up in the ping-pong");
	CHECK(c1.turn == 0, "ping-pong ended on the wrong turn");
	return NULL;
}

static const char *part_pingpong_mutex(void)
{
	return part_pingpong(false);
}

static const char *part_pingpong_spin(void)
{
	return part_pingpong(true);
}

const char *test_condvar1(void)
{
	static const testlib_part_t parts[] = {
		{ "timeouts and unremembered signals", part_single },
		{ NULL, part_signal_broadcast },
		{ NULL, part_pingpong_mutex },
		{ NULL, part_pingpong_spin },
	};
	return testlib_run_parts("condvar1", parts, ARRAY_SIZE(parts));
}
