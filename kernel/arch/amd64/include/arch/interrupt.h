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
#define VECTOR_SMP_CALL  0xf2  /**< SMP cross-calls (issue 4). */
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

typedef void (*iroutine_t)(unsigned vector, istate_t *istate);

/**
 * Installs @a handler for @a vector (replacing the default one). Called during
 * initialization, before the vector can fire; not synchronized against delivery.
 */
void interrupt_register(unsigned vector, const char *name, iroutine_t handler);

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
