/** @file attack.c
 * Raw instruction-level attacks on the kernel's entry paths. Each
 * variant prints what it is about to do, then does it; the kernel must kill
 * only this task with a report (or, where the instruction is legitimate, let
 * it continue) and stay up:
 *
 *   attack compat-syscall   far return (lretq) to the 32-bit user code
 *                           selector 0x1b, then `syscall` in compat mode
 *   attack compat-sysenter  the same, then `sysenter` in compat mode
 *   attack ljmp32           far jump (ljmp m16:32) to 0x1b, then `syscall`
 *   attack lret32           far return to 0x1b, then `ud2` (compat mode only)
 *   attack sysenter         `sysenter` in 64-bit mode
 *   attack lretq-fault      lretq whose stack pop faults (rsp = 0x1000, no
 *                           area there)
 *   attack lretq-ok         a legitimate lretq to 0x2b on the normal stack
 *   attack lretq SEL        far return to selector SEL (0..0xffff)
 *   attack ljmp SEL         far jump to selector SEL
 *   attack iretq SEL        iretq to selector SEL (SS 0x23, same rsp)
 *   attack int N            `int $N` (0..255)
 *   attack int3 | icebp | into   the one-byte forms 0xcc, 0xf1, 0xce
 *   attack tf               popf setting RFLAGS.TF, then `syscall`
 *   attack tf-sysenter      popf setting RFLAGS.TF, then `sysenter`
 *   attack nt               popf setting RFLAGS.NT (nested task: an iretq
 *                           with NT set is a #GP in long mode), then system
 *                           calls and a spin through timer interrupts; a
 *                           legitimate program: it must exit 0
 *
 * Prints `attack: survived VARIANT` and exits 1 if the instruction did not
 * kill the task where it should have; `attack: returned through SEL` and
 * exits 0 after a legitimate far transfer (lretq-ok, or a selector that is
 * the 64-bit user code segment).
 *
 * amd64 only; the arm64 build of `attack` is attack_arm64.c.
 */
#ifdef __x86_64__

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys.h>

/*
 * 32-bit code reached by the compat-mode variants. It lives in .text (below
 * 4 GiB: the program is linked at 0x400000), so a 32-bit EIP can name it.
 */
__asm__(
    "	.text\n"
    "	.code32\n"
    "	.global attack_c32_syscall, attack_c32_sysenter, attack_c32_ud\n"
    "attack_c32_syscall:\n"
    "	syscall\n"
    "	ud2\n"
    "attack_c32_sysenter:\n"
    "	sysenter\n"
    "	ud2\n"
    "attack_c32_ud:\n"
    "	ud2\n"
    "	.code64\n");
extern char attack_c32_syscall[], attack_c32_sysenter[], attack_c32_ud[];

/* 256 stubs `int $N; ret`, 4 bytes apart: attack_int_table + 4 * N. */
__asm__(
    "	.text\n"
    "	.align 4\n"
    "	.global attack_int_table\n"
    "attack_int_table:\n"
    "	.set attack_n, 0\n"
    "	.rept 256\n"
    "	.byte 0xcd, attack_n, 0xc3, 0x90\n"
    "	.set attack_n, attack_n + 1\n"
    "	.endr\n");
extern char attack_int_table[];

/** Far return (lretq) to @a sel:@a rip on the current stack. */
static void far_return(uint64_t sel, const void *rip)
{
	__asm__ volatile (
	    "pushq %0\n"
	    "pushq %1\n"
	    "lretq\n"
	    :: "r" (sel), "r" ((uint64_t) (uintptr_t) rip) : "memory");
}

/**
 * Far return to 0x2b (the 64-bit user code) at a label right after the
 * lretq, or to @a sel; returns when the far transfer came back.
 */
static void lretq_to(uint64_t sel)
{
	__asm__ volatile (
	    "leaq 1f(%%rip), %%rax\n"
	    "pushq %0\n"
	    "pushq %%rax\n"
	    "lretq\n"
	    "1:\n"
	    :: "r" (sel) : "rax", "memory");
}

