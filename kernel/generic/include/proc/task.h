/** @file task.h
 * User tasks: an address space, its user threads, a name, an id and an exit
 * status (HelenOS shape).
 *
 * A task lives while someone holds a reference: its creator (the `run`
 * command until it reported the exit; nobody for `run -b`) and each live user
 * thread. The last reference destroys the address space (every frame, page
 * hash record and page table of the task), the futexes and the thread
 * records. A user thread is a detached kernel thread whose
 * subsys[THREAD_SUBSYS_TASK] points at its uthread_t; it leaves the kernel
 * for ring 3 and comes back on system calls, interrupts and faults.
 *
 * Killing (a fault in user mode, SYS_EXIT, the `kill` command) sets the
 * task's killed flag and wakes its sleepers; each thread exits the next time
 * it would return to user mode (at the latest at the next timer tick).
 */
#ifndef KERN_TASK_H_
#define KERN_TASK_H_

#include <typedefs.h>
#include <atomic.h>
#include <adt/list.h>
#include <synch/spinlock.h>
#include <synch/waitq.h>
#include <synch/mutex.h>
#include <proc/thread.h>
#include <arch/interrupt.h>

#define TASK_NAME_MAX 32

struct as;
struct task;

/** Task life cycle. */
typedef enum {
	TASK_RUNNING,   /**< At least one thread alive. */
	TASK_EXITED,    /**< The last thread exited. */
} task_state_t;

/** A user thread of a task. */
typedef struct uthread {
	struct task *task;
	/** Kernel thread; valid until the thread exited (it is detached). */
	thread_t *thread;
	/** The kernel thread's id (SYS_THREAD_JOIN names threads by it). */
	uint64_t tid;
	/** Link in task->uthreads; protected by task->lock. */
	link_t link;
	/** Exited, status valid. Written under task->lock; read with atomics. */
	bool exited;
	int status;
	/** A joiner claimed this thread; protected by task->lock. */
	bool joining;
	/**
	 * A fault of this thread met the task's memory limit (as_page_fault()
	 * returned ELIMIT) since its system call began: the call's EFAULT
	 * (a uaccess fix-up) becomes ELIMIT. Written and read by the thread
	 * itself only.
	 */
	bool mem_limited;
	/** Where the thread enters user mode; set once before it starts. */
	uintptr_t entry, stack;
	uint64_t arg0, arg1;
} uthread_t;

typedef struct task {
	/** Unique id; set once. */
	uint64_t id;
	char name[TASK_NAME_MAX];
	/** Address space; set once, released with the task. */
	struct as *as;
	/**
	 * Protects uthreads, nthreads, nrecords, state, exit_status,
	 * status_set.
	 */
	irq_spinlock_t lock;
	list_t uthreads;
	size_t nthreads;      /**< user threads alive */
	/**
	 * Records in uthreads: threads alive plus exited ones not joined yet
	 * (SYS_THREAD_JOIN frees one); at most TASK_THREADS_MAX.
	 */
	size_t nrecords;
	task_state_t state;
	int exit_status;
	bool status_set;
	/** Killed: threads exit instead of returning to user mode. Atomics. */
	bool killed;
	/** Why the task was killed (static string) or NULL; atomics. */
	const char *kill_reason;
	/** Started by `run -b`: the last thread prints the exit line. Set once. */
	bool background;
	/** Woken (wake_all) when a thread exits and when the task is killed. */
	waitq_t wq;
	/** References (creator, each live thread, task_find() users). Atomic
	 * increments; the decrement happens under tasks_lock (task.c). */
	atomic_t refcount;
	/** Link in the task list; protected by tasks_lock. */
	link_t tasks_link;
	/**
	 * futex_t objects of this task in the futex table (task.c); at most
	 * TASK_FUTEXES_MAX. Atomics (relaxed): changed only when a futex object
	 * is created or freed (a wait that sleeps), never on the paths that
	 * find no waiter or a value that does not match.
	 */
	size_t nfutexes;
	/** Next candidate base of SYS_AREA_CREATE(0, ...); atomics. */
	uintptr_t next_area;
} task_t;

/** Sets up tasks (BSP, boot): scheduler hook for the kernel stack of ring 3. */
void task_init(void);

/**
 * Creates a task with an empty address space and no thread; the caller holds
 * the one reference. @return the task or NULL (ENOMEM). Thread context.
 */
task_t *task_create(const char *name);

/** Adds a reference. Any context. */
void task_hold(task_t *task);
/**
 * Drops a reference; the last destroys the task (see the file comment).
 * Thread context, may sleep.
 */
void task_release(task_t *task);

/**
 * Creates a user thread of @a task entering user mode at @a entry with stack
 * @a stack, @a arg0 and @a arg1 in its first two argument registers, and
 * starts it.
 * @return EOK (*tid set), ENOMEM, ELIMIT (TASK_THREADS_MAX records: live
 * threads plus exited threads not joined yet), EINTR (killed).
 * Thread context.
 */
int task_thread_create(task_t *task, uintptr_t entry, uintptr_t stack,
    uint64_t arg0, uint64_t arg1, uint64_t *tid);

