/** @file symtab.c
 * Symbol lookup and frame-pointer backtraces.
 */
#include <debug/symtab.h>
#include <debug/sections.h>
#include <arch/mm.h>
#include <arch/cpu_arch.h>
#include <cpu.h>
#include <proc/thread.h>
#include <print.h>

typedef struct {
	uint64_t addr;
	uint64_t name;
} ksym_t;

/* Provided by the generated build/ksyms.S (read-only data). */
extern const uint64_t ksyms_count;
extern const ksym_t ksyms_table[];
extern const char ksyms_names[];

size_t symtab_count(void)
{
	return ksyms_count;
}

const char *symtab_lookup(uintptr_t addr, uintptr_t *offset)
{
	if (addr < (uintptr_t) ktext_start || addr >= (uintptr_t) ktext_end)
		return NULL;
	size_t lo = 0;
	size_t hi = ksyms_count;
	if (hi == 0)
		return NULL;
	/* Last symbol with address <= addr. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ksyms_table[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	if (ksyms_table[lo].addr > addr)
		return NULL;
	if (offset)
		*offset = addr - ksyms_table[lo].addr;
	return &ksyms_names[ksyms_table[lo].name];
}

void symtab_print_sym(uintptr_t addr, const char *fallback)
{
	uintptr_t off = 0;
	const char *name = addr ? symtab_lookup(addr, &off) : NULL;
	if (name)
		printf("%s+0x%lx", name, (unsigned long) off);
	else if (fallback)
		printf("%s", fallback);
	else
		printf("%p", (void *) addr);
}

void symtab_print_addr(uintptr_t addr)
{
	printf("<");
	symtab_print_sym(addr, "?");
	printf(">");
}

/** True when [lo, lo + size) holds @a fp; sets the window to that range. */
static bool window_of(uintptr_t fp, uintptr_t lo, size_t size,
    uintptr_t *wlo, uintptr_t *whi)
{
	if (lo == 0 || fp < lo || fp - lo >= size)
		return false;
	*wlo = lo;
	*whi = lo + size;
	return true;
}

/*
 * The stack that holds @a fp, [*lo, *hi): the walk reads nothing outside it.
 * Known stacks: the current thread's kernel stack, any CPU's own stack
 * (boot and idle: cpu_t.stack_top), and the kernel image's .bss (the boot
 * stack, amd64's IST stacks), where the window is at most THREAD_STACK_SIZE
 * above @a fp and ends at kernel_end. A frame pointer on no known stack (a
 * user address, garbage, another thread's stack during a switch) gives no
 * window: no walk, rather than a read that may fault inside a panic.
 */
static bool stack_window(uintptr_t fp, uintptr_t *lo, uintptr_t *hi)
{
	cpu_t *c = CPU;
	if (c) {
		thread_t *t = THREAD;
		if (t && window_of(fp, (uintptr_t) t->kstack, THREAD_STACK_SIZE,
		    lo, hi))
			return true;
		/* cpus[] is written during boot only. */
		for (unsigned i = 0; i < cpu_count; i++) {
			uintptr_t top = cpus[i].stack_top;
			if (top >= KERNEL_STACK_SIZE && window_of(fp,
			    top - KERNEL_STACK_SIZE, KERNEL_STACK_SIZE, lo, hi))
				return true;
		}
	}
	uintptr_t image_lo = (uintptr_t) ktext_start;
	uintptr_t image_hi = (uintptr_t) kernel_end;
	if (fp >= image_lo && fp < image_hi) {
		*lo = fp;
		*hi = image_hi - fp > THREAD_STACK_SIZE ? fp + THREAD_STACK_SIZE :
		    image_hi;
		return true;
	}
	return false;
}

size_t backtrace_collect(uintptr_t fp, uintptr_t *ret, size_t max)
{
	uintptr_t lo, hi;
	if (!stack_window(fp, &lo, &hi))
		return 0;
	size_t n = 0;
	/*
	 * Each record, two words at fp, lies inside [lo, hi); the chain must go
	 * up (stacks grow down), so it ends inside the window after at most
	 * (hi - lo) / 16 records.
	 */
	while (n < max && (fp & 7) == 0 && fp >= lo && fp < hi &&
	    hi - fp >= 2 * sizeof(uintptr_t)) {
		const uintptr_t *frame = (const uintptr_t *) fp;
		uintptr_t r = frame[1];
		if (r == 0)
			break;
		ret[n++] = r;
		if (frame[0] <= fp)
			break;
		fp = frame[0];
	}
	return n;
}

void backtrace_print_from(uintptr_t fp)
{
	uintptr_t ret[BACKTRACE_MAX];
	size_t n = backtrace_collect(fp, ret, BACKTRACE_MAX);
	printf("Backtrace:\n");
	for (size_t i = 0; i < n; i++) {
		/*
		 * ret - 1 lies inside the call instruction: a call to a noreturn
		 * function can be the last instruction of its caller, and the return
		 * address would name the next function.
		 */
		uintptr_t off;
		const char *name = symtab_lookup(ret[i] - 1, &off);
		if (name)
			printf("  %p <%s+%#lx>\n", (void *) ret[i], name, off + 1);
		else
			printf("  %p <?>\n", (void *) ret[i]);
	}
}
