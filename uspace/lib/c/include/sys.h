/** @file sys.h
 * System call wrappers of the OS's user programs (numbers: abi/syscall.h).
 * Each returns the kernel's result: >= 0 on success, a negative errno.h code
 * on failure.
 */
#ifndef LIBC_SYS_H_
#define LIBC_SYS_H_

#include <stdint.h>
#include <stddef.h>
#include <abi/syscall.h>
#include <errno.h>

#ifdef __aarch64__
/* arm64: `svc #0`, number in x8, arguments x0-x4, result in x0. */
static inline long __syscall5(long n, long a1, long a2, long a3, long a4,
    long a5)
{
	register long x8 __asm__("x8") = n;
	register long x0 __asm__("x0") = a1;
	register long x1 __asm__("x1") = a2;
	register long x2 __asm__("x2") = a3;
	register long x3 __asm__("x3") = a4;
	register long x4 __asm__("x4") = a5;
	__asm__ volatile ("svc #0" : "+r" (x0) : "r" (x8), "r" (x1), "r" (x2),
	    "r" (x3), "r" (x4) : "memory");
	return x0;
}
#else
static inline long __syscall5(long n, long a1, long a2, long a3, long a4,
    long a5)
{
	long ret;
	register long r10 __asm__("r10") = a4;
	register long r8 __asm__("r8") = a5;
	__asm__ volatile ("syscall" : "=a" (ret) : "a" (n), "D" (a1), "S" (a2),
	    "d" (a3), "r" (r10), "r" (r8) : "rcx", "r11", "memory");
	return ret;
}
#endif

#ifdef __aarch64__
/** A spin-wait hint for busy loops (`yield`). */
static inline void cpu_relax(void)
{
	__asm__ volatile ("yield" ::: "memory");
}

/** An address inside the kernel image (the direct map at its load address). */
#define KERNEL_IMAGE_ADDR 0xffff800040200000UL
#else
/** A spin-wait hint for busy loops (`pause`). */
static inline void cpu_relax(void)
{
	__asm__ volatile ("pause" ::: "memory");
}

/** An address inside the kernel image (-2 GiB + 1 MiB). */
#define KERNEL_IMAGE_ADDR 0xffffffff80100000UL
#endif

/*
 * Raw thread entries (lib/c's crt0) for sys_thread_create(): they touch no
 * stack, so any number of threads may share one (or start on a junk one).
 */
/** SYS_THREAD_EXIT(arg). */
void sys_thread_exit_stub(void);
/** Stores 1 to the uint32_t that arg points to, then SYS_THREAD_EXIT(0). */
void sys_thread_flag_exit_stub(void);

#define __syscall0(n) __syscall5((n), 0, 0, 0, 0, 0)
#define __syscall1(n, a) __syscall5((n), (long) (a), 0, 0, 0, 0)
#define __syscall2(n, a, b) __syscall5((n), (long) (a), (long) (b), 0, 0, 0)
#define __syscall3(n, a, b, c) \
	__syscall5((n), (long) (a), (long) (b), (long) (c), 0, 0)

__attribute__((noreturn)) void sys_exit(int status);
__attribute__((noreturn)) void sys_thread_exit(int status);

static inline long sys_console_write(const void *buf, size_t len)
{
	return __syscall2(SYS_CONSOLE_WRITE, buf, len);
}

static inline long sys_area_create(uintptr_t base, size_t size, unsigned flags)
{
	return __syscall3(SYS_AREA_CREATE, base, size, flags);
}

static inline long sys_area_destroy(uintptr_t base)
{
	return __syscall1(SYS_AREA_DESTROY, base);
}

static inline long sys_area_resize(uintptr_t base, size_t size)
{
	return __syscall2(SYS_AREA_RESIZE, base, size);
}

static inline long sys_thread_create(void *entry, void *stack_top, void *arg)
{
	return __syscall3(SYS_THREAD_CREATE, entry, stack_top, arg);
}

static inline long sys_thread_join(long tid, int *status)
{
	return __syscall2(SYS_THREAD_JOIN, tid, status);
}

static inline long sys_futex_wait(const uint32_t *addr, uint32_t expected,
    uint64_t timeout_ns)
{
	return __syscall3(SYS_FUTEX_WAIT, addr, expected, timeout_ns);
}

static inline long sys_futex_wake(const uint32_t *addr, uint64_t count)
{
	return __syscall2(SYS_FUTEX_WAKE, addr, count);
}

static inline long sys_yield(void)
{
	return __syscall0(SYS_YIELD);
}

static inline long sys_cpu_count(void)
{
	return __syscall0(SYS_CPU_COUNT);
}

static inline long sys_cpu_current(void)
{
	return __syscall0(SYS_CPU_CURRENT);
}

static inline long sys_thread_wire(unsigned cpu)
{
	return __syscall1(SYS_THREAD_WIRE, cpu);
}

static inline long sys_clock_ns(void)
{
	return __syscall0(SYS_CLOCK_NS);
}

static inline long sys_membarrier(unsigned flags)
{
	return __syscall1(SYS_MEMBARRIER, flags);
}

static inline long sys_task_id(void)
{
	return __syscall0(SYS_TASK_ID);
}

#endif
