/** @file task.c
 * User tasks and their threads, the kill path and futexes (proc/task.h).
 *
 * Futexes: one table for all tasks, FUTEX_BUCKETS buckets hashed by (task,
 * user address), each with its own mutex and list of futex_t (Linux hashes
 * futexes the same way; HelenOS cached them per task in a CHT). Calls on
 * different futexes share no written line, unless their keys collide in a
 * bucket: the calls that find no waiter (a wake) or a value that does not
 * match (a wait) touch only their bucket, never the task structure, and
 * create no object (one per-task futex mutex had every call of a task
 * write the same lines). A waiter reads the expected value from user
 * memory and counts itself in f->waiters under the bucket's mutex, then
 * sleeps on f->wq outside it; a waker takes min(count, waiters) off the
 * counter under the same mutex and wakes that many with waitq_wake_one(),
 * whose wake-up is remembered if the waiter has not gone to sleep yet
 * (waitq.h). A waiter that times out removes itself from the counter if a
 * waker did not already; if one did, it counts as woken and consumes the
 * wake-up that waker left remembered in f->wq (it found no sleeper): under
 * the bucket's mutex, f->waiters equals the sleepers plus the timed-out
 * waiters not yet back under the mutex, minus the remembered wake-ups, so
 * with f->waiters == 0 one is pending for every such waiter. Kill wakes
 * every counted waiter of the task the same way, bucket by bucket.
 *
 * Bound: a futex_t exists only while f->refs > 0, and every reference is a
 * thread inside futex_wait() that found the expected value (taken under the
 * bucket's mutex after the value check, dropped on the way out, the object
 * freed with the last one); a thread waits on one futex at a time. So a task
 * never holds more futex objects than live threads (TASK_THREADS_MAX).
 * task->nfutexes counts them (atomically: buckets have different mutexes)
 * and futex_wait() refuses with ELIMIT at TASK_FUTEXES_MAX all the same, so
 * the bound does not rest on that argument alone. The table itself is
 * static: no per-task memory.
 */
#include <proc/task.h>
#include <proc/uctx.h>
#include <proc/scheduler.h>
#include <mm/as.h>
#include <mm/malloc.h>
#include <mm/frame.h>
#include <arch/userspace.h>
#include <arch.h>
#include <uaccess.h>
#include <arch/asm.h>
#include <abi/syscall.h>
#include <console/console.h>
#include <lib/str.h>
#include <print.h>
#include <panic.h>
#include <debug.h>
#include <errno.h>
#include <cpu.h>

/** All tasks; protected by tasks_lock. */
static list_t tasks_list = LIST_INITIALIZER(tasks_list);
static irq_spinlock_t tasks_lock = IRQ_SPINLOCK_INITIALIZER("tasks");
static size_t tasks_n;
/** Next task id; atomics. */
static uint64_t next_task_id = 1;

/**
 * What a user thread makes the kernel hold, charged to its task's memory
 * limit (as_charge()): its uthread_t, its thread_t, its kernel stack and its
 * user register state (proc/uctx.h).
 */
#define UTHREAD_CHARGE (sizeof(uthread_t) + sizeof(thread_t) + \
	THREAD_STACK_SIZE + uctx_size())

/** First base tried by SYS_AREA_CREATE with base 0. */
#define TASK_AREA_FIRST 0x0000100000000000UL

typedef struct futex {
	/** Key: the task and the user address; set once. */
	task_t *task;
	uintptr_t uaddr;
	waitq_t wq;
	/** Waiters not yet woken (see the file comment); the bucket's mtx. */
	size_t waiters;
	/** Threads inside futex_wait() on this futex; the bucket's mtx. */
	size_t refs;
	/** Link in the bucket's list; the bucket's mtx. */
	link_t link;
} futex_t;

/** Buckets of the futex table (a power of two). */
#define FUTEX_BUCKETS 256

/**
 * A bucket: the futexes whose key hashes here. Aligned to a cache line so
 * that calls on futexes of different buckets write no common line.
 */
typedef struct {
	/**
	 * Protects `futexes` and every listed futex_t's waiters, refs and link
	 * (sleeping: held across the read of the user word, which may fault a
	 * page in). Nothing else is taken under it but the wait queue locks of
	 * waitq_wake_one() and the allocator (malloc/free).
	 */
	mutex_t mtx;
	list_t futexes;
} __attribute__((aligned(64))) futex_bucket_t;

/** The futex table; futex_table_init() (from task_init()) sets it up at boot. */
static futex_bucket_t futex_table[FUTEX_BUCKETS];

