/** @file asid.h
 * Address-space TLB tags (arm64's ASIDs; written to serve amd64's PCIDs too,
 * which are not built yet: docs/ARM64.md, "TLB and ASIDs"): each
 * user address space's TLB entries are tagged with a small number, so a
 * switch between address spaces keeps the other address spaces'
 * translations and the kernel's global ones.
 *
 * The allocator (genarch/src/mm/asid.c) is a generation counter as in
 * Linux's arch/arm64/mm/context.c (written anew here): an address space's
 * as_t.tlb_ctx is (generation | number), 0 before its first load. A
 * context of the current generation is used as is; when no number is left,
 * the generation rolls over: every number is free again except those the
 * CPUs have loaded (kept for the address spaces that own them), and each
 * CPU calls asid_arch_rollover_flush() once, at its next slow-path switch,
 * before it loads a number of the new generation. A released address
 * space's number goes through asid_arch_release() and is then freed for
 * reuse within the generation. Number 0 is never handed out (the boot
 * tables).
 *
 * The architecture's <arch/asid.h> defines ASID_BITS and the two hooks,
 * then includes this header:
 *   - asid_arch_rollover_flush(): drops this CPU's entries of the old
 *     generation (arm64: `tlbi vmalle1`). asid_lock held, interrupts off.
 *   - asid_arch_release(ctx): makes sure the next owner of ctx's number
 *     finds no entry of the released one (arm64: `tlbi aside1is`). Thread
 *     context, no lock.
 * docs/ARM64.md, "TLB and ASIDs", has the argument and the counts.
 */
#ifndef KERN_GENARCH_MM_ASID_H_
#define KERN_GENARCH_MM_ASID_H_

#include <typedefs.h>

#ifndef ASID_BITS
#error "include <arch/asid.h>, which defines ASID_BITS and the hooks"
#endif

struct as;

/** Numbers of a generation: number i in [1, ASID_COUNT) is allocatable. */
#define ASID_COUNT (1u << ASID_BITS)
/** The number of a context (as_t.tlb_ctx); the rest is its generation. */
#define ASID_MASK ((uint64_t) ASID_COUNT - 1)

/**
 * Gives @a as a context of the current generation if it has none, makes it
 * the calling CPU's active one and, when a rollover happened since this
 * CPU's last slow path, calls asid_arch_rollover_flush(). Called by
 * arch_as_load() before it loads the tables. @return the context to load
 * (its low ASID_BITS are the number). Interrupts disabled.
 */
uint64_t asid_switch(struct as *as);

/**
 * Calls asid_arch_release() for @a as's context and frees its number for
 * reuse within its generation. For as_release(): no CPU runs @a as
 * (cpus_running is 0) or can load it again. Nothing when @a as was never
 * loaded (tlb_ctx 0: no CPU cached a translation of it). Thread context.
 */
void asid_release(struct as *as);

/**
 * Test knob: only numbers [1, @a limit) are handed out from now on (@a
 * limit in [cpu_count + 2, ASID_COUNT]: one number besides each CPU's
 * reserved one must stay free), and a rollover is forced, so that a test
 * can use up the numbers with a few address spaces. @return the previous
 * limit. Thread context.
 */
unsigned asid_set_limit(unsigned limit);

/** The current generation's number of rollovers since boot. Any context. */
uint64_t asid_generation(void);

#endif
