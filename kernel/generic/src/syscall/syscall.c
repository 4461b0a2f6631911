/** @file syscall.c
 * The system call table (abi/syscall.h): argument validation and dispatch.
 *
 * Every handler validates each argument and returns an error code for junk;
 * user memory is only touched through copy_from_user()/copy_to_user(),
 * which return EFAULT for an address that cannot be accessed. An argument
 * that is a user address the kernel reads or writes becomes a `__user`
 * pointer (uptr(), uaccess.h) where it is used, so sparse (`make check`)
 * reports any dereference of it; the range checks compare the integer.
 */
#include <abi/syscall.h>
#include <syscall/syscall.h>
#include <proc/task.h>
#include <proc/thread.h>
#include <proc/scheduler.h>
#include <mm/as.h>
#include <arch/userspace.h>
#include <uaccess.h>
#include <arch/asm.h>
#include <arch/mm.h>
#include <smp/smp_call.h>
#include <time/delay.h>
#include <print.h>
#include <errno.h>
#include <cpu.h>

_Static_assert(AREA_READ == AS_AREA_READ && AREA_WRITE == AS_AREA_WRITE &&
    AREA_EXEC == AS_AREA_EXEC, "abi/syscall.h area flags");
_Static_assert(USER_AREA_END < USER_SPACE_END, "user areas end below the top");

typedef int64_t (*syscall_fn_t)(uint64_t a1, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5);

static task_t *cur_task(void)
{
	return uthread_current()->task;
}

static int64_t sys_exit(uint64_t status, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	task_t *task = cur_task();
	task_mark_killed(task, (int) status, NULL);
	task_kill_wake(task);
	task_thread_exit((int) status);
}

static int64_t sys_console_write(uint64_t buf, uint64_t len, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (len > CONSOLE_WRITE_MAX)
		return EINVAL;
	if (buf >= USER_AREA_END || len > USER_AREA_END - buf)
		return EFAULT;
	char chunk[128];
	uint64_t done = 0;
	while (done < len) {
		size_t n = MIN(sizeof(chunk), len - done);
		int rc = copy_from_user(chunk, uptr(buf + done), n);
		if (rc != EOK)
			return done ? (int64_t) done : rc;
		printf("%.*s", (int) n, chunk);
		done += n;
	}
	return (int64_t) done;
}

static int64_t sys_area_create(uint64_t base, uint64_t size, uint64_t flags,
    uint64_t a4, uint64_t a5)
{
	if ((flags & ~(uint64_t) (AREA_READ | AREA_WRITE | AREA_EXEC)) ||
	    !(flags & AREA_READ))
		return EINVAL;
	task_t *task = cur_task();
	if (base != 0) {
		/* as_area_create() refuses a bad range with EINVAL itself. */
		int rc = as_area_create(task->as, base, size, (unsigned) flags);
		return rc == EOK ? (int64_t) base : rc;
	}
	if (!as_area_range_ok(USER_AREA_START, size))
		return EINVAL;
	/* Anywhere: bump allocation of address space with a guard page. */
	for (int tries = 0; tries < 64; tries++) {
		uint64_t b = __atomic_fetch_add(&task->next_area, size + PAGE_SIZE,
		    __ATOMIC_RELAXED);
		if (!as_area_range_ok(b, size))
			return ENOMEM;
		int rc = as_area_create(task->as, b, size, (unsigned) flags);
		if (rc == EOK)
			return (int64_t) b;
		if (rc != EEXIST)
			return rc;
	}
	return ENOMEM;
}

static int64_t sys_area_destroy(uint64_t base, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (!as_area_range_ok(base, PAGE_SIZE))
		return EINVAL;
	return as_area_destroy(cur_task()->as, base);
}

static int64_t sys_area_resize(uint64_t base, uint64_t size, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (!as_area_range_ok(base, size))
		return EINVAL;
	return as_area_resize(cur_task()->as, base, size);
}

static int64_t sys_thread_create(uint64_t entry, uint64_t stack, uint64_t arg,
    uint64_t a4, uint64_t a5)
{
	if (entry < USER_AREA_START || entry >= USER_AREA_END ||
	    stack <= USER_AREA_START || stack > USER_AREA_END ||
	    !IS_ALIGNED(stack, 16))
		return EINVAL;
	/* The entry must be in an executable area, the stack in a writable one. */
	as_area_t area;
	as_t *as = cur_task()->as;
	if (!as_area_find(as, entry, &area) || !(area.flags & AS_AREA_EXEC) ||
	    !as_area_find(as, stack - 1, &area) || !(area.flags & AS_AREA_WRITE))
		return EINVAL;
	uint64_t tid;
	int rc = task_thread_create(cur_task(), entry, stack, arg, 0, &tid);
	return rc == EOK ? (int64_t) tid : rc;
}

static int64_t sys_thread_exit(uint64_t status, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	task_thread_exit((int) status);
}

static int64_t sys_thread_join(uint64_t tid, uint64_t status_ptr, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (status_ptr && (status_ptr >= USER_AREA_END ||
	    USER_AREA_END - status_ptr < sizeof(int)))
		return EFAULT;
	int status;
	int rc = task_thread_join(tid, &status);
	if (rc != EOK)
		return rc;
	if (status_ptr)
		return copy_to_user(uptr(status_ptr), &status, sizeof(status));
	return EOK;
}

