/** @file stackdepot.h
 * Stack depot: deduplicated storage of call stacks (return addresses), named
 * by a 32-bit handle, for the sanitizers' reports (KASAN keeps the allocation
 * and free stacks of every slab object as two handles; KCSAN saves the two
 * stacks of a race it reports, only then). Stacks are never removed: the
 * depot is a fixed pool (STACK_DEPOT_POOL return addresses) filled once per
 * distinct stack and a hash table of STACK_DEPOT_BUCKETS chains; when the
 * pool is full, stack_depot_save() returns 0 ("no stack").
 *
 * Concurrency: lookups are lock-free (a record is published by a release
 * store of its bucket head after it is complete); inserts take the depot's
 * own spinning lock with interrupts disabled, so any context may save a
 * stack, including interrupt handlers. The depot is compiled without
 * sanitizer instrumentation and takes no lock the kernel's lock validator
 * tracks.
 */
#ifndef KERN_DEBUG_STACKDEPOT_H_
#define KERN_DEBUG_STACKDEPOT_H_

#include <typedefs.h>

/** A stored stack; 0 means "none". */
typedef uint32_t stack_handle_t;

/** Most return addresses kept of one stack. */
#define STACK_DEPOT_MAX_FRAMES 16

/**
 * Stores the stack @a pcs[0..n) (innermost first; n <= STACK_DEPOT_MAX_FRAMES,
 * longer stacks are cut) unless an equal stack is stored already.
 * @return its handle, or 0 when n is 0 or the pool is full. Any context.
 */
stack_handle_t stack_depot_save(const uintptr_t *pcs, size_t n);

/**
 * Captures the caller's stack by the frame-pointer chain, leaving out the
 * @a skip innermost frames (0: the caller of stack_depot_capture is the
 * first), and saves it. @return its handle or 0. Any context.
 */
stack_handle_t stack_depot_capture(unsigned skip);

/**
 * The stack named by @a h: sets *pcs to its return addresses (never freed or
 * changed). @return the number of addresses (0 for handle 0 or an invalid one).
 */
size_t stack_depot_fetch(stack_handle_t h, const uintptr_t **pcs);

/** Prints the stack @a h, one " <symbol+offset>" line per frame, indented. */
void stack_depot_print(stack_handle_t h);

/** Distinct stacks stored and pool entries used (the `sanitize` command). */
void stack_depot_stats(size_t *stacks, size_t *words);

#endif