/* Scheduler hook: the kernel stack of an entry from ring 3 */

static void task_before_thread_runs(thread_t *t)
{
	if (t->kstack)
		userspace_set_kstack((uintptr_t) t->kstack + THREAD_STACK_SIZE);
	/*
	 * Direct kernel access to user pages (the override of the CPU's
	 * user-access guard, userspace_access_guard()) is not part
	 * of the switched context; give each thread its own: allowed only for
	 * kernel threads inside a user address space (they touch its pages
	 * directly), forbidden for everything else.
	 */
	userspace_set_direct_access(t->as && !t->subsys[THREAD_SUBSYS_TASK]);
}

static const sched_hooks_t task_hooks = {
	.before_thread_runs = task_before_thread_runs,
};

static void futex_table_init(void);

void task_init(void)
{
	futex_table_init();
	sched_hooks_register(&task_hooks);
	userspace_print_features();
}

/* Tasks */

task_t *task_create(const char *name)
{
	task_t *task = malloc(sizeof(task_t));
	if (!task)
		return NULL;
	memset(task, 0, sizeof(*task));
	task->as = as_create();
	if (!task->as) {
		free(task);
		return NULL;
	}
	task->id = __atomic_fetch_add(&next_task_id, 1, __ATOMIC_RELAXED);
	str_cpy(task->name, sizeof(task->name), name ? name : "?");
	irq_spinlock_initialize(&task->lock, "task");
	list_initialize(&task->uthreads);
	task->state = TASK_RUNNING;
	waitq_initialize(&task->wq);
	atomic_set(&task->refcount, 1);
	task->next_area = TASK_AREA_FIRST;
	irq_spinlock_lock(&tasks_lock, true);
	list_append(&task->tasks_link, &tasks_list);
	tasks_n++;
	irq_spinlock_unlock(&tasks_lock, true);
	return task;
}

void task_hold(task_t *task)
{
	atomic_inc(&task->refcount);
}

void task_release(task_t *task)
{
	/*
	 * The count drops under tasks_lock, which task_find() holds while it
	 * checks the count and takes a reference: it never revives a task
	 * whose last reference is gone.
	 */
	irq_spinlock_lock(&tasks_lock, true);
	if (atomic_predec(&task->refcount) > 0) {
		irq_spinlock_unlock(&tasks_lock, true);
		return;
	}
	list_remove(&task->tasks_link);
	tasks_n--;
	irq_spinlock_unlock(&tasks_lock, true);
	/* No thread is left: nothing else can reach these lists. */
	link_t *l;
	while ((l = list_first(&task->uthreads))) {
		list_remove(l);
		free(list_get_instance(l, uthread_t, link));
		as_uncharge(task->as, sizeof(uthread_t));
	}
	/* Futex objects live only while a thread waits in one (task.c top). */
	assert(__atomic_load_n(&task->nfutexes, __ATOMIC_RELAXED) == 0);
	as_release(task->as);
	free(task);
}

task_t *task_find(uint64_t id)
{
	task_t *found = NULL;
	irq_spinlock_lock(&tasks_lock, true);
	list_foreach(&tasks_list, l) {
		task_t *t = list_get_instance(l, task_t, tasks_link);
		/* Counts drop under tasks_lock: a listed task has references. */
		if (t->id == id) {
			task_hold(t);
			found = t;
			break;
		}
	}
	irq_spinlock_unlock(&tasks_lock, true);
	return found;
}

static bool task_killed(task_t *task)
{
	return __atomic_load_n(&task->killed, __ATOMIC_SEQ_CST);
}

void task_mark_killed(task_t *task, int status, const char *reason)
{
	irq_spinlock_lock(&task->lock, true);
	if (!task->status_set) {
		task->exit_status = status;
		task->status_set = true;
		__atomic_store_n(&task->kill_reason, reason, __ATOMIC_RELAXED);
	}
	irq_spinlock_unlock(&task->lock, true);
	__atomic_store_n(&task->killed, true, __ATOMIC_SEQ_CST);
}

void task_kill_wake(task_t *task)
{
	/*
	 * Every bucket, one at a time: a waiter of this task that counted
	 * itself under its bucket's mutex before this walk took that mutex is
	 * woken here; one that takes the mutex after it sees the killed flag
	 * (set before this call; futex_wait() checks it under the mutex).
	 */
	for (size_t i = 0; i < FUTEX_BUCKETS; i++) {
		futex_bucket_t *b = &futex_table[i];
		mutex_lock(&b->mtx);
		list_foreach(&b->futexes, l) {
			futex_t *f = list_get_instance(l, futex_t, link);
			if (f->task != task)
				continue;
			for (; f->waiters; f->waiters--)
				waitq_wake_one(&f->wq);
		}
		mutex_unlock(&b->mtx);
	}
	waitq_wake_all(&task->wq);
}

