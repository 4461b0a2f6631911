/** @file asid.h
 * arm64 address space identifiers (ASIDs): each user address space's TLB
 * entries are tagged with its 8-bit ASID (TTBR0_EL1[55:48], TCR_EL1.A1 = 0,
 * TCR_EL1.AS = 0), so a switch between address spaces keeps the other
 * address spaces' translations and the kernel's global ones, and an unmap
 * invalidates by ASID and address (`tlbi vae1is`) or by ASID (`tlbi
 * aside1is`), never every CPU's whole TLB.
 *
 * The allocator (asid.c) is a generation counter as in Linux's
 * arch/arm64/mm/context.c (written anew here): an address space's
 * as_t.tlb_ctx is (generation | ASID), 0 before its first load. A context
 * of the current generation is used as is; when no number is left, the
 * generation rolls over: every number is free again except those the CPUs
 * have loaded (kept for the address spaces that own them), and each CPU
 * invalidates its whole TLB once, at its next slow-path switch, before it
 * loads a number of the new generation. A released address space's ASID is
 * invalidated everywhere (`tlbi aside1is`) and freed for reuse within the
 * generation. ASID 0 is never handed out (the boot tables). docs/ARM64.md,
 * "TLB and ASIDs", has the argument and the counts.
 */
#ifndef KERN_ARCH_ASID_H_
#define KERN_ARCH_ASID_H_

#include <typedefs.h>

struct as;

/** Bits of an ASID (TCR_EL1.AS = 0: 8; every ARMv8 core has them). */
#define ASID_BITS 8
/** Numbers of a generation: ASID i in [1, ASID_COUNT) is allocatable. */
#define ASID_COUNT (1u << ASID_BITS)
/** The ASID of a context (as_t.tlb_ctx); the rest is its generation. */
#define ASID_MASK ((uint64_t) ASID_COUNT - 1)

/**
 * Gives @a as a context of the current generation if it has none, makes it
 * the calling CPU's active one and, when a rollover happened since this
 * CPU's last slow path, invalidates this CPU's TLB (`tlbi vmalle1`). Called
 * by arch_as_load() before it writes TTBR0. @return the context to load
 * (its low ASID_BITS are the ASID). Interrupts disabled.
 */
uint64_t asid_switch(struct as *as);

/**
 * Invalidates @a as's ASID on every CPU (`tlbi aside1is`, complete on
 * return) and frees the number for reuse within its generation. For
 * as_release(): no CPU runs @a as (cpus_running is 0) or can load it again.
 * Nothing when @a as was never loaded (tlb_ctx 0: no CPU cached a
 * translation of it). Thread context.
 */
void asid_release(struct as *as);

/**
 * Test knob: only ASIDs [1, @a limit) are handed out from now on (@a limit
 * in [cpu_count + 2, ASID_COUNT]: one number besides each CPU's reserved
 * one must stay free), and a rollover is forced, so that a test can use up
 * the numbers with a few address spaces. @return the previous limit.
 * Thread context.
 */
unsigned asid_set_limit(unsigned limit);

/** The current generation's number of rollovers since boot. Any context. */
uint64_t asid_generation(void);

#endif
