/** @file crt.h
 * The C side of the entry points in crt0.S / crt0-arm64.S (private to
 * uspace/lib/c): what the assembly calls, and the program's main() that
 * __libc_start calls.
 */
#ifndef LIBC_CRT_H_
#define LIBC_CRT_H_

#include <thread.h>

/** The program's entry, defined by every program. */
int main(int argc, char **argv);

/**
 * Called by _start with the arguments the kernel put on the initial stack:
 * runs main() and exits with its status. Never returns.
 */
void __libc_start(int argc, char **argv);

/**
 * Entry of a new thread (crt0.S): its address goes to SYS_THREAD_CREATE;
 * calls __thread_main() with the thread's record. Never called from C.
 */
void __thread_start(void);

/**
 * Runs the thread @a t's function and the destructors of its keys, then
 * exits the thread with the function's result (called by __thread_start).
 * Never returns.
 */
void __thread_main(uthread_t *t);

#endif
