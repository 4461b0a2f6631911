/*
 * Entry points: _start (main thread: rdi = argc, rsi = argv, rsp 16-byte
 * aligned) and __thread_start (rdi = the uthread_t); both call C with the
 * ABI's alignment and end the thread if C returns.
 */
	.text
	.global _start
_start:
	xorl %ebp, %ebp
	call __libc_start
	ud2

	.global __thread_start
__thread_start:
	xorl %ebp, %ebp
	call __thread_main
	ud2

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
	movl $SYS_THREAD_EXIT, %eax
	syscall
	ud2

	.global sys_thread_flag_exit_stub
sys_thread_flag_exit_stub:
	movl $1, (%rdi)
	movl $SYS_THREAD_EXIT, %eax
	xorl %edi, %edi
	syscall
	ud2
