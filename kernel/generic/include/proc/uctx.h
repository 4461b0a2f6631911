/** @file uctx.h
 * The user register state of a user thread that context_switch() does not
 * carry (it saves only the kernel's callee-saved registers): the FP/SIMD
 * registers, and the architecture's other user-writable registers (amd64:
 * the data segment selectors DS, ES, FS, GS; arm64: TPIDR_EL0). Implemented by
 * each architecture (kernel/arch/amd64/src/uctx.c, kernel/arch/arm64/src/uctx.c
 * and uctx_asm.S); docs/ARCHITECTURE.md,
 * "Per-thread register state", lists every register and who saves it.
 *
 * Eager: the scheduler saves the state of a user thread that leaves a CPU
 * and loads that of a user thread that comes onto it, in switch_to() with
 * interrupts disabled. Kernel threads have none (thread_t.uctx is NULL) and
 * pay one test of that pointer per switch: the kernel itself is compiled
 * without FP/SIMD (-mno-sse..., -mgeneral-regs-only) and never writes the
 * other registers after boot, so the state a user thread left in the CPU
 * stays there, untouched, until the next user thread's is loaded.
 */
#ifndef KERN_PROC_UCTX_H_
#define KERN_PROC_UCTX_H_

#include <typedefs.h>

struct uctx;

/**
 * Allocates a user thread's register state, set to the defined initial
 * state of a new thread (amd64: FCW 0x37f, MXCSR 0x1f80, every register and
 * selector 0; arm64: V0-V31, FPCR, FPSR and TPIDR_EL0 0).
 * Thread context (allocates, may sleep). @return the state or NULL (no memory).
 */
struct uctx *uctx_create(void);

/**
 * Bytes uctx_create() allocates for one thread (the FP area with its
 * alignment slack): charged to the thread's task with the thread's other
 * kernel memory (proc/task.c). Constant after the boot CPU's FP set-up;
 * any context.
 */
size_t uctx_size(void);

/** Frees @a u (from uctx_create()). Any context that may free memory. */
void uctx_destroy(struct uctx *u);

/**
 * Saves the calling CPU's user registers into @a u, the state of the thread
 * that is leaving the CPU. Scheduler, interrupts disabled.
 */
void uctx_save(struct uctx *u);

/**
 * Loads @a u into the calling CPU, the state of the user thread that is about
 * to run there. Scheduler, interrupts disabled.
 */
void uctx_load(struct uctx *u);

#endif
