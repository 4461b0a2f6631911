/** @file context.h
 * amd64 switched context: context_switch (context.S) pushes the six
 * callee-saved registers and saves the stack pointer here.
 */
#ifndef KERN_ARCH_CONTEXT_H_
#define KERN_ARCH_CONTEXT_H_

#include <typedefs.h>

/** Saved stack pointer of a switched-out thread (see context_switch). */
typedef struct {
	uintptr_t sp;
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
 * Builds the initial frame of a new thread on the stack ending at
 * @a stack_top so that the first context_switch to @a ctx "returns" into
 * thread_entry_asm: six callee-saved registers (zero) and the return
 * address, placed so that the stack is 16-byte aligned when
 * thread_entry_asm runs. Thread creation, any context.
 */
static inline void context_init(context_t *ctx, uintptr_t stack_top)
{
	uint64_t *sp = (uint64_t *) (stack_top - 16);
	*--sp = (uint64_t) thread_entry_asm;
	for (int i = 0; i < 6; i++)
		*--sp = 0;
	ctx->sp = (uintptr_t) sp;
}

#endif