/** Far jump through a m16:32 pointer to @a sel:label (32-bit offset). */
static void ljmp_to(uint64_t sel, const void *target)
{
	struct __attribute__((packed)) {
		uint32_t off;
		uint16_t sel;
	} ptr;
	ptr.off = (uint32_t) (uintptr_t) target;
	ptr.sel = (uint16_t) sel;
	__asm__ volatile ("ljmpl *%0" :: "m" (ptr) : "memory");
}

/** Far jump to @a sel at the label right after it (returns if it worked). */
static void ljmp_back(uint64_t sel)
{
	struct __attribute__((packed)) {
		uint32_t off;
		uint16_t sel;
	} ptr;
	ptr.sel = (uint16_t) sel;
	__asm__ volatile (
	    "leaq 1f(%%rip), %%rax\n"
	    "movl %%eax, %0\n"
	    "ljmpl *%0\n"
	    "1:\n"
	    : "+m" (ptr) :: "rax", "memory");
}

/** iretq to @a sel at a label right after it, SS 0x23, the same stack. */
static void iretq_to(uint64_t sel)
{
	__asm__ volatile (
	    "movq %%rsp, %%rdx\n"
	    "pushq $0x23\n"
	    "pushq %%rdx\n"
	    "pushfq\n"
	    "pushq %0\n"
	    "leaq 1f(%%rip), %%rax\n"
	    "pushq %%rax\n"
	    "iretq\n"
	    "1:\n"
	    :: "r" (sel) : "rax", "rdx", "memory");
}