static int64_t sys_futex_wait(uint64_t addr, uint64_t expected,
    uint64_t timeout_ns, uint64_t a4, uint64_t a5)
{
	if (expected > UINT32_MAX)
		return EINVAL;
	return futex_wait(uptr(addr), (uint32_t) expected, timeout_ns);
}

static int64_t sys_futex_wake(uint64_t addr, uint64_t count, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	return futex_wake(uptr(addr), count);
}

static int64_t sys_yield(uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
    uint64_t a5)
{
	thread_yield();
	return EOK;
}

static int64_t sys_cpu_count(uint64_t a1, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	return (int64_t) atomic_get(&cpu_active_count);
}

static int64_t sys_cpu_current(uint64_t a1, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	ipl_t ipl = interrupts_disable();
	int64_t id = CPU->id;
	interrupts_restore(ipl);
	return id;
}

static int64_t sys_thread_wire(uint64_t cpu_id, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (cpu_id >= cpu_count || !cpu_is_online((unsigned) cpu_id))
		return EINVAL;
	thread_t *t = THREAD;
	cpu_t *target = &cpus[cpu_id];
	/*
	 * Point the thread at the target and sleep one tick: the wake-up puts
	 * it into that CPU's run queue. A preemption before the sleep runs it
	 * here again (the scheduler resets t->cpu), so repeat until there.
	 */
	for (int tries = 0; tries < 100; tries++) {
		irq_spinlock_lock(&t->lock, true);
		t->wired = true;
		t->cpu = target;
		irq_spinlock_unlock(&t->lock, true);
		ipl_t ipl = interrupts_disable();
		bool there = CPU == target;
		interrupts_restore(ipl);
		if (there)
			return EOK;
		thread_usleep(1);
	}
	return EBUSY;
}

static int64_t sys_clock_ns(uint64_t a1, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	return (int64_t) uptime_ns();
}

static void membarrier_func(void *arg)
{
	/*
	 * Full barrier on a CPU running the task: forbids the user accesses
	 * before the IPI from being reordered with those after it (taking the
	 * exception is no barrier on arm64). smp_call's handler fences around
	 * every call already; this one states the contract.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static int64_t sys_membarrier(uint64_t flags, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	if (flags != 0)
		return EINVAL;
	as_t *as = cur_task()->as;
	/*
	 * Full barrier: forbids the caller's earlier stores from being
	 * reordered after the mask read (store buffering). A CPU that loads
	 * the address space later sets its bit with a seq_cst RMW and then
	 * runs arch_as_load(), which begins with a full barrier (arch.h; the
	 * RMW alone is not one on arm64), before it runs the task's code.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	uint64_t mask = __atomic_load_n(&as->cpus_running, __ATOMIC_SEQ_CST);
	ipl_t ipl = interrupts_disable();
	unsigned self = CPU->id;
	interrupts_restore(ipl);
	for (unsigned i = 0; i < cpu_count && mask; i++) {
		if (!(mask & (1UL << i)))
			continue;
		mask &= ~(1UL << i);
		if (i != self)
			(void) smp_call(i, membarrier_func, NULL);
	}
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return EOK;
}

static int64_t sys_task_id(uint64_t a1, uint64_t a2, uint64_t a3,
    uint64_t a4, uint64_t a5)
{
	return (int64_t) cur_task()->id;
}

static const syscall_fn_t syscall_table[SYS_COUNT] = {
	[SYS_EXIT] = sys_exit,
	[SYS_CONSOLE_WRITE] = sys_console_write,
	[SYS_AREA_CREATE] = sys_area_create,
	[SYS_AREA_DESTROY] = sys_area_destroy,
	[SYS_AREA_RESIZE] = sys_area_resize,
	[SYS_THREAD_CREATE] = sys_thread_create,
	[SYS_THREAD_EXIT] = sys_thread_exit,
	[SYS_THREAD_JOIN] = sys_thread_join,
	[SYS_FUTEX_WAIT] = sys_futex_wait,
	[SYS_FUTEX_WAKE] = sys_futex_wake,
	[SYS_YIELD] = sys_yield,
	[SYS_CPU_COUNT] = sys_cpu_count,
	[SYS_CPU_CURRENT] = sys_cpu_current,
	[SYS_THREAD_WIRE] = sys_thread_wire,
	[SYS_CLOCK_NS] = sys_clock_ns,
	[SYS_MEMBARRIER] = sys_membarrier,
	[SYS_TASK_ID] = sys_task_id,
};

void syscall_dispatch(istate_t *istate)
{
	uint64_t nr = istate_syscall_nr(istate);
	int64_t rc = ENOTSUP;
	uthread_t *ut = uthread_current();
	if (ut && nr < SYS_COUNT && syscall_table[nr]) {
		ut->mem_limited = false;
		rc = syscall_table[nr](istate_syscall_arg(istate, 0),
		    istate_syscall_arg(istate, 1), istate_syscall_arg(istate, 2),
		    istate_syscall_arg(istate, 3), istate_syscall_arg(istate, 4));
		/*
		 * A uaccess whose fault met the task's memory limit returned
		 * EFAULT (its fix-up knows no other code): the call says why.
		 */
		if (rc == EFAULT && ut->mem_limited)
			rc = ELIMIT;
	}
	istate_set_retval(istate, (uint64_t) rc);
	interrupts_disable();
	/* A thread the call woke on this CPU may preempt us (as on an IRQ exit). */
	if (CPU->need_resched)
		scheduler_preempt_check();
	task_user_return();
	/* Back to user mode with interrupts disabled (the return restores them). */
}
