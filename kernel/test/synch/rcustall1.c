/** @file rcustall1.c
 * RCU stall warnings: a reader that holds a grace period past the stall limit
 * produces exactly one warning, and the warning names that reader.
 *
 * The limit is lowered to STALL_TEST_MS (restored at the end). A reader thread
 * wired to the last CPU enters a section and spins there; the main thread then
 * waits for a grace period (rcu_synchronize()), which cannot complete while the
 * reader is inside. The reader spins until the warning counter moved (bounded by
 * STALL_WAIT_US, a liveness bound) and then HOLD_AFTER_LIMITS limits longer, so
 * that a detector that warned more than once per grace period would show it.
 * Only one grace period can be held up by the reader (detections run one at a
 * time and the held one ends only when the reader leaves), so exactly one new
 * warning is required. It must name the reader's thread id, and if it names it
 * as running, on the reader's CPU. Verdicts do not depend on timing: only the
 * count of warnings and what they named are checked.
 */
#include <test.h>
#include <testlib.h>
#include <print.h>
#include <atomic.h>
#include <cpu.h>
#include <errno.h>
#include <proc/thread.h>
#include <synch/rcu.h>
#include <time/delay.h>

/** The stall limit during the test (ms). */
#define STALL_TEST_MS 200
/** The reader holds on for this many limits after the warning appeared. */
#define HOLD_AFTER_LIMITS 2
/** Liveness bound for the warning and the threads. */
#define STALL_WAIT_US 30000000ULL

typedef struct {
	atomic_t entered;
	uint64_t warnings0;    /**< warning count before the reader entered */
	bool no_warning;       /**< the bound expired without a warning */
} st_t;

static void st_reader(void *arg)
{
	st_t *s = arg;
	rcu_read_lock();
	atomic_set(&s->entered, 1);
	uint64_t start = uptime_us();
	while (rcu_stall_warnings() == s->warnings0) {
		if (uptime_us() - start > STALL_WAIT_US) {
			s->no_warning = true;
			break;
		}
		udelay(200);
	}
	start = uptime_us();
	while (uptime_us() - start < HOLD_AFTER_LIMITS * STALL_TEST_MS * 1000ULL)
		udelay(200);
	rcu_read_unlock();
}

const char *test_rcustall1(void)
{
	static st_t s;
	unsigned cpu = cpu_count - 1;
	while (cpu > 0 && !cpu_is_online(cpu))
		cpu--;
	atomic_set(&s.entered, 0);
	s.no_warning = false;

	/* A grace period in flight now completes under the default limit. */
	rcu_synchronize();
	uint64_t old = rcu_stall_limit_set(STALL_TEST_MS);
	s.warnings0 = rcu_stall_warnings();

	thread_t *r = testlib_create(st_reader, &s, "rcustall1-r", &cpus[cpu]);
	if (!r) {
		(void) rcu_stall_limit_set(old);
		return "cannot create the reader thread";
	}
	uint64_t tid = r->tid;
	thread_start(r);
	uint64_t start = uptime_us();
	while (atomic_get(&s.entered) == 0 && uptime_us() - start < STALL_WAIT_US)
		thread_usleep(1000);
	/* Waits for a grace period that the reader holds up. */
	rcu_synchronize();
	(void) thread_join(r);
	(void) rcu_stall_limit_set(old);

	uint64_t n = rcu_stall_warnings() - s.warnings0;
	rcu_stall_info_t info;
	rcu_stall_last(&info);
	printf("rcustall1: reader tid %lu on CPU %u; %lu new stall warning(s); "
	    "the last one: grace period %lu, %lu ms, %u holder(s)\n", tid, cpu, n,
	    info.gp, info.held_ms, info.n + info.more);
	if (rcu_stall_limit_get() != old)
		return "the stall limit was not restored";
	if (s.no_warning || n == 0)
		return "no stall warning although a reader held a grace period "
		    "past the limit";
	if (n != 1)
		return "more than one stall warning for one held-up grace period";
	bool named = false;
	for (unsigned i = 0; i < info.n; i++) {
		if (info.holder[i].tid != tid)
			continue;
		if (info.holder[i].running && info.holder[i].cpu != (int) cpu)
			return "the warning named the reader on the wrong CPU";
		named = true;
	}
	if (!named)
		return "the stall warning did not name the reader thread";
	return NULL;
}