static long number(const char *s, long lo, long hi)
{
	char *end;
	long v = strtol(s, &end, 0);
	if (*s == 0 || *end != 0 || v < lo || v > hi) {
		printf("attack: bad number %s (%ld..%ld)\n", s, lo, hi);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	printf("usage: attack compat-syscall|compat-sysenter|ljmp32|lret32|"
	    "sysenter|lretq-fault|lretq-ok|int3|icebp|into|tf|tf-sysenter|nt|\n"
	    "       sidt|sgdt|sldt|str|smsw|ac|df|x87-fpe|sse-fpe\n"
	    "       attack lretq|ljmp|iretq SEL    attack int N\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 2)
		usage();
	const char *v = argv[1];
	const char *arg = argc > 2 ? argv[2] : NULL;
	long sel = -1;

	if (strcmp(v, "compat-syscall") == 0) {
		printf("attack: lretq to 0x1b (32-bit user code), then syscall\n");
		far_return(0x1b, attack_c32_syscall);
	} else if (strcmp(v, "compat-sysenter") == 0) {
		printf("attack: lretq to 0x1b (32-bit user code), then sysenter\n");
		far_return(0x1b, attack_c32_sysenter);
	} else if (strcmp(v, "ljmp32") == 0) {
		printf("attack: ljmp to 0x1b (32-bit user code), then syscall\n");
		ljmp_to(0x1b, attack_c32_syscall);
	} else if (strcmp(v, "lret32") == 0) {
		printf("attack: lretq to 0x1b (32-bit user code), then ud2\n");
		far_return(0x1b, attack_c32_ud);
	} else if (strcmp(v, "sysenter") == 0) {
		printf("attack: sysenter in 64-bit mode\n");
		__asm__ volatile ("sysenter" ::: "rcx", "r11", "memory");
	} else if (strcmp(v, "lretq-fault") == 0) {
		printf("attack: lretq with rsp 0x1000 (no area): the pop faults\n");
		__asm__ volatile (
		    "movq $0x1000, %%rsp\n"
		    "lretq\n" ::: "memory");
	} else if (strcmp(v, "lretq-ok") == 0) {
		printf("attack: lretq to 0x2b (64-bit user code)\n");
		lretq_to(0x2b);
		printf("attack: returned through 0x2b\n");
		return 0;
	} else if (strcmp(v, "lretq") == 0 || strcmp(v, "ljmp") == 0 ||
	    strcmp(v, "iretq") == 0) {
		if (!arg)
			usage();
		sel = number(arg, 0, 0xffff);
		printf("attack: %s to selector %#lx\n", v, sel);
		if (v[0] == 'l' && v[1] == 'r')
			lretq_to((uint64_t) sel);
		else if (v[0] == 'l')
			ljmp_back((uint64_t) sel);
		else
			iretq_to((uint64_t) sel);
		printf("attack: returned through %#lx\n", sel);
		return 0;
	} else if (strcmp(v, "int") == 0) {
		if (!arg)
			usage();
		long n = number(arg, 0, 255);
		printf("attack: int $%ld\n", n);
		((void (*)(void)) (uintptr_t) (attack_int_table + 4 * n))();
	} else if (strcmp(v, "int3") == 0) {
		printf("attack: int3 (0xcc)\n");
		__asm__ volatile ("int3" ::: "memory");
	} else if (strcmp(v, "icebp") == 0) {
		printf("attack: icebp (0xf1)\n");
		__asm__ volatile (".byte 0xf1" ::: "memory");
	} else if (strcmp(v, "into") == 0) {
		printf("attack: into (0xce, invalid in 64-bit mode)\n");
		__asm__ volatile (".byte 0xce" ::: "memory");
	} else if (strcmp(v, "tf") == 0 || strcmp(v, "tf-sysenter") == 0) {
		int se = v[2] == '-';
		printf("attack: popf with TF set, then %s\n",
		    se ? "sysenter" : "syscall (yield)");
		if (se) {
			__asm__ volatile (
			    "pushfq\n"
			    "orq $0x100, (%%rsp)\n"
			    "popfq\n"
			    "sysenter\n" ::: "rcx", "r11", "memory", "cc");
		} else {
			__asm__ volatile (
			    "movl $10, %%eax\n"
			    "pushfq\n"
			    "orq $0x100, (%%rsp)\n"
			    "popfq\n"
			    "syscall\n"
			    "nop\n"
			    "nop\n" ::: "rax", "rcx", "r11", "memory", "cc");
		}
	} else if (strcmp(v, "sidt") == 0 || strcmp(v, "sgdt") == 0) {
		/* UMIP: #GP in ring 3 where the kernel enabled it. */
		printf("attack: %s (the kernel's %s address)\n", v,
		    v[1] == 'i' ? "IDT" : "GDT");
		uint8_t d[10] = { 0 };
		if (v[1] == 'i')
			__asm__ volatile ("sidt %0" : "=m" (d));
		else
			__asm__ volatile ("sgdt %0" : "=m" (d));
		uint64_t base;
		memcpy(&base, d + 2, 8);
		printf("attack: survived %s (UMIP off): base %#lx\n", v, base);
		return 1;
	} else if (strcmp(v, "sldt") == 0 || strcmp(v, "str") == 0 ||
	    strcmp(v, "smsw") == 0) {
		printf("attack: %s\n", v);
		uint64_t r = 0;
		if (v[1] == 'l')
			__asm__ volatile ("sldt %0" : "=r" (r));
		else if (v[1] == 't')
			__asm__ volatile ("str %0" : "=r" (r));
		else
			__asm__ volatile ("smsw %0" : "=r" (r));
		printf("attack: survived %s (UMIP off): %#lx\n", v, r);
		return 1;
	} else if (strcmp(v, "x87-fpe") == 0) {
		/* An unmasked x87 divide by zero: #MF (CR0.NE) at the next
		 * waiting x87 instruction, `arithmetic trap`. */
		printf("attack: x87 1/0 with the zero-divide exception unmasked\n");
		uint16_t cw = 0x037b;
		__asm__ volatile ("fninit\n"
		    "fldcw %0\n"
		    "fld1\n"
		    "fldz\n"
		    "fdivrp\n"
		    "fwait\n" :: "m" (cw) : "memory");
		return 1;
	} else if (strcmp(v, "sse-fpe") == 0) {
		/* An unmasked SSE divide by zero: #XM (CR4.OSXMMEXCPT). */
		printf("attack: SSE 1/0 with the zero-divide exception unmasked\n");
		uint32_t csr = 0x1f80 & ~0x200u;
		static const uint64_t one = 0x3ff0000000000000ULL, zero;
		__asm__ volatile ("ldmxcsr %0\n"
		    "movsd %1, %%xmm0\n"
		    "divsd %2, %%xmm0\n" :: "m" (csr), "m" (one), "m" (zero)
		    : "memory");
		/* QEMU 7.2's TCG sets the flag but raises no #XM. */
		printf("attack: survived sse-fpe (no #XM from this CPU)\n");
		return 1;
	} else if (strcmp(v, "ac") == 0 || strcmp(v, "df") == 0) {
		/*
		 * RFLAGS.AC or DF set by popf/std, then system calls and timer
		 * interrupts: the kernel must run with both clear (syscall's
		 * FMASK, the interrupt entry's cld and clac) and give the
		 * thread its own flags back. With DF set, a kernel copy that
		 * used it would write the text backwards.
		 */
		static const char text[] = "attack: written with the flag set\n";
		uint64_t bit = v[0] == 'a' ? 0x40000 : 0x400;
		printf("attack: popf with %s set, then system calls and a spin\n",
		    v[0] == 'a' ? "AC" : "DF");
		uint64_t before, after;
		long ret;
		long t0 = sys_clock_ns();
		/* No C code runs with DF set (the ABI wants it clear). */
		__asm__ volatile (
		    "pushfq\n"
		    "orq %[bit], (%%rsp)\n"
		    "popfq\n"
		    "pushfq\n"
		    "popq %[before]\n"
		    "syscall\n"
		    "pushfq\n"
		    "popq %[after]\n"
		    "pushfq\n"
		    "notq %[bit]\n"
		    "andq %[bit], (%%rsp)\n"
		    "popfq\n"
		    : [before] "=&r" (before), [after] "=&r" (after), "=a" (ret),
		      [bit] "+r" (bit)
		    : "a" ((long) SYS_CONSOLE_WRITE), "D" (text),
		      "S" (sizeof(text) - 1)
		    : "rcx", "r11", "memory", "cc");
		bit = ~bit;
		/* About 0.2 s with the flag set: timer interrupts arrive. */
		uint64_t spun = 0;
		while (sys_clock_ns() - t0 < 200000000L) {
			__asm__ volatile (
			    "pushfq\n"
			    "orq %[bit], (%%rsp)\n"
			    "popfq\n"
			    "movl $2000, %%ecx\n"
			    "1: pause\n"
			    "decl %%ecx\n"
			    "jnz 1b\n"
			    "pushfq\n"
			    "popq %[f]\n"
			    "pushfq\n"
			    "andq %[nbit], (%%rsp)\n"
			    "popfq\n"
			    : [f] "=&r" (after)
			    : [bit] "r" (bit), [nbit] "r" (~bit)
			    : "rcx", "memory", "cc");
			if (!(after & bit))
				break;
			spun++;
		}
		printf("attack: system call returned %ld, flag %s before, %s "
		    "after; %s after %lu spins\n", ret,
		    (before & bit) ? "set" : "clear",
		    (after & bit) ? "set" : "clear",
		    (after & bit) ? "kept" : "LOST", (unsigned long) spun);
		return (ret == (long) sizeof(text) - 1 && (before & bit) &&
		    (after & bit)) ? 0 : 1;
	} else if (strcmp(v, "nt") == 0) {
		printf("attack: popf with NT set, then system calls and a spin\n");
		uint64_t flags;
		__asm__ volatile (
		    "pushfq\n"
		    "orq $0x4000, (%%rsp)\n"
		    "popfq\n" ::: "memory", "cc");
		long t0 = sys_clock_ns();
		/* About 0.2 s: timer interrupts arrive in user mode with NT set. */
		while (sys_clock_ns() - t0 < 200000000L)
			(void) sys_yield();
		__asm__ volatile ("pushfq; popq %0" : "=r" (flags));
		printf("attack: returned with NT %s\n",
		    (flags & 0x4000) ? "still set" : "cleared");
		return 0;
	} else {
		usage();
	}
	printf("attack: survived %s\n", v);
	return 1;
}

#endif