int task_wait(task_t *task)
{
	for (;;) {
		ipl_t ipl = waitq_sleep_prepare(&task->wq);
		if (__atomic_load_n(&task->state, __ATOMIC_SEQ_CST) == TASK_EXITED) {
			waitq_sleep_cancel(&task->wq, ipl);
			break;
		}
		(void) waitq_sleep_finish(&task->wq, ipl, SYNCH_NO_TIMEOUT,
		    SYNCH_FLAGS_NONE);
	}
	irq_spinlock_lock(&task->lock, true);
	int status = task->exit_status;
	irq_spinlock_unlock(&task->lock, true);
	return status;
}

/* Threads */

/** First code of a user thread (a kernel thread until it enters ring 3). */
static void uthread_main(void *arg)
{
	uthread_t *ut = arg;
	as_enter(ut->task->as);
	if (task_killed(ut->task))
		task_thread_exit(0);
	userspace_enter(ut->entry, ut->stack, ut->arg0, ut->arg1);
}

int task_thread_create(task_t *task, uintptr_t entry, uintptr_t stack,
    uint64_t arg0, uint64_t arg1, uint64_t *tid)
{
	/* The records and the kernel stack are the task's (its limit). */
	if (as_charge(task->as, UTHREAD_CHARGE) != EOK)
		return ELIMIT;
	uthread_t *ut = malloc(sizeof(uthread_t));
	if (!ut) {
		as_uncharge(task->as, UTHREAD_CHARGE);
		return ENOMEM;
	}
	memset(ut, 0, sizeof(*ut));
	ut->task = task;
	ut->entry = entry;
	ut->stack = stack;
	ut->arg0 = arg0;
	ut->arg1 = arg1;
	irq_spinlock_lock(&task->lock, true);
	int rc = EOK;
	if (task_killed(task) || task->state == TASK_EXITED)
		rc = EINTR;
	else if (task->nrecords >= TASK_THREADS_MAX)
		rc = ELIMIT;   /* live threads plus exited, unjoined ones */
	if (rc == EOK) {
		/* Counted before it exists: the task cannot end meanwhile. */
		task->nthreads++;
		task->nrecords++;
		task_hold(task);
	}
	irq_spinlock_unlock(&task->lock, true);
	if (rc != EOK) {
		free(ut);
		as_uncharge(task->as, UTHREAD_CHARGE);
		return rc;
	}

	char name[THREAD_NAME_MAX];
	snprintf(name, sizeof(name), "u%lu:%s", task->id, task->name);
	thread_t *t = thread_create(uthread_main, ut, name, THREAD_FLAG_USER);
	if (!t) {
		irq_spinlock_lock(&task->lock, true);
		task->nthreads--;
		task->nrecords--;
		irq_spinlock_unlock(&task->lock, true);
		free(ut);
		as_uncharge(task->as, UTHREAD_CHARGE);
		/* nthreads cannot reach 0 here: the caller is a live thread
		 * of the task, or the creator that starts the first thread. */
		task_release(task);
		return ENOMEM;
	}
	ut->thread = t;
	ut->tid = t->tid;
	t->subsys[THREAD_SUBSYS_TASK] = (uintptr_t) ut;
	irq_spinlock_lock(&task->lock, true);
	list_append(&ut->link, &task->uthreads);
	irq_spinlock_unlock(&task->lock, true);
	*tid = ut->tid;
	thread_start(t);
	thread_detach(t);
	return EOK;
}

