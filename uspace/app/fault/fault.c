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
 * On arm64: ud is `udf #0`, gp masks IRQs from EL0 (`msr daifset`, undefined
 * there), kernel reads the kernel's direct map; div cannot fault (AArch64's
 * integer division by zero gives 0), so it survives there.
 */
#include <stdio.h>
#include <string.h>
#include <stdint.h>

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
		__asm__ volatile ("mov x1, #0; mov x0, #1; udiv x0, x0, x1"
		    ::: "x0", "x1");
#else
		__asm__ volatile ("xorl %%ecx, %%ecx; movl $1, %%eax; "
		    "xorl %%edx, %%edx; divl %%ecx" ::: "eax", "ecx", "edx");
#endif
	} else if (strcmp(what, "kernel") == 0) {
#ifdef __aarch64__
		(void) *(volatile uint64_t *) 0xffff800040200000UL;
#else
		(void) *(volatile uint64_t *) 0xffffffff80100000UL;
#endif
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
