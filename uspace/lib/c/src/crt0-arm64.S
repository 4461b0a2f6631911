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