void task_thread_exit(int status)
{
	uthread_t *ut = uthread_current();
	assert(ut);
	task_t *task = ut->task;
	thread_t *t = THREAD;

	as_leave();
	t->subsys[THREAD_SUBSYS_TASK] = 0;
	/*
	 * The thread's record and stack are freed once it has switched away
	 * for the last time; uncharged now (the task holds a reference, so
	 * its address space is there). The uthread_t stays charged until it
	 * is joined or the task ends.
	 */
	as_uncharge(task->as, UTHREAD_CHARGE - sizeof(uthread_t));

	irq_spinlock_lock(&task->lock, true);
	ut->status = status;
	__atomic_store_n(&ut->exited, true, __ATOMIC_SEQ_CST);
	/* ut may be freed by a joiner from here on. */
	bool last = --task->nthreads == 0;
	if (last) {
		if (!task->status_set) {
			task->exit_status = status;
			task->status_set = true;
		}
		__atomic_store_n(&task->state, TASK_EXITED, __ATOMIC_SEQ_CST);
	}
	int final_status = task->exit_status;
	irq_spinlock_unlock(&task->lock, true);

	if (last && task->background) {
		const char *reason = __atomic_load_n(&task->kill_reason,
		    __ATOMIC_RELAXED);
		if (reason)
			printf("task %lu (%s) killed (%s)\n", task->id, task->name,
			    reason);
		else
			printf("task %lu (%s) exited with status %d\n", task->id,
			    task->name, final_status);
	}
	waitq_wake_all(&task->wq);
	task_release(task);
	thread_exit();
}

int task_thread_join(uint64_t tid, int *status)
{
	uthread_t *self = uthread_current();
	task_t *task = self->task;
	uthread_t *ut = NULL;

	irq_spinlock_lock(&task->lock, true);
	list_foreach(&task->uthreads, l) {
		uthread_t *u = list_get_instance(l, uthread_t, link);
		if (u->tid == tid) {
			ut = u;
			break;
		}
	}
	int rc = EOK;
	if (!ut || ut == self)
		rc = ENOENT;
	else if (ut->joining)
		rc = EBUSY;
	else
		ut->joining = true;
	irq_spinlock_unlock(&task->lock, true);
	if (rc != EOK)
		return rc;

	for (;;) {
		ipl_t ipl = waitq_sleep_prepare(&task->wq);
		if (__atomic_load_n(&ut->exited, __ATOMIC_SEQ_CST)) {
			waitq_sleep_cancel(&task->wq, ipl);
			break;
		}
		if (task_killed(task)) {
			waitq_sleep_cancel(&task->wq, ipl);
			irq_spinlock_lock(&task->lock, true);
			ut->joining = false;
			irq_spinlock_unlock(&task->lock, true);
			return EINTR;
		}
		(void) waitq_sleep_finish(&task->wq, ipl, SYNCH_NO_TIMEOUT,
		    SYNCH_FLAGS_NONE);
	}
	irq_spinlock_lock(&task->lock, true);
	list_remove(&ut->link);
	task->nrecords--;
	*status = ut->status;
	irq_spinlock_unlock(&task->lock, true);
	free(ut);
	as_uncharge(task->as, sizeof(uthread_t));
	return EOK;
}

/* Faults and the way back to user mode */

static const char *const ufault_names[UFAULT_KINDS] = {
	[UFAULT_PAGE_NO_AREA] = "page fault: no area at that address",
	[UFAULT_PAGE_DENIED] = "page fault: access not permitted by the area",
	[UFAULT_PAGE_NOMEM] = "page fault: out of memory",
	[UFAULT_PAGE_LIMIT] = "page fault: memory limit of the task reached",
	[UFAULT_PAGE_SUPERVISOR] =
	    "page fault: supervisor-mode access from user mode refused",
	[UFAULT_INVALID_INSN] = "invalid instruction",
	[UFAULT_PROTECTION] = "protection fault",
	[UFAULT_DIVIDE] = "divide error",
	[UFAULT_BREAKPOINT] = "breakpoint",
	[UFAULT_DEBUG] = "debug trap",
	[UFAULT_ALIGNMENT] = "alignment fault",
	[UFAULT_ARITHMETIC] = "arithmetic trap",
	[UFAULT_NO_ABI] = "system call outside the ABI",
	[UFAULT_OTHER] = "unexpected exception",
};

const char *ufault_name(ufault_t kind)
{
	if ((unsigned) kind >= UFAULT_KINDS)
		kind = UFAULT_OTHER;
	return ufault_names[kind];
}

void task_user_fault(istate_t *istate, ufault_t kind, uintptr_t addr)
{
	const char *what = ufault_name(kind);
	uthread_t *ut = uthread_current();
	if (!ut)
		panic_istate(istate, "user-mode exception without a task: %s", what);
	task_t *task = ut->task;
	printf("task %lu (%s) thread %lu killed: %s, address %#lx, pc %#lx\n",
	    task->id, task->name, ut->tid, what, addr, istate_get_pc(istate));
	task_mark_killed(task, -1, what);
}

