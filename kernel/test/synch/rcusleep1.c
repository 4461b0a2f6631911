/** @file rcusleep1.c
 * (unsafe) Sleeps inside an RCU reader section: a debug build must panic with
 * "blocking inside an RCU reader section" (rcu_assert_may_block() in the wait
 * queue sleep). Run only by name: the kernel stops. A release build has no
 * assertions: the sleep happens and the test reports that nothing stopped it.
 */
#include <test.h>
#include <print.h>
#include <proc/thread.h>
#include <synch/rcu.h>

const char *test_rcusleep1(void)
{
	printf("rcusleep1: %s: thread_usleep(1000) inside a reader section; "
	    "a debug build panics now\n", rcu_flavour_name);
	rcu_read_lock();
	thread_usleep(1000);
	rcu_read_unlock();
#ifdef CONFIG_DEBUG
	return "slept inside a reader section and no assertion stopped it";
#else
	printf("rcusleep1: release build: no assertions, the sleep was not "
	    "caught\n");
	return NULL;
#endif
}
