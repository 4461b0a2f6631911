/** @file interrupt.h
 * arm64 exception state and interrupt handler registration.
 */
#ifndef KERN_ARCH_INTERRUPT_H_
#define KERN_ARCH_INTERRUPT_H_

#include <typedefs.h>

/** GICv2 interrupt ids: SGIs 0-15 (IPIs), PPIs 16-31, SPIs from 32. */
#define IVT_ITEMS        256
#define INTID_SMP_CALL   1
#define INTID_WAKEUP     2
#define INTID_IPI_TEST   3
#define INTID_HALT       4
/** EL1 virtual timer (PPI 11). */
#define INTID_VTIMER     27
/** The pseudo interrupt id of a synchronous exception in the counts. */
#define INTID_SYNC       255

/** Registers saved on exception entry; the layout matches vectors.S. */
typedef struct istate {
	uint64_t x[31];       /**< x0..x30 (x29 = fp, x30 = lr) */
	uint64_t sp;          /**< the interrupted SP (SP_EL0 when from EL0) */
	uint64_t elr;         /**< ELR_EL1: the interrupted pc */
	uint64_t spsr;        /**< SPSR_EL1 */
	uint64_t esr;         /**< ESR_EL1 (synchronous exceptions) */
	uint64_t far;         /**< FAR_EL1 (aborts) */
} istate_t;

static inline uintptr_t istate_get_pc(const istate_t *istate)
{
	return istate->elr;
}

static inline uintptr_t istate_get_fp(const istate_t *istate)
{
	return istate->x[29];
}

/** System-call number of an `svc #0` (x8, as Linux's arm64 ABI). */
static inline uint64_t istate_syscall_nr(const istate_t *istate)
{
	return istate->x[8];
}

/** Argument @a i (0..4) of an `svc #0`: x0..x4. */
static inline uint64_t istate_syscall_arg(const istate_t *istate, unsigned i)
{
	return istate->x[i < 5 ? i : 4];
}

/** Sets the value a system call returns to user mode (x0). */
static inline void istate_set_retval(istate_t *istate, uint64_t v)
{
	istate->x[0] = v;
}

typedef void (*iroutine_t)(unsigned vector, istate_t *istate);

/**
 * Installs @a handler for interrupt id @a vector (< IVT_ITEMS). At boot,
 * before the interrupt can fire.
 */
void interrupt_register(unsigned vector, const char *name, iroutine_t handler);

/** Prints the registers of @a istate. */
void istate_print(const istate_t *istate);

/** Interrupts of id @a vector taken by all CPUs since boot (a statistic). */
uint64_t interrupt_count(unsigned vector);

#endif
