/** @file dfstack1.c
 * Deliberate double fault (unsafe: never run by `test *`). With the user GS
 * base loaded (swapgs, as in the few instructions of the system-call entry
 * and exit), the stack pointer is moved to an unmapped page and a push
 * faults: the #PF cannot be delivered (its frame would go to the same
 * unmapped stack), so the CPU raises #DF, which runs on its own IST stack
 * (TSS IST1) and must find the kernel GS base by the GS base MSR, not by the
 * saved CS. Expected: `PANIC on CPU N: Exception #8 (#DF Double fault)` and
 * the halt, never a silent triple fault. tests/test_security.py runs it.
 */
#include <test.h>

const char *test_dfstack1(void)
{
#ifndef __x86_64__
	return "a double-fault test of amd64 (no counterpart on this architecture)";
#else
	/*
	 * Interrupts off: a timer interrupt on the bad stack would be the one
	 * to double-fault. The asm never falls through (the push faults);
	 * rsp is deliberately not declared (the function does not return).
	 */
	asm volatile (
	    "cli\n"
	    "swapgs\n"
	    "movq $0x1000, %%rsp\n"
	    "pushq $0\n"
	    ::: "memory");
	return "the push on an unmapped stack did not fault";
#endif
}