void task_user_return(void)
{
	uthread_t *ut = uthread_current();
	if (!ut || !task_killed(ut->task))
		return;
	interrupts_enable();
	task_kill_wake(ut->task);
	task_thread_exit(-1);
}

/* Futexes */

static void futex_table_init(void)
{
	for (size_t i = 0; i < FUTEX_BUCKETS; i++) {
		mutex_initialize_named(&futex_table[i].mtx, MUTEX_PASSIVE,
		    "futex.bucket");
		list_initialize(&futex_table[i].futexes);
	}
}

/** The bucket of (task, uaddr): Fibonacci hashing of the key's mix. */
static futex_bucket_t *futex_bucket(task_t *task, uintptr_t uaddr)
{
	uint64_t h = ((uint64_t) uaddr >> 2) ^ (task->id * 0xc2b2ae3d27d4eb4fULL);
	h *= 0x9e3779b97f4a7c15ULL;
	return &futex_table[h >> (64 - 8)];
}
_Static_assert(FUTEX_BUCKETS == 1 << 8, "futex_bucket() takes 8 bits");

static futex_t *futex_find_locked(futex_bucket_t *b, task_t *task,
    uintptr_t uaddr)
{
	assert(mutex_locked_by_me(&b->mtx));
	list_foreach(&b->futexes, l) {
		futex_t *f = list_get_instance(l, futex_t, link);
		if (f->uaddr == uaddr && f->task == task)
			return f;
	}
	return NULL;
}

static void futex_put_locked(futex_bucket_t *b, futex_t *f)
{
	assert(mutex_locked_by_me(&b->mtx));
	if (--f->refs == 0) {
		assert(f->waiters == 0);
		list_remove(&f->link);
		__atomic_fetch_sub(&f->task->nfutexes, 1, __ATOMIC_RELAXED);
		as_uncharge(f->task->as, sizeof(futex_t));
		free(f);
	}
}

static bool futex_addr_ok(uintptr_t uaddr)
{
	return IS_ALIGNED(uaddr, 4) && uaddr >= USER_AREA_START &&
	    uaddr < USER_AREA_END;
}

/**
 * Finds the futex of (@a task, @a uaddr) in bucket @a b, or creates it: the
 * object is the task's, counted against TASK_FUTEXES_MAX and charged to the
 * task's memory limit. The caller takes its reference.
 *
 * b->mtx held (a mutex: thread context).
 * @param out Set to the futex on success.
 * @return EOK; ELIMIT at the task's futex count or memory limit; ENOMEM
 *         when the kernel heap has no memory.
 */
static int futex_get_locked(futex_bucket_t *b, task_t *task, uintptr_t uaddr,
    futex_t **out)
{
	futex_t *f = futex_find_locked(b, task, uaddr);
	if (f) {
		*out = f;
		return EOK;
	}
	if (__atomic_fetch_add(&task->nfutexes, 1, __ATOMIC_RELAXED) >=
	    TASK_FUTEXES_MAX) {
		__atomic_fetch_sub(&task->nfutexes, 1, __ATOMIC_RELAXED);
		return ELIMIT;
	}
	/* The object is the task's: charged to its memory limit. */
	if (as_charge(task->as, sizeof(futex_t)) != EOK) {
		__atomic_fetch_sub(&task->nfutexes, 1, __ATOMIC_RELAXED);
		return ELIMIT;
	}
	f = malloc(sizeof(futex_t));
	if (!f) {
		as_uncharge(task->as, sizeof(futex_t));
		__atomic_fetch_sub(&task->nfutexes, 1, __ATOMIC_RELAXED);
		return ENOMEM;
	}
	f->task = task;
	f->uaddr = uaddr;
	waitq_initialize(&f->wq);
	f->waiters = 0;
	f->refs = 0;
	list_append(&f->link, &b->futexes);
	*out = f;
	return EOK;
}

/**
 * The sleep of a futex wait of @a timeout_ns nanoseconds (0: none), in
 * microseconds for waitq_sleep_timeout(): rounded up, bounded to a day so
 * that deadlines cannot overflow; SYNCH_NO_TIMEOUT for 0.
 */
static uint64_t futex_timeout_us(uint64_t timeout_ns)
{
	uint64_t usec = SYNCH_NO_TIMEOUT;
	if (timeout_ns) {
		usec = timeout_ns / 1000 + 1;
		/* Bounded so that deadlines cannot overflow: at most a day. */
		if (usec > 86400ULL * 1000000)
			usec = 86400ULL * 1000000;
	}
	return usec;
}

