/*
 * arm64 entry points: _start (main thread: x0 = argc, x1 = argv, sp 16-byte
 * aligned) and __thread_start (x0 = the uthread_t); both call C with a zero
 * frame pointer (the end of backtraces) and trap if C returns.
 */
	.text
	.global _start
_start:
	mov x29, #0
	mov x30, #0
	bl __libc_start
	brk #0

	.global __thread_start
__thread_start:
	mov x29, #0
	mov x30, #0
	bl __thread_main
	brk #0

/*
 * Raw thread entries for programs that test the kernel's thread limits and
 * system calls (sys.h): they touch no stack, so any number of them may share
 * one (or run on a junk one).
 *   sys_thread_exit_stub: SYS_THREAD_EXIT(arg).
 *   sys_thread_flag_exit_stub: *(uint32_t *) arg = 1, SYS_THREAD_EXIT(0).
 */
#include <abi/syscall.h>
	.global sys_thread_exit_stub
sys_thread_exit_stub:
	mov x8, #SYS_THREAD_EXIT
	svc #0
	brk #0

	.global sys_thread_flag_exit_stub
sys_thread_flag_exit_stub:
	mov w1, #1
	str w1, [x0]
	mov x8, #SYS_THREAD_EXIT
	mov x0, #0
	svc #0
	brk #0
