/** @file useraccess1.c
 * A kernel access to a present user page outside the uaccess functions, made
 * by a thread the fault path takes for a task's thread (unsafe: never run by
 * `test *`). With the CPU's user-access guard on (SMAP on amd64, PAN on
 * arm64; QEMU `-cpu max`) the access faults and the kernel panics naming the
 * guard: "kernel access to a user page outside uaccess (SMAP)" or "(PAN)".
 * Without a guard (the default QEMU models) the access succeeds and the test
 * says so and passes.
 *
 * The page is mapped with uaccess_store64() first (a legitimate access: the
 * guard is lifted inside it), so the fault is the guard's and not a missing
 * page's. A kernel thread inside a user address space may touch its pages
 * (the fault path allows and retries); the test's thread poses as a task's
 * thread (a placeholder in subsys[THREAD_SUBSYS_TASK], never dereferenced
 * on this path) and forbids itself direct access, as a user thread's kernel
 * side runs.
 */
#include <test.h>
#include <arch.h>
#include <arch/userspace.h>
#include <mm/as.h>
#include <proc/thread.h>
#include <uaccess.h>
#include <print.h>
#include <errno.h>

#define USERACCESS1_BASE 0x10000000UL

const char *test_useraccess1(void)
{
	const char *guard = userspace_access_guard();
	as_t *as = as_create();
	if (!as)
		return "as_create failed";
	if (as_area_create(as, USERACCESS1_BASE, PAGE_SIZE,
	    AS_AREA_READ | AS_AREA_WRITE) != EOK) {
		as_release(as);
		return "as_area_create failed";
	}
	as_enter(as);
	uint64_t __user *u = (uint64_t __user *) USERACCESS1_BASE;
	if (uaccess_store64(u, 0x5a5a) != EOK) {
		as_leave();
		as_release(as);
		return "uaccess_store64 to the fresh area failed";
	}
	thread_t *t = THREAD;
	static uint64_t placeholder;
	ipl_t ipl = interrupts_disable();
	t->subsys[THREAD_SUBSYS_TASK] = (uintptr_t) &placeholder;
	userspace_set_direct_access(false);
	interrupts_restore(ipl);
	printf("useraccess1: user-access guard %s; reading a user page "
	    "directly\n", guard ? guard : "none");
	uint64_t v = __atomic_load_n((__force uint64_t *) u, __ATOMIC_RELAXED);
	ipl = interrupts_disable();
	t->subsys[THREAD_SUBSYS_TASK] = 0;
	userspace_set_direct_access(true);
	interrupts_restore(ipl);
	as_leave();
	as_release(as);
	if (guard)
		return "the kernel read a user page outside uaccess without a fault";
	printf("useraccess1: no guard on this CPU: the read returned %#lx\n", v);
	return v == 0x5a5a ? NULL : "the direct read returned another value";
}