/**
 * Waits until the user thread @a tid of the current task exits, frees its
 * record and stores its status. @return EOK, ENOENT (no such thread, or
 * the caller), EBUSY (another joiner), EINTR (the task was killed).
 * Thread context of a user thread; may sleep.
 */
int task_thread_join(uint64_t tid, int *status);

/**
 * Ends the calling user thread with @a status (the task's status if it is
 * the last thread and no status was set). Never returns. Thread context,
 * interrupts enabled.
 */
NO_RETURN void task_thread_exit(int status);

/**
 * Marks @a task killed with @a status (kept if a status was set already) and
 * @a reason (NULL: a normal SYS_EXIT). Any context (no sleeping); the
 * sleepers are woken by task_kill_wake().
 */
void task_mark_killed(task_t *task, int status, const char *reason);
/**
 * Wakes every sleeper of a killed task (futexes, joins): walks the futex
 * table's buckets one at a time under each bucket's mutex. Thread context,
 * may sleep; call after task_mark_killed().
 */
void task_kill_wake(task_t *task);

/**
 * Waits until every thread of @a task exited. @return its exit status.
 * Thread context; may sleep.
 */
int task_wait(task_t *task);

/** Finds a task by id and takes a reference. @return it or NULL. */
task_t *task_find(uint64_t id);

/** The current thread's user thread record, or NULL for kernel threads. */
static inline uthread_t *uthread_current(void)
{
	thread_t *t = THREAD;
	return t ? (uthread_t *) t->subsys[THREAD_SUBSYS_TASK] : NULL;
}

/**
 * Classes of user-mode faults. The arch layer decodes its exception (vector
 * and error code, ESR_EL1's class and syndrome) into one of these, the
 * faulting address and the instruction's address; the report line and its
 * wording are generic (task_user_fault()), so the same fault prints the
 * same line on every architecture, addresses aside.
 */
typedef enum {
	/** Page fault / abort: no area covers the address (or a kernel one). */
	UFAULT_PAGE_NO_AREA,
	/** Page fault: the area does not permit the access (write, execute). */
	UFAULT_PAGE_DENIED,
	/** Page fault: no frame for the page. */
	UFAULT_PAGE_NOMEM,
	/** Page fault: the page would take the task past its memory limit. */
	UFAULT_PAGE_LIMIT,
	/** Page fault of an implicit supervisor access that the arch's user-page
	 * protection refused (a descriptor-table or stack access during entry). */
	UFAULT_PAGE_SUPERVISOR,
	/** No such instruction at this privilege (amd64 #UD, arm64 EC 0). */
	UFAULT_INVALID_INSN,
	/** A privileged operation trapped (amd64 #GP, arm64 EC 0x18, WFI). */
	UFAULT_PROTECTION,
	/** Integer division by zero (amd64 #DE, arm64 `brk #0x5503`). */
	UFAULT_DIVIDE,
	/** A breakpoint instruction (amd64 int3, arm64 `brk`). */
	UFAULT_BREAKPOINT,
	/** A debug trap (single step, hardware breakpoint). */
	UFAULT_DEBUG,
	/** Misaligned access, stack pointer or program counter. */
	UFAULT_ALIGNMENT,
	/** A floating-point or overflow trap. */
	UFAULT_ARITHMETIC,
	/** A system call through an entry the ABI does not have. */
	UFAULT_NO_ABI,
	/** Any other exception. */
	UFAULT_OTHER,
	UFAULT_KINDS
} ufault_t;

/** The report wording of @a kind (static string). */
const char *ufault_name(ufault_t kind);

/**
 * Called for an exception in user mode that cannot be resolved: prints the
 * one-line report
 *   task ID (NAME) thread TID killed: KIND, address ADDR, pc PC
 * (@a addr: the faulting data or instruction address for page, alignment
 * and protection faults when the hardware gives it, else the instruction's
 * address) and kills the task with KIND as the reason.
 * Interrupts disabled (exception handler). The thread exits on its way back
 * to user mode (task_user_return()).
 */
void task_user_fault(istate_t *istate, ufault_t kind, uintptr_t addr);

/**
 * Called on every return to user mode (interrupt or system call) with
 * interrupts disabled: a thread of a killed task exits here.
 */
void task_user_return(void);

/** Prints the task list (`tasks`). */
void tasks_print(void);

/**
 * Futex wait on the user word @a uaddr of the current task (see
 * abi/syscall.h, SYS_FUTEX_WAIT). @return EOK, EAGAIN, ETIMEOUT, EINTR,
 * EINVAL, EFAULT, ENOMEM, ELIMIT (TASK_FUTEXES_MAX futex objects: not
 * reachable while objects are bounded by live threads, see task.c).
 * Thread context, may sleep.
 */
int futex_wait(const uint32_t __user *uaddr, uint32_t expected,
    uint64_t timeout_ns);
/**
 * Wakes up to @a count waiters on the user word @a uaddr of the current task
 * (SYS_FUTEX_WAKE). @return the number woken, or EINVAL (a misaligned or
 * non-user address, @a count 0). Thread context, may sleep (the futex
 * table's bucket mutex); never touches user memory.
 */
int futex_wake(const uint32_t __user *uaddr, uint64_t count);

#endif
