/** @file fault.c
 * Faults on purpose; the kernel must kill only this task with a report.
 *
 *   fault [null]   write to address 0
 *   fault jump     jump to an unmapped address
 *   fault ud       an invalid opcode (#UD)
 *   fault div      divide by zero (#DE)
 *   fault kernel   read a kernel address
 *   fault ro       write to the program's own text (read-only)
 *   fault nx       execute the stack (no-execute)
 *   fault gp       a privileged instruction (#GP)
 *
 * On arm64: ud is `udf #0`, gp masks IRQs from EL0 (`msr daifset`, trapped
 * there: SCTLR_EL1.UMA is 0), kernel reads the kernel's direct map. AArch64's
 * UDIV/SDIV do not trap on a zero divisor (the result is 0), so div divides
 * the way a compiler's checked division does (Clang's
 * -fsanitize=integer-divide-by-zero -fsanitize-trap): a zero divisor
 * branches to `brk #0x5503`, which the kernel reports as a divide error,
 * the class of amd64's #DE. `fault udiv0` (arm64 only) executes the bare
 * UDIV by zero instead: it does not trap, prints the result (0) and exits 0.
 *
 * Every variant prints the same lines on both architectures (the report
 * names the fault's class, task_user_fault()), addresses aside.
 */
#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <sys.h>

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "null";
	printf("fault: %s\n", what);
	if (strcmp(what, "null") == 0) {
		*(volatile int *) 0 = 1;
	} else if (strcmp(what, "jump") == 0) {
		void (*f)(void) = (void (*)(void)) 0x123456789000UL;
		f();
	} else if (strcmp(what, "ud") == 0) {
#ifdef __aarch64__
		__asm__ volatile ("udf #0");
#else
		__asm__ volatile ("ud2");
#endif
	} else if (strcmp(what, "div") == 0) {
#ifdef __aarch64__
		/* The divisor's check, as -fsanitize=integer-divide-by-zero. */
		__asm__ volatile ("mov x1, #0; mov x0, #1; cbnz x1, 1f; "
		    "brk #0x5503; 1: udiv x0, x0, x1" ::: "x0", "x1");
#else
		__asm__ volatile ("xorl %%ecx, %%ecx; movl $1, %%eax; "
		    "xorl %%edx, %%edx; divl %%ecx" ::: "eax", "ecx", "edx");
#endif
#ifdef __aarch64__
	} else if (strcmp(what, "udiv0") == 0) {
		uint64_t q;
		__asm__ volatile ("mov x1, #0; mov x0, #1; udiv %0, x0, x1"
		    : "=r" (q) :: "x0", "x1");
		printf("fault: udiv 1 / 0 = %lu (no trap on AArch64)\n",
		    (unsigned long) q);
		return 0;
#endif
	} else if (strcmp(what, "kernel") == 0) {
		(void) *(volatile uint64_t *) KERNEL_IMAGE_ADDR;
	} else if (strcmp(what, "ro") == 0) {
		*(volatile uint8_t *) (uintptr_t) main = 0xc3;
	} else if (strcmp(what, "nx") == 0) {
		volatile uint8_t code[16] = { 0xc3 };
		((void (*)(void)) (uintptr_t) code)();
	} else if (strcmp(what, "gp") == 0) {
#ifdef __aarch64__
		__asm__ volatile ("msr daifset, #2");
#else
		__asm__ volatile ("cli");
#endif
	} else {
		printf("fault: unknown variant %s\n", what);
		return 2;
	}
	printf("fault: survived %s\n", what);
	return 1;
}
