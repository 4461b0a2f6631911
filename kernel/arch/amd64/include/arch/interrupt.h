/** @file interrupt.h
 * amd64 interrupt vectors, the saved register state and handler registration.
 */
#ifndef KERN_ARCH_INTERRUPT_H_
#define KERN_ARCH_INTERRUPT_H_

#include <typedefs.h>

#define IVT_ITEMS      256
#define IVT_EXCBASE    0
#define IVT_IRQBASE    32   /**< Legacy IRQ n arrives at IVT_IRQBASE + n (IOAPIC). */

#define IRQ_COM1       4

#define VECTOR_TIMER     0xf0  /**< LAPIC timer. */
#define VECTOR_IPI_TEST  0xf1  /**< Counted by the ipi1 test. */
#define VECTOR_SMP_CALL  0xf2  /**< SMP cross-calls. */
#define VECTOR_WAKEUP    0xf3  /**< Wakes a halted CPU (scheduler). */
#define VECTOR_HALT      0xfe  /**< Stop this CPU (halt, panic fallback). */
#define VECTOR_SPURIOUS  0xff  /**< LAPIC spurious vector. */

/** Registers saved on interrupt entry; the layout matches isr.S. */
typedef struct istate {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector;
	uint64_t error_code;
	/* Pushed by the CPU. */
	uint64_t rip, cs, rflags, rsp, ss;
} istate_t;

/** The interrupted program counter. */
static inline uintptr_t istate_get_pc(const istate_t *istate)
{
	return istate->rip;
}

/** The interrupted frame pointer (backtraces). */
static inline uintptr_t istate_get_fp(const istate_t *istate)
{
	return istate->rbp;
}

/** System-call number of a `syscall` entry (rax). */
static inline uint64_t istate_syscall_nr(const istate_t *istate)
{
	return istate->rax;
}

/**
 * Argument @a i (0..4) of a `syscall` entry: rdi, rsi, rdx, r10, r8 (the
 * ABI of common/include/abi/syscall.h on amd64).
 */
static inline uint64_t istate_syscall_arg(const istate_t *istate, unsigned i)
{
	switch (i) {
	case 0:
		return istate->rdi;
	case 1:
		return istate->rsi;
	case 2:
		return istate->rdx;
	case 3:
		return istate->r10;
	default:
		return istate->r8;
	}
}

/** Sets the value a system call returns to user mode (rax). */
static inline void istate_set_retval(istate_t *istate, uint64_t v)
{
	istate->rax = v;
}

typedef void (*iroutine_t)(unsigned vector, istate_t *istate);

/**
 * Installs @a handler for @a vector (replacing the default one). Called during
 * initialization, before the vector can fire; not synchronized against delivery.
 */
void interrupt_register(unsigned vector, const char *name, iroutine_t handler);

/** Installs the #PF handler (pagefault.c; from arch_interrupts_init()). */
void page_fault_init(void);

/** Builds the IDT (BSP, once). */
void idt_init(void);
/** Loads the IDT on the calling CPU. */
void idt_load(void);

/** Prints the registers of @a istate. */
void istate_print(const istate_t *istate);

/**
 * Interrupts of @a vector (0..IVT_ITEMS-1; others count 0) taken by all CPUs
 * since boot: the sum of the per-CPU counts (each CPU counts its own, so the
 * timer tick writes no line shared between CPUs). A statistic: counts of
 * other CPUs may be a few interrupts old. Any context.
 */
uint64_t interrupt_count(unsigned vector);

#endif
