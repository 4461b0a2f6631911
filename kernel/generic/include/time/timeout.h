/** @file timeout.h
 * Per-CPU timeouts: a handler runs in the timer interrupt of the CPU that
 * registered it, once the deadline has passed.
 */
#ifndef KERN_TIMEOUT_H_
#define KERN_TIMEOUT_H_

#include <typedefs.h>
#include <adt/list.h>

struct cpu;

typedef void (*timeout_handler_t)(void *arg);

typedef struct timeout {
	/** Link in cpu->timeouts; protected by that CPU's timeout_lock. */
	link_t link;
	/** Deadline in uptime microseconds. Protected by the CPU's timeout_lock. */
	uint64_t deadline;
	timeout_handler_t handler;
	void *arg;
	/** CPU whose list holds the timeout (NULL when not registered). Atomics. */
	struct cpu *cpu;
} timeout_t;

void timeout_initialize(timeout_t *t);
/**
 * Registers @a t on the current CPU to call handler(arg) from its timer interrupt
 * after @a usec microseconds. The handler runs with interrupts disabled and must
 * not sleep. Any context.
 */
void timeout_register(timeout_t *t, uint64_t usec, timeout_handler_t handler,
    void *arg);
/**
 * Cancels @a t. @return true if it was removed before its handler ran; false if
 * it was not registered or the handler already ran (in which case the handler has
 * finished by the time this returns). Any context, from any CPU.
 */
bool timeout_unregister(timeout_t *t);
/** Runs the expired timeouts of the current CPU (timer interrupt). */
void timeout_process(void);
/** Initializes the current CPU's timeout list. */
void timeout_init_cpu(struct cpu *cpu);

#endif
