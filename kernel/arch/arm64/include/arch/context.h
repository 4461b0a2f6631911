/** @file context.h
 * arm64 switched context: the AAPCS64 callee-saved registers x19-x28, the
 * frame pointer x29, the link register x30 and the stack pointer, saved and
 * loaded by context_switch (context.S).
 */
#ifndef KERN_ARCH_CONTEXT_H_
#define KERN_ARCH_CONTEXT_H_

#include <typedefs.h>

/** Saved registers of a switched-out thread; layout used by context.S. */
typedef struct {
	uint64_t x19, x20, x21, x22, x23, x24, x25, x26, x27, x28;
	uint64_t fp, lr, sp;
} context_t;

/** First instructions of every thread (context.S); calls thread_main_entry. */
extern void thread_entry_asm(void);

/**
 * Saves the running thread's registers (the ABI's callee-saved ones and the
 * stack pointer) into @a save and resumes the thread whose registers @a load
 * holds, returning into it (context.S). The scheduler only, interrupts
 * disabled.
 */
void context_switch(context_t *save, context_t *load);

/**
 * Sets up @a ctx so that the first context_switch to it "returns" into
 * thread_entry_asm on the stack ending at @a stack_top (16-byte aligned),
 * with a zero frame pointer that ends backtraces. Thread creation.
 */
static inline void context_init(context_t *ctx, uintptr_t stack_top)
{
	*ctx = (context_t) { 0 };
	ctx->lr = (uint64_t) thread_entry_asm;
	ctx->sp = (stack_top - 16) & ~15UL;
}

#endif