int futex_wait(const uint32_t __user *uword, uint32_t expected,
    uint64_t timeout_ns)
{
	uintptr_t uaddr = (uintptr_t) uword;  /* the key */
	task_t *task = uthread_current()->task;
	if (!futex_addr_ok(uaddr))
		return EINVAL;
	futex_bucket_t *b = futex_bucket(task, uaddr);
	mutex_lock(&b->mtx);
	if (task_killed(task)) {
		mutex_unlock(&b->mtx);
		return EINTR;
	}
	/*
	 * The value first: a wait that will not sleep creates no object and
	 * touches nothing but its bucket. A waker that changes the word and
	 * then wakes takes this mutex after us, so it sees our count below.
	 */
	uint32_t val;
	int rc = copy_from_user(&val, uword, sizeof(val));
	if (rc == EOK && val != expected)
		rc = EAGAIN;
	if (rc != EOK) {
		mutex_unlock(&b->mtx);
		return rc;
	}
	futex_t *f;
	rc = futex_get_locked(b, task, uaddr, &f);
	if (rc != EOK) {
		mutex_unlock(&b->mtx);
		return rc;
	}
	f->refs++;
	f->waiters++;
	mutex_unlock(&b->mtx);

	rc = waitq_sleep_timeout(&f->wq, futex_timeout_us(timeout_ns),
	    SYNCH_FLAGS_NONE);

	mutex_lock(&b->mtx);
	if (rc == ETIMEOUT) {
		if (f->waiters > 0) {
			f->waiters--;
		} else {
			/*
			 * A waker counted us as woken after our timeout had taken
			 * us off the queue: its waitq_wake_one() found no sleeper
			 * and was remembered. Take that wake-up (we are woken), or
			 * the next waiter would consume it without being counted
			 * and f->waiters would stay one too high. It is pending:
			 * under b->mtx, waiters == (sleepers + timed-out waiters
			 * not yet here) - remembered wake-ups, and we are one of the
			 * timed-out ones (see the file comment).
			 */
			int taken = waitq_sleep_timeout(&f->wq, SYNCH_NO_TIMEOUT,
			    SYNCH_FLAGS_NON_BLOCKING);
			assert(taken == EOK);
			(void) taken;
			rc = EOK;
		}
	}
	futex_put_locked(b, f);
	mutex_unlock(&b->mtx);
	if (task_killed(task))
		return EINTR;
	return rc;
}

int futex_wake(const uint32_t __user *uword, uint64_t count)
{
	uintptr_t uaddr = (uintptr_t) uword;  /* the key; never dereferenced */
	task_t *task = uthread_current()->task;
	if (!futex_addr_ok(uaddr) || count == 0)
		return EINVAL;
	int woken = 0;
	futex_bucket_t *b = futex_bucket(task, uaddr);
	mutex_lock(&b->mtx);
	futex_t *f = futex_find_locked(b, task, uaddr);
	while (f && f->waiters && count) {
		f->waiters--;
		count--;
		woken++;
		waitq_wake_one(&f->wq);
	}
	mutex_unlock(&b->mtx);
	return woken;
}

/* The task list */

void tasks_print(void)
{
	console_lock();
	irq_spinlock_lock(&tasks_lock, true);
	printf("  id  name                threads  state      pages    faults"
	    "  ptables  mem-KiB\n");
	list_foreach(&tasks_list, l) {
		task_t *t = list_get_instance(l, task_t, tasks_link);
		irq_spinlock_lock(&t->lock, false);
		size_t n = t->nthreads;
		const char *state = t->state == TASK_EXITED ? "exited" :
		    (__atomic_load_n(&t->killed, __ATOMIC_RELAXED) ? "killed" :
		    "running");
		irq_spinlock_unlock(&t->lock, false);
		as_stats_t st = as_stats(t->as);
		printf("%4lu  %-18s  %7zu  %-9s  %5lu  %8lu  %7lu  %7lu\n", t->id,
		    t->name, n, state, st.pages_mapped, st.faults,
		    __atomic_load_n(&t->as->pt_pages, __ATOMIC_RELAXED),
		    as_charged(t->as) / 1024);
	}
	printf("%zu tasks\n", tasks_n);
	printf("memory limit per task: %lu KiB (pages, page tables, thread "
	    "records and stacks, area records, futexes); kernel reserve: %zu "
	    "frames\n", as_mem_limit_default() / 1024, frame_reserve());
	irq_spinlock_unlock(&tasks_lock, true);
	console_unlock();
}
