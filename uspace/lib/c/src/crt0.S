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
