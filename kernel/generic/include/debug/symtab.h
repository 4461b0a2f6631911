/** @file symtab.h
 * Kernel symbol table (generated at link time by tools/gensyms.py) and backtraces.
 */
#ifndef KERN_SYMTAB_H_
#define KERN_SYMTAB_H_

#include <typedefs.h>

/**
 * Finds the function containing @a addr.
 * @return its name and sets *offset, or NULL when the address is not kernel text.
 */
const char *symtab_lookup(uintptr_t addr, uintptr_t *offset);
/**
 * Prints @a addr as "name+0xoff" (the function containing it), or, when no
 * function does (or @a addr is 0), @a fallback; a NULL @a fallback prints the
 * address itself (%p). The one "address as symbol+offset" printer: lockdep's
 * reports and the lockdep command's sites use it directly
 * (tests/test_lockdep.py and tests/lockdep_order.py parse "name+0xoff").
 */
void symtab_print_sym(uintptr_t addr, const char *fallback);
/** Prints "<name+0xoff>" (or "<?>") for @a addr: symtab_print_sym() in <>. */
void symtab_print_addr(uintptr_t addr);
/** Number of symbols in the table. */
size_t symtab_count(void);

/** The most frames backtrace_print_from() prints. */
#define BACKTRACE_MAX 32

/**
 * Walks the frame-pointer chain from @a fp (the kernel is built with
 * -fno-omit-frame-pointer; on amd64 and arm64 a frame record is two words,
 * the caller's frame pointer then the return address) and stores up to
 * @a max return addresses in @a ret, innermost first.
 * Reads only inside the stack that holds @a fp (the current thread's kernel
 * stack, a CPU's own stack, or the kernel image's .bss: the boot and amd64
 * IST stacks), so a corrupt chain never faults: it stops at the first record
 * outside that stack, misaligned, not above the previous one (stacks grow
 * down), or with a NULL return address. A frame pointer on no known stack
 * (user space, another thread's stack) gives 0 frames. Any context
 * (panics, exception handlers).
 * @return the number of addresses stored.
 */
size_t backtrace_collect(uintptr_t fp, uintptr_t *ret, size_t max);

/**
 * Prints a backtrace (backtrace_collect(), at most BACKTRACE_MAX frames),
 * each return address with the function that contains the call.
 */
void backtrace_print_from(uintptr_t fp);

#endif
