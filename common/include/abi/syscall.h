/** @file abi/syscall.h
 * The system call table shared by the kernel and uspace/lib/c. Numbers are
 * stable: never renumber, only append.
 *
 * Calling convention: the architecture's system-call instruction with the
 * number and up to five arguments in the registers its istate_syscall_nr()
 * and istate_syscall_arg() read, the result in the register
 * istate_set_retval() writes (amd64: kernel/arch/amd64/include/arch/interrupt.h).
 * A result >= 0 is success; a negative result is an error code of errno.h
 * (EINVAL, EFAULT, ...). Every argument is validated: junk gets an error,
 * never a kernel panic. User pointers must lie below USER_AREA_END (one
 * page below the top of the user half).
 *
 * | nr | name               | arguments                         | result |
 * |----|--------------------|-----------------------------------|--------|
 * |  0 | SYS_EXIT           | int status                        | does not return: ends every thread of the task |
 * |  1 | SYS_CONSOLE_WRITE  | const char *buf, size_t len (<= 64 KiB) | bytes written |
 * |  2 | SYS_AREA_CREATE    | uintptr_t base (0: anywhere), size_t size, unsigned flags (AREA_*; READ required) | the base |
 * |  3 | SYS_AREA_DESTROY   | uintptr_t base                    | 0 |
 * |  4 | SYS_AREA_RESIZE    | uintptr_t base, size_t size       | 0 |
 * |  5 | SYS_THREAD_CREATE  | entry, stack top (16-byte aligned), uint64_t arg (in the first argument register) | thread id |
 * |  6 | SYS_THREAD_EXIT    | int status                        | does not return; the last thread's status is the task's unless SYS_EXIT set one |
 * |  7 | SYS_THREAD_JOIN    | uint64_t tid, int *status (may be NULL) | 0 |
 * |  8 | SYS_FUTEX_WAIT     | const uint32_t *addr (4-aligned), uint32_t expected, uint64_t timeout_ns (0: none) | 0 woken (or spuriously), EAGAIN value differs, ETIMEOUT, EINTR task killed |
 * |  9 | SYS_FUTEX_WAKE     | const uint32_t *addr, uint64_t count (>= 1) | threads woken |
 * | 10 | SYS_YIELD          | -                                 | 0 |
 * | 11 | SYS_CPU_COUNT      | -                                 | CPUs online |
 * | 12 | SYS_CPU_CURRENT    | -                                 | id of the CPU running the caller |
 * | 13 | SYS_THREAD_WIRE    | unsigned cpu                      | 0: the caller now runs on that CPU only |
 * | 14 | SYS_CLOCK_NS       | -                                 | monotonic time since boot in ns (the calibrated cycle counter: ns resolution) |
 * | 15 | SYS_MEMBARRIER     | unsigned flags (must be 0)        | 0: every CPU running the task executed a full barrier |
 * | 16 | SYS_TASK_ID        | -                                 | the task id |
 */
#ifndef ABI_SYSCALL_H_
#define ABI_SYSCALL_H_

#define SYS_EXIT           0
#define SYS_CONSOLE_WRITE  1
#define SYS_AREA_CREATE    2
#define SYS_AREA_DESTROY   3
#define SYS_AREA_RESIZE    4
#define SYS_THREAD_CREATE  5
#define SYS_THREAD_EXIT    6
#define SYS_THREAD_JOIN    7
#define SYS_FUTEX_WAIT     8
#define SYS_FUTEX_WAKE     9
#define SYS_YIELD          10
#define SYS_CPU_COUNT      11
#define SYS_CPU_CURRENT    12
#define SYS_THREAD_WIRE    13
#define SYS_CLOCK_NS       14
#define SYS_MEMBARRIER     15
#define SYS_TASK_ID        16
#define SYS_COUNT          17

/** Area flags of SYS_AREA_CREATE (the same values as AS_AREA_*). */
#define AREA_READ   (1 << 0)
#define AREA_WRITE  (1 << 1)
#define AREA_EXEC   (1 << 2)

/** Largest SYS_CONSOLE_WRITE. */
#define CONSOLE_WRITE_MAX 65536
/**
 * Largest area (SYS_AREA_CREATE, SYS_AREA_RESIZE) and largest program
 * segment (the ELF loader refuses a PT_LOAD whose memory size exceeds it:
 * ELIMIT, with a message).
 */
#define AREA_SIZE_MAX (1UL << 30)
/**
 * Most thread records a task may hold: threads alive plus threads that
 * exited and were not joined yet (SYS_THREAD_JOIN frees a record).
 * SYS_THREAD_CREATE returns ELIMIT beyond it.
 */
#define TASK_THREADS_MAX 64
/** Most areas per task (loader segments and stack included); ELIMIT beyond. */
#define TASK_AREAS_MAX 16384
/** Most bytes of all of a task's areas together (1 TiB); ELIMIT beyond. */
#define TASK_AREA_BYTES_MAX (1UL << 40)
/**
 * Most futex objects per task. The kernel holds one only while a thread
 * waits in SYS_FUTEX_WAIT on it (freed when the last waiter leaves), so
 * there are never more than the task's live threads; SYS_FUTEX_WAIT returns
 * ELIMIT beyond it all the same.
 */
#define TASK_FUTEXES_MAX TASK_THREADS_MAX
/** User areas lie in [USER_AREA_START, USER_AREA_END). */
#define USER_AREA_START 0x0000000000010000UL
#define USER_AREA_END   0x00007ffffffff000UL
/**
 * Every user thread's stack is an area of USER_STACK_SIZE bytes aligned to
 * USER_STACK_SIZE: the main thread's is made by the loader just below
 * USER_STACK_TOP, the others by uspace/lib/c. So the stack pointer rounded down to
 * USER_STACK_SIZE is the base of the running thread's stack, where lib/c
 * keeps the thread's control block (its thread pointer: user threads have
 * no TLS register).
 */
#define USER_STACK_SIZE (256UL * 1024)
#define USER_STACK_TOP  0x00007fff00000000UL

#endif
