/** @file symtab.c
 * Symbol lookup and frame-pointer backtraces.
 */
#include <debug/symtab.h>
#include <arch/mm.h>
#include <print.h>

typedef struct {
	uint64_t addr;
	uint64_t name;
} ksym_t;

/* Provided by the generated build/ksyms.S (read-only data). */
extern const uint64_t ksyms_count;
extern const ksym_t ksyms_table[];
extern const char ksyms_names[];
extern const char ktext_start[];
extern const char ktext_end[];

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

static bool frame_plausible(uintptr_t fp)
{
	if (fp == 0 || (fp & 7))
		return false;
	/* Kernel stacks live in the kernel image (.bss) or in the direct map. */
	if (fp >= KERNEL_VMA && fp < 0xfffffffffffff000UL)
		return true;
	if (fp >= PHYS_MAP_BASE && fp < PHYS_MAP_BASE + PHYS_MAP_MAX)
		return true;
	return false;
}

size_t backtrace_collect(uintptr_t fp, uintptr_t *ret, size_t max)
{
	size_t n = 0;
	while (n < max && frame_plausible(fp)) {
		const uintptr_t *frame = (const uintptr_t *) fp;
		uintptr_t r = frame[1];
		if (r == 0)
			break;
		ret[n++] = r;
		if (frame[0] <= fp)
			break;  /* stacks grow down: the chain must go up */
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
